// Moving models between Hugging Face directories and GGUF files (`gpstream convert`):
//   HF directory → GGUF: config.json → {arch}.* keys, tensors renamed (and llama's Q/K rows interleaved)
//     in the chosen storage type (quantize_model.h), tokenizer.json → tokenizer.ggml.* plus the file itself
//     under tokenizer.huggingface.json, gpstream.json and tokenizer_config.json under gpstream's own keys
//     (gpstream.json once the caller's check accepts it).
//   GGUF → HF directory: tensors dequantized to F32 / F16 / BF16 in model.safetensors, config.json,
//     tokenizer.json (when the GGUF has a tokenizer), tokenizer_config.json and gpstream.json when stored.
#pragma once

#include <functional>
#include <string>

#include "io/tensor.h"
#include "util/error.h"

namespace gpstream::model {

// The GGUF metadata key under which a model's gpstream.json is stored verbatim.
inline constexpr const char* kGpstreamJsonGgufKey = "gpstream.json";

struct ConvertReport {
  int tensors = 0;
  bool tokenizer = false;
  uint64_t bytes = 0;  // size of the weights written
};

struct HfToGgufOptions {
  std::string name;  // general.name ("" = the directory's name)
  // Checks the text of the directory's gpstream.json (`path`: the file, for messages) before it is stored; an
  // error refuses the conversion (`gpstream convert` passes stream::ModelMeta::parse). Empty: stored
  // unchecked.
  std::function<Status(const std::string& text, const std::string& path)> check_gpstream_json;
};

// `type`: F32, F16, BF16, Q8_0 or Q4_0.
Result<ConvertReport> convert_hf_to_gguf(const std::string& hf_dir, const std::string& gguf_path,
                                         io::DType type, const HfToGgufOptions& options = {});
// `type`: F32, F16 or BF16. Creates `hf_dir` if needed.
Result<ConvertReport> convert_gguf_to_hf(const std::string& gguf_path, const std::string& hf_dir,
                                         io::DType type);

}  // namespace gpstream::model
