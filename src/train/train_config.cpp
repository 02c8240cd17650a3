// Training configuration parsing.
#include "train/train_config.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "util/json_reader.h"

namespace gpstream::train {
using json = nlohmann::json;

namespace {
// Deepest JSON nesting accepted in a training config (the format nests 3 levels).
constexpr int kMaxTrainConfigJsonDepth = 16;
}  // namespace

Result<TrainConfig> parse_train_config(const std::string& text, const std::string& where) {
  GPS_ASSIGN(json j, parse_json_object(text, where, kMaxTrainConfigJsonDepth));
  TrainConfig c;
  c.raw_json = text;
  // gpstream's own format: a key it does not read is a typo, refused.
  GPS_ASSIGN(JsonReader top, JsonReader::open(j, where, "", UnknownKeys::Refuse));
  constexpr int64_t kBig = 1'000'000'000'000'000;

  // model
  {
    GPS_ASSIGN(JsonReader m, top.required_object("model"));
    GPS_TRY(m.optional("init", c.init_dir));
    GPS_TRY(m.optional("tokenizer", c.tokenizer));
    GPS_ASSIGN(std::optional<JsonReader> scratch, m.optional_object("scratch"));
    if (scratch) {
      ScratchModel s;
      JsonReader& o = *scratch;
      GPS_TRY(o.optional("vocab_size", s.vocab_size, 0, 10'000'000));
      GPS_TRY(o.optional("hidden_size", s.hidden_size, 2, 100000));
      GPS_TRY(o.optional("intermediate_size", s.intermediate_size, 1, 1'000'000));
      GPS_TRY(o.optional("num_hidden_layers", s.num_hidden_layers, 1, 1000));
      GPS_TRY(o.optional("num_attention_heads", s.num_attention_heads, 1, 1000));
      GPS_TRY(o.optional("num_key_value_heads", s.num_key_value_heads, 1, 1000));
      GPS_TRY(o.optional("tie_word_embeddings", s.tie_word_embeddings));
      GPS_TRY(o.optional("rope_theta", s.rope_theta, 1, 1'000'000'000));
      GPS_TRY(o.optional("max_position_embeddings", s.max_position_embeddings, 1, 100'000'000));
      GPS_TRY(o.optional("rms_norm_eps", s.rms_norm_eps, 1e-12, 1));
      GPS_TRY(o.optional("init_std", s.init_std, 1e-6, 10));
      GPS_TRY(o.finish());
      c.scratch = s;
    }
    GPS_TRY(m.finish());
    if (c.init_dir.empty() == !c.scratch)
      return format_error(where + ": field 'model' needs exactly one of 'init' and 'scratch'");
    if (c.tokenizer.empty())
      return format_error(where + ": missing field 'model.tokenizer' (a tokenizer.json or \"bytes\")");
  }
  GPS_TRY(top.optional("template", c.template_name));
  GPS_TRY(top.optional("source_lang", c.source_lang));
  GPS_TRY(top.optional("target_lang", c.target_lang));
  // data
  {
    GPS_ASSIGN(JsonReader d, top.required_object("data"));
    GPS_TRY(d.optional("train", c.train_tsv));
    GPS_TRY(d.optional("dev", c.dev_tsv));
    GPS_TRY(d.optional("max_train_pairs", c.max_train_pairs, 0, kBig));
    GPS_TRY(d.optional("max_dev_pairs", c.max_dev_pairs, 0, kBig));
    std::string mode = "batch";
    GPS_TRY(d.optional("mode", mode));
    auto m = parse_train_mode(mode);
    if (!m)
      return d.error("mode", "must be one of batch, group, batch-stream, interleaved, interleaved-blocked");
    c.data.mode = *m;
    if (auto k = d.find("k")) {
      // One wait-k, or a range [k_min, k_max] drawn from per example.
      constexpr int kMaxK = 1'000'000;
      if (k->json().is_array()) {
        GPS_ASSIGN(std::vector<JsonValue> range, k->elements(2));
        if (range.size() != 2) return k->error("must be an integer >= 1 or a range [k_min, k_max]");
        GPS_ASSIGN(c.data.k_min, range[0].integer<int>(1, kMaxK));
        GPS_ASSIGN(c.data.k_max, range[1].integer<int>(c.data.k_min, kMaxK));
      } else {
        GPS_ASSIGN(c.data.k_min, k->integer<int>(1, kMaxK));
        c.data.k_max = c.data.k_min;
      }
    }
    if (auto phi = d.find("phi")) {
      GPS_ASSIGN(c.data.phi, stream::phi_from_json(*phi));
    }
    std::string positions_removed = "none";
    GPS_TRY(d.optional("positions_removed", positions_removed));
    auto removed = stream::parse_positions_removed(positions_removed);
    if (!removed) return d.error("positions_removed", "must be one of none, source, target, all");
    c.data.positions_removed = *removed;
    GPS_TRY(d.optional("pack", c.data.pack));
    GPS_TRY(d.optional("max_seq", c.data.max_seq, 2, 1'000'000));
    GPS_TRY(d.optional("batch_tokens", c.data.batch_tokens, 2, 100'000'000));
    GPS_TRY(d.optional("loss_on_all", c.data.loss_on_all));
    GPS_TRY(d.finish());
    if (c.train_tsv.empty()) return format_error(where + ": missing field 'data.train'");
  }
  // optimizer
  GPS_ASSIGN(std::optional<JsonReader> optimizer, top.optional_object("optimizer"));
  if (optimizer) {
    JsonReader& o = *optimizer;
    GPS_TRY(o.optional("lr", c.schedule.lr, 0, 10));
    GPS_TRY(o.optional("beta1", c.adam.beta1, 0, 0.999999));
    GPS_TRY(o.optional("beta2", c.adam.beta2, 0, 0.999999));
    GPS_TRY(o.optional("eps", c.adam.eps, 0, 1));
    GPS_TRY(o.optional("weight_decay", c.adam.weight_decay, 0, 10));
    GPS_TRY(o.optional("clip", c.clip, 0, 1'000'000'000));
    GPS_TRY(o.optional("grad_accum", c.grad_accum, 1, 1'000'000));
    GPS_TRY(o.finish());
  }
  GPS_ASSIGN(std::optional<JsonReader> schedule, top.optional_object("schedule"));
  if (schedule) {
    JsonReader& o = *schedule;
    std::string kind = "cosine";
    GPS_TRY(o.optional("kind", kind));
    auto k = parse_schedule(kind);
    if (!k) return o.error("kind", "must be constant, linear or cosine");
    c.schedule.kind = *k;
    GPS_TRY(o.optional("warmup_steps", c.schedule.warmup_steps, 0, kBig));
    GPS_TRY(o.optional("min_lr_ratio", c.schedule.min_lr_ratio, 0, 1));
    GPS_TRY(o.finish());
  }
  GPS_TRY(top.optional("steps", c.steps, 0, kBig));
  GPS_TRY(top.optional("token_budget", c.token_budget, 0, kBig));
  GPS_TRY(top.optional("max_minutes", c.max_minutes, 0, 10'000'000));
  if ((c.steps > 0) == (c.token_budget > 0))
    return format_error(where + ": give exactly one of 'steps' and 'token_budget'");
  // LoRA
  GPS_ASSIGN(std::optional<JsonReader> lora, top.optional_object("lora"));
  if (lora) {
    JsonReader& o = *lora;
    GPS_TRY(o.optional("rank", c.lora.rank, 0, 100000));
    GPS_TRY(o.optional("alpha", c.lora.alpha, 0, 1'000'000));
    GPS_TRY(o.optional("dropout", c.lora.dropout, 0, 0.99));
    GPS_TRY(o.optional("init", c.lora_init));
    if (auto t = o.find("targets")) {
      GPS_ASSIGN(std::vector<JsonValue> names, t->elements(64));
      if (names.empty()) return t->error("must be a non-empty list of q, k, v, o, gate, up, down");
      c.lora.targets.fill(false);
      for (const JsonValue& e : names) {
        GPS_ASSIGN(std::string name, e.string());
        auto lt = lora_target_from_name(name);
        if (!lt.ok()) return lt.error().with_context(where + ": field '" + e.path() + "'");
        c.lora.targets[static_cast<size_t>(*lt)] = true;
      }
    }
    GPS_TRY(o.finish());
  }
  GPS_TRY(top.optional("seed", c.seed));
  GPS_TRY(top.optional("threads", c.threads, 0, 1024));
  GPS_TRY(top.optional("log_every", c.log_every, 1, kBig));
  GPS_TRY(top.optional("dev_every", c.dev_every, 0, kBig));
  GPS_ASSIGN(std::optional<JsonReader> checkpoint, top.optional_object("checkpoint"));
  if (checkpoint) {
    JsonReader& o = *checkpoint;
    GPS_TRY(o.optional("every_steps", c.ckpt_every_steps, 0, kBig));
    GPS_TRY(o.optional("every_minutes", c.ckpt_every_minutes, 0, 1'000'000'000));
    GPS_TRY(o.optional("keep", c.keep_checkpoints, 1, 1'000'000));
    GPS_TRY(o.optional("keep_every_steps", c.keep_every_steps, 0, kBig));
    GPS_TRY(o.finish());
  }
  GPS_TRY(top.optional("output", c.output_dir));
  if (c.output_dir.empty()) return format_error(where + ": missing field 'output' (the run folder)");
  GPS_ASSIGN(std::optional<JsonReader> exported, top.optional_object("export"));
  if (exported) {
    JsonReader& o = *exported;
    std::string dt = "f32";
    GPS_TRY(o.optional("dtype", dt));
    if (dt == "f32" || dt == "float32")
      c.export_dtype = io::DType::F32;
    else if (dt == "bf16" || dt == "bfloat16")
      c.export_dtype = io::DType::BF16;
    else
      return o.error("dtype", "must be f32 or bf16");
    GPS_TRY(o.optional("merge_lora", c.merge_lora));
    GPS_TRY(o.finish());
  }
  GPS_TRY(top.finish());
  c.data.seed = c.seed;
  return c;
}

}  // namespace gpstream::train
