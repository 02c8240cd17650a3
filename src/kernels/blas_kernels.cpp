// Re-execution with OpenBLAS kernels that match the CPU (see blas_kernels.h).
#include "kernels/blas_kernels.h"

#include <cblas.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "kernels/cpu_isa.h"

namespace gpstream::kernels {
namespace {

// OpenBLAS core names (as openblas_get_corename reports them, case-insensitively) whose sgemm uses AVX2 or
// AVX-512: any other on a CPU with AVX2 is a fallback for a CPU model OpenBLAS does not know.
constexpr std::array<std::string_view, 7> kVectorCores = {"haswell",        "skylakex",  "cooperlake", "zen",
                                                          "sapphirerapids", "excavator", "neoversen1"};

bool is_vector_core(const std::string& name) {
  std::string lower;
  for (char c : name) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  for (std::string_view core : kVectorCores)
    if (lower == core) return true;
  return false;
}

bool cpu_has_avx512_skylake_set() {
#if defined(__x86_64__) && defined(__GNUC__)
  return cpu_has_avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

}  // namespace

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name ? std::string(name) : std::string();
}

std::string better_blas_core(const std::string& current) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (is_vector_core(current)) return "";
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return "";
  if (kernel_isa() == Isa::Avx512 && cpu_has_avx512_skylake_set()) return "SkylakeX";
  return "Haswell";
#else
  (void)current;
  return "";
#endif
}

void use_fast_blas_kernels(char** argv) {
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (set != nullptr && *set != '\0') return;
  const std::string core = better_blas_core(blas_core_name());
  if (core.empty()) return;
  if (setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0) return;
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "gpstream: could not restart with OpenBLAS's %s kernels (%s); GEMMs use %s\n",
               core.c_str(), std::strerror(errno), blas_core_name().c_str());
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace gpstream::kernels
