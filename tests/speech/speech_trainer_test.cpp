// Speech training: the joint gradient (LLM loss → input rows → encoder parameters) against finite
// differences of the whole chain; the training loop overfits two real espeak-ng utterances, resumes
// bit-identically from a checkpoint, and exports a directory that loads as a speech model; bad configs.
#include "speech/speech_trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <random>

#include "../model/reference_transformer.h"
#include "../speech_encoder/speech_encoder_reference.h"
#include "../testing/forward_bounds.h"
#include "../testing/speech_encoder_bounds.h"
#include "../testing/temp_dir.h"
#include "audio/log_mel.h"
#include "speech/speech_loader.h"
#include "speech/speech_manifest.h"
#include "speech/speech_model.h"
#include "speech_encoder/speech_encoder.h"
#include "speech_test_util.h"
#include "stream/layout.h"
#include "stream/model_meta.h"
#include "stream/tokenizer_codec.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "util/mapped_file.h"

namespace gpstream::speech {
namespace {

using testing::TempDir;

// Loss of the LLM over the group layout of one utterance whose source rows are the encoder's output.
struct Chain {
  std::unique_ptr<train::TrainModel> tm;
  std::unique_ptr<stream::TokenizerCodec> codec;
  std::vector<float> mel;
  int64_t n_frames = 0;
  std::string transcript;

  double loss(speech_encoder::SpeechEncoderPass& pass, train::TrainBatch& b) {
    const std::vector<float>& rows = pass.forward(mel.data(), n_frames);
    const int64_t R = pass.rows(), rpc = pass_rows_per_chunk;
    std::vector<int> chunk_rows;
    for (int64_t left = R; left > 0; left -= rpc) chunk_rows.push_back(static_cast<int>(std::min(rpc, left)));
    stream::LayoutOptions o;
    o.k = 2;
    o.n_vocab = tm->config().n_vocab;
    auto l = stream::make_layout(*codec, chunk_rows, transcript, o);
    EXPECT_TRUE(l.ok()) << l.error().message();
    b.seqs.assign(1, train::sequence_from_layout(*l));
    b.seqs[0].inputs.assign(rows.begin(), rows.begin() + R * tm->config().n_embd);
    train::ForwardOptions fo;
    fo.training = false;
    auto s = tm->forward(b, fo);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return *s / static_cast<double>(b.n_labels());
  }
  int64_t pass_rows_per_chunk = 2;
};

// The chain in float64: speech_encoder_reference's rows as the LLM's input rows, through reference_forward
// (tests/model/reference_transformer.h) on the given (merged, fp32) LLM weights. An input row enters as an
// extra row of the embedding table (ids n_vocab + r), which the tied head never reads (it takes the first
// n_vocab rows); the rows are stored as fp32 there (one rounding each, an evaluation error below).
double reference_chain_loss(const model::ModelConfig& c, const io::TensorMap& llm,
                            const speech_encoder::SpeechEncoderModel& enc, const std::vector<float>& mel,
                            int64_t n_frames, const train::TrainSequence& s) {
  const auto ref = testing::speech_encoder_reference(enc, mel.data(), n_frames);
  const std::string emb = model::hf_name(model::TensorId::TokEmbd);
  std::vector<float> table = io::tensor_to_f32(*llm.find(emb));
  for (double v : ref.out) table.push_back(static_cast<float>(v));
  io::TensorMap w;
  w.owners = llm.owners;
  for (const auto& [name, t] : llm.tensors)
    if (name != emb) w.tensors.emplace(name, t);
  const int64_t rows = static_cast<int64_t>(ref.out.size()) / c.n_embd;
  w.add_f32(emb, {c.n_vocab + rows, c.n_embd}, std::move(table));
  std::vector<testing::RefToken> toks;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool audio = !s.input_row.empty() && s.input_row[i] >= 0;
    toks.push_back({audio ? c.n_vocab + s.input_row[i] : s.ids[i], static_cast<double>(s.positions[i])});
  }
  const size_t T = s.size();
  std::vector<int> rank(T);
  int cnt[2] = {0, 0};
  for (size_t j = 0; j < T; ++j) rank[j] = cnt[s.groups[j]]++;
  std::vector<std::vector<bool>> mask(T, std::vector<bool>(T));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j) mask[i][j] = s.groups[j] ? rank[j] < s.n_tgt[i] : rank[j] < s.n_src[i];
  const auto l = testing::reference_label_loss(testing::reference_forward(c, w, toks, mask), s.labels);
  return l.sum / static_cast<double>(l.rows);
}

