// Joint training of the speech encoder and the LLM (speech_trainer.h).
#include "speech/speech_trainer.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "audio/log_mel.h"
#include "eval/wer.h"
#include "io/safetensors.h"
#include "kernels/ctc_loss.h"
#include "speech/ctc_alphabet.h"
#include "speech/feature_augment.h"
#include "speech/speech_loader.h"
#include "speech/speech_manifest.h"
#include "speech/speech_model.h"
#include "speech_encoder/speech_encoder.h"
#include "stream/layout.h"
#include "stream/model_meta.h"
#include "stream/tokenizer_codec.h"
#include "train/dataset.h"
#include "train/epoch_sampling.h"
#include "train/export.h"
#include "train/run_folder.h"
#include "train/train_model.h"
#include "util/mapped_file.h"

namespace gpstream::speech {
namespace {

using train::mix_seed;

// The feature augmentation's seed stream, apart from the noise's (same base seed, epoch and utterance key).
constexpr uint64_t kAugmentStream = 0x6175676d00000000ull;  // "augm"

// The optimizer's view: encoder tensors (prefixed "speech_encoder.") then the LLM's trained tensors, one
// flat buffer; gathered before and scattered after each update.
// The CTC head (weight [kCtcAlphabetSize, d_model], bias) sits between them.
train::ParamSet joint_params(const speech_encoder::SpeechEncoderModel& enc, size_t ctc_size,
                             const train::ParamSet* llm, float llm_lr_scale) {
  train::ParamSet p;
  for (const speech_encoder::SpeechEncoderTensor& t : enc.tensors())
    p.tensors.push_back({"speech_encoder." + t.name, t.shape, t.offset, t.numel,
                         t.is_matrix ? train::ParamKind::Matrix : train::ParamKind::Norm});
  if (ctc_size > 0) {
    const int64_t D = enc.config().d_model;
    p.tensors.push_back({"ctc_head.weight",
                         {kCtcAlphabetSize, D},
                         enc.size(),
                         static_cast<size_t>(kCtcAlphabetSize * D),
                         train::ParamKind::Matrix});
    p.tensors.push_back({"ctc_head.bias",
                         {kCtcAlphabetSize},
                         enc.size() + static_cast<size_t>(kCtcAlphabetSize * D),
                         static_cast<size_t>(kCtcAlphabetSize),
                         train::ParamKind::Bias});
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
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(T), static_cast<int>(V),
              static_cast<int>(D), 1.0f, e.data(), static_cast<int>(D), head, static_cast<int>(D), 1.0f,
              logits.data(), static_cast<int>(V));
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
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(T), static_cast<int>(D),
              static_cast<int>(V), 1.0f, dlogits.data(), static_cast<int>(V), W, static_cast<int>(D), 0.0f,
              d_e.data(), static_cast<int>(D));
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(V), static_cast<int>(D),
              static_cast<int>(T), 1.0f, dlogits.data(), static_cast<int>(V), e.data(), static_cast<int>(D),
              1.0f, gw, static_cast<int>(D));
  float* gb = gw + V * D;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t v = 0; v < V; ++v) gb[v] += dlogits[static_cast<size_t>(t * V + v)];
  return loss;
}

// One utterance made ready for the LLM: its encoder pass (activations kept for the backward) and its
// laid-out sequence with the encoder rows as input rows.
struct Example {
  std::unique_ptr<speech_encoder::SpeechEncoderPass> pass;
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
  ExampleMaker(const SpeechTrainConfig& cfg, const speech_encoder::SpeechEncoderModel& enc,
               const stream::SegmentCodec& codec, int n_vocab, int threads)
      : cfg_(cfg), enc_(enc), codec_(codec), n_vocab_(n_vocab), threads_(threads) {}

