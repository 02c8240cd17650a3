// Joint training of the speech encoder and the LLM (speech_trainer.h).
#include "speech/speech_trainer.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "audio/feature_augment.h"
#include "audio/log_mel.h"
#include "audio/speech_encoder.h"
#include "audio/speech_loader.h"
#include "audio/speech_manifest.h"
#include "eval/wer.h"
#include "kernels/ctc_loss.h"
#include "io/safetensors.h"
#include "speech/ctc_alphabet.h"
#include "speech/speech_model.h"
#include "stream/layout.h"
#include "stream/model_meta.h"
#include "stream/tokenizer_codec.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/export.h"
#include "train/loss_plot.h"
#include "train/run_folder.h"
#include "train/train_model.h"
#include "util/mapped_file.h"

namespace gpstream::speech {
namespace {

using train::mix_seed;
double now_s() { return train::steady_seconds(); }

// The feature augmentation's seed stream, apart from the noise's (same base seed, epoch and utterance key).
constexpr uint64_t kAugmentStream = 0x6175676d00000000ull;  // "augm"

// The optimizer's view: encoder tensors (prefixed "speech_encoder.") then the LLM's trained tensors, one
// flat buffer; gathered before and scattered after each update.
// The CTC head (weight [kCtcAlphabetSize, d_model], bias) sits between them.
train::ParamSet joint_params(const audio::SpeechEncoderModel& enc, size_t ctc_size, const train::ParamSet* llm,
                             float llm_lr_scale) {
  train::ParamSet p;
  for (const audio::SpeechEncoderTensor& t : enc.tensors())
    p.tensors.push_back({"speech_encoder." + t.name, t.shape, t.offset, t.numel,
                         t.is_matrix ? train::ParamKind::Matrix : train::ParamKind::Norm});
  if (ctc_size > 0) {
    const int64_t D = enc.config().d_model;
    p.tensors.push_back({"ctc_head.weight", {kCtcAlphabetSize, D}, enc.size(),
                         static_cast<size_t>(kCtcAlphabetSize * D), train::ParamKind::Matrix});
    p.tensors.push_back({"ctc_head.bias", {kCtcAlphabetSize}, enc.size() + static_cast<size_t>(kCtcAlphabetSize * D),
                         static_cast<size_t>(kCtcAlphabetSize), train::ParamKind::Bias});
  }
  if (llm)
    for (const train::ParamTensor& t : llm->tensors) {
      train::ParamTensor c = t;
      c.offset += enc.size() + ctc_size;
      c.lr_scale = llm_lr_scale;
      p.tensors.push_back(c);
    }
  p.values.resize(enc.size() + ctc_size + (llm ? llm->size() : 0));
  return p;
}

// The CTC head's logits [T, V] for encoder output e [T, D]: e · Wᵀ + b.
std::vector<float> ctc_head_logits(const float* head, const std::vector<float>& e, int64_t T, int64_t D) {
  const int64_t V = kCtcAlphabetSize;
  const float* b = head + V * D;
  std::vector<float> logits(static_cast<size_t>(T * V));
  for (int64_t t = 0; t < T; ++t) std::copy_n(b, V, logits.data() + t * V);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(T), static_cast<int>(V), static_cast<int>(D),
              1.0f, e.data(), static_cast<int>(D), head, static_cast<int>(D), 1.0f, logits.data(), static_cast<int>(V));
  return logits;
}

// The auxiliary CTC loss of one utterance on the encoder output e [T, D]: adds scale·d/dθ to the head's
// gradient (gw: weight then bias) and writes d_e; returns the loss (+inf, with no gradient, when the
// utterance has too few frames for its characters).
double ctc_head_loss(const float* head, float* gw, std::vector<float>& d_e, const std::vector<float>& e,
                     int64_t T, int64_t D, const std::vector<int32_t>& labels, float scale) {
  const int64_t V = kCtcAlphabetSize;
  const float* W = head;
  const std::vector<float> logits = ctc_head_logits(head, e, T, D);
  std::vector<float> dlogits(logits.size());
  const double loss = kernels::ctc_loss(dlogits.data(), logits.data(), T, V, labels.data(),
                                        static_cast<int64_t>(labels.size()), scale);
  d_e.assign(static_cast<size_t>(T * D), 0.0f);
  if (!std::isfinite(loss)) return loss;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(T), static_cast<int>(D), static_cast<int>(V),
              1.0f, dlogits.data(), static_cast<int>(V), W, static_cast<int>(D), 0.0f, d_e.data(), static_cast<int>(D));
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(V), static_cast<int>(D), static_cast<int>(T),
              1.0f, dlogits.data(), static_cast<int>(V), e.data(), static_cast<int>(D), 1.0f, gw, static_cast<int>(D));
  float* gb = gw + V * D;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t v = 0; v < V; ++v) gb[v] += dlogits[static_cast<size_t>(t * V + v)];
  return loss;
}

