// Named tensors laid out one after another in a single flat fp32 buffer, as llm.c keeps parameters: a table
// of names, shapes and offsets beside the buffer, so gradients and optimizer moments are buffers of the same
// size indexed by the same offsets. The trainer's ParamSet (train/params.h) and the speech encoder's
// parameters (speech_encoder/speech_encoder_params.h) are such tables, their entries extending FlatTensor
// with what each needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpstream::io {

struct FlatTensor {
  std::string name;
  std::vector<int64_t> shape;
  size_t offset = 0;  // first element in the buffer
  size_t numel = 0;
};

// Appends `entry` (its name and shape set, other fields as the caller wants them) to `table`, with its
// elements zero-filled at the end of `values`; returns its offset.
template <typename Entry>
size_t append_flat_tensor(std::vector<Entry>& table, std::vector<float>& values, Entry entry) {
  entry.numel = 1;
  for (int64_t d : entry.shape) entry.numel *= static_cast<size_t>(d);
  entry.offset = values.size();
  values.resize(values.size() + entry.numel, 0.0f);
  table.push_back(std::move(entry));
  return table.back().offset;
}

// The entry named `name`, or nullptr.
template <typename Entry>
const Entry* find_flat_tensor(const std::vector<Entry>& table, const std::string& name) {
  for (const Entry& e : table)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace gpstream::io
