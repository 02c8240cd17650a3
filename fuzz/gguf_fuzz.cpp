// Fuzz target: a .gguf file (header, metadata keys and values, arrays, tensor infos, alignment, offsets),
// then what the loaders build from a file that reads: ModelConfig from the metadata, the Hugging Face-named
// tensors (dequantizing Q4_K / Q6_K), the weights (Transformer::load's last step before the forward's
// buffers: every layer's tensors checked), and the tokenizer from tokenizer.ggml.* or the embedded
// tokenizer.huggingface.json.
#include "fuzz_input.h"
#include "io/gguf.h"
#include "model/gguf_model.h"
#include "model/weights.h"
#include "tokenizer/gguf_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = gpstream::io::read_gguf(gpstream::fuzz::as_file(data, size, ".gguf"));
  if (!file.ok()) return 0;
  if (auto config = gpstream::model::config_from_gguf(*file); config.ok()) {
    if (auto tensors = gpstream::model::hf_tensors_from_gguf(*file, *config); tensors.ok())
      (void)gpstream::model::weights_from_tensors(*config, std::move(tensors).value());
  }
  if (auto tok = gpstream::tokenizer::tokenizer_from_gguf(file->metadata, "fuzz.gguf"); tok.ok())
    (void)tok->decode(tok->encode("Hello, world! Ça va?", true));
  return 0;
}
