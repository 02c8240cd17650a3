// Fuzz target: a .gguf file (header, metadata keys and values, arrays, tensor infos, alignment, offsets), then
// what the loaders build from a file that reads: ModelConfig from the metadata, the Hugging Face-named
// tensors (dequantizing Q4_K / Q6_K), and the tokenizer from tokenizer.ggml.*.
#include "fuzz_input.h"
#include "io/gguf.h"
#include "model/gguf_model.h"
#include "tokenizer/gguf_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = gpstream::io::read_gguf(gpstream::fuzz::as_file(data, size, ".gguf"));
  if (!file.ok()) return 0;
  if (auto config = gpstream::model::config_from_gguf(*file); config.ok())
    (void)gpstream::model::hf_tensors_from_gguf(*file, *config);
  if (auto tok = gpstream::tokenizer::tokenizer_from_gguf(file->metadata, "fuzz.gguf"); tok.ok())
    (void)tok->decode(tok->encode("Hello, world! Ça va?", true));
  return 0;
}
