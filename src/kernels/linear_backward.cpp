// Linear backward through OpenBLAS.
#include "kernels/linear_backward.h"

#include <cblas.h>

namespace gpstream::kernels {

void linear_backward(float* dx, int64_t lddx, float* dweight, float* dbias, const float* dout, int64_t lddo,
                     const float* x, int64_t ldx, const float* w, int64_t rows, int64_t cols, int64_t n_tok,
                     bool accumulate_dx) {
  if (n_tok <= 0 || rows <= 0 || cols <= 0) return;
  const int N = static_cast<int>(n_tok), R = static_cast<int>(rows), C = static_cast<int>(cols);
  if (dx)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, R, 1.0f, dout, static_cast<int>(lddo), w, C,
                accumulate_dx ? 1.0f : 0.0f, dx, static_cast<int>(lddx));
  if (dweight)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, R, C, N, 1.0f, dout, static_cast<int>(lddo), x,
                static_cast<int>(ldx), 1.0f, dweight, C);
  if (dbias)
    for (int64_t t = 0; t < n_tok; ++t)
      for (int64_t r = 0; r < rows; ++r) dbias[r] += dout[t * lddo + r];
}

void linear_backward_ref(float* dx, int64_t lddx, float* dweight, float* dbias, const float* dout,
                         int64_t lddo, const float* x, int64_t ldx, const float* w, int64_t rows,
                         int64_t cols, int64_t n_tok) {
  if (dx)
    for (int64_t t = 0; t < n_tok; ++t)
      for (int64_t c = 0; c < cols; ++c) {
        double s = 0.0;
        for (int64_t r = 0; r < rows; ++r) s += static_cast<double>(dout[t * lddo + r]) * w[r * cols + c];
        dx[t * lddx + c] += static_cast<float>(s);
      }
  if (dweight)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double s = 0.0;
        for (int64_t t = 0; t < n_tok; ++t) s += static_cast<double>(dout[t * lddo + r]) * x[t * ldx + c];
        dweight[r * cols + c] += static_cast<float>(s);
      }
  if (dbias)
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (int64_t t = 0; t < n_tok; ++t) s += dout[t * lddo + r];
      dbias[r] += static_cast<float>(s);
    }
}

}  // namespace gpstream::kernels
