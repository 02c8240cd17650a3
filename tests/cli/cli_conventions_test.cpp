// The command-line conventions every `gpstream` command shares, checked over the commands `gpstream --help`
// lists: a usage error (unknown option, missing option or value, bad value) exits 2 with one line on stderr;
// --help exits 0 and ends with an example of the command; `help CMD` is `CMD --help`; --version and -V are
// `version`; a mistyped command is answered with the nearest name. The settings checked against the model:
// languages from its gpstream.json (any without one), a template whose special tokens its tokenizer lacks, a
// warning for a paradigm it was not trained for, and --help showing the model's defaults (values read here
// from the gpstream.json files the test writes or ships). Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "cli_run.h"

namespace gpstream {
namespace {

using nlohmann::json;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/cli_conventions_test_tmp/" + std::to_string(getpid());
const std::string kEnFr = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";
const std::string kSpeech = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-speech-en";

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args + " < /dev/null");
}

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Exit 2 and exactly one non-empty line on stderr.
void expect_usage_error(const std::string& args) {
  const auto r = run(args);
  EXPECT_EQ(r.code, 2) << args << "\nstderr: " << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << args << "\nstderr: " << r.err;
  EXPECT_GT(r.err.size(), 1u) << args;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The option line of --help output that starts with `option` (after the indentation).
std::string help_line(const std::string& help, const std::string& option) {
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, option.size(), option) == 0) return line;
  }
  return "";
}

// Each option's --help line shows its default (`option`, then the "=value" its line must hold).
void expect_defaults(const std::string& help,
                     std::initializer_list<std::pair<std::string, std::string>> option_defaults) {
  for (const auto& [option, shown] : option_defaults)
    EXPECT_TRUE(contains(help_line(help, option), shown)) << option << " " << shown << "\n" << help;
}

class CliConventions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(testing::kGpstreamBin)) return;
    std::filesystem::create_directories(kDir);
    std::ofstream(kDir + "/corpus.txt")
        << "open the file\touvrez le fichier\nsave the document\tenregistrez le document\n"
           "close the window\tfermez la fenetre\n";
    // A tiny random model with the gpstream tokenizer; its gpstream.json is replaced per test.
    auto tok = testing::run_gpstream(kDir, "train-tokenizer corpus.txt -o tok --vocab-size 300");
    ASSERT_EQ(tok.code, 0) << tok.err;
    auto init = testing::run_gpstream(
        kDir,
        "init-model -o tiny --tokenizer tok --layers 1 --hidden 32 --heads 2 --kv-heads 1 --intermediate 64");
    ASSERT_EQ(init.code, 0) << init.err;
  }
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
  }
  static void write_meta(const std::string& text) {
    if (text.empty())
      std::filesystem::remove(kDir + "/tiny/gpstream.json");
    else
      std::ofstream(kDir + "/tiny/gpstream.json") << text;
  }
};

// The command names under "commands:" in `gpstream --help`.
std::vector<std::string> listed_commands() {
  const auto r = run("--help");
  std::vector<std::string> names;
  std::istringstream in(r.out);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "commands:") {
      in_list = true;
    } else if (in_list && line.size() > 2 && line.compare(0, 2, "  ") == 0) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      names.push_back(name);
    }
  }
  return names;
}

