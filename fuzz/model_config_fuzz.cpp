// Fuzz target: a Hugging Face config.json → ModelConfig.
#include "fuzz_input.h"
#include "model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpstream::model::config_from_hf_json(std::string(gpstream::fuzz::as_text(data, size)));
  return 0;
}