  // `train`: a training utterance (augmented when the config asks; the dev set never is). Thread-safe.
  Features features(const speech::SpeechUtterance& u, uint64_t epoch, bool noise, bool train) const {
    Features f;
    speech::SpeechLoadOptions lo;
    lo.add_noise = noise;
    lo.noise = cfg_.noise_options;
    lo.seed = cfg_.seed;
    auto sp = speech::load_speech_utterance(u, epoch, lo);
    if (!sp.ok()) {
      f.status = sp.error();
      return f;
    }
    f.mel = audio::log_mel(sp->samples);
    if (train && cfg_.augment.enabled()) {
      const uint64_t seed = audio::noise_seed(cfg_.seed ^ kAugmentStream, epoch,
                                              audio::noise_utterance_key(std::span<const char>(u.wav_path)));
      const size_t n = f.mel.size() / audio::kLogMelBins;
      speech::apply_feature_augment(speech::draw_feature_augment(cfg_.augment, n, seed), f.mel);
    }
    f.audio_s = static_cast<double>(sp->samples.size()) / audio::kLogMelSampleRate;
    return f;
  }

  // False when the utterance is skipped (no encoder row, or longer than max_seq).
  Result<bool> make(const speech::SpeechUtterance& u, uint64_t epoch, int k, stream::Phi phi, bool noise,
                    bool train, Example& ex) {
    return make_from(u, features(u, epoch, noise, train), k, phi, ex);
  }

  // The encoder forward and the layout of an utterance whose features `f` are.
  Result<bool> make_from(const speech::SpeechUtterance& u, const Features& f, int k, stream::Phi phi,
                         Example& ex) {
    GPS_TRY(f.status);
    const int64_t n_frames = static_cast<int64_t>(f.mel.size()) / enc_.config().n_mels;
    if (!ex.pass) ex.pass = std::make_unique<speech_encoder::SpeechEncoderPass>(enc_, threads_);
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
  const speech_encoder::SpeechEncoderModel& enc_;
  const stream::SegmentCodec& codec_;
  int n_vocab_, threads_;
};

std::string speech_fingerprint(const speech_encoder::SpeechEncoderModel& enc, const train::TrainModel& m,
                               LlmTraining how, bool ctc) {
  const model::ModelConfig& c = m.config();
  std::string s = "speech enc" + std::to_string(enc.size()) + " " + enc.config().to_json() + " llm v" +
                  std::to_string(c.n_vocab) + " e" + std::to_string(c.n_embd) + " l" +
                  std::to_string(c.n_layer) + " ctc" + std::to_string(ctc) + " " +
                  (how == LlmTraining::Lora   ? "lora" + std::to_string(m.lora_options().rank)
                   : how == LlmTraining::Full ? "full"
                                              : "frozen");
  return s;
}

// The speech trainer's side of a run (train/training_run.h): the joint parameters (encoder, CTC head, the
// LLM's trained tensors) as one optimizer buffer, the epoch's utterance order, one step, its metrics line,
// the dev scores and the export.
class SpeechTrainingJob final : public train::TrainingJob {
 public:
  SpeechTrainingJob(const SpeechTrainConfig& cfg, const SpeechTrainOptions& opt,
                    const stream::ModelMeta& meta, const stream::SegmentCodec& codec, train::TrainModel& tm,
                    speech_encoder::SpeechEncoderModel& enc,
                    const std::vector<speech::SpeechUtterance>& train_utts,
                    const std::vector<speech::SpeechUtterance>& dev_utts, int threads)
      : cfg_(cfg),
        opt_(opt),
        meta_(meta),
        tm_(tm),
        enc_(enc),
        train_(train_utts),
        dev_(dev_utts),
        threads_(threads),
        llm_trained_(cfg.llm_training != LlmTraining::Frozen),
        use_ctc_(cfg.ctc_weight > 0),
        D_(enc.config().d_model),
        maker_(cfg, enc, codec, tm.config().n_vocab, threads),
        examples_(static_cast<size_t>(cfg.batch_utterances)) {
    // The CTC head: uniform in ±1/sqrt(d_model), bias 0.
    ctc_head_.assign(use_ctc_ ? static_cast<size_t>(kCtcAlphabetSize * (D_ + 1)) : 0, 0.0f);
    std::mt19937_64 rng(mix_seed(cfg.seed ^ train::kCtcHeadInitSalt));
    std::uniform_real_distribution<float> u(-1.0f / std::sqrt(float(D_)), 1.0f / std::sqrt(float(D_)));
    for (size_t i = 0; i < static_cast<size_t>(kCtcAlphabetSize * D_) && use_ctc_; ++i) ctc_head_[i] = u(rng);
    params_ = joint_params(enc, ctc_head_.size(), llm_trained_ ? &tm.trainable() : nullptr,
                           static_cast<float>(cfg.llm_lr_scale));
    llm_at_ = static_cast<std::ptrdiff_t>(enc.size() + ctc_head_.size());
    grads_.assign(params_.size(), 0.0f);
    enc_grads_.assign(enc.size(), 0.0f);
    ctc_grads_.assign(ctc_head_.size(), 0.0f);
    adam_ = std::make_unique<train::AdamW>(params_.size(), cfg.adam);
    sched_ = cfg.schedule;
    sched_.total_steps = cfg.steps;
    gather();
  }

