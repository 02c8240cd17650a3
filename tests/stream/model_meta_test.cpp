// gpstream.json: end_after_source and beam are read, written back only when set, refused when malformed,
// and reach the session options a model gives its commands; unknown keys and k_min > k_max are refused
// naming the file and the key, while every key gpstream writes and the shipped models' files load.
#include "stream/model_meta.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "../testing/fifo.h"
#include "../testing/temp_dir.h"

namespace gpstream::stream {
namespace {

TEST(ModelMeta, EndAfterSourceRoundTrips) {
  auto off = ModelMeta::parse(R"({"k": 3})", "t");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->end_after_source);
  EXPECT_EQ(off->to_json().find("end_after_source"), std::string::npos);
  auto on = ModelMeta::parse(R"({"k": 7, "end_after_source": true})", "t");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->end_after_source);
  auto again = ModelMeta::parse(on->to_json(), "t2");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->end_after_source);
  EXPECT_EQ(again->k, 7);
  auto bad = ModelMeta::parse(R"({"end_after_source": 1})", "t.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("t.json: field 'end_after_source' must be true or false"),
            std::string::npos);
}

TEST(ModelMeta, PositionsRemovedRoundTrips) {
  auto kept = ModelMeta::parse(R"({"k": 3})", "t");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->positions_removed, PositionsRemoved::None);
  EXPECT_EQ(kept->to_json().find("positions_removed"), std::string::npos);
  for (const char* name : {"source", "target", "all", "none"}) {
    auto m = ModelMeta::parse(std::string(R"({"positions_removed": ")") + name + "\"}", "t");
    ASSERT_TRUE(m.ok()) << name;
    EXPECT_STREQ(positions_removed_name(m->positions_removed), name);
    auto again = ModelMeta::parse(m->to_json(), "t2");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->positions_removed, m->positions_removed);
  }
  auto bad = ModelMeta::parse(R"({"positions_removed": "both"})", "t.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(
                "t.json: field 'positions_removed' must be one of none, source, target, all"),
            std::string::npos)
      << bad.error().message();
}

TEST(ModelMeta, BeamRoundTrips) {
  auto plain = ModelMeta::parse(R"({"k": 7})", "t");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->beam, 1);
  EXPECT_EQ(plain->to_json().find("beam"), std::string::npos);
  auto four = ModelMeta::parse(R"({"k": 7, "beam": 4})", "t");
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->beam, 4);
  auto again = ModelMeta::parse(four->to_json(), "t");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->beam, 4);
  for (const char* bad : {R"({"beam": 0})", R"({"beam": "4"})", R"({"beam": 1.5})"}) {
    auto r = ModelMeta::parse(bad, "t.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("t.json: field 'beam' must be an integer"), std::string::npos)
        << r.error().message();
  }
  auto zero = ModelMeta::parse(R"({"beam": 0})", "t.json");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message(), "t.json: field 'beam' must be an integer in [1, 1000000], got 0");
}

