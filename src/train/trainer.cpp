// The training loop.
#include "train/trainer.h"

#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/safetensors.h"
#include "model/random_init.h"
#include "stream/tokenizer_codec.h"
#include "train/byte_codec.h"
#include "train/epoch_sampling.h"
#include "train/export.h"
#include "train/run_folder.h"
#include "util/mapped_file.h"
#include "util/memory_budget.h"

namespace gpstream::train {
namespace {

uint64_t mix(uint64_t x) {
  return mix_seed(x);
}

struct Codec {
  std::unique_ptr<stream::SegmentCodec> codec;
  tokenizer::Template tmpl;  // as named, {src}/{tgt} kept (gpstream.json)
};

Result<Codec> make_codec(const TrainConfig& c) {
  Codec out;
  if (c.tokenizer == "bytes") {
    out.codec = std::make_unique<ByteCodec>();
    out.tmpl = *tokenizer::Template::builtin("gpstream");
    out.tmpl.name = "gpstream-bytes";
    return out;
  }
  auto named = tokenizer::Template::builtin(c.template_name);
  if (!named.ok()) return named.error();
  out.tmpl = *named;
  auto tok = tokenizer::Tokenizer::load(c.tokenizer);
  if (!tok.ok()) return tok.error().with_context("loading tokenizer " + c.tokenizer);
  auto shared = std::make_shared<const tokenizer::Tokenizer>(std::move(tok).value());
  out.codec = std::make_unique<stream::TokenizerCodec>(
      shared, named->with_languages(tokenizer::language_name(c.source_lang),
                                    tokenizer::language_name(c.target_lang)));
  return out;
}

std::string model_fingerprint(const TrainModel& m) {
  const model::ModelConfig& c = m.config();
  std::ostringstream s;
  s << "v" << c.n_vocab << " e" << c.n_embd << " f" << c.n_ff << " l" << c.n_layer << " h" << c.n_head << "/"
    << c.n_head_kv << " d" << c.head_dim << " tied" << c.tie_word_embeddings << " lora"
    << m.lora_options().rank;
  for (bool t : m.lora_options().targets) s << t;
  s << " n" << (m.lora_enabled() ? m.lora().size() : m.base().size());
  return s.str();
}

// The text trainer's side of a run (training_run.h): one step over micro-batches, its metrics line, the dev
// loss and the export.
class TextTrainingJob final : public TrainingJob {
 public:
  TextTrainingJob(const TrainConfig& cfg, const TrainRunOptions& opt, TrainModel& model, Dataset& train,
                  std::vector<TrainBatch> dev_batches, const tokenizer::Template& tmpl, const Schedule& sched,
                  int threads)
      : cfg_(cfg),
        opt_(opt),
        model_(model),
        train_(train),
        dev_batches_(std::move(dev_batches)),
        tmpl_(tmpl),
        sched_(sched),
        threads_(threads),
        adam_(model.trainable().size(), cfg.adam),
        micro_(static_cast<size_t>(cfg.grad_accum)) {}

  std::string fingerprint() override { return model_fingerprint(model_); }
  std::vector<float>& parameters() override { return model_.trainable().values; }
  AdamW& optimizer() override { return adam_; }
  DataPosition data_position() override { return train_.position(); }
  int64_t seek_data(DataPosition position) override {
    train_.seek(position);
    return train_.batches_per_epoch();  // the epoch's plan gives its batch count
  }
  const std::string& model_dir() const { return model_dir_; }

  Result<StepDone> train_step(int64_t steps_done) override {
    // batch
    int64_t n_labels = 0, n_tok = 0;
    for (TrainBatch& b : micro_) {
      GPS_ASSIGN(b, train_.next_batch());
      n_labels += b.n_labels();
      n_tok += b.n_tokens();
    }
    // forward, zero-grad, backward (token mean over the whole step)
    model_.zero_grad();
    double loss_sum = 0;
    for (size_t i = 0; i < micro_.size(); ++i) {
      ForwardOptions fo;
      fo.dropout_seed = mix(cfg_.seed ^ mix(static_cast<uint64_t>(steps_done) * 64 + i));
      GPS_ASSIGN(double s, model_.forward(micro_[i], fo));
      loss_sum += s;
      if (n_labels > 0) model_.backward(1.0f / static_cast<float>(n_labels));
    }
    // clip, update
    grad_norm_ = clip_grad_norm(model_.grads(), cfg_.clip);
    lr_ = sched_.at(steps_done);
    adam_.step(model_.trainable(), model_.grads(), lr_, threads_);
    return StepDone{n_labels > 0 ? loss_sum / static_cast<double>(n_labels) : 0.0, n_tok};
  }

