// Speech encoder backward: every parameter's gradient against a central finite difference of the forward,
// on a tiny config (two layers, bounded left context, stacking, a partial last chunk), with and without the
// convolution module.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "audio/speech_encoder.h"

namespace gpstream::audio {
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

// loss = sum(out * R), accumulated in double.
double loss_of(SpeechEncoderPass& pass, const std::vector<float>& mel, int64_t frames,
               const std::vector<float>& r) {
  const auto& out = pass.forward(mel.data(), frames);
  double s = 0.0;
  for (size_t i = 0; i < out.size(); ++i) s += static_cast<double>(out[i]) * r[i];
  return s;
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

  const float eps = 1e-2f;
  double err2 = 0.0, ref2 = 0.0;
  for (const auto& t : model.tensors()) {
    double tensor_grad = 0.0;
    for (size_t i = 0; i < t.numel; ++i) {
      float& p = model.values()[t.offset + i];
      const float saved = p;
      p = saved + eps;
      const double up = loss_of(pass, mel, frames, r);
      p = saved - eps;
      const double down = loss_of(pass, mel, frames, r);
      p = saved;
      const double fd = (up - down) / (2.0 * static_cast<double>(eps));
      const double g = grads[t.offset + i];
      EXPECT_NEAR(g, fd, 2e-3 + 2e-2 * std::fabs(fd)) << t.name << "[" << i << "]";
      err2 += (g - fd) * (g - fd);
      ref2 += fd * fd;
      tensor_grad += std::fabs(g);
    }
    EXPECT_GT(tensor_grad, 0.0) << t.name << " gets no gradient";
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 2e-3);
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
  auto loss = [&] {
    double s = loss_of(pass, mel, frames, r);
    const auto& e = pass.encoder_output();
    for (size_t i = 0; i < e.size(); ++i) s += static_cast<double>(e[i]) * q[i];
    return s;
  };
  std::vector<float> grads(model.size(), 0.0f);
  pass.forward(mel.data(), frames);
  pass.backward(r.data(), grads.data(), q.data());
  const float eps = 1e-2f;
  double err2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < model.size(); ++i) {
    float& p = model.values()[i];
    const float saved = p;
    p = saved + eps;
    const double up = loss();
    p = saved - eps;
    const double down = loss();
    p = saved;
    const double fd = (up - down) / (2.0 * static_cast<double>(eps));
    err2 += (grads[i] - fd) * (grads[i] - fd);
    ref2 += fd * fd;
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 2e-3);
  // Without Q the gradient differs: the test sees the extra term.
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
  for (size_t i = 0; i < once.size(); ++i)
    ASSERT_NEAR(twice[i], 2.0f * once[i], 1e-5f + 1e-5f * std::fabs(once[i]));
}

// Heads split across threads give the same outputs and gradients as one thread.
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
  for (size_t i = 0; i < out1.size(); ++i) ASSERT_NEAR(out1[i], out2[i], 1e-6f);
  std::vector<float> r(out1.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::cos(0.11f * static_cast<float>(i));
  std::vector<float> g1(model.size(), 0.0f), g2(model.size(), 0.0f);
  one.backward(r.data(), g1.data());
  two.backward(r.data(), g2.data());
  for (size_t i = 0; i < g1.size(); ++i) ASSERT_NEAR(g1[i], g2[i], 1e-5f + 1e-5f * std::fabs(g1[i])) << i;
}

}  // namespace
}  // namespace gpstream::audio
