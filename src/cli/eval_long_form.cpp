// `gpstream eval --long-form` (see eval_long_form.h).
#include "cli/eval_long_form.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "eval/long_form_talks.h"
#include "eval/python_format.h"
#include "eval/scores.h"
#include "tokenizer/segment_encoder.h"
#include "util/clock.h"
#include "util/mapped_file.h"

namespace gpstream::cli {

int run_eval_long_form(const StreamCli& o, const stream::StreamingModel& m,
                       const std::vector<eval::TestPair>& pairs, const LongFormEvalOptions& options) {
  const eval::Talks talks = eval::build_talks(pairs, options.talk_minutes, options.pace);
  if (talks.talks.empty()) {
    std::fprintf(stderr, "gpstream eval: no test pair has words on both sides\n");
    return kExitError;
  }
  if (talks.skipped > 0)
    std::fprintf(stderr, "gpstream eval: %zu pairs with no source or reference words left out\n",
                 talks.skipped);
  size_t n_sentences = 0, n_words = 0;
  for (const auto& t : talks.talks) {
    n_sentences += t.size();
    for (const auto& p : t) n_words += tokenizer::split_words(p.source).size();
  }
  std::fprintf(stderr,
               "gpstream eval: %zu talks, %zu sentences, %zu source words (%.1f minutes at %g words/s)\n",
               talks.talks.size(), n_sentences, n_words, static_cast<double>(n_words) / options.pace / 60.0,
               options.pace);
  const bool tty = isatty(STDERR_FILENO);
  if (!options.json)
    std::printf("%-20s %4s %7s %7s %10s %13s %6s %9s\n", "paradigm", "set", "BLEU", "chrF", "StreamLAAL",
                "StreamLAAL_CA", "empty", "ms/word");
  for (const auto& pname : options.paradigms) {
    for (const SweepPoint& point : options.settings) {
      auto so = session_options(o, m, point, pname);
      if (!so) return std::fprintf(stderr, "gpstream eval: %s\n", so.error().message().c_str()), kExitUsage;
      if (so->paradigm == stream::Paradigm::Offline) {
        std::fprintf(stderr,
                     "gpstream eval: --long-form streams the source; the offline paradigm reads a whole "
                     "sentence first and has no long-form run\n");
        return kExitUsage;
      }
      const std::string label = setting_label(*so);
      const std::string setting = stream::policy_setting(so->policy, so->k);
      const double t0 = steady_seconds();
      std::vector<eval::LongFormRun> runs;
      for (size_t t = 0; t < talks.talks.size(); ++t) {
        const std::string bar =
            label + " talk " + std::to_string(t + 1) + "/" + std::to_string(talks.talks.size());
        auto run = eval::translate_talk(*m.model, *m.codec, *so, talks.talks[t], options.pace,
                                        [&](size_t done, size_t total) {
                                          if (tty && (done % 32 == 0 || done == total))
                                            progress_bar(bar, done, total, t0);
                                        });
        if (!run) return fail("eval", run.error().with_context("talk " + std::to_string(t + 1)));
        runs.push_back(std::move(run).value());
      }
      const double secs = steady_seconds() - t0;
      auto res = eval::score_long_form(runs);
      if (!res) return fail("eval", res.error());
      if (!res->laal.mean) {
        std::fprintf(stderr, "gpstream eval: %s wrote no word: StreamLAAL is undefined\n", label.c_str());
        return kExitError;
      }
      eval::NamedScores scores = {{"BLEU", {res->bleu.score.score, false}},
                                  {"chrF", {res->chrf.score, false}},
                                  {"StreamLAAL", {*res->laal.mean, false}}};
      if (res->laal_ca && res->laal_ca->mean)
        scores.push_back({"StreamLAAL_CA", {*res->laal_ca->mean, false}});
      if (!options.output.empty()) {
        const std::string dir = options.output + "/" + label + "-long-form";
        std::filesystem::create_directories(dir);
        for (size_t t = 0; t < runs.size(); ++t) {
          const std::string text = eval::format_long_form_run(runs[t]);
          if (Status st = write_file_atomic(dir + "/talk-" + std::to_string(t + 1) + ".json",
                                            std::as_bytes(std::span(text)));
              !st.ok())
            return fail("eval", st.error());
        }
        if (Status st = eval::write_scores_tsv(dir + "/scores.tsv", scores); !st.ok())
          return fail("eval", st.error());
      }
      const double ms_per_word = secs * 1000.0 / static_cast<double>(n_words);
      const double laal_ca = scores.size() > 3 ? scores[3].second.value : 0.0;
      if (options.json) {
        std::string j = "{\"paradigm\": \"" + std::string(stream::paradigm_name(so->paradigm)) + "\", " +
                        policy_json_members(so->policy, so->k) + ", \"long_form\": true";
        for (const auto& [n, v] : scores) j += ", \"" + n + "\": " + eval::python_repr(v);
        j += ", \"talks\": " + std::to_string(runs.size()) +
             ", \"sentences\": " + std::to_string(n_sentences) +
             ", \"empty_sentences\": " + std::to_string(res->laal.empty_sentences) +
             ", \"ms_per_word\": " + eval::python_float_repr(ms_per_word);
        std::printf("%s}\n", j.c_str());
      } else {
        std::printf("%-20s %4s %7.2f %7.2f %10.3f %13.1f %6zu %9.2f\n", stream::paradigm_name(so->paradigm),
                    setting.c_str(), res->bleu.score.score, res->chrf.score, *res->laal.mean, laal_ca,
                    res->laal.empty_sentences, ms_per_word);
      }
      std::fflush(stdout);
    }
  }
  return kExitOk;
}

}  // namespace gpstream::cli