TEST(SpeechTraining, JointGradientMatchesFiniteDifferences) {
  TempDir dir;
  testing::write_tiny_speech_llm(dir.path());
  Chain ch;
  auto meta = stream::ModelMeta::load(dir.path());
  ASSERT_TRUE(meta.ok());
  auto tok = tokenizer::Tokenizer::load(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  ch.codec =
      std::make_unique<stream::TokenizerCodec>(std::make_shared<const tokenizer::Tokenizer>(std::move(*tok)),
                                               meta->prompt_template.with_languages("English", "English"));
  const model::ModelConfig c = testing::tiny_speech_llm_config();
  model::RandomInitOptions ro;
  ro.seed = 5;
  ro.std = 0.1f;
  train::LoraOptions lo{4, 8.0f, 0.0f, {true, true, true, true, true, true, true}};
  auto tm = train::TrainModel::create(c, model::random_tensors(c, ro), lo, 1, train::TrainShape{256, 256}, 1);
  ASSERT_TRUE(tm.ok());
  ch.tm = std::move(*tm);
  for (float& v : ch.tm->lora().values) v += 0.05f;  // non-zero B: the adapters shape the gradient too

  auto manifest = speech::read_speech_manifest(testing::speech_sample_dir() + "/train/manifest.tsv");
  ASSERT_TRUE(manifest.ok()) << manifest.error().message();
  const speech::SpeechUtterance& u = manifest->utterances[1];
  speech::SpeechLoadOptions lopt;
  lopt.add_noise = false;
  auto sp = speech::load_speech_utterance(u, 0, lopt);
  ASSERT_TRUE(sp.ok());
  ch.mel = audio::log_mel(sp->samples);
  ch.n_frames = static_cast<int64_t>(ch.mel.size()) / 80;
  ch.transcript = u.transcript;

  speech_encoder::SpeechEncoderModel enc(testing::tiny_speech_encoder_config(c.n_embd));
  enc.init_random(9);
  speech_encoder::SpeechEncoderPass pass(enc, 1);
  ch.pass_rows_per_chunk = enc.config().rows_per_chunk();
  train::TrainBatch b;
  ch.loss(pass, b);
  ASSERT_GT(b.seqs[0].inputs.size(), 0u);
  ch.tm->zero_grad();
  ch.tm->backward(1.0f / static_cast<float>(b.n_labels()));
  std::vector<float> g(enc.size(), 0.0f);
  pass.backward(ch.tm->input_grad(0).data(), g.data());

  // The joint gradient (LLM input gradient → pass.backward) against central differences of the float64 chain
  // along the gradient (f'(0) = Σ g_i ĝ_i, which a gradient scaled or missing a correlated term moves by that
  // fraction; steps of at most 2^-14 per entry, where the truncation h²|f'''|/6 of this coherent step stays
  // below the projected rounding) and two seeded Gaussian directions (at most 2^-10), exact in fp32.
  // They may differ by
  //  - the difference's error (central_difference), its evaluations within eval_error of the exact chain:
  //    the float64 LLM's own rounding (forward_order_bound's loss bound in units of u₆₄), the encoder
  //    reference's (its count in u₆₄ times its output magnitude, a relative error of the input rows, which
  //    the LLM's first RMSNorm passes on: ≤ 2·that·|head| on the loss, as forward_order_bound's loss), and
  //    the rows stored as fp32 in the embedding table, ≤ u|row_i| each, moving the loss by
  //    ≤ u Σ|∂L/∂row_i||row_i| (first order; ∂L/∂row from the fp32 input gradient, counted twice for its own
  //    error);
  //  - the fp32 gradient's rounding projected on e: per encoder tensor γ·max|ĝ|·Σ|e_i|, γ with the LLM's
  //    input-gradient chain (backward_order_length with the adapters, and the adapters merged into fp32
  //    weights for the reference: rank + 1 more) and the encoder's (speech_encoder_backward_roundings);
  //  - the double sum ĝ·e: γ_n(u₆₄) Σ|ĝ_i e_i|.
  ch.tm->merge_lora_into_base();
  const io::TensorMap merged = ch.tm->base().to_tensors(io::DType::F32);
  const train::TrainSequence seq = b.seqs[0];
  const auto inf = testing::tiny_transformer(c, merged);
  const int64_t n_rows = static_cast<int64_t>(seq.size());
  const double u64_scale = testing::kUnitF64 / testing::kUnitF32;
  const testing::ForwardOrderBound llm =
      testing::forward_order_bound(c, inf->weights(), {.against_reference = true, .max_rows = n_rows});
  const double head = testing::normed_linear_magnitude(inf->weights().output, inf->weights().output_norm,
                                                       c.norm_weight_offset);
  const auto eb =
      testing::speech_encoder_forward_bound(enc, {.against_reference = true, .n_frames = ch.n_frames});
  const std::vector<float>& rows = seq.inputs;
  const std::vector<float>& ig = ch.tm->input_grad(0);
  double min_norm = 1e300, stored = 0;
  for (size_t r = 0; r * c.n_embd < rows.size(); ++r) {
    double ss = 0;
    for (int64_t j = 0; j < c.n_embd; ++j) ss += std::pow(double(rows[r * c.n_embd + j]), 2);
    min_norm = std::min(min_norm, std::sqrt(ss));
  }
  for (size_t i = 0; i < rows.size(); ++i)
    stored += 2 * testing::kUnitF32 * std::fabs(double(ig[i]) * rows[i]);
  const double rows_rel = std::sqrt(double(c.n_embd)) * testing::gamma_n(eb.roundings, testing::kUnitF64) *
                          eb.magnitude / min_norm;
  const double eval_error = llm.loss * u64_scale + 2 * rows_rel * head + stored;
  const int64_t llm_chain = testing::backward_order_length(
      c, {.n_rows = n_rows, .max_rows = n_rows, .lora_rank = lo.rank, .extra = lo.rank + 1});
  const double gamma =
      testing::gamma_n(llm_chain + testing::speech_encoder_backward_roundings(enc, ch.n_frames));

  const std::vector<float> theta = enc.values();
  std::vector<std::vector<double>> dirs(1, std::vector<double>(g.begin(), g.end()));
  for (uint64_t dir_seed = 0; dir_seed < 2; ++dir_seed) {
    std::mt19937_64 rng(40 + dir_seed);
    std::normal_distribution<double> nd(0.0, 1.0);
    dirs.emplace_back(theta.size());
    for (double& x : dirs.back()) x = nd(rng);
  }
  for (size_t d = 0; d < dirs.size(); ++d) {
    const std::vector<float> e = testing::exact_fd_step(theta, dirs[d], d == 0 ? 0x1p-14 : 0x1p-10);
    const std::array<double, 5> ts{-2, -1, 0, 1, 2};
    std::array<double, 5> fv{};
    for (size_t k = 0; k < ts.size(); ++k) {
      for (size_t i = 0; i < theta.size(); ++i)
        enc.values()[i] = static_cast<float>(double(theta[i]) + ts[k] * e[i]);
      fv[k] = reference_chain_loss(c, merged, enc, ch.mel, ch.n_frames, seq);
    }
    enc.values() = theta;
    const auto fd = testing::central_difference(ts, fv, eval_error);
    double predicted = 0, abs_sum = 0, projected = 0;
    for (size_t i = 0; i < theta.size(); ++i) {
      predicted += double(g[i]) * e[i];
      abs_sum += std::fabs(double(g[i]) * e[i]);
    }
    for (const auto& t : enc.tensors())
      projected += testing::encoder_gradient_projection_bound(gamma, g.data() + t.offset, e.data() + t.offset,
                                                              t.numel);
    const double bound = fd.error + projected +
                         testing::gamma_n(static_cast<int64_t>(theta.size()), testing::kUnitF64) * abs_sum;
    EXPECT_LE(std::fabs(fd.slope - predicted), bound)
        << "direction " << d << ": difference " << fd.slope << ", gradient " << predicted;
    if (d == 0) {
      EXPECT_GT(std::fabs(predicted), 10 * bound) << "the check must see a 10% error along ĝ";
    }
  }
}

std::string config_json(const std::string& llm, const std::string& out, int64_t steps,
                        const std::string& training = "full") {
  const std::string data = testing::speech_sample_dir();
  return R"({"llm": ")" + llm + R"(", "train_manifest": ")" + data + R"(/train/manifest.tsv",
    "dev_manifest": ")" +
         data + R"(/dev/manifest.tsv", "output_dir": ")" + out + R"(",
    "encoder": {"conv_channels": 16, "d_model": 16, "n_layer": 1, "n_head": 2, "n_ff": 32, "chunk_frames": 4,
                "proj_hidden": 32},
    "llm_training": ")" +
         training +
         R"(", "lora_rank": 4, "lora_alpha": 8, "k_min": 1, "k_max": 3, "phi": [0, 256], "batch_utterances": 2, "steps": )" +
         std::to_string(steps) + R"(, "lr": 0.02, "warmup_steps": 2, "schedule": "constant", "noise": true,
    "threads": 1, "dev_every": 0, "ckpt_every_steps": 3, "seed": 4})";
}

