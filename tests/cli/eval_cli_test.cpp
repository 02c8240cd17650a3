// End-to-end checks of `gpstream bleu`, `gpstream chrf` and `gpstream score`: exact output lines
// (sacreBLEU's text line and JSON layout, SimulEval's table), exit codes and error messages. The
// expected numbers are metrics.md's (B.2.7 line, B.5 chrF [ran]). Skipped when the gpstream binary
// is not built (GPSTREAM_TESTS_ONLY builds).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace {

const std::string kBin = gpstream::testing::kGpstreamBin;
// One folder per process: ctest runs these tests in parallel processes.
const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/eval_cli_test_tmp/" + std::to_string(getpid());

using Run = gpstream::testing::CommandRun;

Run run(const std::string& args) {
  return gpstream::testing::run_gpstream(kDir, args);
}

void write(const std::string& name, const std::string& text) {
  std::ofstream(kDir + "/" + name) << text;
}

class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
    write("hyp.txt", "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n");
    write("ref1.txt", "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n");
    write("ref2.txt", "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n");
  }
};

TEST_F(EvalCli, BleuTextJsonScoreOnly) {
  auto r = run("bleu ref1.txt ref2.txt -i hyp.txt -w 2");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.53 82.4/50.0/45.5/37.5 (BP = "
      "0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n");
  EXPECT_EQ(run("bleu ref1.txt ref2.txt -b < hyp.txt").out, "48.5\n");
  auto j = run("bleu ref1.txt ref2.txt -i hyp.txt -f json");
  EXPECT_EQ(
      j.out,
      "{\n \"name\": \"BLEU\",\n \"score\": 48.5,\n \"signature\": "
      "\"nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\",\n \"verbose_score\": "
      "\"82.4/50.0/45.5/37.5 "
      "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\",\n \"nrefs\": \"2\",\n \"case\": \"mixed\",\n"
      " \"eff\": \"no\",\n \"tok\": \"13a\",\n \"smooth\": \"exp\",\n \"version\": \"2.6.0\"\n}\n");
  auto full = run("bleu ref1.txt ref2.txt -i hyp.txt --json");
  EXPECT_NE(full.out.find("\"score\": 48.5308"), std::string::npos) << full.out;
}

TEST_F(EvalCli, BleuErrors) {
  write("short.txt", "a\n");
  auto m = run("bleu ref1.txt -i short.txt");
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.err.find("short.txt has 1 lines but ref1.txt has 3"), std::string::npos) << m.err;
  write("empty_ref.txt", "a\n\nc\n");
  auto e = run("bleu empty_ref.txt -i hyp.txt");
  EXPECT_EQ(e.code, 1);
  EXPECT_NE(e.err.find("empty_ref.txt:2: empty reference"), std::string::npos) << e.err;
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt --tokenize bogus").code, 2);
  EXPECT_EQ(run("bleu -i hyp.txt").code, 2);
}

// Paired bootstrap: the full-corpus scores are the plain corpus BLEU of each file (48.53 is metrics.md's
// B.2.7 value; a system identical to one reference scores 100), the difference is theirs, and it lies inside
// its own 95% interval.
TEST_F(EvalCli, BleuPairedBootstrap) {
  auto r = run("bleu ref1.txt ref2.txt -i hyp.txt ref1.txt --paired-bs --paired-bs-n 200 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string base = r.out.substr(0, nl), sys = r.out.substr(nl + 1);
  EXPECT_NE(base.find("\"system\": \"hyp.txt\", \"baseline\": true, \"score\": 48.53"), std::string::npos)
      << base;
  EXPECT_NE(sys.find("\"system\": \"ref1.txt\", \"baseline\": false, \"score\": 100.0"), std::string::npos)
      << sys;
  auto number_after = [&](const std::string& key) {
    const auto at = sys.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key;
    return std::stod(sys.substr(at + key.size() + 4));
  };
  const double diff = number_after("diff"), lo = number_after("diff_lower"), hi = number_after("diff_upper");
  EXPECT_NEAR(diff, 100.0 - 48.53, 0.01);
  EXPECT_LE(lo, diff);
  EXPECT_GE(hi, diff);
  const double p = number_after("p_value");
  EXPECT_GT(p, 0.0);
  EXPECT_LE(p, 1.0);
  EXPECT_EQ(number_after("n_samples"), 200);

  auto text = run("bleu ref1.txt ref2.txt -i hyp.txt ref1.txt --paired-bs --paired-bs-n 200");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("hyp.txt   48.5 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ref1.txt  100.0 ("), std::string::npos) << text.out;

  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt ref1.txt").code, 2);
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt --paired-bs").code, 2);
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt missing.txt --paired-bs").code, 1);
}

