// Training configuration parsing.
#include "train/train_config.h"

#include "train/json_fields.h"

namespace gpstream::train {
using json = nlohmann::json;

Result<TrainConfig> parse_train_config(const std::string& text, const std::string& where) {
  GPS_ASSIGN(json j, parse_json_object(text, where));
  TrainConfig c;
  c.raw_json = text;
  Obj top{j, where, {}};
  constexpr double kBig = 1e15;

  // model
  top.seen.insert("model");
  GPS_ASSIGN(const json* jm, object(j, "model", where));
  if (!jm) return format_error(where + ": missing 'model'");
  {
    Obj m{*jm, where + ": model", {}};
    GPS_TRY(m.str("init", c.init_dir));
    GPS_TRY(m.str("tokenizer", c.tokenizer));
    m.seen.insert("scratch");
    GPS_ASSIGN(const json* js, object(*jm, "scratch", m.where));
    if (js) {
      ScratchModel s;
      Obj o{*js, m.where + ": scratch", {}};
      GPS_TRY(o.num("vocab_size", s.vocab_size, 0, 1e7));
      GPS_TRY(o.num("hidden_size", s.hidden_size, 2, 1e5));
      GPS_TRY(o.num("intermediate_size", s.intermediate_size, 1, 1e6));
      GPS_TRY(o.num("num_hidden_layers", s.num_hidden_layers, 1, 1e3));
      GPS_TRY(o.num("num_attention_heads", s.num_attention_heads, 1, 1e3));
      GPS_TRY(o.num("num_key_value_heads", s.num_key_value_heads, 1, 1e3));
      GPS_TRY(o.boolean("tie_word_embeddings", s.tie_word_embeddings));
      GPS_TRY(o.num("rope_theta", s.rope_theta, 1, 1e9));
      GPS_TRY(o.num("max_position_embeddings", s.max_position_embeddings, 1, 1e8));
      GPS_TRY(o.num("rms_norm_eps", s.rms_norm_eps, 1e-12, 1));
      GPS_TRY(o.num("init_std", s.init_std, 1e-6, 10));
      GPS_TRY(o.done());
      c.scratch = s;
    }
    GPS_TRY(m.done());
    if (c.init_dir.empty() == !c.scratch)
      return format_error(where + ": model needs exactly one of 'init' and 'scratch'");
    if (c.tokenizer.empty())
      return format_error(where + ": model: missing 'tokenizer' (a tokenizer.json or \"bytes\")");
  }
  GPS_TRY(top.str("template", c.template_name));
  GPS_TRY(top.str("source_lang", c.source_lang));
  GPS_TRY(top.str("target_lang", c.target_lang));
  // data
  top.seen.insert("data");
  GPS_ASSIGN(const json* jd, object(j, "data", where));
  if (!jd) return format_error(where + ": missing 'data'");
  {
    Obj d{*jd, where + ": data", {}};
    GPS_TRY(d.str("train", c.train_tsv));
    GPS_TRY(d.str("dev", c.dev_tsv));
    GPS_TRY(d.num("max_train_pairs", c.max_train_pairs, 0, kBig));
    GPS_TRY(d.num("max_dev_pairs", c.max_dev_pairs, 0, kBig));
    std::string mode = "batch";
    GPS_TRY(d.str("mode", mode));
    auto m = parse_train_mode(mode);
    if (!m) return d.bad("mode", "one of batch, group, batch-stream, interleaved, interleaved-blocked");
    c.data.mode = *m;
    if (d.has("k")) {
      const json& k = (*jd)["k"];
      if (k.is_number_integer() && k.get<int>() >= 1) {
        c.data.k_min = c.data.k_max = k.get<int>();
      } else if (k.is_array() && k.size() == 2 && k[0].is_number_integer() && k[1].is_number_integer() &&
                 k[0].get<int>() >= 1 && k[1].get<int>() >= k[0].get<int>()) {
        c.data.k_min = k[0].get<int>();
        c.data.k_max = k[1].get<int>();
      } else {
        return d.bad("k", "an integer >= 1 or a range [k_min, k_max]");
      }
    }
    if (d.has("phi")) {
      const json& p = (*jd)["phi"];
      std::optional<stream::Phi> phi;
      if (p.is_number()) phi = stream::Phi::parse(std::to_string(p.get<double>()));
      if (p.is_string()) phi = stream::Phi::parse(p.get<std::string>());
      if (!phi) return d.bad("phi", "a number >= 0 or \"S\"");
      c.data.phi = *phi;
    }
    GPS_TRY(d.boolean("pack", c.data.pack));
    GPS_TRY(d.num("max_seq", c.data.max_seq, 2, 1e6));
    GPS_TRY(d.num("batch_tokens", c.data.batch_tokens, 2, 1e8));
    GPS_TRY(d.boolean("loss_on_all", c.data.loss_on_all));
    GPS_TRY(d.done());
    if (c.train_tsv.empty()) return format_error(where + ": data: missing 'train'");
  }
  // optimizer
  top.seen.insert("optimizer");
  GPS_ASSIGN(const json* jo, object(j, "optimizer", where));
  if (jo) {
    Obj o{*jo, where + ": optimizer", {}};
    GPS_TRY(o.num("lr", c.schedule.lr, 0, 10));
    GPS_TRY(o.num("beta1", c.adam.beta1, 0, 0.999999));
    GPS_TRY(o.num("beta2", c.adam.beta2, 0, 0.999999));
    GPS_TRY(o.num("eps", c.adam.eps, 0, 1));
    GPS_TRY(o.num("weight_decay", c.adam.weight_decay, 0, 10));
    GPS_TRY(o.num("clip", c.clip, 0, 1e9));
    GPS_TRY(o.num("grad_accum", c.grad_accum, 1, 1e6));
    GPS_TRY(o.done());
  }
  top.seen.insert("schedule");
  GPS_ASSIGN(const json* jsch, object(j, "schedule", where));
  if (jsch) {
    Obj o{*jsch, where + ": schedule", {}};
    std::string kind = "cosine";
    GPS_TRY(o.str("kind", kind));
    auto k = parse_schedule(kind);
    if (!k) return o.bad("kind", "constant, linear or cosine");
    c.schedule.kind = *k;
    GPS_TRY(o.num("warmup_steps", c.schedule.warmup_steps, 0, kBig));
    GPS_TRY(o.num("min_lr_ratio", c.schedule.min_lr_ratio, 0, 1));
    GPS_TRY(o.done());
  }
  GPS_TRY(top.num("steps", c.steps, 0, kBig));
  GPS_TRY(top.num("token_budget", c.token_budget, 0, kBig));
  if ((c.steps > 0) == (c.token_budget > 0))
    return format_error(where + ": give exactly one of 'steps' and 'token_budget'");
  // LoRA
  top.seen.insert("lora");
  GPS_ASSIGN(const json* jl, object(j, "lora", where));
  if (jl) {
    Obj o{*jl, where + ": lora", {}};
    GPS_TRY(o.num("rank", c.lora.rank, 0, 1e5));
    GPS_TRY(o.num("alpha", c.lora.alpha, 0, 1e6));
    GPS_TRY(o.num("dropout", c.lora.dropout, 0, 0.99));
    GPS_TRY(o.str("init", c.lora_init));
    if (o.has("targets")) {
      const json& t = (*jl)["targets"];
      if (!t.is_array() || t.empty())
        return o.bad("targets", "a non-empty list of q, k, v, o, gate, up, down");
      c.lora.targets.fill(false);
      for (const json& e : t) {
        if (!e.is_string()) return o.bad("targets", "a list of strings");
        auto lt = lora_target_from_name(e.get<std::string>());
        if (!lt.ok()) return lt.error().with_context(o.where);
        c.lora.targets[static_cast<size_t>(*lt)] = true;
      }
    }
    GPS_TRY(o.done());
  }
  GPS_TRY(top.num("seed", c.seed, 0, 1.8e19));
  GPS_TRY(top.num("threads", c.threads, 0, 1024));
  GPS_TRY(top.num("log_every", c.log_every, 1, kBig));
  GPS_TRY(top.num("dev_every", c.dev_every, 0, kBig));
  top.seen.insert("checkpoint");
  GPS_ASSIGN(const json* jc, object(j, "checkpoint", where));
  if (jc) {
    Obj o{*jc, where + ": checkpoint", {}};
    GPS_TRY(o.num("every_steps", c.ckpt_every_steps, 0, kBig));
    GPS_TRY(o.num("every_minutes", c.ckpt_every_minutes, 0, 1e9));
    GPS_TRY(o.num("keep", c.keep_checkpoints, 1, 1e6));
    GPS_TRY(o.num("keep_every_steps", c.keep_every_steps, 0, kBig));
    GPS_TRY(o.done());
  }
  GPS_TRY(top.str("output", c.output_dir));
  if (c.output_dir.empty()) return format_error(where + ": missing 'output' (the run folder)");
  top.seen.insert("export");
  GPS_ASSIGN(const json* je, object(j, "export", where));
  if (je) {
    Obj o{*je, where + ": export", {}};
    std::string dt = "f32";
    GPS_TRY(o.str("dtype", dt));
    if (dt == "f32" || dt == "float32")
      c.export_dtype = io::DType::F32;
    else if (dt == "bf16" || dt == "bfloat16")
      c.export_dtype = io::DType::BF16;
    else
      return o.bad("dtype", "f32 or bf16");
    GPS_TRY(o.boolean("merge_lora", c.merge_lora));
    GPS_TRY(o.done());
  }
  GPS_TRY(top.done());
  c.data.seed = c.seed;
  return c;
}

}  // namespace gpstream::train