// gpstream.json's "policy": the model's default read/write policy, written back only when it is not the
// default (wait-k); unknown names and fields, out-of-range settings and min_lag > max_lag are refused.
TEST(ModelMeta, PolicyRoundTripsAndBadPoliciesAreRefused) {
  auto plain = ModelMeta::parse(R"({"k": 7})", "t");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->policy, stream::PolicySpec{});
  EXPECT_EQ(plain->to_json().find("policy"), std::string::npos);
  auto conf =
      ModelMeta::parse(R"({"policy": {"name": "confidence", "tau": 0.25, "min_lag": 2, "max_lag": 6}})", "t");
  ASSERT_TRUE(conf.ok()) << conf.error().message();
  EXPECT_EQ(conf->policy, (stream::PolicySpec{stream::PolicyKind::Confidence, 0.25, 2, 6}));
  auto again = ModelMeta::parse(conf->to_json(), "t");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->policy, conf->policy);
  auto partial = ModelMeta::parse(R"({"policy": {"name": "confidence", "tau": 0.7}})", "t");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->policy, (stream::PolicySpec{stream::PolicyKind::Confidence, 0.7, 1, 8}));
  auto aligned = ModelMeta::parse(
      R"({"policy": {"name": "alignatt", "frames": 3, "layers": [4, 2], "max_lag": 6}})", "t");
  ASSERT_TRUE(aligned.ok()) << aligned.error().message();
  EXPECT_EQ(aligned->policy,
            (stream::PolicySpec{
                .kind = stream::PolicyKind::AlignAtt, .max_lag = 6, .frames = 3, .layers = {4, 2}}));
  auto aligned_again = ModelMeta::parse(aligned->to_json(), "t");
  ASSERT_TRUE(aligned_again.ok());
  EXPECT_EQ(aligned_again->policy, aligned->policy);
  auto agreed =
      ModelMeta::parse(R"({"policy": {"name": "local-agreement", "agreement": 3, "min_lag": 2}})", "t");
  ASSERT_TRUE(agreed.ok()) << agreed.error().message();
  EXPECT_EQ(agreed->policy,
            (stream::PolicySpec{.kind = stream::PolicyKind::LocalAgreement, .min_lag = 2, .agreement = 3}));
  EXPECT_EQ(stream::policy_json(agreed->policy),
            R"({"name":"local-agreement","agreement":3,"min_lag":2,"max_lag":8})");
  auto agreed_again = ModelMeta::parse(agreed->to_json(), "t");
  ASSERT_TRUE(agreed_again.ok());
  EXPECT_EQ(agreed_again->policy, agreed->policy);
  for (const char* bad : {R"({"policy": {"name": "nope"}})", R"({"policy": {"tau": 0.5}})",
                          R"({"policy": {"name": "confidence", "tau": 1.5}})",
                          R"({"policy": {"name": "confidence", "min_lag": -1}})",
                          R"({"policy": {"name": "confidence", "max_lag": 0}})",
                          R"({"policy": {"name": "confidence", "min_lag": 5, "max_lag": 3}})",
                          R"({"policy": {"name": "confidence", "tua": 0.5}})", R"({"policy": "confidence"})",
                          R"({"policy": {"name": "alignatt", "frames": 0}})",
                          R"({"policy": {"name": "local-agreement", "agreement": 1}})",
                          R"({"policy": {"name": "local-agreement", "agreement": 17}})",
                          R"({"policy": {"name": "alignatt", "layers": [1, 1]}})",
                          R"({"policy": {"name": "alignatt", "layers": [-1]}})",
                          R"({"policy": {"name": "alignatt", "layers": 3}})"}) {
    auto r = ModelMeta::parse(bad, "t.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("t.json"), std::string::npos) << r.error().message();
  }
}

// φ is read from its JSON value: a number keeps its value exactly as a float (1e-7 is not printed with six
// decimals and read back as 0), "S" is the source length, and anything else is refused naming the field.
TEST(ModelMeta, PhiIsReadFromTheNumberItself) {
  auto tiny = ModelMeta::parse(R"({"phi": 1e-7})", "t.json");
  ASSERT_TRUE(tiny.ok()) << tiny.error().message();
  EXPECT_EQ(tiny->phi.value, 1e-7f);
  EXPECT_FALSE(tiny->phi.source_length);
  auto s = ModelMeta::parse(R"({"phi": "S"})", "t.json");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->phi.source_length);
  auto text = ModelMeta::parse(R"({"phi": "2.5"})", "t.json");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->phi.value, 2.5f);
  for (const char* bad : {R"({"phi": -1})", R"({"phi": "x"})", R"({"phi": [1]})", R"({"phi": 1e39})"}) {
    auto r = ModelMeta::parse(bad, "t.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("t.json: field 'phi' must be a non-negative number or \"S\""),
              std::string::npos)
        << r.error().message();
  }
}

// A `trained` record nested 300,000 levels deep (600 KB) overflowed the stack where it was dumped back to
// text; documents deeper than kMaxModelMetaJsonDepth are refused while parsing, naming the file. The shipped
// models' records nest 3 levels; a record at the limit still loads.
TEST(ModelMeta, DeeplyNestedDocumentsAreRefusedWithoutCrashing) {
  auto nested = [](int levels) {
    return R"({"k": 7, "trained": )" + std::string(static_cast<size_t>(levels), '[') +
           std::string(static_cast<size_t>(levels), ']') + "}";
  };
  auto deep = ModelMeta::parse(nested(300000), "gpstream.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message().find("gpstream.json: JSON nested more than 64 levels deep"),
            std::string::npos)
      << deep.error().message();
  // The top-level object is level 0, so `trained` may hold kMaxModelMetaJsonDepth levels of arrays.
  auto at_limit = ModelMeta::parse(nested(kMaxModelMetaJsonDepth), "gpstream.json");
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().message();
  EXPECT_EQ(at_limit->k, 7);
  EXPECT_FALSE(ModelMeta::parse(nested(kMaxModelMetaJsonDepth + 1), "gpstream.json").ok());
}