TEST_F(CliConventions, EveryCommandRejectsAnUnknownOptionWithExit2AndOneLine) {
  const auto names = listed_commands();
  for (const char* expected :
       {"translate", "eval", "serve", "transcribe", "info", "version", "bleu", "convert"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  ASSERT_GE(names.size(), 19u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    expect_usage_error(name + " --no-such-option-anywhere");
  }
  expect_usage_error("eval --speech --no-such-option-anywhere");
}

TEST_F(CliConventions, EveryCommandsHelpExitsZeroAndEndsWithItsExample) {
  for (const auto& name : listed_commands()) {
    SCOPED_TRACE(name);
    const auto r = run(name + " --help");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const size_t at = r.out.rfind("Example:\n  ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string example = r.out.substr(at + 11);
    EXPECT_EQ(count_lines(example), 1u) << example;  // one line, the last of the help
    EXPECT_TRUE(contains(example, "gpstream " + name + " ") || contains(example, "gpstream " + name + "\n"))
        << example;
    // `help CMD` prints the same.
    const auto h = run("help " + name);
    EXPECT_EQ(h.code, 0);
    EXPECT_EQ(h.out, r.out);
  }
  const auto speech = run("eval --speech --help");
  EXPECT_EQ(speech.code, 0);
  EXPECT_TRUE(contains(speech.out.substr(speech.out.rfind("Example:")), "gpstream eval --speech "))
      << speech.out;
  const auto text = run("eval --help");
  EXPECT_FALSE(contains(text.out.substr(text.out.rfind("Example:")), "--speech")) << text.out;
}

TEST_F(CliConventions, MissingOptionsValuesAndBadValuesAreUsageErrors) {
  const std::string m = " -m " + kEnFr;
  for (const std::string& args :
       {// a required option or argument missing
        std::string("translate"), std::string("serve"), std::string("transcribe --wav a.wav"),
        std::string("eval --tsv x.tsv"), std::string("eval") + m,
        std::string("eval --speech --manifest m.tsv"), std::string("info"), std::string("init-model -o d"),
        std::string("convert only-input"), std::string("train"), std::string("train-speech"),
        std::string("average-checkpoints a.bin"), std::string("bleu"), std::string("chrf"),
        std::string("score"), std::string("logits") + m, std::string("generate") + m, std::string("tokenize"),
        std::string("train-tokenizer -o d"), std::string("plot"), std::string("compare-curves"),
        std::string("compare-curves --baseline a --system b"), std::string("attention") + m,
        // an option without its value
        std::string("translate -m"), "translate" + m + " -k", "eval" + m + " --tsv",
        std::string("score --instances"), std::string("bleu ref.txt -i"),
        std::string("compare-curves --baseline a --system b --at"),
        // a bad value
        "translate" + m + " -k 0", "translate" + m + " --paradigm nope", "translate" + m + " --phi x",
        "translate" + m + " --template nope", "serve" + m + " --template nope",
        "eval" + m + " --template nope", "translate" + m + " --end-after-source maybe",
        std::string("init-model -o d --tokenizer t --arch gpt"), std::string("version extra"),
        std::string("compare-curves --baseline a --system b --at 2 --latency ATD")}) {
    SCOPED_TRACE(args);
    expect_usage_error(args);
  }
  EXPECT_TRUE(contains(run("translate" + m + " --template nope").err, "--template")) << "names the option";
}

TEST_F(CliConventions, VersionHelpAndMistypedCommands) {
  const auto version = run("version");
  ASSERT_EQ(version.code, 0);
  EXPECT_TRUE(contains(version.out, "gpstream ")) << version.out;
  for (const char* flag : {"--version", "-V"}) {
    const auto r = run(flag);
    EXPECT_EQ(r.code, 0) << flag;
    EXPECT_EQ(r.out, version.out) << flag;
  }
  // OpenBLAS's own kernel choice falls back to SSE3 ("Prescott") on CPU models it does not know; the binary
  // restarts with AVX2/AVX-512 kernels then (src/kernels/blas_kernels.h). gpstream needs AVX2 and FMA, so
  // whatever the CPU, the kernels in use are one of OpenBLAS's AVX2 or AVX-512 sets; a user's choice stands.
  const auto chosen = testing::run_command(
      "cd " + kDir + " && env -u OPENBLAS_CORETYPE " + testing::kGpstreamBin + " version",
      kDir + "/stderr.txt");
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  const std::string line = "OpenBLAS kernels: ";
  const size_t at = chosen.out.find(line);
  ASSERT_NE(at, std::string::npos) << chosen.out;
  const std::string core =
      chosen.out.substr(at + line.size(), chosen.out.find(' ', at + line.size()) - at - line.size());
  const std::vector<std::string> vector_cores = {"Haswell", "SkylakeX", "Cooperlake", "Zen",
                                                 "SapphireRapids"};
  EXPECT_NE(std::find(vector_cores.begin(), vector_cores.end(), core), vector_cores.end()) << chosen.out;
  const auto forced = testing::run_command(
      "cd " + kDir + " && OPENBLAS_CORETYPE=Prescott " + testing::kGpstreamBin + " version",
      kDir + "/stderr.txt");
  EXPECT_TRUE(contains(forced.out, line + "Prescott ")) << forced.out;

  const auto typo = run("translte");
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err, "gpstream: unknown command 'translte'; did you mean 'translate'?\n");
  EXPECT_EQ(run("help evl").err, "gpstream: unknown command 'evl'; did you mean 'eval'?\n");
  EXPECT_EQ(run("help evl").code, 2);
  const auto far = run("zzzzzzzz");
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(count_lines(far.err), 1u) << far.err;
  EXPECT_FALSE(contains(far.err, "did you mean")) << far.err;
}

TEST_F(CliConventions, LanguagesMustBeTheModels) {
  // models/gpstream-en-fr/gpstream.json: en to fr.
  const json meta = read_json(kEnFr + "/gpstream.json");
  ASSERT_EQ(meta["source_lang"], "en");
  ASSERT_EQ(meta["target_lang"], "fr");
  for (const char* langs : {"--src-lang xx", "--src-lang de --tgt-lang es", "--tgt-lang de"}) {
    SCOPED_TRACE(langs);
    expect_usage_error("translate -m " + kEnFr + " " + langs);
    EXPECT_TRUE(contains(run("translate -m " + kEnFr + " " + langs).err, "en to fr"))
        << "names what the model takes";
    expect_usage_error("serve -m " + kEnFr + " " + langs);
  }
  std::ofstream(kDir + "/one.txt") << "Open the file.\n";
  for (const char* langs : {"--src-lang en --tgt-lang fr", "--src-lang English --tgt-lang French"}) {
    const auto r = testing::run_gpstream(kDir, "translate -m " + kEnFr + " " + langs + " < one.txt");
    EXPECT_EQ(r.code, 0) << langs << ": " << r.err;
    EXPECT_EQ(count_lines(r.out), 1u) << r.out;
  }
  // Without gpstream.json any language goes; with one, only its pair.
  write_meta("");
  auto any =
      testing::run_gpstream(kDir, "translate -m tiny --src-lang de --tgt-lang es --max-tokens 3 < one.txt");
  EXPECT_EQ(any.code, 0) << any.err;
  write_meta(R"({"source_lang": "de", "target_lang": "es"})");
  EXPECT_EQ(
      testing::run_gpstream(kDir, "translate -m tiny --src-lang de --tgt-lang es --max-tokens 3 < one.txt")
          .code,
      0);
  expect_usage_error("translate -m tiny --src-lang en --tgt-lang fr");
  EXPECT_TRUE(contains(run("translate -m tiny --src-lang en").err, "de to es"));
}

TEST_F(CliConventions, ATemplateNeedsItsSpecialTokens) {
  // The en-fr tokenizer holds <pad> <s> </s> </src> only (its tokenizer.json), none of Qwen's or Llama 3's.
  const json tok = read_json(kEnFr + "/tokenizer.json");
  for (const auto& t : tok["added_tokens"]) ASSERT_NE(t["content"], "<|im_start|>");
  const auto qwen = run("translate -m " + kEnFr + " --template qwen");
  EXPECT_EQ(qwen.code, 2) << qwen.err;
  EXPECT_EQ(count_lines(qwen.err), 1u) << qwen.err;
  EXPECT_TRUE(contains(qwen.err, "<|im_start|>")) << qwen.err;
  // With an untrained paradigm too, the error is still the one line (no warning before it).
  expect_usage_error("translate -m " + kEnFr + " --template qwen --paradigm reencode");
  const auto llama = run("eval -m " + kEnFr + " --tsv x.tsv --template llama3");
  EXPECT_EQ(llama.code, 2) << llama.err;
  EXPECT_TRUE(contains(llama.err, "<|begin_of_text|>")) << llama.err;
  // Its own template passes.
  std::ofstream(kDir + "/one.txt") << "Open the file.\n";
  const auto own = testing::run_gpstream(kDir, "translate -m " + kEnFr + " --template gpstream < one.txt");
  EXPECT_EQ(own.code, 0) << own.err;
  // A tokenizer that has Qwen's two special tokens passes the check for qwen, and still fails llama3's.
  ASSERT_EQ(run("train-tokenizer corpus.txt -o qwen-tok --vocab-size 300 --special '<pad>' '<|im_start|>' "
                "'<|im_end|>'")
                .code,
            0);
  ASSERT_EQ(run("init-model -o qwen-tiny --tokenizer qwen-tok --layers 1 --hidden 32 --heads 2 --kv-heads 1 "
                "--intermediate 64")
                .code,
            0);
  std::filesystem::remove(kDir + "/qwen-tiny/gpstream.json");
  const auto fits =
      testing::run_gpstream(kDir, "translate -m qwen-tiny --template qwen --max-tokens 3 < one.txt");
  EXPECT_EQ(fits.code, 0) << fits.err;
  const auto other = run("translate -m qwen-tiny --template llama3");
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_TRUE(contains(other.err, "<|begin_of_text|>")) << other.err;
}

TEST_F(CliConventions, AnUntrainedParadigmIsWarnedAbout) {
  std::ofstream(kDir + "/one.txt") << "Open the file.\n";
  const json meta = read_json(kEnFr + "/gpstream.json");
  ASSERT_EQ(meta["paradigm"], "group");
  const auto other = testing::run_gpstream(kDir, "translate -m " + kEnFr + " --paradigm reencode < one.txt");
  EXPECT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(count_lines(other.err), 1u) << other.err;
  EXPECT_TRUE(contains(other.err, "warning")) << other.err;
  EXPECT_TRUE(contains(other.err, "trained for the group paradigm")) << other.err;
  const auto same = testing::run_gpstream(kDir, "translate -m " + kEnFr + " --paradigm group < one.txt");
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_TRUE(same.err.empty()) << same.err;
}

TEST_F(CliConventions, HelpShowsBuiltInAndModelDefaults) {
  // Built in: the variables' initial values, and a model without gpstream.json (k 5, group, en, fr, beam 1).
  const auto plain = run("translate --help");
  ASSERT_EQ(plain.code, 0);
  expect_defaults(plain.out, {{"--max-tokens", "=256"},
                              {"--top-p", "=1"},
                              {"--repetition-penalty", "=1"},
                              {"-k,--wait-k", "=5"},
                              {"--paradigm", "=group"},
                              {"--src-lang", "=en"},
                              {"--tgt-lang", "=fr"},
                              {"--beam", "=1"}});
  EXPECT_TRUE(contains(plain.out, "without gpstream.json")) << plain.out;
  // A model's gpstream.json, written here.
  write_meta(R"({"source_lang": "de", "target_lang": "es", "k": 3, "phi": "S", "paradigm": "interleaved",
                 "template": "qwen", "beam": 2, "end_after_source": true})");
  for (const char* command : {"translate", "serve"}) {
    SCOPED_TRACE(command);
    const auto r = run(std::string(command) + " -m tiny --help");
    ASSERT_EQ(r.code, 0) << r.err;
    expect_defaults(r.out, {{"-k,--wait-k", "=3"},
                            {"--phi", "=S"},
                            {"--paradigm", "=interleaved"},
                            {"--template", "=qwen"},
                            {"--src-lang", "=de"},
                            {"--tgt-lang", "=es"},
                            {"--beam", "=2"},
                            {"--end-after-source", "=on"}});
    EXPECT_TRUE(contains(r.out, "those of tiny (its gpstream.json)")) << r.out;
  }
  // The shipped speech model through transcribe and `help transcribe -m`.
  const json speech = read_json(kSpeech + "/gpstream.json");
  const auto t = run("help transcribe -m " + kSpeech);
  ASSERT_EQ(t.code, 0) << t.err;
  expect_defaults(t.out, {{"-k,--wait-k", "=" + std::to_string(speech["k"].get<int>())},
                          {"--beam", "=" + std::to_string(speech["beam"].get<int>())},
                          {"--end-after-source", speech["end_after_source"].get<bool>() ? "=on" : "=off"}});
  // -m naming nothing: one line, exit 1.
  const auto missing = run("translate -m no-such-model --help");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(count_lines(missing.err), 1u) << missing.err;
}

}  // namespace
}  // namespace gpstream