// Seed bootstrap: systems given as runs grouped by --seed-bs. The seed means are the means of the runs'
// corpus BLEU (48.53 as above; a run identical to one reference scores 100), the difference is theirs.
TEST_F(EvalCli, BleuSeedBootstrap) {
  auto r = run("bleu ref1.txt ref2.txt -i hyp.txt ref1.txt hyp.txt --seed-bs 1,2 --paired-bs-n 200 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string base = r.out.substr(0, nl), sys = r.out.substr(nl + 1);
  EXPECT_NE(base.find("\"system\": [\"hyp.txt\"], \"baseline\": true, \"scores\": [48.53"), std::string::npos)
      << base;
  EXPECT_NE(sys.find("\"system\": [\"ref1.txt\", \"hyp.txt\"], \"baseline\": false, \"scores\": [100.0"),
            std::string::npos)
      << sys;
  auto number_after = [&](const std::string& key) {
    const auto at = sys.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key;
    return std::stod(sys.substr(at + key.size() + 4));
  };
  const double bleu = 48.530827;  // hyp.txt's corpus BLEU (metrics.md B.2.7), to the digits sacreBLEU prints
  EXPECT_NEAR(number_after("mean"), (100.0 + bleu) / 2, 1e-4);
  EXPECT_NEAR(number_after("sd"), (100.0 - bleu) / std::sqrt(2.0), 1e-4);
  EXPECT_NEAR(number_after("diff"), (100.0 - bleu) / 2, 1e-4);
  EXPECT_LE(number_after("diff_lower"), number_after("diff"));
  EXPECT_GE(number_after("diff_upper"), number_after("diff"));
  EXPECT_EQ(number_after("n_samples"), 200);

  auto text = run("bleu ref1.txt ref2.txt -i hyp.txt ref1.txt hyp.txt --seed-bs 1,2 --paired-bs-n 200");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("system 1     74.3 +- 36.4 (2 seeds)"), std::string::npos) << text.out;

  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt ref1.txt --seed-bs 1,2").code, 2);  // 3 runs named, 2 given
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt ref1.txt --seed-bs 2").code, 2);    // one system
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt ref1.txt --seed-bs 1,1 --paired-bs").code, 2);
  EXPECT_EQ(run("bleu ref1.txt -i hyp.txt ref1.txt --paired-bs --seed-bs-paired").code, 2);
  // The same runs on both sides, paired: no difference in any resample.
  auto same = run(
      "bleu ref1.txt ref2.txt -i hyp.txt ref1.txt hyp.txt ref1.txt --seed-bs 2,2 --seed-bs-paired --json");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("\"diff_lower\": 0.0, \"diff_upper\": 0.0"), std::string::npos) << same.out;
}

TEST_F(EvalCli, Chrf) {
  auto r = run("chrf ref1.txt ref2.txt -i hyp.txt -w 2");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 59.73\n");
  EXPECT_EQ(run("chrf ref1.txt ref2.txt -i hyp.txt --word-order 2 -b -w 2").out, "59.15\n");
}

