// `gpstream version` (also `gpstream --version`, `-V`): prints the version and the instruction set the
// kernels use on this CPU.
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "kernels/blas_kernels.h"
#include "kernels/cpu_isa.h"

namespace {
int run_version(int argc, char** argv) {
  using namespace gpstream::kernels;
  CLI::App app{"Print the version and the instruction set the kernels use on this CPU", "gpstream version"};
  if (auto rc = gpstream::cli::parse_args(app, argc, argv)) return *rc;
  std::printf("gpstream 0.1.0\n");
  std::printf("kernels: %s (CPU %s AVX-512F; GPSTREAM_ISA=avx2|avx512 chooses)\n",
              std::string(isa_name(kernel_isa())).c_str(), cpu_has_avx512() ? "has" : "lacks");
  std::printf("OpenBLAS kernels: %s (OPENBLAS_CORETYPE chooses)\n", blas_core_name().c_str());
  return 0;
}
}  // namespace

GPSTREAM_COMMAND("version", "print the version and the kernels' instruction set", "gpstream version",
                 run_version);
