// Load-time repacking of weights for the kernels (see weight_repack.h).
#include "model/weight_repack.h"

#include <cstdlib>
#include <string_view>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/quant_dot.h"
#include "util/memory_budget.h"

namespace gpstream::model {
namespace {

bool repack_disabled() {
  const char* v = std::getenv("GPSTREAM_REPACK");
  return v && std::string_view(v) == "0";
}

// True when no other TensorMap, file or buffer handle shares what keeps the storage's bytes alive.
bool storage_unshared(const io::TensorMap& storage) {
  for (const auto& owner : storage.owners)
    if (owner.use_count() != 1) return false;
  return true;
}

bool repackable(const kernels::MatrixView& m) {
  return kernels::can_interleave_rows(m) || kernels::can_panel_bf16(m);
}

// A matrix to repack; `shared` when its bytes are also read elsewhere (a tied head: the embedding table).
struct Target {
  kernels::MatrixView* view;
  bool shared;
};

}  // namespace

int repack_weights_for_kernels(Weights& w) {
  if (repack_disabled()) return 0;
  std::vector<Target> targets;
  for (LayerWeights& L : w.layers)
    for (kernels::MatrixView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      if (repackable(*m)) targets.push_back({m, false});
  if (repackable(w.output)) targets.push_back({&w.output, w.output.data == w.tok_embd.data});
  if (targets.empty()) return 0;

  size_t total = 0;
  for (const Target& t : targets) total += t.view->bytes();
  // With the originals released as they are copied, only one matrix is held twice at a time; budget the
  // whole copy anyway, as a shared storage keeps every original.
  if (!check_memory_budget(total, "repacking weights").ok()) return 0;
  auto buffer = HugePageBuffer::allocate(total, "repacking weights");
  if (!buffer.ok()) return 0;  // the original layout still works, only slower

  const bool release = storage_unshared(w.storage);
  std::byte* dst = buffer->data();
  for (const Target& t : targets) {
    kernels::MatrixView& m = *t.view;
    const size_t n = m.bytes();
    if (m.type == kernels::WeightType::BF16) {
      kernels::panel_bf16_rows(m, dst);
      m.layout = kernels::RowLayout::Paneled16;
    } else {
      kernels::interleave_quantized_rows(m, dst);
      m.layout = kernels::RowLayout::Interleaved8;
    }
    if (release && !t.shared) release_pages(m.data, n);
    m.data = dst;
    dst += n;
  }
  buffer->make_read_only();
  w.repacked = std::move(buffer).value();
  return static_cast<int>(targets.size());
}

}  // namespace gpstream::model
