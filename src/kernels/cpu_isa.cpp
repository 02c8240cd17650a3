// Run-time choice of the kernels' instruction set (see cpu_isa.h).
#include "kernels/cpu_isa.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpstream::kernels {
namespace {

Isa isa_from_environment() {
  const bool avx512 = cpu_has_avx512();
  const char* env = std::getenv("GPSTREAM_ISA");
  if (env == nullptr || *env == '\0' || std::string(env) == "auto") return avx512 ? Isa::Avx512 : Isa::Avx2;
  const std::string v(env);
  if (v == "avx2") return Isa::Avx2;
  if (v == "avx512") {
    if (!avx512)
      std::fprintf(stderr, "gpstream: GPSTREAM_ISA=avx512 but this CPU has no AVX-512F; using avx2\n");
    return avx512 ? Isa::Avx512 : Isa::Avx2;
  }
  std::fprintf(stderr, "gpstream: GPSTREAM_ISA=%s is not one of auto, avx2, avx512; using auto\n", env);
  return avx512 ? Isa::Avx512 : Isa::Avx2;
}

// -1 until first asked, then the Isa's value.
std::atomic<int> g_isa{-1};

}  // namespace

bool cpu_has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

Isa kernel_isa() {
  int v = g_isa.load(std::memory_order_relaxed);
  if (v < 0) {
    int expected = -1;
    g_isa.compare_exchange_strong(expected, static_cast<int>(isa_from_environment()));
    v = g_isa.load(std::memory_order_relaxed);
  }
  return static_cast<Isa>(v);
}

bool set_kernel_isa(Isa isa) {
  if (isa == Isa::Avx512 && !cpu_has_avx512()) return false;
  g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

std::string_view isa_name(Isa isa) {
  return isa == Isa::Avx512 ? "avx512" : "avx2";
}

}  // namespace gpstream::kernels
