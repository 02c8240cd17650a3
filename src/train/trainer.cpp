// The training loop.
#include "train/trainer.h"

#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/safetensors.h"
#include "model/random_init.h"
#include "stream/tokenizer_codec.h"
#include "train/byte_codec.h"
#include "train/checkpoint.h"
#include "train/export.h"
#include "train/loss_plot.h"
#include "train/run_folder.h"
#include "util/mapped_file.h"
#include "util/memory_budget.h"

namespace gpstream::train {
namespace {

uint64_t mix(uint64_t x) { return mix_seed(x); }
double now_s() { return steady_seconds(); }

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

std::string fingerprint(const TrainModel& m) {
  const model::ModelConfig& c = m.config();
  std::ostringstream s;
  s << "v" << c.n_vocab << " e" << c.n_embd << " f" << c.n_ff << " l" << c.n_layer << " h" << c.n_head << "/"
    << c.n_head_kv << " d" << c.head_dim << " tied" << c.tie_word_embeddings << " lora"
    << m.lora_options().rank;
  for (bool t : m.lora_options().targets) s << t;
  s << " n" << (m.lora_enabled() ? m.lora().size() : m.base().size());
  return s.str();
}

Status write_text(const std::string& path, const std::string& text) { return write_text_file(path, text); }

}  // namespace

Result<TrainResult> run_training(const TrainConfig& cfg, const TrainRunOptions& opt) {
  if (opt.export_only && opt.resume.empty())
    return invalid_argument("export-only needs a checkpoint to resume from (--resume)");
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
    ro.seed = mix(cfg.seed ^ 0x1111);
    ro.std = s.init_std;
    GPS_TRY(check_memory_budget(saturating_product({mc.n_params(), sizeof(float)}), "initialising this model"));
    init = model::random_tensors(mc, ro);
  }