TEST(SpeechTraining, OverfitsResumesExactlyAndExports) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);

  auto cfg = parse_speech_train_config(config_json(llm, dir.file("a"), 40));
  ASSERT_TRUE(cfg.ok()) << cfg.error().message();
  auto a = run_speech_training(*cfg);
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_EQ(a->losses.size(), 40u);
  EXPECT_LT(a->losses.back(), 0.5 * a->losses.front());
  ASSERT_TRUE(a->dev_loss.has_value());
  ASSERT_TRUE(a->dev_ctc_wer.has_value());  // the CTC head's greedy transcripts of the dev utterances
  EXPECT_GE(*a->dev_ctc_wer, 0.0);
  speech_encoder::SpeechEncoderConfig ec = cfg->encoder;
  ec.llm_hidden = 32;
  EXPECT_EQ(a->n_encoder_params, ec.parameter_count());

  // Killed after step 3 (a checkpoint was written at step 3), then resumed: steps 4..6 identical.
  auto cfg6 = parse_speech_train_config(config_json(llm, dir.file("b"), 6, "lora"));
  ASSERT_TRUE(cfg6.ok());
  auto full = run_speech_training(*cfg6);
  ASSERT_TRUE(full.ok()) << full.error().message();
  auto cfg6c = parse_speech_train_config(config_json(llm, dir.file("c"), 6, "lora"));
  SpeechTrainOptions stop;
  stop.stop_after_steps = 4;  // dies after step 4: resumes from the step-3 checkpoint
  auto part = run_speech_training(*cfg6c, stop);
  ASSERT_TRUE(part.ok()) << part.error().message();
  {
    // loss.svg is rewritten at every checkpoint: the step-3 one (3 training losses) outlives the dead run.
    std::ifstream in(dir.file("c") + "/loss.svg");
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = svg.find(" points=\"");
    ASSERT_NE(at, std::string::npos) << "no loss.svg before training ended";
    int points = 0;
    for (size_t i = at + 9; i < svg.size() && svg[i] != '"'; ++i) points += svg[i] == ',' ? 1 : 0;
    EXPECT_EQ(points, 3);
  }
  SpeechTrainOptions resume;
  resume.resume = dir.file("c");
  auto rest = run_speech_training(*cfg6c, resume);
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_EQ(rest->first_step, 3);
  ASSERT_EQ(rest->losses.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(rest->losses[i], full->losses[3 + i]) << "step " << 4 + i;

  // The export is a speech model.
  auto m = SpeechModel::load(a->model_dir);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->encoder->config().llm_hidden, 32);
  EXPECT_EQ(m->llm.meta.k_max, 3);
  EXPECT_EQ(m->llm.meta.k, 3);  // export_k 0: the default wait-k is k_max
  EXPECT_DOUBLE_EQ(m->chunk_ms(), 160.0);
  EXPECT_NE(m->llm.meta.trained_json.find("\"task\":\"speech\""), std::string::npos);
  EXPECT_NE(m->llm.meta.trained_json.find("\"phi_trained\":[\"0\",\"256\"]"), std::string::npos)
      << m->llm.meta.trained_json;
  EXPECT_EQ(m->llm.meta.phi.value, 0.0f);
}

