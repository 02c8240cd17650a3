// OpenBLAS chooses its sgemm kernels once, in a library constructor that runs before main, from the CPU
// model it knows. A CPU newer than the installed OpenBLAS (Debian 12 ships 0.3.21) is not in its tables, and
// it falls back to its SSE3 kernels ("Prescott") even on a CPU with AVX-512: every F32 GEMM of the trainers,
// the speech encoder and linear_forward then runs 2–4× slower (docs/performance.md, "OpenBLAS kernels").
//
// use_fast_blas_kernels corrects that for the process: when OPENBLAS_CORETYPE is unset and OpenBLAS reports
// a core without AVX2 on a CPU that has AVX2 and FMA, it sets OPENBLAS_CORETYPE to the kernels the CPU can
// run (SkylakeX with AVX-512F/BW/DQ/VL, else Haswell; Haswell also under GPSTREAM_ISA=avx2) and re-executes
// the program, which keeps its arguments, environment and open files. OPENBLAS_CORETYPE set by the user is
// always respected, and the re-executed program never re-executes again.
#pragma once

#include <string>

namespace gpstream::kernels {

// The OpenBLAS kernel set in use ("SkylakeX", "Haswell", "Prescott", …).
std::string blas_core_name();

// The OpenBLAS kernel set this CPU should use, or "" when OpenBLAS's own choice is already one with AVX2.
std::string better_blas_core(const std::string& current);

// Call first in main. Returns only when no re-execution is needed or it failed (a warning on stderr then).
void use_fast_blas_kernels(char** argv);

}  // namespace gpstream::kernels
