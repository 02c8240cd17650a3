// Batch: the tokens of one forward pass, possibly from several sequences (streams). Each token carries
// a float position (φ may be 0.5), its sequence, its group (source or target region of that
// sequence's KvCache) and its visibility: how many rows of the source region and of the target region
// it attends to, counted after this batch's rows are appended (regions fill in batch order). That pair
// expresses every paradigm of gpe.md §6 and the training mask of §4 — no dense mask, no paradigm code.
//
// A token's input is either its id's row of the embedding table or, for speech frames, a row of the
// batch's own embedding buffer (BatchToken::embedding ≥ 0). Rows of both kinds mix freely in one batch.
// Buffer rows live in the space of the embedding table: the model treats them exactly as a table row
// (Gemma 2 multiplies both by its embedding scale, as Hugging Face does with inputs_embeds).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/kv_cache.h"

namespace gpstream::model {

struct BatchToken {
  int32_t id = 0;    // token id (unused when embedding ≥ 0)
  float pos = 0.0f;  // RoPE position
  int seq = 0;       // index into the caches passed to forward()
  Group group = Group::Source;
  int n_src = 0;           // visible source rows
  int n_tgt = 0;           // visible target rows
  bool logits = false;     // compute this row's logits
  bool attention = false;  // record its attention over its source rows (ForwardModel::source_attention)
  int32_t embedding = -1;  // ≥ 0: the input is row `embedding` of Batch::embeddings, not id's table row
};

struct Batch {
  std::vector<BatchToken> tokens;
  // Input embedding rows, row-major, embedding_width floats each (the model's n_embd: forward checks).
  std::vector<float> embeddings;
  int embedding_width = 0;  // 0 until the first row

  // Appends a token (built with designated initializers: {.id = …, .pos = …, .n_src = …}); returns its index.
  int add(const BatchToken& token) {
    tokens.push_back(token);
    return static_cast<int>(tokens.size()) - 1;
  }
  // Appends a token whose input is `row` (copied into the buffer; token.id and token.embedding are ignored);
  // returns its index, or -1 (nothing added) when `row` is empty or its width differs from the rows already
  // in the buffer.
  int add_embedded(std::span<const float> row, BatchToken token) {
    if (row.empty() || (embedding_width != 0 && row.size() != static_cast<size_t>(embedding_width)))
      return -1;
    embedding_width = static_cast<int>(row.size());
    token.id = 0;
    token.embedding = n_embedding_rows();
    embeddings.insert(embeddings.end(), row.begin(), row.end());
    tokens.push_back(token);
    return static_cast<int>(tokens.size()) - 1;
  }
  int size() const { return static_cast<int>(tokens.size()); }
  int n_logits() const {
    int n = 0;
    for (const auto& t : tokens) n += t.logits;
    return n;
  }
  int n_embedding_rows() const {
    return embedding_width > 0 ? static_cast<int>(embeddings.size() / static_cast<size_t>(embedding_width))
                               : 0;
  }
};

}  // namespace gpstream::model
