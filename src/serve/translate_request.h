// POST /v1/translate: a whole text in, its simultaneous translation out. Each line is one sentence,
// streamed word by word through the engine like `gpstream translate` (all words available at once), a
// few lines at a time; the reply gives per sentence the words, delays (source words read) and elapsed
// ms, plus SimulEval's latency scores (eval/latency.h: AL, LAAL, AP, DAL, ATD), per sentence and over
// the text; with a reference (one line per source line) also BLEU and reference-length latency.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "serve/engine.h"

namespace gpstream::serve {

struct TranslateRequest {
  std::vector<std::string> lines;  // source sentences (empty lines kept: empty translations)
  std::optional<std::vector<std::string>> reference;
  StreamOptions options;
};

// {"text": "...", "reference": "..."?, "k", "paradigm", "phi", "source_lang", "target_lang"}.
Result<TranslateRequest> parse_translate_request(std::string_view body, size_t max_lines);

// Runs the request; done(http_status, json_body) is called once, on the engine thread or at once.
void run_translate(Engine& engine, TranslateRequest request, std::function<void(int, std::string)> done);

}  // namespace gpstream::serve