  std::string fingerprint() override { return speech_fingerprint(enc_, tm_, cfg_.llm_training, use_ctc_); }
  std::vector<float>& parameters() override { return params_.values; }
  train::AdamW& optimizer() override { return *adam_; }
  void parameters_restored() override { scatter(); }
  train::DataPosition data_position() override { return pos_; }
  int64_t seek_data(train::DataPosition position) override {
    pos_ = position;
    return static_cast<int64_t>(train_.size());  // one utterance a "batch"
  }
  int64_t skipped() const { return skipped_; }
  std::optional<double> final_dev_ctc_wer() const { return final_dev_ctc_wer_; }

  Result<train::StepDone> train_step(int64_t steps_done) override {
    GPS_ASSIGN(train::TrainBatch batch, next_batch());
    const int64_t n_labels = batch.n_labels();
    // LLM forward and backward, then the encoder backward from the input-row gradients.
    tm_.zero_grad();
    std::fill(enc_grads_.begin(), enc_grads_.end(), 0.0f);
    train::ForwardOptions fo;
    fo.dropout_seed = mix_seed(cfg_.seed ^ static_cast<uint64_t>(steps_done));
    // The first ctc_only_steps train the encoder alone (CTC): no LLM forward, the LLM's parameters rest.
    ctc_only_ = steps_done < cfg_.ctc_only_steps;
    double loss_sum = 0;
    if (!ctc_only_) {
      GPS_ASSIGN(loss_sum, tm_.forward(batch, fo));
      if (n_labels > 0) tm_.backward(1.0f / static_cast<float>(n_labels));
    }
    ctc_backward();
    std::copy(enc_grads_.begin(), enc_grads_.end(), grads_.begin());
    std::copy(ctc_grads_.begin(), ctc_grads_.end(),
              grads_.begin() + static_cast<std::ptrdiff_t>(enc_.size()));
    if (llm_trained_) std::copy(tm_.grads().begin(), tm_.grads().end(), grads_.begin() + llm_at_);
    grad_norm_ = train::clip_grad_norm(grads_, cfg_.clip);
    lr_ = sched_.at(steps_done);
    // The LLM's tensors follow the encoder's and the CTC head's; a zero scale holds them still (no decay).
    const float llm_scale = ctc_only_ ? 0.0f : static_cast<float>(cfg_.llm_lr_scale);
    for (train::ParamTensor& pt : params_.tensors)
      if (static_cast<std::ptrdiff_t>(pt.offset) >= llm_at_) pt.lr_scale = llm_scale;
    adam_->step(params_, grads_, lr_, threads_);
    scatter();
    const double loss = ctc_only_ ? ctc_mean_ : n_labels > 0 ? loss_sum / static_cast<double>(n_labels) : 0.0;
    return train::StepDone{loss, static_cast<int64_t>(n_ex_)};
  }

