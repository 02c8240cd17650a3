// Random weights for a ModelConfig: tests build tiny models with it, and from-scratch training starts
// from it. Matrices ~ N(0, std²) (the output projections scaled by 1/sqrt(2·n_layer), GPT-2 style),
// norm weights 1 (+ optional noise so tests exercise them), biases small. Deterministic in `seed`.
#pragma once

#include <cstdint>

#include "io/tensor.h"
#include "model/model_config.h"

namespace gpstream::model {

struct RandomInitOptions {
  uint64_t seed = 1;
  float std = 0.02f;
  float norm_noise = 0.0f;  // norm weights = 1 + U(-noise, noise)
  float bias_std = 0.0f;    // biases ~ N(0, bias_std²)
  io::DType dtype = io::DType::F32;
};

io::TensorMap random_tensors(const ModelConfig& config, const RandomInitOptions& options);

}  // namespace gpstream::model