  Result<std::string> step_metrics(const StepDone& done, const StepTiming& timing) override {
    StepReport r;
    fill_step_progress(r, done, timing, lr_, grad_norm_);
    r.tokens_seen = timing.seen;
    r.tokens_per_s = timing.per_s(static_cast<double>(timing.seen_this_run));
    if (cfg_.dev_every > 0 && timing.step % cfg_.dev_every == 0 && !dev_batches_.empty()) {
      GPS_ASSIGN(double dl, eval_dev());
      r.dev_loss = dl;
    }
    if (opt_.on_step) opt_.on_step(r);
    return step_metrics_line(r, "", {{"tokens", r.tokens_seen}, {"tokens_per_s", r.tokens_per_s}}, {});
  }

  Result<std::optional<double>> final_dev_loss() override {
    if (dev_batches_.empty()) return std::optional<double>();
    GPS_ASSIGN(double dl, eval_dev());
    if (opt_.on_message) opt_.on_message("dev loss " + std::to_string(dl));
    return std::optional<double>(dl);
  }

  Status export_model(const RunTotals& totals) override {
    HfExportOptions eo;
    eo.dtype = cfg_.export_dtype;
    eo.merge_lora = !model_.lora_enabled() || cfg_.merge_lora;
    eo.tokenizer_path = cfg_.tokenizer == "bytes" ? "" : cfg_.tokenizer;
    eo.meta.prompt_template = tmpl_;
    eo.meta.source_lang = cfg_.source_lang;
    eo.meta.target_lang = cfg_.target_lang;
    // Batch mode trains consecutive positions (the target group starts right after the source): φ = S.
    eo.meta.phi = cfg_.data.mode == TrainMode::Batch ? stream::Phi{0.0f, true} : cfg_.data.phi;
    eo.meta.k =
        cfg_.data.k_min == cfg_.data.k_max ? cfg_.data.k_min : (cfg_.data.k_min + cfg_.data.k_max) / 2;
    eo.meta.k_min = cfg_.data.k_min;
    eo.meta.k_max = cfg_.data.k_max;
    eo.meta.paradigm = train_mode_paradigm(cfg_.data.mode);
    eo.meta.positions_removed = cfg_.data.positions_removed;
    {
      nlohmann::ordered_json t;
      t["mode"] = train_mode_name(cfg_.data.mode);
      t["steps"] = totals.steps;
      t["tokens"] = totals.seen;
      t["parameters"] = static_cast<int64_t>(model_.base().size());
      t["lora_rank"] = cfg_.lora.rank;
      t["seed"] = cfg_.seed;
      if (totals.dev_loss) t["dev_loss"] = *totals.dev_loss;
      eo.meta.trained_json = t.dump();
    }
    const std::string out = cfg_.output_dir;
    if (!model_.lora_enabled() || cfg_.merge_lora || cfg_.lora.rank == 0) {
      model_dir_ = out + "/model";
      GPS_TRY(export_hf(model_, model_dir_, eo));
    }
    if (model_.lora_enabled())
      GPS_TRY(
          export_peft(model_, out + "/adapter", cfg_.init_dir.empty() ? "gpstream-scratch" : cfg_.init_dir));
    if (opt_.on_message) opt_.on_message("exported " + (model_dir_.empty() ? out + "/adapter" : model_dir_));
    return {};
  }

 private:
  Result<double> eval_dev() {
    double sum = 0;
    int64_t n = 0;
    ForwardOptions fo;
    fo.training = false;
    for (const TrainBatch& b : dev_batches_) {
      GPS_ASSIGN(double s, model_.forward(b, fo));
      sum += s;
      n += b.n_labels();
    }
    return n > 0 ? sum / static_cast<double>(n) : 0.0;
  }