  Result<std::string> step_metrics(const train::StepDone& done, const train::StepTiming& timing) override {
    SpeechStepReport r;
    train::fill_step_progress(r, done, timing, lr_, grad_norm_);
    r.ctc_only = ctc_only_;
    if (ctc_counted_ > 0) r.ctc_loss = ctc_mean_;
    r.utterances_seen = timing.seen;
    r.utterances_per_s = timing.per_s(static_cast<double>(timing.seen_this_run));
    r.audio_s_per_s = timing.per_s(audio_s_run_);
    if (cfg_.dev_every > 0 && timing.step % cfg_.dev_every == 0 && !dev_.empty()) {
      GPS_ASSIGN(DevScores ds, eval_dev());
      r.dev_loss = ds.loss;
      r.dev_ctc_wer = ds.ctc_wer;
    }
    nlohmann::ordered_json fields, dev_fields;
    if (r.ctc_loss) fields["ctc_loss"] = *r.ctc_loss;
    fields["utterances"] = r.utterances_seen;
    if (r.dev_ctc_wer) dev_fields["dev_ctc_wer"] = *r.dev_ctc_wer;
    if (opt_.on_step) opt_.on_step(r);
    return train::step_metrics_line(r, ctc_only_ ? "ctc" : "", fields, dev_fields);
  }

  Result<std::optional<double>> final_dev_loss() override {
    if (dev_.empty()) return std::optional<double>();
    GPS_ASSIGN(DevScores ds, eval_dev());
    final_dev_ctc_wer_ = ds.ctc_wer;
    char line[96];
    if (ds.ctc_wer)
      std::snprintf(line, sizeof line, "dev loss %.4f, dev WER of the CTC head's greedy transcripts %.1f %%",
                    ds.loss, 100 * *ds.ctc_wer);
    else
      std::snprintf(line, sizeof line, "dev loss %.4f", ds.loss);
    if (opt_.on_message) opt_.on_message(line);
    return std::optional<double>(ds.loss);
  }

  // The LLM (LoRA merged) as a streaming model directory, the encoder beside it.
  Status export_model(const train::RunTotals& totals) override {
    train::HfExportOptions eo;
    eo.dtype = io::DType::BF16;
    eo.merge_lora = true;
    eo.tokenizer_path = cfg_.llm_dir;
    eo.meta = meta_;
    eo.meta.source_lang = cfg_.source_lang;
    eo.meta.target_lang = cfg_.target_lang;
    eo.meta.phi = cfg_.phis.front();
    eo.meta.k_min = cfg_.k_min;
    eo.meta.k_max = cfg_.k_max;
    eo.meta.k = cfg_.export_k > 0 ? cfg_.export_k : cfg_.k_max;
    eo.meta.beam = cfg_.export_beam;
    eo.meta.paradigm = stream::Paradigm::Group;
    eo.meta.positions_removed = stream::PositionsRemoved::None;  // the speech layouts keep every position
    eo.meta.end_after_source = cfg_.end_after_source;
    {
      nlohmann::ordered_json t;
      t["task"] = "speech";
      t["steps"] = totals.steps;
      t["utterances"] = totals.seen;
      t["training_seconds"] = totals.elapsed_s;
      t["llm_training"] = cfg_.llm_training == LlmTraining::Lora   ? "lora"
                          : cfg_.llm_training == LlmTraining::Full ? "full"
                                                                   : "frozen";
      t["lora_rank"] = cfg_.lora.rank;
      t["llm_lr_scale"] = cfg_.llm_lr_scale;
      t["encoder_parameters"] = enc_.size();
      t["ctc_weight"] = cfg_.ctc_weight;
      nlohmann::json phis = nlohmann::json::array();
      for (const stream::Phi& p : cfg_.phis) phis.push_back(p.to_string());
      t["phi_trained"] = phis;
      t["chunk_ms"] = 10 * enc_.config().mel_frames_per_chunk();
      t["seed"] = cfg_.seed;
      if (totals.dev_loss) t["dev_loss"] = *totals.dev_loss;
      if (final_dev_ctc_wer_) t["dev_ctc_wer"] = *final_dev_ctc_wer_;
      eo.meta.trained_json = t.dump();
    }
    const std::string model_dir = cfg_.output_dir + "/model";
    GPS_TRY(train::export_hf(tm_, model_dir, eo));
    // Matrices in BF16 like the LLM's (half the file: the model fits models/' 25 MB), norms and biases in
    // F32.
    GPS_TRY(enc_.save(model_dir + "/" + kSpeechEncoderFile,
                      speech_encoder::SpeechEncoderModel::Storage::MatricesBf16));
    if (opt_.on_message) opt_.on_message("exported " + model_dir);
    return {};
  }