// One utterance made ready for the LLM: its encoder pass (activations kept for the backward) and its
// laid-out sequence with the encoder rows as input rows.
struct Example {
  std::unique_ptr<audio::SpeechEncoderPass> pass;
  train::TrainSequence seq;
  std::vector<int32_t> ctc;  // the transcript's CTC labels
  double audio_s = 0;
};

// An utterance's input features: what load → noise → log-mel → augmentation gives (a pure function of the
// utterance, the epoch and the config, so it may run on any thread).
struct Features {
  Status status;
  std::vector<float> mel;  // [frames, n_mels]
  double audio_s = 0;
};

class ExampleMaker {
 public:
  ExampleMaker(const SpeechTrainConfig& cfg, const audio::SpeechEncoderModel& enc, const stream::SegmentCodec& codec,
               int n_vocab, int threads)
      : cfg_(cfg), enc_(enc), codec_(codec), n_vocab_(n_vocab), threads_(threads) {}

  // `train`: a training utterance (augmented when the config asks; the dev set never is). Thread-safe.
  Features features(const audio::SpeechUtterance& u, uint64_t epoch, bool noise, bool train) const {
    Features f;
    audio::SpeechLoadOptions lo;
    lo.add_noise = noise;
    lo.noise = cfg_.noise_options;
    lo.seed = cfg_.seed;
    auto sp = audio::load_speech_utterance(u, epoch, lo);
    if (!sp.ok()) {
      f.status = sp.error();
      return f;
    }
    f.mel = audio::log_mel(sp->samples);
    if (train && cfg_.augment.enabled()) {
      const uint64_t seed = audio::noise_seed(cfg_.seed ^ kAugmentStream, epoch,
                                              audio::noise_utterance_key(std::span<const char>(u.wav_path)));
      const size_t n = f.mel.size() / audio::kLogMelBins;
      audio::apply_feature_augment(audio::draw_feature_augment(cfg_.augment, n, seed), f.mel);
    }
    f.audio_s = static_cast<double>(sp->samples.size()) / audio::kLogMelSampleRate;
    return f;
  }

  // False when the utterance is skipped (no encoder row, or longer than max_seq).
  Result<bool> make(const audio::SpeechUtterance& u, uint64_t epoch, int k, stream::Phi phi, bool noise,
                    bool train, Example& ex) {
    return make_from(u, features(u, epoch, noise, train), k, phi, ex);
  }

  // The encoder forward and the layout of an utterance whose features `f` are.
  Result<bool> make_from(const audio::SpeechUtterance& u, const Features& f, int k, stream::Phi phi,
                         Example& ex) {
    GPS_TRY(f.status);
    const int64_t n_frames = static_cast<int64_t>(f.mel.size()) / enc_.config().n_mels;
    if (!ex.pass) ex.pass = std::make_unique<audio::SpeechEncoderPass>(enc_, threads_);
    const std::vector<float>& rows = ex.pass->forward(f.mel.data(), n_frames);
    const int64_t R = ex.pass->rows();
    if (R == 0) return false;
    const int64_t rpc = enc_.config().rows_per_chunk();
    std::vector<int> chunk_rows;
    for (int64_t left = R; left > 0; left -= rpc) chunk_rows.push_back(static_cast<int>(std::min(rpc, left)));
    stream::LayoutOptions opt;
    opt.paradigm = stream::Paradigm::Group;
    opt.k = k;
    opt.phi = phi;
    opt.n_vocab = n_vocab_;
    opt.end_after_source = cfg_.end_after_source;
    auto layout = stream::make_layout(codec_, chunk_rows, u.transcript, opt);
    if (!layout.ok()) return layout.error().with_context(u.wav_path);
    if (static_cast<int64_t>(layout->rows.size()) > cfg_.max_seq) return false;
    ex.seq = train::sequence_from_layout(*layout);
    ex.seq.inputs.assign(rows.begin(), rows.begin() + R * enc_.config().llm_hidden);
    ex.ctc = ctc_labels(u.transcript);
    ex.audio_s = f.audio_s;
    return true;
  }