TEST_F(EvalCli, ScoreInstancesLog) {
  write("inst.log",
        "{\"index\": 0, \"prediction\": \"a b c d e\", \"delays\": [3, 4, 5, 5, 5], \"elapsed\": [0, 0, 0, "
        "0, 0], "
        "\"prediction_length\": 5, \"reference\": \"a b c d e\\n\", \"source\": \"a b c d e\", "
        "\"source_length\": 5}\n"
        "{\"index\": 1, \"prediction\": \"f g\", \"delays\": [1, 2], \"elapsed\": [0, 0], "
        "\"prediction_length\": 2, "
        "\"reference\": \"f g\\n\", \"source\": \"f g h i\", \"source_length\": 4}\n"
        "{\"index\": 2, \"prediction\": \"\", \"delays\": [], \"elapsed\": [], \"prediction_length\": 0, "
        "\"reference\": \"x y z\\n\", \"source\": \"x y z\", \"source_length\": 3}\n");
  auto r = run("score --instances inst.log --output out");
  EXPECT_EQ(r.code, 0) << r.err;
  // Latency by hand from A.4 #1 and #6 (instance 2 has no delays and is skipped).
  EXPECT_EQ(r.out, "  BLEU  LAAL   AL    AP  DAL  ATD\n65.144  1.75 1.75 0.627  2.0  2.0\n");
  EXPECT_NE(r.err.find("1 of 3 instances have no delays"), std::string::npos) << r.err;
  std::ifstream tsv(kDir + "/out/scores.tsv");
  std::string text((std::istreambuf_iterator<char>(tsv)), {});
  EXPECT_EQ(text, "BLEU\tLAAL\tAL\tAP\tDAL\tATD\n65.144\t1.75\t1.75\t0.627\t2.0\t2.0\n");
  write("bad.log", "{\"index\": 0, oops\n");
  auto b = run("score --instances bad.log");
  EXPECT_EQ(b.code, 1);
  EXPECT_NE(b.err.find("bad.log:1: invalid JSON"), std::string::npos) << b.err;
  EXPECT_EQ(run("score --instances inst.log --computation-aware").code, 1);
}