 private:
  // The LLM's token-mean loss on the dev utterances and, with a CTC head, the corpus WER of its greedy
  // transcripts (a diagnostic of the encoder alone on the dev voices).
  struct DevScores {
    double loss = 0;
    std::optional<double> ctc_wer;
  };

  void gather() {
    std::copy(enc_.values().begin(), enc_.values().end(), params_.values.begin());
    std::copy(ctc_head_.begin(), ctc_head_.end(),
              params_.values.begin() + static_cast<std::ptrdiff_t>(enc_.size()));
    if (llm_trained_)
      std::copy(tm_.trainable().values.begin(), tm_.trainable().values.end(),
                params_.values.begin() + llm_at_);
  }
  void scatter() {
    std::copy_n(params_.values.begin(), enc_.size(), enc_.values().begin());
    std::copy_n(params_.values.begin() + static_cast<std::ptrdiff_t>(enc_.size()), ctc_head_.size(),
                ctc_head_.begin());
    if (llm_trained_)
      std::copy(params_.values.begin() + llm_at_, params_.values.end(), tm_.trainable().values.begin());
  }

  // The utterance at the data position (advancing it; an epoch's order is train::EpochShuffle's).
  std::pair<int64_t, size_t> next_utterance() {
    if (pos_.batch >= static_cast<int64_t>(train_.size())) pos_ = {pos_.epoch + 1, 0};
    if (order_epoch_ != pos_.epoch) {
      order_ = train::EpochShuffle(cfg_.seed, pos_.epoch).order(train_.size());
      order_epoch_ = pos_.epoch;
    }
    return {pos_.epoch, order_[static_cast<size_t>(pos_.batch++)]};
  }

  // The next utterances of the data order that fit. The features of as many as are still missing are
  // computed on all threads at once (one utterance per thread: reading, resampling, noise and log-mel would
  // otherwise run on one core while the other waits); the encoder and the layout follow in order.
  Result<train::TrainBatch> next_batch() {
    train::TrainBatch batch;
    n_ex_ = 0;
    while (n_ex_ < examples_.size()) {
      std::vector<std::pair<int64_t, size_t>> next;  // (epoch, utterance) of the next positions
      while (next.size() < examples_.size() - n_ex_) next.push_back(next_utterance());
      std::vector<Features> feats(next.size());
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
      for (size_t i = 0; i < next.size(); ++i)
        feats[i] =
            maker_.features(train_[next[i].second], static_cast<uint64_t>(next[i].first), cfg_.noise, true);
      for (size_t i = 0; i < next.size(); ++i) {
        const auto [epoch, u] = next[i];
        Example& ex = examples_[n_ex_];
        const int k = train::sample_k(cfg_.seed, epoch, u, cfg_.k_min, cfg_.k_max);
        const uint64_t phi_draw = train::item_draw(cfg_.seed ^ train::kPhiDrawSalt, epoch, u);
        const stream::Phi phi = cfg_.phis[static_cast<size_t>(phi_draw % cfg_.phis.size())];
        GPS_ASSIGN(bool ok, maker_.make_from(train_[u], feats[i], k, phi, ex));
        if (!ok) {
          ++skipped_;
          continue;
        }
        audio_s_run_ += ex.audio_s;
        batch.seqs.push_back(std::move(ex.seq));
        ++n_ex_;
      }
    }
    return batch;
  }