// The files gpstream writes are strict: a key it does not know (a typo such as "k_mx", which would otherwise
// leave k_max at its default) is refused, at the top level and in a template object, naming the file and
// the key. `trained` stays free-form.
TEST(ModelMeta, UnknownKeysAreRefusedNamingTheFileAndTheKey) {
  struct Case {
    const char* text;
    const char* key;
  };
  for (const Case& c :
       {Case{R"({"k": 3, "k_mx": 4})", "'k_mx'"}, Case{R"({"languages": ["en"]})", "'languages'"},
        Case{R"({"template": {"name": "x", "prompt": "p", "sep": "|"}})", "'template.sep'"}}) {
    auto r = ModelMeta::parse(c.text, "models/m/gpstream.json");
    ASSERT_FALSE(r.ok()) << c.text;
    const std::string msg = r.error().message();
    EXPECT_NE(msg.find("models/m/gpstream.json: unknown key " + std::string(c.key)), std::string::npos)
        << msg;
  }
  auto free_form = ModelMeta::parse(R"({"trained": {"anything": [1, {"goes": true}]}})", "t");
  ASSERT_TRUE(free_form.ok()) << free_form.error().message();
  EXPECT_EQ(free_form->trained_json, R"({"anything":[1,{"goes":true}]})");
}

TEST(ModelMeta, KMinAboveKMaxIsRefused) {
  for (const char* text : {R"({"k_min": 5, "k_max": 3})", R"({"k_min": 12})", R"({"k_max": 0})"}) {
    auto r = ModelMeta::parse(text, "models/m/gpstream.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message().find("models/m/gpstream.json: field 'k_"), std::string::npos)
        << r.error().message();
  }
  auto swapped = ModelMeta::parse(R"({"k_min": 5, "k_max": 3})", "g.json");
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.error().message().find("g.json: field 'k_min' (5) is greater than 'k_max' (3)"),
            std::string::npos)
      << swapped.error().message();
  auto past_default = ModelMeta::parse(R"({"k_min": 12})", "g.json");
  ASSERT_FALSE(past_default.ok());
  EXPECT_NE(past_default.error().message().find("'k_max' (9, the default)"), std::string::npos)
      << past_default.error().message();
  auto equal = ModelMeta::parse(R"({"k": 4, "k_min": 4, "k_max": 4})", "g.json");
  ASSERT_TRUE(equal.ok()) << equal.error().message();
  EXPECT_EQ(equal->k_min, 4);
  EXPECT_EQ(equal->k_max, 4);
}

// Every key gpstream writes (to_json with every optional field set) and the shipped models' files load.
TEST(ModelMeta, EveryWrittenKeyAndTheShippedFilesAreAccepted) {
  ModelMeta all;
  all.end_after_source = true;
  all.beam = 3;
  all.k_min = 2;
  all.k_max = 6;
  all.phi = *Phi::parse("S");
  all.positions_removed = PositionsRemoved::Target;
  all.trained_json = R"({"steps": 10})";
  const std::string text = all.to_json();
  for (const char* key : {"template", "source_lang", "target_lang", "phi", "k", "k_min", "k_max", "paradigm",
                          "positions_removed", "end_after_source", "beam", "trained"})
    EXPECT_NE(text.find(std::string("\"") + key + "\":"), std::string::npos) << key << " not written:\n"
                                                                             << text;
  auto back = ModelMeta::parse(text, "written");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->to_json(), text);
  for (const char* model : {"gpstream-en-fr", "gpstream-speech-en"}) {
    const std::string path = std::string(GPSTREAM_SOURCE_DIR) + "/models/" + model + "/gpstream.json";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto m = ModelMeta::parse(file, path);
    ASSERT_TRUE(m.ok()) << m.error().message();
    EXPECT_LE(m->k_min, m->k_max) << path;
  }
}

// A FIFO named gpstream.json is refused at once, naming it, instead of blocking in open() for a writer.
TEST(ModelMeta, FifoIsRefusedWithoutBlocking) {
  testing::TempDir dir;
  const std::string fifo = dir.file("gpstream.json");
  ASSERT_TRUE(testing::make_fifo(fifo));
  const auto load = testing::load_without_hanging(fifo, [&] { return ModelMeta::load(dir.path()); });
  EXPECT_FALSE(load.hung) << "ModelMeta::load blocked on a FIFO";
  EXPECT_FALSE(load.ok);
  EXPECT_NE(load.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << load.message;
}

}  // namespace
}  // namespace gpstream::stream