// The batch's features are computed on every thread at once, then used in the data order: two threads
// train what one does (the same utterances in the same order, the same skips), up to the rounding of
// threaded GEMMs.
// max_seq 16 skips the longer of the two sample utterances, so batches also reach into the next epoch.
TEST(SpeechTraining, TwoThreadsTrainWhatOneDoes) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);
  std::vector<double> losses[2];
  int64_t skipped[2] = {0, 0};
  for (int t = 0; t < 2; ++t) {
    std::string json = config_json(llm, dir.file("t" + std::to_string(t)), 5);
    const std::string one = R"("threads": 1)";
    json.replace(json.find(one), one.size(), R"("threads": )" + std::to_string(t + 1) + R"(, "max_seq": 16)");
    auto cfg = parse_speech_train_config(json);
    ASSERT_TRUE(cfg.ok()) << cfg.error().message();
    auto r = run_speech_training(*cfg);
    ASSERT_TRUE(r.ok()) << r.error().message();
    losses[t] = r->losses;
    skipped[t] = r->skipped;
  }
  EXPECT_GT(skipped[0], 0) << "max_seq should skip some utterances";
  EXPECT_EQ(skipped[0], skipped[1]);
  ASSERT_EQ(losses[0].size(), 5u);
  ASSERT_EQ(losses[1].size(), 5u);
  // The first step's loss comes from the forward alone, on the same weights and features: every value of
  // both forwards (encoder and LLM) is computed by the same code whatever the thread count — rows and heads
  // are split across threads, each linear output is one dot computed whole by one thread (the few-row
  // kernel's row tiles; OpenBLAS's threaded sgemm splits the output, never the reduction), and the losses
  // are summed in row order — so it agrees bit for bit. The backward's reductions are split by thread (the
  // norm weights' per-thread partial sums), so the gradients and every later step differ by rounding, and
  // Adam's first step g/(|g| + ε) turns an ulp of difference in a gradient entry near zero into a move of up
  // to 2·lr: no bound on the later losses follows from the rounding, and they are not compared.
  EXPECT_EQ(losses[1][0], losses[0][0]);
}