  // The auxiliary CTC loss (a per-character mean over the batch's utterances that have enough frames) and
  // the encoder backward of every utterance from the LLM's input-row gradients and the CTC gradient.
  void ctc_backward() {
    int64_t ctc_chars = 0;
    for (size_t i = 0; i < n_ex_; ++i)
      if (examples_[i].pass->encoder_frames() >= static_cast<int64_t>(examples_[i].ctc.size()))
        ctc_chars += static_cast<int64_t>(examples_[i].ctc.size());
    std::fill(ctc_grads_.begin(), ctc_grads_.end(), 0.0f);
    double ctc_sum = 0;
    ctc_counted_ = 0;
    std::vector<float> d_e;
    for (size_t i = 0; i < n_ex_; ++i) {
      Example& ex = examples_[i];
      const float* de_ptr = nullptr;
      if (use_ctc_ && ctc_chars > 0 && !ex.ctc.empty()) {
        const double l = ctc_head_loss(ctc_head_.data(), ctc_grads_.data(), d_e, ex.pass->encoder_output(),
                                       ex.pass->encoder_frames(), D_, ex.ctc,
                                       static_cast<float>(cfg_.ctc_weight / static_cast<double>(ctc_chars)));
        if (std::isfinite(l)) {
          ctc_sum += l;
          ctc_counted_ += static_cast<int64_t>(ex.ctc.size());
          de_ptr = d_e.data();
        }
      }
      ex.pass->backward(ctc_only_ ? nullptr : tm_.input_grad(i).data(), enc_grads_.data(), de_ptr);
    }
    ctc_mean_ = ctc_counted_ > 0 ? ctc_sum / static_cast<double>(ctc_counted_) : 0.0;
  }