  // Data.
  GPS_ASSIGN(PairFile train_pairs, read_pairs_tsv(cfg.train_tsv, cfg.max_train_pairs));
  const LayoutFn layout = codec_layout_fn(*codec.codec);
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
             TrainModel::create(mc, init, cfg.lora, mix(cfg.seed ^ 0x2222),
                                TrainShape{cfg.data.batch_tokens, cfg.data.max_seq}, threads));
  TrainModel& model = *model_ptr;
  if (!cfg.lora_init.empty()) GPS_TRY(load_peft_adapter(model, cfg.lora_init));
  AdamW adam(model.trainable().size(), cfg.adam);

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

  // Output folder, resume.
  std::error_code ec;
  const std::string out = cfg.output_dir, ckpt_dir = out + "/checkpoints";
  std::filesystem::create_directories(ckpt_dir, ec);
  if (ec) return io_error("cannot create " + ckpt_dir + ": " + ec.message());
  int64_t step = 0, tokens_seen = 0;
  double elapsed_before = 0;
  const std::string metrics_path = out + "/metrics.jsonl";
  std::string kept_metrics;
  if (!opt.resume.empty()) {
    GPS_ASSIGN(const std::string path, resolve_resume_checkpoint(opt.resume));
    GPS_ASSIGN(CheckpointState s, read_checkpoint(path));
    train.seek(s.data);  // the epoch's plan gives its batch count
    CheckpointExpectation expect;
    expect.fingerprint = fingerprint(model);
    expect.seed = cfg.seed;
    expect.n_params = model.trainable().size();
    expect.batches_per_epoch = train.batches_per_epoch();
    GPS_TRY(check_resume_checkpoint(s, path, expect));
    model.trainable().values = std::move(s.values);
    adam.m = std::move(s.m);
    adam.v = std::move(s.v);
    adam.t = s.adam_t;
    step = s.step;
    tokens_seen = s.tokens_seen;
    elapsed_before = s.elapsed_s;
    message("resumed from " + path + " at step " + std::to_string(step));
    kept_metrics = metrics_lines_up_to(metrics_path, step);  // the metric lines up to the checkpoint
  }
  GPS_TRY(write_text(out + "/train_config.json", cfg.raw_json));
  GPS_TRY(write_text(metrics_path, kept_metrics));
  std::ofstream metrics(metrics_path, std::ios::app);

  auto eval_dev = [&]() -> Result<double> {
    double sum = 0;
    int64_t n = 0;
    ForwardOptions fo;
    fo.training = false;
    for (const TrainBatch& b : dev_batches) {
      GPS_ASSIGN(double s, model.forward(b, fo));
      sum += s;
      n += b.n_labels();
    }
    return n > 0 ? sum / static_cast<double>(n) : 0.0;
  };
  auto save = [&](double elapsed) -> Status {
    CheckpointState s;
    s.step = step;
    s.tokens_seen = tokens_seen;
    s.data = train.position();
    s.adam_t = adam.t;
    s.seed = cfg.seed;
    s.elapsed_s = elapsed;
    s.fingerprint = fingerprint(model);
    s.values = model.trainable().values;
    s.m = adam.m;
    s.v = adam.v;
    char name[64];
    std::snprintf(name, sizeof name, "/checkpoint-%08lld.bin", static_cast<long long>(step));
    GPS_TRY(write_checkpoint(ckpt_dir + name, s));
    GPS_TRY(prune_checkpoints(ckpt_dir, cfg.keep_checkpoints, cfg.keep_every_steps));
    message("checkpoint " + ckpt_dir + name);
    // The loss curve so far, at every checkpoint (the one after training adds the final dev loss).
    GPS_TRY(write_loss_plot(metrics_path, out + "/loss.svg",
                            std::string("gpstream train: ") + train_mode_name(cfg.data.mode)));
    return {};
  };

  TrainResult result;
  result.first_step = step;
  result.n_params = static_cast<int64_t>(model.base().size());
  result.n_trainable = static_cast<int64_t>(model.trainable().size());
  const double t_start = now_s();
  double last_ckpt = t_start;
  const int64_t start_step = step, start_tokens = tokens_seen;
  std::vector<TrainBatch> micro(static_cast<size_t>(cfg.grad_accum));
  while (!opt.export_only && step < total_steps &&
         (cfg.token_budget == 0 || tokens_seen < cfg.token_budget)) {
    if (opt.interrupt && (result.interrupted_by = opt.interrupt()) != 0) break;  // checkpoint below, no export
    // batch
    int64_t n_labels = 0, n_tok = 0;
    for (TrainBatch& b : micro) {
      GPS_ASSIGN(b, train.next_batch());
      n_labels += b.n_labels();
      n_tok += b.n_tokens();
    }
    // forward, zero-grad, backward (token mean over the whole step)
    model.zero_grad();
    double loss_sum = 0;
    for (size_t i = 0; i < micro.size(); ++i) {
      ForwardOptions fo;
      fo.dropout_seed = mix(cfg.seed ^ mix(static_cast<uint64_t>(step) * 64 + i));
      GPS_ASSIGN(double s, model.forward(micro[i], fo));
      loss_sum += s;
      if (n_labels > 0) model.backward(1.0f / static_cast<float>(n_labels));
    }
    // clip, update
    const double norm = clip_grad_norm(model.grads(), cfg.clip);
    const float lr = sched.at(step);
    adam.step(model.trainable(), model.grads(), lr, threads);
    ++step;
    tokens_seen += n_tok;
    const double loss = n_labels > 0 ? loss_sum / static_cast<double>(n_labels) : 0.0;
    if (!std::isfinite(loss))
      return Error(ErrorCode::Internal,
                   "training diverged: loss is not finite at step " + std::to_string(step));
    result.losses.push_back(loss);
    // log
    const double t = now_s(), run_s = t - t_start;
    StepReport r;
    r.step = step;
    r.total_steps = total_steps;
    r.loss = loss;
    r.lr = lr;
    r.grad_norm = norm;
    r.tokens_seen = tokens_seen;
    r.tokens_per_s = run_s > 0 ? static_cast<double>(tokens_seen - start_tokens) / run_s : 0;
    r.elapsed_s = elapsed_before + run_s;
    r.eta_s = run_s / static_cast<double>(step - start_step) * static_cast<double>(total_steps - step);
    if (cfg.dev_every > 0 && step % cfg.dev_every == 0 && !dev_batches.empty()) {
      GPS_ASSIGN(double dl, eval_dev());
      r.dev_loss = dl;
    }
    nlohmann::ordered_json j;
    j["step"] = step;
    j["loss"] = loss;
    j["lr"] = lr;
    j["grad_norm"] = norm;
    j["tokens"] = tokens_seen;
    j["tokens_per_s"] = r.tokens_per_s;
    j["elapsed_s"] = r.elapsed_s;
    if (r.dev_loss) j["dev_loss"] = *r.dev_loss;
    metrics << j.dump() << "\n" << std::flush;
    if (opt.on_step) opt.on_step(r);
    if (opt.stop_after_steps > 0 && step >= opt.stop_after_steps) return result;
    // checkpoint
    const bool by_steps = cfg.ckpt_every_steps > 0 && step % cfg.ckpt_every_steps == 0;
    const bool by_time = cfg.ckpt_every_minutes > 0 && t - last_ckpt >= 60.0 * cfg.ckpt_every_minutes;
    if ((by_steps || by_time) && step < total_steps) {
      GPS_TRY(save(r.elapsed_s));
      last_ckpt = now_s();
    }
  }
  GPS_TRY(save(elapsed_before + now_s() - t_start));
  result.tokens_seen = tokens_seen;
  if (result.interrupted_by != 0) return result;
  metrics.close();

  // Final dev loss, loss curve, export.
  std::vector<LossPoint> tr, dv;
  if (!dev_batches.empty()) {
    GPS_ASSIGN(double dl, eval_dev());
    result.dev_loss = dl;
    message("dev loss " + std::to_string(dl));
  }
  {
    read_loss_curve(metrics_path, tr, dv);
    if (result.dev_loss) dv.push_back({static_cast<double>(step), *result.dev_loss});
    GPS_TRY(
        write_text(out + "/loss.svg",
                   loss_curve_svg(tr, dv, std::string("gpstream train: ") + train_mode_name(cfg.data.mode))));
  }
  HfExportOptions eo;
  eo.dtype = cfg.export_dtype;
  eo.merge_lora = !model.lora_enabled() || cfg.merge_lora;
  eo.tokenizer_path = cfg.tokenizer == "bytes" ? "" : cfg.tokenizer;
  eo.meta.prompt_template = codec.tmpl;
  eo.meta.source_lang = cfg.source_lang;
  eo.meta.target_lang = cfg.target_lang;
  // Batch mode trains consecutive positions (the target group starts right after the source): φ = S.
  eo.meta.phi = cfg.data.mode == TrainMode::Batch ? stream::Phi{0.0f, true} : cfg.data.phi;
  eo.meta.k = cfg.data.k_min == cfg.data.k_max ? cfg.data.k_min : (cfg.data.k_min + cfg.data.k_max) / 2;
  eo.meta.k_min = cfg.data.k_min;
  eo.meta.k_max = cfg.data.k_max;
  eo.meta.paradigm = train_mode_paradigm(cfg.data.mode);
  {
    nlohmann::ordered_json t;
    t["mode"] = train_mode_name(cfg.data.mode);
    t["steps"] = step;
    t["tokens"] = tokens_seen;
    t["parameters"] = result.n_params;
    t["lora_rank"] = cfg.lora.rank;
    t["seed"] = cfg.seed;
    if (result.dev_loss) t["dev_loss"] = *result.dev_loss;
    eo.meta.trained_json = t.dump();
  }
  if (!model.lora_enabled() || cfg.merge_lora || cfg.lora.rank == 0) {
    result.model_dir = out + "/model";
    GPS_TRY(export_hf(model, result.model_dir, eo));
  }
  if (model.lora_enabled())
    GPS_TRY(export_peft(model, out + "/adapter", cfg.init_dir.empty() ? "gpstream-scratch" : cfg.init_dir));
  message("exported " + (result.model_dir.empty() ? out + "/adapter" : result.model_dir));
  return result;
}

}  // namespace gpstream::train
