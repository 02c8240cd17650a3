// Fuzz target: a .safetensors file (header length, JSON header, dtypes, shapes, data offsets).
#include "fuzz_input.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpstream::io::TensorMap tensors;
  (void)gpstream::io::read_safetensors(gpstream::fuzz::as_file(data, size, ".safetensors"), tensors);
  return 0;
}