// Trains a 6-step run to its step-3 checkpoint (stopped as if killed at step 4), then resumes it with
// export_k 2 after `adjust` has changed the config and the options; expects no step trained and returns the
// export's gpstream.json metadata.
void resume_expecting_no_step(const std::function<void(SpeechTrainConfig&, SpeechTrainOptions&)>& adjust,
                              stream::ModelMeta& meta) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);
  auto cfg = parse_speech_train_config(config_json(llm, dir.file("r"), 6));
  ASSERT_TRUE(cfg.ok()) << cfg.error().message();
  SpeechTrainOptions stop;
  stop.stop_after_steps = 4;  // leaves the step-3 checkpoint, whose elapsed time is well above 1e-4 s
  ASSERT_TRUE(run_speech_training(*cfg, stop).ok());
  cfg->export_k = 2;
  SpeechTrainOptions resume;
  resume.resume = dir.file("r");
  adjust(*cfg, resume);
  auto rest = run_speech_training(*cfg, resume);
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_EQ(rest->first_step, 3);
  EXPECT_TRUE(rest->losses.empty()) << rest->losses.size() << " steps trained";
  ASSERT_FALSE(rest->model_dir.empty());
  auto m = SpeechModel::load(rest->model_dir);
  ASSERT_TRUE(m.ok()) << m.error().message();
  meta = m->llm.meta;
}

// max_minutes bounds the whole run's training time, resumes included: a run resumed with its checkpoint's
// elapsed time already past the budget trains no further step and goes straight to the export (with the
// default wait-k export_k asks for).
TEST(SpeechTraining, MaxMinutesCountsTheTimeBeforeAResume) {
  stream::ModelMeta meta;
  resume_expecting_no_step(
      [](SpeechTrainConfig& cfg, SpeechTrainOptions&) {
        cfg.max_minutes = 1e-6;  // 60 µs: less than the three steps before the checkpoint took
      },
      meta);
  EXPECT_EQ(meta.k, 2);
}

// --export-only: resumed from the step-3 checkpoint of a 6-step run, it trains no step and exports that
// checkpoint with the config's export settings; without a checkpoint it is refused before any work.
TEST(SpeechTraining, ExportOnlyTrainsNoStep) {
  stream::ModelMeta meta;
  resume_expecting_no_step([](SpeechTrainConfig&, SpeechTrainOptions& opt) { opt.export_only = true; }, meta);
  EXPECT_EQ(meta.k, 2);
  EXPECT_NE(meta.trained_json.find("\"steps\":3,"), std::string::npos) << meta.trained_json;

  SpeechTrainConfig cfg;
  SpeechTrainOptions no_checkpoint;
  no_checkpoint.export_only = true;
  EXPECT_FALSE(run_speech_training(cfg, no_checkpoint).ok());
}

// A config with ctc_only_steps added after its first key.
std::string with_ctc_only(std::string json, int64_t n) {
  return json.insert(1, R"("ctc_only_steps": )" + std::to_string(n) + ", ");
}

std::string file_bytes(const std::string& path) {
  auto r = read_text_file(path);
  EXPECT_TRUE(r.ok()) << path;
  return r.ok() ? *r : std::string();
}

