// `gpstream tokenize -t TOKENIZER [--special] [--decode]`: stdin lines -> one JSON array of ids per line
// (special tokens only with --special); --decode reads JSON arrays and prints the decoded text, one JSON
// string per line (as the Hugging Face oracle script does), special tokens kept.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "tokenizer/tokenizer.h"

namespace {

int run_tokenize(int argc, char** argv) {
  CLI::App app{"Encode stdin lines to token ids (or decode id arrays) with a Hugging Face tokenizer.json",
               "gpstream tokenize"};
  std::string path;
  bool special = false, decode = false;
  app.add_option("-t,--tokenizer", path, "tokenizer.json or a directory holding one")->required();
  app.add_flag("--special", special, "add the tokenizer's special tokens (BOS/EOS)");
  app.add_flag("--decode", decode, "read JSON id arrays and print the decoded text as JSON strings");
  if (auto code = gpstream::cli::parse_args(app, argc, argv)) return *code;

  auto tok = gpstream::tokenizer::Tokenizer::load(path);
  if (!tok.ok()) return gpstream::cli::fail("tokenize", tok.error());

  std::ios::sync_with_stdio(false);
  std::string line, out;
  std::vector<int32_t> ids;
  size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    out.clear();
    if (decode) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_array()) {
        return gpstream::cli::fail("tokenize",
                                   gpstream::format_error("stdin line " + std::to_string(line_no) +
                                                          ": expected a JSON array of ids"));
      }
      ids.clear();
      for (const auto& v : j) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= tok->vocab_size()) {
          return gpstream::cli::fail(
              "tokenize", gpstream::out_of_range("stdin line " + std::to_string(line_no) + ": " + v.dump() +
                                                 " is not a token id"));
        }
        ids.push_back(v.get<int32_t>());
      }
      out = nlohmann::json(tok->decode(ids, false))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      ids.clear();
      gpstream::tokenizer::EncodeOptions o;
      o.add_special = special;
      tok->encode(line, o, ids);
      out.push_back('[');
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out.push_back(',');
        out += std::to_string(ids[i]);
      }
      out.push_back(']');
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}

}  // namespace

GPSTREAM_COMMAND("tokenize", "encode text to token ids or decode ids (Hugging Face tokenizer.json)",
                 "echo 'Open the file.' | gpstream tokenize -t models/gpstream-en-fr", run_tokenize);
