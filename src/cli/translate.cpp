// `gpstream translate -m MODEL [-k K] [--phi F] [--paradigm P] [--pace W] [--delays] ...`: reads stdin
// line by line and feeds each line word by word (paced at W words/s if given, like a speaker) to a
// continuous session, so that every sentence of a line is translated and no word is dropped (a line with
// no sentence end is cut into segments at word boundaries; stream/session.h). On a terminal it shows the
// source growing with the translation growing under it; otherwise it prints one translation per line, or
// with --delays one JSON line per input line with the prediction, delays (source words of the line read
// per target word) and elapsed ms. With the local-agreement policy, --show-tentative shows the tentative
// words (the part of the model's latest continuation not written yet) dim after the translation in the live
// view.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/live_view.h"
#include "eval/instance_log.h"
#include "tokenizer/segment_encoder.h"

namespace gpstream::cli {
namespace {

int run_translate(int argc, char** argv) {
  CLI::App app{"Translate stdin line by line as a live stream (one source word at a time)",
               "gpstream translate"};
  StreamCli o;
  int k = 0;
  double pace = 0;
  bool delays = false, plain = false, show_tentative = false;
  add_stream_options(app, o);
  add_policy_options(app, o);
  app.add_option("-k,--wait-k", k, "wait-k lag in source words (default: the model's)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--pace", pace, "speaking pace in words per second (default: all words at once)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_flag("--delays", delays, "print JSON lines: prediction, delays, elapsed");
  app.add_flag("--plain", plain, "no live view even on a terminal");
  app.add_flag(
      "--show-tentative", show_tentative,
      "with --policy local-agreement: show the words the model proposes but has not written yet, dim "
      "after the translation in the live view (not under NO_COLOR or TERM=dumb)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;

  auto m = load_stream_model(o);
  if (!m) return fail("translate", m.error());
  auto so = session_options(o, *m, k, o.paradigm);
  if (!so) return std::fprintf(stderr, "gpstream translate: %s\n", so.error().message().c_str()), kExitUsage;
  if (show_tentative && so->policy.kind != stream::PolicyKind::LocalAgreement)
    return std::fprintf(stderr,
                        "gpstream translate: --show-tentative shows the local-agreement policy's tentative "
                        "words, and the policy is %s: add --policy local-agreement\n",
                        stream::policy_name(so->policy.kind)),
           kExitUsage;
  so->continuous = true;
  // Every line is a fresh session with the same prompt: its rows are computed once, here.
  if (so->sentence_ends)
    so->prompt_cache = so->sentence_ends->shared_prompt();
  else if (auto cache = stream::PromptCache::build(*m->model, *m->codec))
    so->prompt_cache = std::move(cache).value();
  LiveView view{isatty(STDOUT_FILENO) && !delays && !plain};
  const double word_ms = pace > 0 ? 1000.0 / pace : 0.0;

  std::string line;
  while (std::getline(std::cin, line)) {
    const auto words = tokenizer::split_words(line);
    if (words.empty()) {  // nothing to translate: keep the line structure
      std::printf(
          delays ? "{\"prediction\": \"\", \"source_length\": 0, \"source_words_read\": 0, \"delays\": [], "
                   "\"elapsed\": []}\n"
                 : "\n");
      continue;
    }
    auto session = stream::Session::create(*m->model, *m->codec, *so);
    if (!session) return fail("translate", session.error());
    stream::Session& s = **session;
    const double t0 = steady_ms();
    size_t pushed = 0;
    bool ended = false;
    std::string src_shown, tgt_shown;
    std::vector<std::string> tentative;  // --show-tentative: the latest tentative words not written yet
    auto redraw = [&] {
      std::string t;
      for (const std::string& w : tentative) t += (t.empty() ? "" : " ") + w;
      view.draw(src_shown, tgt_shown, t);
    };
    std::vector<std::string> out;
    std::vector<int> out_delays;
    std::vector<double> out_elapsed;
    auto push_due = [&](bool wait) -> Status {
      // Pushes every word whose time has come; with `wait`, sleeps until the next one is due.
      while (pushed < words.size()) {
        const double due = t0 + static_cast<double>(pushed) * word_ms;
        if (steady_ms() < due) {
          if (!wait) break;
          std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(due - steady_ms()));
        }
        GPS_TRY(s.push_source(words[pushed]));
        src_shown += (src_shown.empty() ? "" : " ") + words[pushed];
        ++pushed;
        redraw();
        wait = false;
        if (word_ms > 0) break;
      }
      if (pushed == words.size() && !ended) {
        ended = true;
        return s.end_source();
      }
      return {};
    };
    if (Status st = push_due(false); !st.ok()) return fail("translate", st.error());
    for (;;) {
      if (word_ms > 0) {
        if (Status st = push_due(false); !st.ok()) return fail("translate", st.error());
      }
      auto e = s.step();
      if (!e) return fail("translate", e.error());
      if (e->kind == stream::EventKind::NeedSource) {
        if (Status st = push_due(true); !st.ok()) return fail("translate", st.error());
      } else if (e->kind == stream::EventKind::Word) {
        out.push_back(e->word);
        out_delays.push_back(e->stream_delay);
        out_elapsed.push_back(steady_ms() - t0);
        tgt_shown += (tgt_shown.empty() ? "" : " ") + e->word;
        // A written word that was the first tentative one moves from dim to bold; any other makes them stale.
        if (!tentative.empty() && tentative.front() == e->word)
          tentative.erase(tentative.begin());
        else
          tentative.clear();
        redraw();
      } else if (e->kind == stream::EventKind::Tentative) {
        if (show_tentative) {
          tentative = e->words;
          redraw();
        }
      } else if (e->kind == stream::EventKind::SegmentEnd) {
        tentative.clear();
      } else if (e->kind == stream::EventKind::Finished) {
        break;
      }
    }
    if (const int read = s.stream_words_read(); read < static_cast<int>(words.size()))
      return fail("translate", invalid_argument("the model left " + std::to_string(words.size() - read) +
                                                " of the line's " + std::to_string(words.size()) +
                                                " words unread, from '" + words[read] + "'"));
    if (view.enabled) {
      view.next();
    } else if (delays) {
      std::string j = "{\"prediction\": " + eval::python_json_string(tgt_shown) +
                      ", \"source_length\": " + std::to_string(words.size()) +
                      ", \"source_words_read\": " + std::to_string(s.stream_words_read()) + ", \"delays\": [";
      for (size_t i = 0; i < out_delays.size(); ++i) j += (i ? ", " : "") + std::to_string(out_delays[i]);
      j += "], \"elapsed\": [";
      for (size_t i = 0; i < out_elapsed.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", out_elapsed[i]);
        j += (i ? ", " : "") + std::string(buf);
      }
      std::printf("%s]}\n", j.c_str());
    } else {
      std::printf("%s\n", tgt_shown.c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("translate", "translate stdin as a live stream (group position encoding, wait-k)",
                 "echo 'Open the file.' | gpstream translate -m models/gpstream-en-fr -k 3",
                 gpstream::cli::run_translate);
