// instances.log: lines from SimulEval (metrics.md A.7 [ran]) and from CPython's json.dumps round
// trip byte for byte; bad lines give errors naming FILE:LINE; score_instances reproduces the
// A.4 numbers from a log.
#include "eval/instance_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "eval/scores.h"

namespace gpstream::eval {
namespace {

// metrics.md A.7 [ran].
const char* kSimulEvalLine =
    "{\"index\": 0, \"prediction\": \"a b c d e\", \"delays\": [2, 3, 4, 5, 5], \"elapsed\": [0, 0, 0, 0, "
    "0], "
    "\"prediction_length\": 5, \"reference\": \"a b c d e\\n\", \"source\": \"a b c d e\", "
    "\"source_length\": 5}";

TEST(InstanceLog, SimulEvalLineRoundTrips) {
  auto r = parse_instance_line(kSimulEvalLine, "x:1");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->index, 0);
  EXPECT_EQ(r->prediction, "a b c d e");
  EXPECT_EQ(r->delays, (std::vector<double>{2, 3, 4, 5, 5}));
  EXPECT_TRUE(r->delays_int);
  EXPECT_EQ(*r->reference, "a b c d e\n");
  EXPECT_EQ(r->source_length, 5);
  EXPECT_EQ(r->to_json_line(), kSimulEvalLine);
}

// gpstream's unit_delays follow SimulEval's keys, round trip, and must be whole numbers.
TEST(InstanceLog, UnitDelaysAfterSimulEvalKeys) {
  const std::string line =
      std::string(kSimulEvalLine, std::strlen(kSimulEvalLine) - 1) + ", \"unit_delays\": [2, 3, 4, 5, 6]}";
  auto r = parse_instance_line(line, "x:1");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->unit_delays, (std::vector<double>{2, 3, 4, 5, 6}));
  EXPECT_EQ(r->to_json_line(), line);
  auto bad = parse_instance_line(
      std::string(kSimulEvalLine, std::strlen(kSimulEvalLine) - 1) + ", \"unit_delays\": [2, 3.5]}", "x:2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("x:2"), std::string::npos);
}

// Expected text printed by CPython 3.11: json.dumps({... 'prediction': 'Zürich “q” 東京 😀 \\ "x" \t\x7f',
// 'delays': [1000.0, 1500.5, 2e-05], 'elapsed': [1234.5678901234, 1e16, 0.1+0.2], 'reference': None,
// 'source': ['a','b'], 'source_length': 3000.0}).
TEST(InstanceLog, PythonJsonDumpsFormatting) {
  const std::string expected =
      "{\"index\": 3, \"prediction\": \"Z\\u00fcrich \\u201cq\\u201d \\u6771\\u4eac \\ud83d\\ude00 \\\\ "
      "\\\"x\\\" "
      "\\t\\u007f\", \"delays\": [1000.0, 1500.5, 2e-05], \"elapsed\": [1234.5678901234, 1e+16, "
      "0.30000000000000004], \"prediction_length\": 3, \"reference\": null, \"source\": [\"a\", \"b\"], "
      "\"source_length\": 3000.0}";
  InstanceRecord r;
  r.index = 3;
  r.prediction = "Z\u00fcrich \u201cq\u201d \u6771\u4eac \U0001F600 \\ \"x\" \t\x7f";
  r.delays = {1000.0, 1500.5, 2e-05};
  r.delays_int = false;
  r.elapsed = {1234.5678901234, 1e16, 0.1 + 0.2};
  r.elapsed_int = false;
  r.prediction_length = 3;
  r.source = "a\nb";
  r.source_is_list = true;
  r.source_length = 3000.0;
  r.source_length_int = false;
  EXPECT_EQ(r.to_json_line(), expected);
  auto back = parse_instance_line(expected, "x:1");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->prediction, r.prediction);
  EXPECT_FALSE(back->reference.has_value());
  EXPECT_EQ(back->to_json_line(), expected);
}

TEST(InstanceLog, BadLinesNameTheLine) {
  auto a = parse_instances_log(std::string(kSimulEvalLine) + "\n{not json}\n", "log");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message().find("log:2"), std::string::npos);
  auto b = parse_instances_log(std::string(kSimulEvalLine) + "\n\n", "log");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message().find("log:2: empty line"), std::string::npos);
  auto c = parse_instances_log("[1, 2]\n", "log");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("log:1"), std::string::npos);
  auto d = parse_instances_log(
      "{\"index\": 0, \"prediction\": \"a\", \"delays\": [1, \"x\"], \"source_length\": 1}", "log");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("\"delays\"[1]"), std::string::npos);
  auto e = parse_instances_log("{\"index\": 0, \"prediction\": \"a\", \"delays\": [1]}", "log");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("source_length"), std::string::npos);
  auto f = parse_instances_log("{\"prediction\": \"a\"}", "log");
  EXPECT_FALSE(f.ok());
  // Found by fuzzing: a number beyond double's range made the JSON parser throw out_of_range (not
  // parse_error).
  auto g =
      parse_instances_log("{\"index\": 0, \"prediction\": \"a\", \"delays\": [2839e729332000017]}", "log");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message().find("log:1"), std::string::npos);
}

