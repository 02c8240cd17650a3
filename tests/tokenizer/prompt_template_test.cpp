// Template::special_tokens: the "<...>" markers of a template, by hand from the template strings of gpe.md §9
// (prompt_template.cpp), each once and in order; text with spaces or braces between angle brackets is not
// one.
#include "tokenizer/prompt_template.h"

#include <gtest/gtest.h>

namespace gpstream::tokenizer {
namespace {

std::vector<std::string> tokens_of(const char* name) {
  return Template::builtin(name).value().special_tokens();
}

TEST(PromptTemplate, SpecialTokensOfTheBuiltInTemplates) {
  using V = std::vector<std::string>;
  EXPECT_EQ(tokens_of("qwen"), (V{"<|im_start|>", "<|im_end|>"}));
  EXPECT_EQ(tokens_of("llama3"),
            (V{"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}));
  EXPECT_EQ(tokens_of("gemma2"), (V{"<bos>", "<start_of_turn>", "<end_of_turn>"}));
  EXPECT_EQ(tokens_of("phi3"), (V{"<|user|>", "<|end|>", "<|assistant|>"}));
  EXPECT_EQ(tokens_of("gpstream"), (V{"<s>", "</src>", "</s>"}));
}

TEST(PromptTemplate, TextBetweenAngleBracketsIsNotAlwaysAToken) {
  const Template t{"custom", "<s>if a < b and c > d <{src}> <>", "</src> <x", "{tgt}:", "<eos>"};
  EXPECT_EQ(t.special_tokens(), (std::vector<std::string>{"<s>", "</src>", "<eos>"}));
}

}  // namespace
}  // namespace gpstream::tokenizer
