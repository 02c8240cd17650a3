#include "tokenizer/prompt_template.h"

#include <algorithm>
#include <utility>

namespace gpstream::tokenizer {

namespace {
std::string substitute(std::string s, std::string_view src, std::string_view tgt) {
  for (auto [key, value] : {std::pair<std::string_view, std::string_view>{"{src}", src}, {"{tgt}", tgt}}) {
    for (size_t pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + value.size())) {
      s.replace(pos, key.size(), value);
    }
  }
  return s;
}
}  // namespace

std::vector<std::string> Template::builtin_names() {
  return {"qwen", "llama3", "gemma2", "phi3", "gpstream"};
}

Result<Template> Template::builtin(std::string_view name) {
  if (name == "qwen") {
    return Template{
        "qwen",
        "<|im_start|>system\nTranslate the following {src} paragraph to {tgt}<|im_end|>\n<|im_start|>user\n",
        "<|im_end|>\n", "<|im_start|>assistant\n", "<|im_end|>\n"};
  }
  if (name == "llama3") {
    return Template{
        "llama3",
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>Translate the following {src} "
        "paragraph to {tgt}\n<|start_header_id|>user<|end_header_id|>",
        "<|eot_id|>", "<|start_header_id|>assistant<|end_header_id|>", "<|eot_id|>"};
  }
  if (name == "gemma2") {
    return Template{"gemma2", "<bos><start_of_turn>userTranslate the following {src} paragraph to {tgt}\n",
                    "<end_of_turn>", "<start_of_turn>model", "<end_of_turn>"};
  }
  if (name == "phi3") {
    // Not in the reference (it never finished Phi-3): Phi-3 / Phi-3.5's chat format, one user turn holding
    // the instruction and the source, the assistant turn holding the target.
    return Template{"phi3", "<|user|>\nTranslate the following {src} paragraph to {tgt}\n", "<|end|>\n",
                    "<|assistant|>\n", "<|end|>\n"};
  }
  if (name == "gpstream") {
    // <s> starts the source group, </src> ends the source, </s> (EOS) ends the target.
    return Template{"gpstream", "<s>{src}:", "</src>", "{tgt}:", "</s>"};
  }
  std::string names;
  for (const auto& n : builtin_names()) names += (names.empty() ? "" : ", ") + n;
  return invalid_argument("unknown template \"" + std::string(name) + "\" (built in: " + names + ")");
}

Template Template::with_languages(std::string_view src, std::string_view tgt) const {
  return Template{name, substitute(prompt, src, tgt), substitute(source_end, src, tgt),
                  substitute(header, src, tgt), substitute(target_end, src, tgt)};
}

std::vector<std::string> Template::special_tokens() const {
  std::vector<std::string> out;
  for (const std::string* part : {&prompt, &source_end, &header, &target_end}) {
    for (size_t open = part->find('<'); open != std::string::npos; open = part->find('<', open + 1)) {
      const size_t close = part->find('>', open + 1);
      if (close == std::string::npos) break;
      const std::string inside = part->substr(open + 1, close - open - 1);
      if (inside.empty() || inside.find_first_of(" \t\n<{}") != std::string::npos) continue;
      std::string token = part->substr(open, close - open + 1);
      if (std::find(out.begin(), out.end(), token) == out.end()) out.push_back(std::move(token));
    }
  }
  return out;
}

std::string Template::joined(const std::vector<std::string>& source_words,
                             const std::vector<std::string>& target_words) const {
  std::string s = prompt;
  for (size_t i = 0; i < source_words.size(); ++i) s += (i ? " " : "") + source_words[i];
  s += source_end;
  s += header;
  for (size_t i = 0; i < target_words.size(); ++i) s += (i ? " " : "") + target_words[i];
  s += target_end;
  return s;
}

std::string language_name(std::string_view code) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"en", "English"},    {"fr", "French"},     {"de", "German"},    {"es", "Spanish"}, {"it", "Italian"},
      {"pt", "Portuguese"}, {"nl", "Dutch"},      {"ru", "Russian"},   {"zh", "Chinese"}, {"ja", "Japanese"},
      {"ko", "Korean"},     {"ar", "Arabic"},     {"cs", "Czech"},     {"pl", "Polish"},  {"ro", "Romanian"},
      {"tr", "Turkish"},    {"vi", "Vietnamese"}, {"uk", "Ukrainian"}, {"sv", "Swedish"}, {"hi", "Hindi"}};
  for (auto [c, n] : kNames) {
    if (code == c) return n;
  }
  return std::string(code);
}

}  // namespace gpstream::tokenizer