 private:
  const SpeechTrainConfig& cfg_;
  const audio::SpeechEncoderModel& enc_;
  const stream::SegmentCodec& codec_;
  int n_vocab_, threads_;
};

std::string fingerprint(const audio::SpeechEncoderModel& enc, const train::TrainModel& m, LlmTraining how, bool ctc) {
  const model::ModelConfig& c = m.config();
  std::string s = "speech enc" + std::to_string(enc.size()) + " " + enc.config().to_json() + " llm v" +
                  std::to_string(c.n_vocab) + " e" + std::to_string(c.n_embd) + " l" + std::to_string(c.n_layer) +
                  " ctc" + std::to_string(ctc) + " " + (how == LlmTraining::Lora ? "lora" + std::to_string(m.lora_options().rank)
                                                  : how == LlmTraining::Full ? "full" : "frozen");
  return s;
}

}  // namespace

Result<SpeechTrainResult> run_speech_training(const SpeechTrainConfig& cfg, const SpeechTrainOptions& opt) {
  if (opt.export_only && opt.resume.empty())
    return invalid_argument("export-only needs a checkpoint to resume from (--resume)");
  auto message = [&](const std::string& m) {
    if (opt.on_message) opt.on_message(m);
  };
  const int threads = cfg.threads > 0 ? cfg.threads : std::max(1, omp_get_max_threads());
  openblas_set_num_threads(threads);

  // The LLM, its tokenizer and template.
  GPS_ASSIGN(stream::ModelMeta meta, stream::ModelMeta::load(cfg.llm_dir));
  GPS_ASSIGN(tokenizer::Tokenizer tok, tokenizer::Tokenizer::load(cfg.llm_dir));
  auto shared_tok = std::make_shared<const tokenizer::Tokenizer>(std::move(tok));
  const stream::TokenizerCodec codec(
      shared_tok, meta.prompt_template.with_languages(tokenizer::language_name(cfg.source_lang),
                                                      tokenizer::language_name(cfg.target_lang)));
  GPS_ASSIGN(model::ModelConfig mc, model::load_hf_config(cfg.llm_dir));
  GPS_ASSIGN(io::TensorMap init, io::read_safetensors_dir(cfg.llm_dir));
  GPS_ASSIGN(auto tm_ptr, train::TrainModel::create(
                              mc, init, cfg.lora, mix_seed(cfg.seed ^ 0x2222),
                              train::TrainShape{cfg.max_seq * cfg.batch_utterances, cfg.max_seq}, threads));
  train::TrainModel& tm = *tm_ptr;
  const bool llm_trained = cfg.llm_training != LlmTraining::Frozen;

  // The encoder.
  audio::SpeechEncoderConfig ec = cfg.encoder;
  ec.llm_hidden = mc.n_embd;
  GPS_TRY(ec.validate());
  audio::SpeechEncoderModel enc(ec);
  enc.init_random(mix_seed(cfg.seed ^ 0x3333));

  // Data.
  GPS_ASSIGN(audio::SpeechManifest train_m, audio::read_speech_manifest(cfg.train_manifest));
  if (cfg.max_train > 0 && static_cast<int64_t>(train_m.utterances.size()) > cfg.max_train)
    train_m.utterances.resize(static_cast<size_t>(cfg.max_train));
  if (train_m.utterances.empty()) return invalid_argument(cfg.train_manifest + ": no utterances");
  audio::SpeechManifest dev_m;
  if (!cfg.dev_manifest.empty()) {
    GPS_ASSIGN(dev_m, audio::read_speech_manifest(cfg.dev_manifest));
    if (cfg.max_dev > 0 && static_cast<int64_t>(dev_m.utterances.size()) > cfg.max_dev)
      dev_m.utterances.resize(static_cast<size_t>(cfg.max_dev));
  }
  message("data: " + std::to_string(train_m.utterances.size()) + " training utterances, " +
          std::to_string(dev_m.utterances.size()) + " dev utterances; encoder " + std::to_string(enc.size()) +
          " parameters, LLM " + std::to_string(tm.base().size()) + " (" +
          (llm_trained ? std::to_string(tm.trainable().size()) + " trained" : std::string("frozen")) + ")");

  // The CTC head: uniform in ±1/sqrt(d_model), bias 0.
  const bool use_ctc = cfg.ctc_weight > 0;
  const int64_t D = ec.d_model;
  std::vector<float> ctc_head(use_ctc ? static_cast<size_t>(kCtcAlphabetSize * (D + 1)) : 0, 0.0f);
  {
    std::mt19937_64 rng(mix_seed(cfg.seed ^ 0x4444));
    std::uniform_real_distribution<float> u(-1.0f / std::sqrt(float(D)), 1.0f / std::sqrt(float(D)));
    for (size_t i = 0; i < static_cast<size_t>(kCtcAlphabetSize * D) && use_ctc; ++i) ctc_head[i] = u(rng);
  }
  train::ParamSet params =
      joint_params(enc, ctc_head.size(), llm_trained ? &tm.trainable() : nullptr, static_cast<float>(cfg.llm_lr_scale));
  const auto llm_at = static_cast<std::ptrdiff_t>(enc.size() + ctc_head.size());
  std::vector<float> grads(params.size(), 0.0f), enc_grads(enc.size(), 0.0f), ctc_grads(ctc_head.size(), 0.0f);
  auto gather = [&] {
    std::copy(enc.values().begin(), enc.values().end(), params.values.begin());
    std::copy(ctc_head.begin(), ctc_head.end(), params.values.begin() + static_cast<std::ptrdiff_t>(enc.size()));
    if (llm_trained)
      std::copy(tm.trainable().values.begin(), tm.trainable().values.end(), params.values.begin() + llm_at);
  };
  auto scatter = [&] {
    std::copy_n(params.values.begin(), enc.size(), enc.values().begin());
    std::copy_n(params.values.begin() + static_cast<std::ptrdiff_t>(enc.size()), ctc_head.size(), ctc_head.begin());
    if (llm_trained) std::copy(params.values.begin() + llm_at, params.values.end(), tm.trainable().values.begin());
  };
  gather();
  // The LLM's tensors follow the encoder's and the CTC head's; a zero scale holds them still (no decay either).
  auto set_llm_lr_scale = [&](float scale) {
    for (train::ParamTensor& pt : params.tensors)
      if (static_cast<std::ptrdiff_t>(pt.offset) >= llm_at) pt.lr_scale = scale;
  };
  train::AdamW adam(params.size(), cfg.adam);
  train::Schedule sched = cfg.schedule;
  sched.total_steps = cfg.steps;

  // Output folder, resume.
  std::error_code fs_ec;
  const std::string out = cfg.output_dir, ckpt_dir = out + "/checkpoints";
  std::filesystem::create_directories(ckpt_dir, fs_ec);
  if (fs_ec) return io_error("cannot create " + ckpt_dir + ": " + fs_ec.message());
  const std::string fp = fingerprint(enc, tm, cfg.llm_training, use_ctc);
  int64_t step = 0, seen = 0;
  double elapsed_before = 0;
  train::DataPosition pos;
  const std::string metrics_path = out + "/metrics.jsonl";
  std::string kept_metrics;
  if (!opt.resume.empty()) {
    GPS_ASSIGN(const std::string path, train::resolve_resume_checkpoint(opt.resume));
    GPS_ASSIGN(train::CheckpointState s, train::read_checkpoint(path));
    train::CheckpointExpectation expect;
    expect.fingerprint = fp;
    expect.seed = cfg.seed;
    expect.n_params = params.size();
    expect.batches_per_epoch = static_cast<int64_t>(train_m.utterances.size());  // one utterance a "batch"
    GPS_TRY(train::check_resume_checkpoint(s, path, expect));
    params.values = std::move(s.values);
    adam.m = std::move(s.m);
    adam.v = std::move(s.v);
    adam.t = s.adam_t;
    step = s.step;
    seen = s.tokens_seen;
    elapsed_before = s.elapsed_s;
    pos = s.data;
    scatter();
    message("resumed from " + path + " at step " + std::to_string(step));
    kept_metrics = train::metrics_lines_up_to(metrics_path, step);
  }
  GPS_TRY(train::write_text_file(out + "/train_config.json", cfg.raw_json));
  GPS_TRY(train::write_text_file(metrics_path, kept_metrics));
  std::ofstream metrics(metrics_path, std::ios::app);

  ExampleMaker maker(cfg, enc, codec, mc.n_vocab, threads);
  const size_t n_train = train_m.utterances.size();
  std::vector<size_t> order;
  int64_t order_epoch = -1;
  auto plan = [&](int64_t epoch) {
    if (order_epoch == epoch) return;
    order.resize(n_train);
    std::iota(order.begin(), order.end(), size_t{0});
    std::mt19937_64 rng(mix_seed(cfg.seed + 0x51ED2701u * static_cast<uint64_t>(epoch + 1)));
    std::shuffle(order.begin(), order.end(), rng);
    order_epoch = epoch;
  };
  auto k_for = [&](int64_t epoch, size_t utt) {
    const uint64_t span = static_cast<uint64_t>(cfg.k_max - cfg.k_min + 1);
    return cfg.k_min + static_cast<int>(mix_seed(cfg.seed ^ mix_seed(static_cast<uint64_t>(epoch) * 1000003u + utt)) % span);
  };

  auto phi_for = [&](int64_t epoch, size_t utt) {
    const uint64_t h = mix_seed(cfg.seed ^ 0x9A9A ^ mix_seed(static_cast<uint64_t>(epoch) * 1000003u + utt));
    return cfg.phis[static_cast<size_t>(h % cfg.phis.size())];
  };

  SpeechTrainResult result;
  result.first_step = step;
  result.n_encoder_params = static_cast<int64_t>(enc.size());
  result.n_llm_trainable = llm_trained ? static_cast<int64_t>(tm.trainable().size()) : 0;

  std::vector<Example> examples(static_cast<size_t>(cfg.batch_utterances));
  // The LLM's token-mean loss on the dev utterances and, with a CTC head, the corpus WER of its greedy
  // transcripts (a diagnostic of the encoder alone on the dev voices).
  struct DevScores {
    double loss = 0;
    std::optional<double> ctc_wer;
  };
  auto eval_dev = [&]() -> Result<DevScores> {
    double sum = 0;
    int64_t n = 0;
    std::vector<std::string> refs, hyps;
    const int k = (cfg.k_min + cfg.k_max) / 2;
    train::ForwardOptions fo;
    fo.training = false;
    for (size_t i = 0; i < dev_m.utterances.size(); ++i) {
      Example& ex = examples[0];
      GPS_ASSIGN(bool ok, maker.make(dev_m.utterances[i], 0, k, cfg.phis.front(), cfg.noise, false, ex));
      if (!ok) continue;
      if (use_ctc) {
        const int64_t T = ex.pass->encoder_frames();
        const std::vector<float> logits = ctc_head_logits(ctc_head.data(), ex.pass->encoder_output(), T, D);
        refs.push_back(ctc_text(ex.ctc));
        hyps.push_back(ctc_text(ctc_greedy_labels(logits.data(), T)));
      }
      train::TrainBatch b;
      b.seqs.push_back(std::move(ex.seq));
      GPS_ASSIGN(double s, tm.forward(b, fo));
      sum += s;
      n += b.n_labels();
    }
    DevScores scores;
    scores.loss = n > 0 ? sum / static_cast<double>(n) : 0.0;
    if (!refs.empty()) {
      auto w = eval::corpus_wer(refs, hyps);
      if (w) scores.ctc_wer = w->wer;
    }
    return scores;
  };
  auto save = [&](double elapsed) -> Status {
    train::CheckpointState s;
    s.step = step;
    s.tokens_seen = seen;
    s.data = pos;
    s.adam_t = adam.t;
    s.seed = cfg.seed;
    s.elapsed_s = elapsed;
    s.fingerprint = fp;
    s.values = params.values;
    s.m = adam.m;
    s.v = adam.v;
    char name[64];
    std::snprintf(name, sizeof name, "/checkpoint-%08lld.bin", static_cast<long long>(step));
    GPS_TRY(train::write_checkpoint(ckpt_dir + name, s));
    GPS_TRY(train::prune_checkpoints(ckpt_dir, cfg.keep_checkpoints, cfg.keep_every_steps));
    message("checkpoint " + ckpt_dir + name);
    // The loss curve so far, at every checkpoint (the one after training adds the final dev loss).
    GPS_TRY(train::write_loss_plot(metrics_path, out + "/loss.svg", "gpstream train-speech"));
    return {};
  };

  const double t_start = now_s();
  const int64_t start_step = step, start_seen = seen;
  double audio_s_run = 0;
  // max_minutes bounds the run's whole training time, over every resume: a run resumed past it trains no more
  // steps and goes straight to the final checkpoint and the export.
  const double budget_s = cfg.max_minutes > 0 ? 60.0 * cfg.max_minutes : HUGE_VAL;
  const auto past_budget = [&](double elapsed_s) { return elapsed_s >= budget_s; };
  bool out_of_time = past_budget(elapsed_before);
  while (step < cfg.steps && !out_of_time && !opt.export_only) {
    if (opt.interrupt && (result.interrupted_by = opt.interrupt()) != 0) break;  // checkpoint below, no export
    // Batch: the next utterances of the epoch's order that fit. The features of as many as are still missing
    // are computed on all threads at once (one utterance per thread: reading, resampling, noise and log-mel
    // would otherwise run on one core while the other waits); the encoder and the layout follow in order.
    train::TrainBatch batch;
    size_t n_ex = 0;
    while (n_ex < examples.size()) {
      std::vector<std::pair<int64_t, size_t>> next;  // (epoch, utterance) of the next positions
      while (next.size() < examples.size() - n_ex) {
        plan(pos.epoch);
        if (pos.batch >= static_cast<int64_t>(n_train)) {
          ++pos.epoch;
          pos.batch = 0;
          continue;
        }
        next.emplace_back(pos.epoch, order[static_cast<size_t>(pos.batch++)]);
      }
      std::vector<Features> feats(next.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (size_t i = 0; i < next.size(); ++i)
        feats[i] = maker.features(train_m.utterances[next[i].second], static_cast<uint64_t>(next[i].first),
                                  cfg.noise, true);
      for (size_t i = 0; i < next.size(); ++i) {
        const auto [epoch, u] = next[i];
        Example& ex = examples[n_ex];
        GPS_ASSIGN(bool ok,
                   maker.make_from(train_m.utterances[u], feats[i], k_for(epoch, u), phi_for(epoch, u), ex));
        if (!ok) {
          ++result.skipped;
          continue;
        }
        audio_s_run += ex.audio_s;
        batch.seqs.push_back(std::move(ex.seq));
        ++n_ex;
      }
    }
    const int64_t n_labels = batch.n_labels();
    // LLM forward and backward, then the encoder backward from the input-row gradients.
    tm.zero_grad();
    std::fill(enc_grads.begin(), enc_grads.end(), 0.0f);
    train::ForwardOptions fo;
    fo.dropout_seed = mix_seed(cfg.seed ^ static_cast<uint64_t>(step));
    // The first ctc_only_steps train the encoder alone (CTC): no LLM forward, the LLM's parameters rest.
    const bool ctc_only = step < cfg.ctc_only_steps;
    double loss_sum = 0;
    if (!ctc_only) {
      GPS_ASSIGN(loss_sum, tm.forward(batch, fo));
      if (n_labels > 0) tm.backward(1.0f / static_cast<float>(n_labels));
    }
    // CTC: a per-character mean over the batch's utterances that have enough frames.
    int64_t ctc_chars = 0;
    for (size_t i = 0; i < n_ex; ++i)
      if (examples[i].pass->encoder_frames() >= static_cast<int64_t>(examples[i].ctc.size()))
        ctc_chars += static_cast<int64_t>(examples[i].ctc.size());
    std::fill(ctc_grads.begin(), ctc_grads.end(), 0.0f);
    double ctc_sum = 0;
    int64_t ctc_counted = 0;
    std::vector<float> d_e;
    for (size_t i = 0; i < n_ex; ++i) {
      const float* de_ptr = nullptr;
      if (use_ctc && ctc_chars > 0 && !examples[i].ctc.empty()) {
        const double l = ctc_head_loss(ctc_head.data(), ctc_grads.data(), d_e, examples[i].pass->encoder_output(),
                                       examples[i].pass->encoder_frames(), D, examples[i].ctc,
                                       static_cast<float>(cfg.ctc_weight / static_cast<double>(ctc_chars)));
        if (std::isfinite(l)) {
          ctc_sum += l;
          ctc_counted += static_cast<int64_t>(examples[i].ctc.size());
          de_ptr = d_e.data();
        }
      }
      examples[i].pass->backward(ctc_only ? nullptr : tm.input_grad(i).data(), enc_grads.data(), de_ptr);
    }
    std::copy(enc_grads.begin(), enc_grads.end(), grads.begin());
    std::copy(ctc_grads.begin(), ctc_grads.end(), grads.begin() + static_cast<std::ptrdiff_t>(enc.size()));
    if (llm_trained) std::copy(tm.grads().begin(), tm.grads().end(), grads.begin() + llm_at);
    const double norm = train::clip_grad_norm(grads, cfg.clip);
    const float lr = sched.at(step);
    set_llm_lr_scale(ctc_only ? 0.0f : static_cast<float>(cfg.llm_lr_scale));
    adam.step(params, grads, lr, threads);
    scatter();
    ++step;
    seen += static_cast<int64_t>(n_ex);
    const double ctc_mean = ctc_counted > 0 ? ctc_sum / static_cast<double>(ctc_counted) : 0.0;
    const double loss = ctc_only ? ctc_mean : n_labels > 0 ? loss_sum / static_cast<double>(n_labels) : 0.0;
    if (!std::isfinite(loss))
      return Error(ErrorCode::Internal, "training diverged: loss is not finite at step " + std::to_string(step));
    result.losses.push_back(loss);

    const double t = now_s(), run_s = t - t_start;
    SpeechStepReport r;
    r.step = step;
    r.total_steps = cfg.steps;
    r.loss = loss;
    r.ctc_only = ctc_only;
    r.lr = lr;
    r.grad_norm = norm;
    if (ctc_counted > 0) r.ctc_loss = ctc_mean;
    r.utterances_seen = seen;
    r.utterances_per_s = run_s > 0 ? static_cast<double>(seen - start_seen) / run_s : 0;
    r.audio_s_per_s = run_s > 0 ? audio_s_run / run_s : 0;
    r.elapsed_s = elapsed_before + run_s;
    r.eta_s = std::min(run_s / static_cast<double>(step - start_step) * static_cast<double>(cfg.steps - step),
                       std::max(0.0, budget_s - r.elapsed_s));
    out_of_time = past_budget(r.elapsed_s);
    if (cfg.dev_every > 0 && step % cfg.dev_every == 0 && !dev_m.utterances.empty()) {
      GPS_ASSIGN(DevScores ds, eval_dev());
      r.dev_loss = ds.loss;
      r.dev_ctc_wer = ds.ctc_wer;
    }
    nlohmann::ordered_json j;
    j["step"] = step;
    if (ctc_only) j["phase"] = "ctc";
    j["loss"] = loss;
    j["lr"] = lr;
    j["grad_norm"] = norm;
    if (ctc_counted > 0) j["ctc_loss"] = ctc_mean;
    j["utterances"] = seen;
    j["elapsed_s"] = r.elapsed_s;
    if (r.dev_loss) j["dev_loss"] = *r.dev_loss;
    if (r.dev_ctc_wer) j["dev_ctc_wer"] = *r.dev_ctc_wer;
    metrics << j.dump() << "\n" << std::flush;
    if (opt.on_step) opt.on_step(r);
    if (opt.stop_after_steps > 0 && step >= opt.stop_after_steps) return result;
    if (cfg.ckpt_every_steps > 0 && step % cfg.ckpt_every_steps == 0 && step < cfg.steps && !out_of_time)
      GPS_TRY(save(r.elapsed_s));
  }
  if (out_of_time) message("stopping at step " + std::to_string(step) + ": max_minutes reached");
  const double elapsed = elapsed_before + now_s() - t_start;
  GPS_TRY(save(elapsed));
  metrics.close();
  if (result.interrupted_by != 0) return result;

  if (!dev_m.utterances.empty()) {
    GPS_ASSIGN(DevScores ds, eval_dev());
    result.dev_loss = ds.loss;
    result.dev_ctc_wer = ds.ctc_wer;
    char line[96];
    if (ds.ctc_wer)
      std::snprintf(line, sizeof line, "dev loss %.4f, dev WER of the CTC head's greedy transcripts %.1f %%", ds.loss,
                    100 * *ds.ctc_wer);
    else
      std::snprintf(line, sizeof line, "dev loss %.4f", ds.loss);
    message(line);
  }
  {
    std::vector<train::LossPoint> tr, dv;
    train::read_loss_curve(metrics_path, tr, dv);
    if (result.dev_loss) dv.push_back({static_cast<double>(step), *result.dev_loss});
    GPS_TRY(train::write_text_file(out + "/loss.svg", train::loss_curve_svg(tr, dv, "gpstream train-speech")));
  }

  // Export: the LLM (LoRA merged) as a streaming model directory, the encoder beside it.
  train::HfExportOptions eo;
  eo.dtype = io::DType::BF16;
  eo.merge_lora = true;
  eo.tokenizer_path = cfg.llm_dir;
  eo.meta = meta;
  eo.meta.source_lang = cfg.source_lang;
  eo.meta.target_lang = cfg.target_lang;
  eo.meta.phi = cfg.phis.front();
  eo.meta.k_min = cfg.k_min;
  eo.meta.k_max = cfg.k_max;
  eo.meta.k = cfg.export_k > 0 ? cfg.export_k : cfg.k_max;
  eo.meta.beam = cfg.export_beam;
  eo.meta.paradigm = stream::Paradigm::Group;
  eo.meta.end_after_source = cfg.end_after_source;
  {
    nlohmann::ordered_json t;
    t["task"] = "speech";
    t["steps"] = step;
    t["utterances"] = seen;
    t["training_seconds"] = elapsed;
    t["llm_training"] = cfg.llm_training == LlmTraining::Lora ? "lora" : cfg.llm_training == LlmTraining::Full ? "full" : "frozen";
    t["lora_rank"] = cfg.lora.rank;
    t["llm_lr_scale"] = cfg.llm_lr_scale;
    t["encoder_parameters"] = enc.size();
    t["ctc_weight"] = cfg.ctc_weight;
    nlohmann::json phis = nlohmann::json::array();
    for (const stream::Phi& p : cfg.phis) phis.push_back(p.to_string());
    t["phi_trained"] = phis;
    t["chunk_ms"] = 10 * ec.mel_frames_per_chunk();
    t["seed"] = cfg.seed;
    if (result.dev_loss) t["dev_loss"] = *result.dev_loss;
    if (result.dev_ctc_wer) t["dev_ctc_wer"] = *result.dev_ctc_wer;
    eo.meta.trained_json = t.dump();
  }
  result.model_dir = out + "/model";
  GPS_TRY(train::export_hf(tm, result.model_dir, eo));
  // Matrices in BF16 like the LLM's (half the file: the model fits models/' 25 MB), norms and biases in F32.
  GPS_TRY(enc.save(result.model_dir + "/" + kSpeechEncoderFile,
                   audio::SpeechEncoderModel::Storage::MatricesBf16));
  message("exported " + result.model_dir);
  return result;
}

}  // namespace gpstream::speech