TEST(SpeechTraining, CtcOnlyStepsTrainTheEncoderAloneAndLeaveTheLlm) {
  TempDir dir;
  const std::string llm = dir.file("llm"), other_llm = dir.file("llm5");
  testing::write_tiny_speech_llm(llm);
  testing::write_tiny_speech_llm(other_llm, 5);

  struct Run {
    std::vector<SpeechStepReport> steps;
    std::string model_dir;
  };
  auto run = [&](const std::string& json) {
    Run out;
    auto cfg = parse_speech_train_config(json);
    EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().message());
    if (!cfg.ok()) return out;
    SpeechTrainOptions o;
    o.on_step = [&](const SpeechStepReport& r) { out.steps.push_back(r); };
    auto r = run_speech_training(*cfg, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    if (r.ok()) out.model_dir = r->model_dir;
    return out;
  };
  // Three CTC-only steps with the LLM fully trainable, with the LLM frozen, and with another LLM.
  const Run full = run(with_ctc_only(config_json(llm, dir.file("full"), 3, "full"), 3));
  const Run frozen = run(with_ctc_only(config_json(llm, dir.file("frozen"), 3, "frozen"), 3));
  const Run other = run(with_ctc_only(config_json(other_llm, dir.file("other"), 3, "full"), 3));
  ASSERT_EQ(full.steps.size(), 3u);
  for (const SpeechStepReport& r : full.steps) {
    EXPECT_TRUE(r.ctc_only);
    ASSERT_TRUE(r.ctc_loss.has_value());
    EXPECT_EQ(r.loss, *r.ctc_loss);
  }
  // The LLM did not move (its export equals the frozen run's), and the encoder learned from CTC alone (it
  // does not depend on the LLM).
  ASSERT_FALSE(full.model_dir.empty());
  EXPECT_EQ(file_bytes(full.model_dir + "/model.safetensors"),
            file_bytes(frozen.model_dir + "/model.safetensors"));
  const std::string enc = file_bytes(full.model_dir + "/speech_encoder.safetensors");
  EXPECT_EQ(enc, file_bytes(frozen.model_dir + "/speech_encoder.safetensors"));
  EXPECT_EQ(enc, file_bytes(other.model_dir + "/speech_encoder.safetensors"));
  // Without the CTC-only phase the LLM's gradient reaches the encoder, so the encoders differ.
  const Run joint = run(config_json(llm, dir.file("joint"), 3, "full"));
  ASSERT_EQ(joint.steps.size(), 3u);
  EXPECT_FALSE(joint.steps.front().ctc_only);
  EXPECT_NE(enc, file_bytes(joint.model_dir + "/speech_encoder.safetensors"));
  // After the CTC-only steps, joint steps follow.
  const Run both = run(with_ctc_only(config_json(llm, dir.file("both"), 5, "full"), 3));
  ASSERT_EQ(both.steps.size(), 5u);
  EXPECT_TRUE(both.steps[2].ctc_only);
  EXPECT_FALSE(both.steps[3].ctc_only);
  EXPECT_NE(file_bytes(both.model_dir + "/model.safetensors"),
            file_bytes(frozen.model_dir + "/model.safetensors"));
}

TEST(SpeechTraining, AugmentationChangesTrainingUtterancesOnly) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);
  // One step at a negligible learning rate: the step's training loss sees the augmented features, the dev
  // loss after it (the unaugmented dev set through unchanged weights) is the same as without augmentation.
  auto run = [&](const std::string& name, bool augment) {
    std::string json = config_json(llm, dir.file(name), 1, "frozen");
    json.replace(json.find(R"("lr": 0.02)"), 10, R"("lr": 1e-9)");
    const std::string warmup = R"("warmup_steps": 2)";
    json.replace(json.find(warmup), warmup.size(), R"("warmup_steps": 1000000)");
    if (augment)
      json.insert(
          1, R"("warp_min": 0.8, "warp_max": 0.85, "freq_masks": 2, "freq_mask_bins": 20, "time_masks": 2,
                        "time_mask_frames": 30, )");
    auto cfg = parse_speech_train_config(json);
    EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().message());
    auto r = run_speech_training(*cfg);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    return r.ok() ? *r : SpeechTrainResult{};
  };
  const SpeechTrainResult plain = run("plain", false), aug = run("aug", true), again = run("again", true);
  ASSERT_EQ(plain.losses.size(), 1u);
  ASSERT_EQ(aug.losses.size(), 1u);
  ASSERT_EQ(again.losses.size(), 1u);
  // A must-differ check: without augmentation the two runs would compute the step's loss by the same code
  // from the same features and agree bit for bit, so any threshold above 0 tells them apart; the masks and
  // the warp move the loss by orders of magnitude more than 1e-5 of it.
  EXPECT_GT(std::abs(plain.losses[0] - aug.losses[0]), 1e-5 * plain.losses[0]);
  EXPECT_EQ(aug.losses[0], again.losses[0]);  // seeded: the same augmentation again
  ASSERT_TRUE(plain.dev_loss && aug.dev_loss);
  // The step's learning rate is 1e-9 / 10^6 (warmup): Adam's first step moves a parameter by at most
  // lr·(|g|/(|g| + ε) + λ|θ|) ≤ 1e-15·(1 + λ|θ|), below half an ulp of every fp32 value of magnitude ≥ 2^-25,
  // so only parameters below that (the zero-initialised biases) can differ between the runs, by ≤ 2e-15;
  // added to a dot of magnitude ≥ 2^-25 such a bias rounds away (≤ half an ulp). Both dev losses are then
  // the same code on the same weights and dev features: equal bit for bit.
  EXPECT_EQ(*aug.dev_loss, *plain.dev_loss);
}

