// Which vector instruction set the kernels use, chosen once at run time. gpstream is built for x86-64-v3
// (AVX2, FMA, F16C) and runs on any such CPU; kernels that have an AVX-512 twin use it when the CPU and the
// operating system support AVX-512F (CPUID and XCR0, as the compiler's __builtin_cpu_supports reads them).
// The twins sum every output in the same order as their AVX2 kernels, so the choice changes speed, never a
// result bit (tests/kernels compare the two exactly).
//
// GPSTREAM_ISA=avx2 forces the AVX2 kernels (for comparisons: bench_stream --isa, docs/performance.md);
// GPSTREAM_ISA=avx512 asks for AVX-512 and falls back to AVX2, with a warning on stderr, on a CPU without it.
#pragma once

#include <string_view>

namespace gpstream::kernels {

enum class Isa { Avx2, Avx512 };

// True when this CPU and OS can run AVX-512F code.
bool cpu_has_avx512();

// The instruction set the kernels use now: GPSTREAM_ISA if set, else the best the CPU has.
Isa kernel_isa();

// Selects the kernels' instruction set for the rest of the process (tests, benchmarks). Returns false and
// changes nothing when the CPU cannot run it.
bool set_kernel_isa(Isa isa);

// "avx2" or "avx512".
std::string_view isa_name(Isa isa);

}  // namespace gpstream::kernels
