// Helpers shared by the GGUF model tests: one causal sequence's logits, and a model written as a GGUF file
// without a tokenizer.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/gguf.h"
#include "model/gguf_model.h"
#include "model/quantize_model.h"
#include "model/transformer.h"

namespace gpstream::testing {

// One causal sequence at positions first_pos, first_pos + 1, ...
inline std::vector<float> causal_logits(model::Transformer& tf, const std::vector<int>& ids,
                                        int first_pos = 0) {
  model::KvCache cache(tf.config());
  model::Batch b;
  for (size_t i = 0; i < ids.size(); ++i)
    b.add({.id = ids[i],
           .pos = static_cast<float>(first_pos + static_cast<int>(i)),
           .group = model::Group::Source,
           .n_src = static_cast<int>(i) + 1,
           .logits = true});
  std::vector<float> logits;
  Status s = tf.forward(b, cache, logits);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return logits;
}

// Writes the model (Hugging Face-named tensors `stored`, in llama.cpp's form) as a GGUF of `type`, no
// tokenizer.
inline Status write_model_gguf(const model::ModelConfig& c, const io::TensorMap& stored, io::DType type,
                               const std::string& path) {
  GPS_ASSIGN(io::GgufMetadata meta, model::gguf_metadata_for(c, "tiny", model::gguf_file_type(type)));
  meta.set("tokenizer.ggml.model", io::GgufValue::string("none"));
  io::TensorMap storage;
  GPS_ASSIGN(auto tensors, model::gguf_tensors_from_hf(c, stored, storage));
  return io::write_gguf(path, meta, tensors);
}

}  // namespace gpstream::testing