  const TrainConfig& cfg_;
  const TrainRunOptions& opt_;
  TrainModel& model_;
  Dataset& train_;
  std::vector<TrainBatch> dev_batches_;
  tokenizer::Template tmpl_;
  Schedule sched_;
  int threads_;
  AdamW adam_;
  std::vector<TrainBatch> micro_;
  float lr_ = 0;
  double grad_norm_ = 0;
  std::string model_dir_;
};

}  // namespace

Result<TrainResult> run_training(const TrainConfig& cfg, const TrainRunOptions& opt) {
  GPS_TRY(check_run_control(opt));
  auto message = [&](const std::string& m) {
    if (opt.on_message) opt.on_message(m);
  };
  const int threads = cfg.threads > 0 ? cfg.threads : std::max(1, omp_get_max_threads());
  // OpenBLAS's own pool (GEMMs outside our parallel regions) uses the same count.
  openblas_set_num_threads(threads);
  GPS_ASSIGN(Codec codec, make_codec(cfg));

  // Model.
  model::ModelConfig mc;
  io::TensorMap init;
  if (!cfg.init_dir.empty()) {
    GPS_ASSIGN(mc, model::load_hf_config(cfg.init_dir));
    GPS_ASSIGN(init, io::read_safetensors_dir(cfg.init_dir));
    if (mc.n_vocab < codec.codec->vocab_size())
      return invalid_argument("the model's vocabulary (" + std::to_string(mc.n_vocab) +
                              ") is smaller than the tokenizer's (" +
                              std::to_string(codec.codec->vocab_size()) + ")");
  } else {
    const ScratchModel& s = *cfg.scratch;
    mc.n_vocab = s.vocab_size > 0 ? s.vocab_size : codec.codec->vocab_size();
    if (mc.n_vocab < codec.codec->vocab_size())
      return invalid_argument("scratch vocab_size is smaller than the tokenizer's");
    mc.n_embd = s.hidden_size;
    mc.n_ff = s.intermediate_size;
    mc.n_layer = s.num_hidden_layers;
    mc.n_head = s.num_attention_heads;
    mc.n_head_kv = s.num_key_value_heads;
    if (s.hidden_size % s.num_attention_heads != 0)
      return invalid_argument("hidden_size must be a multiple of num_attention_heads");
    mc.head_dim = s.hidden_size / s.num_attention_heads;
    mc.tie_word_embeddings = s.tie_word_embeddings;
    mc.rope_theta = s.rope_theta;
    mc.max_position_embeddings = s.max_position_embeddings;
    mc.norm_eps = s.rms_norm_eps;
    GPS_ASSIGN(auto bos, codec.codec->encode(stream::SegmentKind::Prompt, "", true));
    GPS_ASSIGN(auto eos, codec.codec->encode(stream::SegmentKind::TargetEnd, "", false));
    if (!bos.empty()) mc.bos_token_id = bos[0];
    if (!eos.empty()) mc.eos_token_ids = {eos[0]};
    GPS_TRY(mc.validate());
    model::RandomInitOptions ro;
    ro.seed = mix(cfg.seed ^ kScratchInitSalt);
    ro.std = s.init_std;
    GPS_TRY(
        check_memory_budget(saturating_product({mc.n_params(), sizeof(float)}), "initialising this model"));
    init = model::random_tensors(mc, ro);
  }

  // Data.
  GPS_ASSIGN(PairFile train_pairs, read_pairs_tsv(cfg.train_tsv, cfg.max_train_pairs));
  const LayoutFn layout = codec_layout_fn(*codec.codec, cfg.data.positions_removed);
  GPS_ASSIGN(Dataset train, Dataset::create(std::move(train_pairs.pairs), layout, cfg.data));
  std::vector<TrainBatch> dev_batches;
  if (!cfg.dev_tsv.empty()) {
    GPS_ASSIGN(PairFile dev_pairs, read_pairs_tsv(cfg.dev_tsv, cfg.max_dev_pairs));
    DataOptions dopt = cfg.data;
    dopt.pack = false;
    GPS_ASSIGN(Dataset dev, Dataset::create(std::move(dev_pairs.pairs), layout, dopt));
    GPS_ASSIGN(dev_batches, dev.all_batches());
  }
  message("data: " + std::to_string(train.n_examples()) + " training examples (" +
          std::to_string(train.n_tokens()) + " tokens, " + std::to_string(train.n_dropped()) +
          " longer than max_seq dropped, " + std::to_string(train_pairs.skipped_empty) +
          " empty lines skipped), " + std::to_string(dev_batches.size()) + " dev batches");

  GPS_ASSIGN(auto model_ptr,
             TrainModel::create(mc, init, cfg.lora, mix(cfg.seed ^ kTrainModelSalt),
                                TrainShape{cfg.data.batch_tokens, cfg.data.max_seq}, threads));
  TrainModel& model = *model_ptr;
  if (!cfg.lora_init.empty()) GPS_TRY(load_peft_adapter(model, cfg.lora_init));

  // Plan.
  Schedule sched = cfg.schedule;
  int64_t total_steps = cfg.steps;
  if (total_steps == 0) {
    const double per_step = static_cast<double>(train.n_tokens()) /
                            static_cast<double>(train.batches_per_epoch()) * cfg.grad_accum;
    total_steps = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(static_cast<double>(cfg.token_budget) / per_step)));
  }
  sched.total_steps = total_steps;

  TextTrainingJob job(cfg, opt, model, train, std::move(dev_batches), codec.tmpl, sched, threads);
  RunPlan plan =
      run_plan_from(cfg, total_steps, std::string("gpstream train: ") + train_mode_name(cfg.data.mode));
  plan.max_seen = cfg.token_budget;
  GPS_ASSIGN(RunOutcome run, run_training_job(job, plan, opt));
  TrainResult result;
  result.first_step = run.first_step;
  result.losses = std::move(run.losses);
  result.dev_loss = run.totals.dev_loss;
  result.model_dir = job.model_dir();
  result.n_params = static_cast<int64_t>(model.base().size());
  result.n_trainable = static_cast<int64_t>(model.trainable().size());
  result.tokens_seen = run.totals.seen;
  result.interrupted_by = run.interrupted_by;
  return result;
}

}  // namespace gpstream::train
