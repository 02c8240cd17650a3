// Speech encoder backward: every tensor's gradient against central differences of an independent float64
// forward (speech_encoder_reference.h), on a tiny config (two layers, bounded left context, stacking, a
// partial last chunk), with and without the convolution module.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "../testing/speech_encoder_bounds.h"
#include "speech_encoder/speech_encoder.h"
#include "speech_encoder_reference.h"

namespace gpstream::speech_encoder {
namespace {

SpeechEncoderConfig tiny_config() {
  SpeechEncoderConfig c;
  c.n_mels = 5;
  c.conv_kernel = 3;
  c.conv_channels = 4;
  c.d_model = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_ff = 6;
  c.chunk_frames = 2;
  c.left_chunks = 1;
  c.stack = 2;
  c.proj_hidden = 5;
  c.llm_hidden = 3;
  return c;
}

// Per tensor, along its fp32 gradient ĝ (which a gradient scaled by a factor or missing a term correlated
// with it moves by that fraction of f'(0) = Σ g_i ĝ_i) and along seeded Gaussian noise (which also sees a
// gradient wrong in a direction orthogonal to it, e.g. zero): the float64 reference's central difference of
// f(t) = L(θ + t·e) against ĝ·e. They may differ by
//  - the difference's error (testing::central_difference: truncation from the reference's own divided
//    differences, and its evaluations' rounding, eval_error);
//  - the fp32 gradient's rounding projected on e: γ_N·max|ĝ|·Σ|e_i| (encoder_gradient_projection_bound, N =
//    speech_encoder_backward_roundings);
//  - the double sum ĝ·e: γ_n(u₆₄) Σ|ĝ_i e_i|.
// The steps: at most 2^-14 per entry along ĝ (a coherent step, whose f''' is largest) and 2^-12 along noise
// (weights of size 0.1–1): small enough that the truncation stays below the projected rounding, large enough
// that eval_error/h does too.
void expect_gradients_match(speech_encoder::SpeechEncoderModel& model, const std::vector<float>& grads,
                            const std::function<double()>& reference_loss, double eval_error,
                            int64_t n_frames) {
  const double gamma = testing::gamma_n(testing::speech_encoder_backward_roundings(model, n_frames));
  const std::vector<float> theta = model.values();
  uint64_t seed = 100;
  for (const auto& t : model.tensors()) {
    const float* g = grads.data() + t.offset;
    std::vector<double> along(t.numel), noise(t.numel);
    std::mt19937_64 rng(seed++);
    std::normal_distribution<double> nd(0.0, 1.0);
    double tensor_grad = 0;
    for (size_t i = 0; i < t.numel; ++i) {
      along[i] = g[i], noise[i] = nd(rng);
      tensor_grad += std::fabs(g[i]);
    }
    EXPECT_GT(tensor_grad, 0.0) << t.name << " gets no gradient";
    const std::span<const float> at = std::span<const float>(theta).subspan(t.offset);
    const std::array<std::vector<float>, 2> steps{testing::exact_fd_step(at, along, 0x1p-14),
                                                  testing::exact_fd_step(at, noise, 0x1p-12)};
    for (const auto& e : steps) {
      const std::array<double, 5> ts{-2, -1, 0, 1, 2};
      std::array<double, 5> fv{};
      for (size_t k = 0; k < ts.size(); ++k) {
        for (size_t i = 0; i < t.numel; ++i)
          model.values()[t.offset + i] = static_cast<float>(double(theta[t.offset + i]) + ts[k] * e[i]);
        fv[k] = reference_loss();
      }
      model.values() = theta;
      const auto fd = testing::central_difference(ts, fv, eval_error);
      double predicted = 0, abs_sum = 0;
      for (size_t i = 0; i < t.numel; ++i) {
        predicted += double(g[i]) * e[i];
        abs_sum += std::fabs(double(g[i]) * e[i]);
      }
      const double bound = fd.error +
                           testing::encoder_gradient_projection_bound(gamma, g, e.data(), t.numel) +
                           testing::gamma_n(static_cast<int64_t>(t.numel), testing::kUnitF64) * abs_sum;
      EXPECT_LE(std::fabs(fd.slope - predicted), bound)
          << t.name << ": difference " << fd.slope << ", gradient " << predicted;
    }
  }
}

// The float64 reference's loss Σ out·R (+ Σ e·Q) and its rounding: speech_encoder_forward_bound's count in
// units of u₆₄ times the magnitudes, weighted by |R| (and |Q|).
struct ReferenceLoss {
  std::function<double()> loss;
  double eval_error = 0;
};
ReferenceLoss reference_loss(const speech_encoder::SpeechEncoderModel& model, const std::vector<float>& mel,
                             int64_t frames, const std::vector<float>& r, const std::vector<float>& q = {}) {
  const auto b =
      testing::speech_encoder_forward_bound(model, {.against_reference = true, .n_frames = frames});
  double abs_r = 0, abs_q = 0;
  for (float v : r) abs_r += std::fabs(v);
  for (float v : q) abs_q += std::fabs(v);
  const double u64 = testing::kUnitF64;
  ReferenceLoss l;
  l.eval_error = testing::gamma_n(b.roundings + static_cast<int64_t>(r.size()), u64) * b.magnitude * abs_r +
                 testing::gamma_n(b.encoder_roundings + static_cast<int64_t>(q.size()), u64) *
                     b.encoder_magnitude * abs_q;
  l.loss = [&model, &mel, frames, r, q] {
    const auto ref = testing::speech_encoder_reference(model, mel.data(), frames);
    double s = 0;
    for (size_t i = 0; i < r.size(); ++i) s += ref.out[i] * r[i];
    for (size_t i = 0; i < q.size(); ++i) s += ref.e[i] * q[i];
    return s;
  };
  return l;
}

// The tiny config with the convolution module: a depthwise kernel of 3 reaches across the chunks of 2.
SpeechEncoderConfig tiny_conv_module_config() {
  SpeechEncoderConfig c = tiny_config();
  c.conv_module_kernel = 3;
  return c;
}

void check_every_gradient(const SpeechEncoderConfig& c) {
  ASSERT_TRUE(c.validate().ok());
  SpeechEncoderModel model(c);
  model.init_random(3);
  // Non-trivial norms and biases, so their gradients are tested in a generic state.
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (const auto& t : model.tensors())
    if (!t.is_matrix)
      for (size_t i = 0; i < t.numel; ++i) model.values()[t.offset + i] += u(rng);
  const int64_t frames = 39;  // 19 conv1 rows, 9 encoder frames (partial last chunk), 4 output rows
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> mel(static_cast<size_t>(frames * c.n_mels));
  for (auto& v : mel) v = nd(rng);
  SpeechEncoderPass pass(model);
  const auto& out = pass.forward(mel.data(), frames);
  ASSERT_EQ(out.size(), static_cast<size_t>(4 * c.llm_hidden));
  std::vector<float> r(out.size());
  for (auto& v : r) v = nd(rng);

  std::vector<float> grads(model.size(), 0.0f);
  pass.forward(mel.data(), frames);
  pass.backward(r.data(), grads.data());
  const ReferenceLoss ref = reference_loss(model, mel, frames, r);
  expect_gradients_match(model, grads, ref.loss, ref.eval_error, frames);
}

TEST(SpeechEncoderBackward, MatchesFiniteDifferences) {
  check_every_gradient(tiny_config());
}

TEST(SpeechEncoderBackward, ConvolutionModuleMatchesFiniteDifferences) {
  const auto c = tiny_conv_module_config();
  ASSERT_NE(SpeechEncoderModel(c).find("encoder.layers.1.conv.dw.weight"), nullptr);
  check_every_gradient(c);
}

// A loss on the encoder output too (the auxiliary CTC head's path): loss = Σ out ⊙ R + Σ e ⊙ Q, with
// dLoss/de = Q passed as d_encoder_output; every parameter against central differences.
TEST(SpeechEncoderBackward, EncoderOutputGradientMatchesFiniteDifferences) {
  const auto c = tiny_config();
  SpeechEncoderModel model(c);
  model.init_random(5);
  std::mt19937 rng(23);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t frames = 39;
  std::vector<float> mel(static_cast<size_t>(frames * c.n_mels));
  for (auto& v : mel) v = nd(rng);
  SpeechEncoderPass pass(model);
  const auto& out = pass.forward(mel.data(), frames);
  std::vector<float> r(out.size()), q(pass.encoder_output().size());
  for (auto& v : r) v = nd(rng);
  for (auto& v : q) v = nd(rng);
  std::vector<float> grads(model.size(), 0.0f);
  pass.forward(mel.data(), frames);
  pass.backward(r.data(), grads.data(), q.data());
  const ReferenceLoss ref = reference_loss(model, mel, frames, r, q);
  expect_gradients_match(model, grads, ref.loss, ref.eval_error, frames);
  // Without Q the gradient differs: the test sees the extra term. A must-differ check: without the term both
  // backwards would run identical code on identical inputs and agree bit for bit, so any threshold above 0
  // tells them apart; the Q term moves the gradients' absolute sum by orders of magnitude more than 1e-3.
  std::vector<float> without(model.size(), 0.0f);
  pass.forward(mel.data(), frames);
  pass.backward(r.data(), without.data());
  double diff = 0.0;
  for (size_t i = 0; i < model.size(); ++i) diff += std::fabs(without[i] - grads[i]);
  EXPECT_GT(diff, 1e-3);
}

// Gradients accumulate into the buffer (the caller zeroes it), as the LLM trainer's do.
TEST(SpeechEncoderBackward, Accumulates) {
  const auto c = tiny_conv_module_config();
  SpeechEncoderModel model(c);
  model.init_random(5);
  std::vector<float> mel(static_cast<size_t>(40 * c.n_mels), -1.0f);
  for (size_t i = 0; i < mel.size(); ++i) mel[i] += 0.01f * static_cast<float>(i % 17);
  SpeechEncoderPass pass(model);
  const auto& out = pass.forward(mel.data(), 40);
  std::vector<float> r(out.size(), 1.0f);
  std::vector<float> once(model.size(), 0.0f), twice(model.size(), 0.0f);
  pass.backward(r.data(), once.data());
  pass.backward(r.data(), twice.data());
  pass.backward(r.data(), twice.data());
  // Both calls compute the same terms bit for bit (the same code on the same saved activations). A matrix's
  // gradient is one finished sum added per call (sgemm with β = 1 adds its dot after the reduction over at
  // most 20 rows, far inside one K block; the depthwise kernel adds its own buffer): 0 + v and v + v are
  // exact, so twice is 2·once exactly. The norm weights and biases are added row by row into the buffer
  // (m ≤ T1 = 20 rows): the second call's sums start at once instead of 0, and each sequence is within
  // γ_m(|start| + Σ|s_t|) of its exact sum (Higham (4.4)), so |twice − 2·once| ≤ γ_m(|once| + 2Σ|s_t|), with
  // Σ|s_t| taken as the tensor's largest |once| (the normwise scale of its terms, as in
  // encoder_gradient_projection_bound).
  const double gamma = testing::gamma_n(40 / 2);
  for (const auto& t : model.tensors()) {
    double scale = 0;
    for (size_t i = 0; i < t.numel; ++i) scale = std::max(scale, std::fabs(double(once[t.offset + i])));
    for (size_t i = t.offset; i < t.offset + t.numel; ++i) {
      if (t.is_matrix)
        EXPECT_EQ(twice[i], 2.0f * once[i]) << t.name << " " << i - t.offset;
      else
        EXPECT_NEAR(twice[i], 2.0f * once[i], gamma * (std::fabs(once[i]) + 2 * scale))
            << t.name << " " << i - t.offset;
    }
  }
}

// Heads split across threads give the same outputs and gradients as one thread, bit for bit: each head's
// attention runs whole on one thread with the same code, every linear output is one dot computed whole by
// one thread (the few-row kernel splits output rows into tiles; OpenBLAS's threaded sgemm splits the output's
// rows and columns, never the reduction), and the norms, activations and bias sums are sequential loops.
TEST(SpeechEncoderBackward, ThreadsAgree) {
  auto c = tiny_config();
  c.n_head = 4;  // head_dim 2
  SpeechEncoderModel model(c);
  model.init_random(8);
  std::vector<float> mel(static_cast<size_t>(57 * c.n_mels));
  for (size_t i = 0; i < mel.size(); ++i) mel[i] = std::sin(0.37f * static_cast<float>(i));
  SpeechEncoderPass one(model, 1), two(model, 2);
  const auto out1 = one.forward(mel.data(), 57);
  const auto out2 = two.forward(mel.data(), 57);
  ASSERT_EQ(out1.size(), out2.size());
  for (size_t i = 0; i < out1.size(); ++i) ASSERT_EQ(out1[i], out2[i]) << i;
  std::vector<float> r(out1.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::cos(0.11f * static_cast<float>(i));
  std::vector<float> g1(model.size(), 0.0f), g2(model.size(), 0.0f);
  one.backward(r.data(), g1.data());
  two.backward(r.data(), g2.data());
  for (size_t i = 0; i < g1.size(); ++i) ASSERT_EQ(g1[i], g2[i]) << i;
}

}  // namespace
}  // namespace gpstream::speech_encoder
