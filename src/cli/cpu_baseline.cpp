// The instruction-set check of the gpstream binary: it is built for x86-64-v3 (AVX2, FMA, F16C, BMI1/2,
// LZCNT, MOVBE), so on an older CPU its first vector instruction would kill it with SIGILL. This file alone
// is compiled for the x86-64 baseline (CMakeLists.txt), and its check runs as a prioritised constructor,
// before any other static initialiser of the binary: on a CPU that lacks one of those instructions the binary
// prints which ones and exits 1.
#include <unistd.h>

#include <cstring>

namespace {

struct Feature {
  const char* name;
  bool present;
};

void write_stderr(const char* s) {
  const size_t n = std::strlen(s);
  if (write(STDERR_FILENO, s, n) < 0) return;
}

__attribute__((constructor(101))) void require_x86_64_v3() {
  __builtin_cpu_init();
  const Feature features[] = {
      {"avx", __builtin_cpu_supports("avx") != 0},     {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},     {"f16c", __builtin_cpu_supports("f16c") != 0},
      {"bmi1", __builtin_cpu_supports("bmi") != 0},    {"bmi2", __builtin_cpu_supports("bmi2") != 0},
      {"lzcnt", __builtin_cpu_supports("lzcnt") != 0}, {"movbe", __builtin_cpu_supports("movbe") != 0},
  };
  bool missing = false;
  for (const Feature& f : features) missing = missing || !f.present;
  if (!missing) return;
  write_stderr("gpstream: this CPU lacks instructions gpstream is built for (x86-64-v3):");
  for (const Feature& f : features) {
    if (f.present) continue;
    write_stderr(" ");
    write_stderr(f.name);
  }
  write_stderr("\n");
  _exit(1);
}

}  // namespace