  Result<DevScores> eval_dev() {
    double sum = 0;
    int64_t n = 0;
    std::vector<std::string> refs, hyps;
    const int k = (cfg_.k_min + cfg_.k_max) / 2;
    train::ForwardOptions fo;
    fo.training = false;
    for (const speech::SpeechUtterance& u : dev_) {
      Example& ex = examples_[0];
      GPS_ASSIGN(bool ok, maker_.make(u, 0, k, cfg_.phis.front(), cfg_.noise, false, ex));
      if (!ok) continue;
      if (use_ctc_) {
        const int64_t T = ex.pass->encoder_frames();
        const std::vector<float> logits = ctc_head_logits(ctc_head_.data(), ex.pass->encoder_output(), T, D_);
        refs.push_back(ctc_text(ex.ctc));
        hyps.push_back(ctc_text(ctc_greedy_labels(logits.data(), T)));
      }
      train::TrainBatch b;
      b.seqs.push_back(std::move(ex.seq));
      GPS_ASSIGN(double s, tm_.forward(b, fo));
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
  }

  const SpeechTrainConfig& cfg_;
  const SpeechTrainOptions& opt_;
  const stream::ModelMeta& meta_;
  train::TrainModel& tm_;
  speech_encoder::SpeechEncoderModel& enc_;
  const std::vector<speech::SpeechUtterance>& train_;
  const std::vector<speech::SpeechUtterance>& dev_;
  int threads_;
  bool llm_trained_, use_ctc_;
  int64_t D_;
  ExampleMaker maker_;
  std::vector<Example> examples_;
  std::vector<float> ctc_head_;
  train::ParamSet params_;
  std::ptrdiff_t llm_at_ = 0;
  std::vector<float> grads_, enc_grads_, ctc_grads_;
  std::unique_ptr<train::AdamW> adam_;
  train::Schedule sched_;
  train::DataPosition pos_;
  std::vector<size_t> order_;
  int64_t order_epoch_ = -1;
  // The last step's.
  size_t n_ex_ = 0;
  bool ctc_only_ = false;
  float lr_ = 0;
  double grad_norm_ = 0, ctc_mean_ = 0;
  int64_t ctc_counted_ = 0;
  // Over this run.
  double audio_s_run_ = 0;
  int64_t skipped_ = 0;
  std::optional<double> final_dev_ctc_wer_;
};

}  // namespace

Result<SpeechTrainResult> run_speech_training(const SpeechTrainConfig& cfg, const SpeechTrainOptions& opt) {
  GPS_TRY(train::check_run_control(opt));
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
                              mc, init, cfg.lora, mix_seed(cfg.seed ^ train::kTrainModelSalt),
                              train::TrainShape{cfg.max_seq * cfg.batch_utterances, cfg.max_seq}, threads));
  train::TrainModel& tm = *tm_ptr;
  const bool llm_trained = cfg.llm_training != LlmTraining::Frozen;

  // The encoder.
  speech_encoder::SpeechEncoderConfig ec = cfg.encoder;
  ec.llm_hidden = mc.n_embd;
  GPS_TRY(ec.validate());
  speech_encoder::SpeechEncoderModel enc(ec);
  enc.init_random(mix_seed(cfg.seed ^ train::kSpeechEncoderInitSalt));

  // Data.
  GPS_ASSIGN(speech::SpeechManifest train_m, speech::read_speech_manifest(cfg.train_manifest));
  if (cfg.max_train > 0 && static_cast<int64_t>(train_m.utterances.size()) > cfg.max_train)
    train_m.utterances.resize(static_cast<size_t>(cfg.max_train));
  if (train_m.utterances.empty()) return invalid_argument(cfg.train_manifest + ": no utterances");
  speech::SpeechManifest dev_m;
  if (!cfg.dev_manifest.empty()) {
    GPS_ASSIGN(dev_m, speech::read_speech_manifest(cfg.dev_manifest));
    if (cfg.max_dev > 0 && static_cast<int64_t>(dev_m.utterances.size()) > cfg.max_dev)
      dev_m.utterances.resize(static_cast<size_t>(cfg.max_dev));
  }
  message("data: " + std::to_string(train_m.utterances.size()) + " training utterances, " +
          std::to_string(dev_m.utterances.size()) + " dev utterances; encoder " + std::to_string(enc.size()) +
          " parameters, LLM " + std::to_string(tm.base().size()) + " (" +
          (llm_trained ? std::to_string(tm.trainable().size()) + " trained" : std::string("frozen")) + ")");

  SpeechTrainingJob job(cfg, opt, meta, codec, tm, enc, train_m.utterances, dev_m.utterances, threads);
  const train::RunPlan plan = train::run_plan_from(cfg, cfg.steps, "gpstream train-speech");
  GPS_ASSIGN(train::RunOutcome run, train::run_training_job(job, plan, opt));
  SpeechTrainResult result;
  result.first_step = run.first_step;
  result.losses = std::move(run.losses);
  result.dev_loss = run.totals.dev_loss;
  result.dev_ctc_wer = job.final_dev_ctc_wer();
  if (run.exported) result.model_dir = cfg.output_dir + "/model";
  result.n_encoder_params = static_cast<int64_t>(enc.size());
  result.n_llm_trainable = llm_trained ? static_cast<int64_t>(tm.trainable().size()) : 0;
  result.skipped = job.skipped();
  result.interrupted_by = run.interrupted_by;
  return result;
}

}  // namespace gpstream::speech