// end_after_source reaches the export's gpstream.json, so inference ends transcripts the way training did
// (what it does to the layout: tests/stream/audio_layout_equivalence_test.cpp).
TEST(SpeechTraining, EndAfterSourceIsExported) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);
  for (bool on : {false, true}) {
    std::string json = config_json(llm, dir.file(on ? "on" : "off"), 2);
    json.insert(json.size() - 1, on ? R"(, "end_after_source": true)" : "");
    auto cfg = parse_speech_train_config(json);
    ASSERT_TRUE(cfg.ok()) << cfg.error().message();
    EXPECT_EQ(cfg->end_after_source, on);
    auto r = run_speech_training(*cfg);
    ASSERT_TRUE(r.ok()) << r.error().message();
    auto m = SpeechModel::load(r->model_dir);
    ASSERT_TRUE(m.ok()) << m.error().message();
    EXPECT_EQ(m->llm.meta.end_after_source, on);
    EXPECT_EQ(m->llm.default_options().end_after_source, on);
  }
}

TEST(SpeechTraining, BadConfigsNameTheKey) {
  auto expect_bad = [](const std::string& json, const std::string& key) {
    auto c = parse_speech_train_config(json);
    ASSERT_FALSE(c.ok()) << json;
    EXPECT_NE(c.error().message().find(key), std::string::npos) << c.error().message();
  };
  const std::string base = R"("llm": "x", "train_manifest": "t", "output_dir": "o")";
  expect_bad("{" + base + R"(, "colour": 1})", "colour");
  expect_bad("{" + base + R"(, "k_min": 0})", "k_min");
  expect_bad("{" + base + R"(, "k_min": 5, "k_max": 2})", "k_max");
  expect_bad("{" + base + R"(, "k_max": 9, "export_k": 10})", "export_k");
  expect_bad("{" + base + R"(, "k_min": 2, "export_k": 1})", "export_k");
  expect_bad("{" + base + R"(, "end_after_source": 1})", "end_after_source");
  expect_bad("{" + base + R"(, "llm_training": "half"})", "llm_training");
  expect_bad("{" + base + R"(, "encoder": {"d_modl": 8}})", "d_modl");
  expect_bad("{" + base + R"(, "encoder": {"llm_hidden": 8}})", "llm_hidden");
  expect_bad("{" + base + R"(, "encoder": {"n_head": 3}})", "encoder");
  expect_bad("{" + base + R"(, "phi": "T"})", "phi");
  expect_bad("{" + base + R"(, "phi": []})", "phi");
  expect_bad("{" + base + R"(, "phi": [0, -1]})", "phi");
  expect_bad(R"({"train_manifest": "t", "output_dir": "o"})", "llm");
  expect_bad("{" + base + R"(, "ctc_only_steps": -1})", "ctc_only_steps");
  expect_bad("{" + base + R"(, "ctc_only_steps": 5, "ctc_weight": 0})", "ctc_only_steps");
  expect_bad("{" + base + R"(, "warp_min": 0.4})", "warp_min");
  expect_bad("{" + base + R"(, "warp_min": 1.1, "warp_max": 1.0})", "warp_max");
  expect_bad("{" + base + R"(, "freq_mask_bins": 81})", "freq_mask_bins");
  expect_bad("{" + base + R"(, "time_masks": -1})", "time_masks");
  expect_bad("{" + base + R"(, "keep_every_steps": -1})", "keep_every_steps");
  expect_bad("[1]", "object");
  expect_bad("{" + base + R"(, "encoder": {"conv_module_kernel": 64}})", "conv_module_kernel");
  // The convolution module is an encoder key like the others (to_json leaves it out when it is 0).
  auto with_module = parse_speech_train_config("{" + base + R"(, "encoder": {"conv_module_kernel": 15}})");
  ASSERT_TRUE(with_module.ok()) << with_module.error().message();
  EXPECT_EQ(with_module->encoder.conv_module_kernel, 15);
  EXPECT_EQ(parse_speech_train_config("{" + base + "}")->encoder.conv_module_kernel, 0);
  // Messages name the file and the field's path: the encoder's keys under "encoder", a list entry by index.
  expect_bad("{" + base + R"(, "encoder": {"d_model": 9000}})",
             "speech train config: field 'encoder.d_model' must be an integer in [2, 8192], got 9000");
  expect_bad("{" + base + R"(, "encoder": {"d_modl": 8}})",
             "speech train config: unknown key 'encoder.d_modl'");
  expect_bad("{" + base + R"(, "phi": [0, -1]})",
             "speech train config: field 'phi[1]' must be a non-negative number or \"S\", got -1");
  expect_bad("{" + base + R"(, "lora_rank": 2.5})", "field 'lora_rank' must be an integer, got number");
  // φ numbers keep their value: 1e-7 is not printed with six decimals and read back as 0.
  auto tiny_phi = parse_speech_train_config("{" + base + R"(, "phi": [1e-7, "S"]})");
  ASSERT_TRUE(tiny_phi.ok()) << tiny_phi.error().message();
  ASSERT_EQ(tiny_phi->phis.size(), 2u);
  EXPECT_EQ(tiny_phi->phis[0].value, 1e-7f);
  EXPECT_TRUE(tiny_phi->phis[1].source_length);
}

