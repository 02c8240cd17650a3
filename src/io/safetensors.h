// safetensors: read (single file or sharded through model.safetensors.index.json, memory-mapped,
// every length and offset bounds-checked) and write (atomically). Format: 8-byte little-endian header
// length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}},
// then the data; offsets are relative to the end of the header.
#pragma once

#include <string>
#include <vector>

#include "io/tensor.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace gpstream::io {

// Parses one .safetensors file and adds its tensors to `into` (names must not repeat).
// Residency::Resident reads the file into private huge-page memory instead of mapping it
// (util/mapped_file.h).
Status read_safetensors(const std::string& path, TensorMap& into, Residency residency = Residency::Mapped);

// Reads every tensor of a model directory: model.safetensors, or the shards listed by
// model.safetensors.index.json ("weight_map"), or every *.safetensors file if neither exists.
Result<TensorMap> read_safetensors_dir(const std::string& dir, Residency residency = Residency::Mapped);

struct TensorToWrite {
  std::string name;
  TensorData data;
};

// Writes tensors (in the given order) to `path` via a temporary file + fsync + rename.
Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata = {});

}  // namespace gpstream::io