// `gpstream score --speech`: a SimulEval speech-to-text log (float ms, source as a list of lines).
// By hand: WER = (1 deletion + 1 substitution) / (5 + 2) = 28.571 %. Instance 0 is speech_latency_test's
// hand vector (AL 766.667, AL_CA 966.667, AP 0.55, AP_CA 0.64); instance 1: |X| = 640, reference 2
// words, 1/γ = 320: AL = (320 + (640 − 320)) / 2 = 320, AL_CA = (400 + (700 − 320)) / 2 = 390,
// AP = 960 / 1280 = 0.75, AP_CA = 1100 / 1280 = 0.859375. Means: AL 543.333, AL_CA 678.333, AP 0.65,
// AP_CA 0.7496875 → 0.75.
TEST_F(EvalCli, ScoreSpeechLog) {
  write("speech.log",
        "{\"index\": 0, \"prediction\": \"a b c d\", \"delays\": [500.0, 1000.0, 2000.0, 2000.0], "
        "\"elapsed\": [620.0, 1180.0, 2300.0, 2300.0], \"prediction_length\": 4, \"reference\": \"A, b c d "
        "e.\", "
        "\"source\": [\"utt0.wav\", \"samplerate: 16000 Hz\"], \"source_length\": 2000.0}\n"
        "{\"index\": 1, \"prediction\": \"x y\", \"delays\": [320.0, 640.0], \"elapsed\": [400.0, 700.0], "
        "\"prediction_length\": 2, \"reference\": \"x z\", \"source\": [\"utt1.wav\"], \"source_length\": "
        "640.0}\n");
  auto r = run("score --speech --instances speech.log --latency-metrics AL AP --output sp");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "   WER      AL   AL_CA   AP  AP_CA\n28.571 543.333 678.333 0.65   0.75\n"
      "WER: 1 substitutions, 1 deletions, 0 insertions over 7 reference words (normalisation: basic)\n");
  std::ifstream tsv(kDir + "/sp/scores.tsv");
  std::string text((std::istreambuf_iterator<char>(tsv)), {});
  EXPECT_EQ(text, "WER\tAL\tAL_CA\tAP\tAP_CA\n28.571\t543.333\t678.333\t0.65\t0.75\n");

  // Raw words (SimulEval's WER): "A," and "e." no longer match → (2 + 1) / 7 = 42.857 %.
  auto raw =
      run("score --speech --instances speech.log --latency-metrics AL --wer-normalization none --json");
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_NE(raw.out.find("\"WER\": 42.857142857142854, \"AL\": 543.33333333333"), std::string::npos)
      << raw.out;
  EXPECT_NE(raw.out.find(
                "\"wer_substitutions\": 2, \"wer_deletions\": 1, \"wer_insertions\": 0, \"wer_hits\": 4, "
                "\"wer_reference_words\": 7, \"wer_hypothesis_words\": 6, \"wer_normalization\": \"none\""),
            std::string::npos)
      << raw.out;

  // Hostile input: a delay past the audio, elapsed missing (fine without _CA), usage errors.
  write("bad_speech.log",
        "{\"index\": 7, \"prediction\": \"a b\", \"delays\": [500.0, 900.0], \"elapsed\": [500.0, 900.0], "
        "\"reference\": \"a b\", \"source_length\": 800.0}\n");
  auto bad = run("score --speech --instances bad_speech.log");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("bad_speech.log: instance 7: delay 1 (900.0 ms) is outside the audio [0, 800.0 ms]"),
            std::string::npos)
      << bad.err;
  write("no_elapsed.log",
        "{\"index\": 0, \"prediction\": \"a\", \"delays\": [800.0], \"reference\": \"a\", \"source_length\": "
        "800.0}\n");
  auto ne = run("score --speech --instances no_elapsed.log --latency-metrics AL");
  EXPECT_EQ(ne.code, 1);
  EXPECT_NE(ne.err.find("0 elapsed times for 1 delays"), std::string::npos) << ne.err;
  auto ok = run("score --speech --instances no_elapsed.log --latency-metrics AL --no-computation-aware");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.substr(0, ok.out.find('\n')), " WER    AL");
  EXPECT_EQ(run("score --speech --instances speech.log --pace 2").code, 2);
  EXPECT_EQ(run("score --instances speech.log --wer-normalization none").code, 2);
  EXPECT_EQ(run("score --speech --instances speech.log --wer-normalization whisper").code, 2);
}