// The training-run harness (train/training_run.h) with the speech step: a run killed after a checkpoint by
// minutes (a clock that advances 20 s per reading; no checkpoints by steps) and resumed ends with the
// parameters and the export of an uninterrupted run, bit for bit.
TEST(SpeechTraining, ResumeAfterACheckpointByMinutesIsBitIdentical) {
  TempDir dir;
  const std::string llm = dir.file("llm");
  testing::write_tiny_speech_llm(llm);
  auto by_minutes = [&](const std::string& out) {
    std::string json = config_json(llm, out, 6, "lora");
    const std::string by_steps = R"("ckpt_every_steps": 3)";
    json.replace(json.find(by_steps), by_steps.size(), R"("ckpt_every_steps": 0, "ckpt_every_minutes": 1)");
    auto cfg = parse_speech_train_config(json);
    EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().message());
    return cfg.ok() ? *cfg : SpeechTrainConfig{};
  };
  auto ticking_clock = [] {
    auto t = std::make_shared<double>(0.0);
    return std::function<double()>([t] { return *t += 20.0; });
  };
  auto newest = [](const std::string& run) {
    const std::vector<std::string> all = train::list_checkpoints(run + "/checkpoints");
    EXPECT_FALSE(all.empty()) << run;
    auto s =
        all.empty() ? Result<train::CheckpointState>(not_found(run)) : train::read_checkpoint(all.back());
    EXPECT_TRUE(s.ok()) << s.error().message();
    return s.ok() ? *s : train::CheckpointState{};
  };
  SpeechTrainOptions uninterrupted;
  uninterrupted.clock = ticking_clock();
  auto full = run_speech_training(by_minutes(dir.file("a")), uninterrupted);
  ASSERT_TRUE(full.ok()) << full.error().message();

  SpeechTrainOptions stop;
  stop.clock = ticking_clock();
  stop.stop_after_steps = 5;  // the clock's first minute ends at step 3: a checkpoint there, none by steps
  ASSERT_TRUE(run_speech_training(by_minutes(dir.file("b")), stop).ok());
  EXPECT_EQ(newest(dir.file("b")).step, 3);
  SpeechTrainOptions resume;
  resume.clock = ticking_clock();
  resume.resume = dir.file("b");
  auto rest = run_speech_training(by_minutes(dir.file("b")), resume);
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_EQ(rest->first_step, 3);

  const train::CheckpointState a = newest(dir.file("a")), b = newest(dir.file("b"));
  EXPECT_EQ(a.step, 6);
  EXPECT_EQ(b.step, 6);
  EXPECT_TRUE(a.values == b.values) << "the resumed run's parameters differ";
  EXPECT_TRUE(a.m == b.m && a.v == b.v) << "the resumed run's optimizer moments differ";
  for (const char* f : {"model.safetensors", "speech_encoder.safetensors"})
    EXPECT_EQ(file_bytes(full->model_dir + "/" + f), file_bytes(rest->model_dir + "/" + f)) << f;
}

}  // namespace
}  // namespace gpstream::speech