TEST(InstanceLog, RepeatedIndexReplacesInPlace) {
  auto log = parse_instances_log(
      "{\"index\": 0, \"prediction\": \"a\", \"delays\": [1], \"source_length\": 1}\n"
      "{\"index\": 1, \"prediction\": \"b\", \"delays\": [1], \"source_length\": 1}\n"
      "{\"index\": 0, \"prediction\": \"c\", \"delays\": [1], \"source_length\": 1}\n",
      "log");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->records.size(), 2u);
  EXPECT_EQ(log->records[0].prediction, "c");
  EXPECT_EQ(log->warnings.size(), 1u);
}

TEST(InstanceLog, WriteAndReadFile) {
  const std::string path = std::string(GPSTREAM_BINARY_DIR) + "/eval_instance_log_test.log";
  auto r = parse_instance_line(kSimulEvalLine, "x:1");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(write_instances_log(path, {*r, *r}).ok());
  auto back = read_instances_log(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->records.size(), 1u);  // same index twice
  std::remove(path.c_str());
  EXPECT_FALSE(read_instances_log(path).ok());
}

InstanceRecord text_rec(int64_t i, std::string pred, std::vector<double> d, double src,
                        std::optional<std::string> ref) {
  InstanceRecord r;
  r.index = i;
  r.prediction = std::move(pred);
  r.delays = std::move(d);
  r.elapsed.assign(r.delays.size(), 0);
  r.prediction_length = static_cast<int64_t>(r.delays.size());
  r.source_length = src;
  r.reference = std::move(ref);
  return r;
}

// A log of A.4 #1 and #6 with identical prediction and reference → BLEU 100; latency means by hand:
// LAAL (3.0+0.5)/2 = 1.75, AL 1.75, AP (0.88+0.375)/2 = 0.6275 → round 0.627 (half-even on the
// binary value 0.62749999...), DAL (3+1)/2 = 2.0, ATD (3+1)/2 = 2.0.
TEST(ScoreInstances, LikeScoreOnly) {
  std::vector<InstanceRecord> inst = {text_rec(0, "a b c d e", {3, 4, 5, 5, 5}, 5, "a b c d e\n"),
                                      text_rec(1, "f g", {1, 2}, 4, "f g\n")};
  auto r = score_instances(inst, ScoreOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->scores.size(), 6u);
  EXPECT_EQ(r->scores[0].first, "BLEU");
  EXPECT_NEAR(r->scores[0].second.value, 100.0, 1e-9);
  EXPECT_EQ(format_scores_tsv(r->scores),
            "BLEU\tLAAL\tAL\tAP\tDAL\tATD\n100.0\t1.75\t1.75\t0.627\t2.0\t2.0\n");
  // With --output SimulEval's ATD is 0.0 (A.5.1).
  ScoreOptions q;
  q.latency.log_instance_quirks = true;
  auto rq = score_instances(inst, q);
  ASSERT_TRUE(rq.ok());
  EXPECT_EQ(rq->scores[5].second.value, 0.0);
}

TEST(ScoreInstances, EmptyHypothesisAndEmptyReference) {
  // Empty hypothesis with no delays: BLEU counts it (0 matches), latency skips it and says so.
  std::vector<InstanceRecord> inst = {text_rec(0, "a b c d e", {3, 4, 5, 5, 5}, 5, "a b c d e\n"),
                                      text_rec(1, "", {}, 3, "x y z\n")};
  auto r = score_instances(inst, ScoreOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->skipped, (std::vector<int64_t>{1}));
  EXPECT_LT(r->scores[0].second.value, 100.0);
  // Empty reference → sacreBLEU raises → SimulEval's BLEU is the int 0.
  inst[1].reference = "";
  auto e = score_instances(inst, ScoreOptions{});
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->scores[0].second.is_int);
  EXPECT_EQ(e->scores[0].second.value, 0.0);
  EXPECT_NE(e->warnings[0].find("instance 1"), std::string::npos);
}

}  // namespace
}  // namespace gpstream::eval

namespace gpstream::eval {
namespace {

// metrics.md A.1: word units = content.strip().split(); char units = list(content.replace(" ", ""))
// (only ASCII spaces dropped), joined without spaces for BLEU. Recording the A.7 example
// (source "a b c d e", writes "a" at 2, "b" at 3, "c" at 4, "d e" at 5) gives SimulEval's line.
TEST(TextOutputRecorder, SimulEvalBookkeeping) {
  EXPECT_EQ(prediction_units("  a b\u00a0c ", LatencyUnit::Word), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(prediction_units("n\u00e9 \u6771", LatencyUnit::Char),
            (std::vector<std::string>{"n", "\u00e9", "\u6771"}));
  EXPECT_EQ(join_prediction({"n", "\u00e9"}, LatencyUnit::Char), "n\u00e9");
  TextOutputRecorder rec;
  rec.receive("a", 2, 0);
  rec.receive("", 3, 0);
  rec.receive("b", 3, 0);
  rec.receive("c", 4, 0);
  rec.receive("d e", 5, 0);
  const auto r = rec.finish(0, "a b c d e\n", "a b c d e", 5, true, true);
  EXPECT_EQ(r.to_json_line(), kSimulEvalLine);
}

}  // namespace
}  // namespace gpstream::eval