// `gpstream score --long-form`: the hand-derived run of tests/eval/long_form_test.cpp (segments "the cat
// sleeps" | "it is raining .", StreamLAAL 1.2917, StreamLAAL_CA 745.83); BLEU and chrF are those of the
// segments (checked against corpus_bleu/corpus_chrf there). An empty segment is reported on stderr; a
// malformed file exits 1 naming the key; options of the other modes are usage errors.
TEST_F(EvalCli, ScoreLongForm) {
  const std::string data = std::string(GPSTREAM_SOURCE_DIR) + "/tests/eval/data/long_form/";
  std::filesystem::copy_file(data + "two_sentences.input.json", kDir + "/run.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(data + "empty_middle.input.json", kDir + "/empty.json",
                             std::filesystem::copy_options::overwrite_existing);
  auto r = run("score --long-form run.json --output lf");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "  BLEU   chrF  StreamLAAL  StreamLAAL_CA\n46.714 70.113       1.292        745.833\n");
  EXPECT_EQ(r.err, "");
  std::ifstream tsv(kDir + "/lf/scores.tsv");
  std::string text((std::istreambuf_iterator<char>(tsv)), {});
  EXPECT_EQ(text, "BLEU\tchrF\tStreamLAAL\tStreamLAAL_CA\n46.714\t70.113\t1.292\t745.833\n");

  auto j = run("score --long-form empty.json --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("\"StreamLAAL\": 425.0, \"StreamLAAL_CA\": 562.5, \"num_sentences\": 3, "
                       "\"empty_sentences\": 1, \"hypothesis_words\": 5, \"segments\": [\"one two\", \"\", "
                       "\"four five six\"]}"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.err.find("1 of 3 sentences have no hypothesis words"), std::string::npos) << j.err;

  write("bad.json",
        "{\"source_unit\": \"word\", \"sentences\": [{\"source_length\": 2, \"reference\": \"a b\"}], "
        "\"hypothesis\": {\"words\": [\"a\", \"b\"], \"delays\": [1, \"2\"]}}");
  auto b = run("score --long-form bad.json");
  EXPECT_EQ(b.code, 1);
  EXPECT_NE(b.err.find("bad.json: field 'hypothesis.delays[1]' must be a number"), std::string::npos)
      << b.err;
  for (const std::string& args : {std::string("score --long-form run.json --pace 2"),
                                  std::string("score --long-form run.json --instances inst.log"),
                                  std::string("score --long-form run.json --speech"),
                                  std::string("score --long-form run.json --sacrebleu-tokenizer nope")}) {
    auto u = run(args);
    EXPECT_EQ(u.code, 2) << args;
    EXPECT_NE(u.err.find("gpstream score: "), std::string::npos) << args << ": " << u.err;
  }
}

// eval --long-form with the shipped model: two talks (20 pairs, talks of at least 30 s at 2.5 words/s), every
// source word read (the last delay is the talk's length), and `score --long-form` over each talk's run file
// gives the talk's own numbers, which pooled by hand (each sentence one LAAL) give eval's StreamLAAL.
TEST_F(EvalCli, EvalLongFormWritesRunsThatScoreRescores) {
  const std::string src = std::string(GPSTREAM_SOURCE_DIR);
  const std::string tsv = src + "/data/corpus/en-fr.dev.tsv";
  auto r = run("eval --long-form -m " + src + "/models/gpstream-en-fr --tsv " + tsv +
               " --limit 20 --talk-minutes 0.5 -k 3 --output lf --json -t 1");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("sentences"), 20);
  const int talks = j.at("talks").get<int>();
  ASSERT_GE(talks, 2) << r.out;
  double laal_sum = 0;
  int non_empty = 0;
  for (int t = 1; t <= talks; ++t) {
    const std::string file = kDir + "/lf/group-k3-long-form/talk-" + std::to_string(t) + ".json";
    std::ifstream in(file);
    ASSERT_TRUE(in.good()) << file;
    const auto run_file = nlohmann::json::parse(in);
    int64_t words = 0;
    for (const auto& s : run_file.at("sentences")) words += s.at("source_length").get<int64_t>();
    const auto& delays = run_file.at("hypothesis").at("delays");
    ASSERT_FALSE(delays.empty());
    EXPECT_EQ(delays.back().get<int64_t>(), words) << "the talk was read to its last word";
    auto sr = run("score --long-form lf/group-k3-long-form/talk-" + std::to_string(t) + ".json --json");
    ASSERT_EQ(sr.code, 0) << sr.err;
    const auto sj = nlohmann::json::parse(sr.out);
    const int n = sj.at("num_sentences").get<int>() - sj.at("empty_sentences").get<int>();
    laal_sum += sj.at("StreamLAAL").get<double>() * n;
    non_empty += n;
  }
  // The pooled mean from the per-talk means: a sum of 20 LAAL values of a few words each, rounded twice
  // (mean, then × n): within 20 × 2 × 2⁻⁵² relative, far below 1e-9.
  EXPECT_NEAR(j.at("StreamLAAL").get<double>(), laal_sum / non_empty, 1e-9);
  EXPECT_EQ(
      run("eval --long-form -m " + src + "/models/gpstream-en-fr --tsv " + tsv + " --paradigm offline").code,
      2);
}

}  // namespace
