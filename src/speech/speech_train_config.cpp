// Speech training configuration parsing.
#include "speech/speech_train_config.h"

#include "audio/log_mel.h"

#include "train/json_fields.h"

namespace gpstream::speech {

using json = nlohmann::json;

Result<SpeechTrainConfig> parse_speech_train_config(const std::string& text, const std::string& where) {
  GPS_ASSIGN(json j, train::parse_json_object(text, where));
  SpeechTrainConfig c;
  c.raw_json = text;
  train::Obj top{j, where, {}};
  constexpr double kBig = 1e15;
  GPS_TRY(top.str("llm", c.llm_dir));
  GPS_TRY(top.str("train_manifest", c.train_manifest));
  GPS_TRY(top.str("dev_manifest", c.dev_manifest));
  GPS_TRY(top.str("output_dir", c.output_dir));
  GPS_TRY(top.str("source_lang", c.source_lang));
  GPS_TRY(top.str("target_lang", c.target_lang));
  GPS_TRY(top.num("max_train", c.max_train, 0, kBig));
  GPS_TRY(top.num("max_dev", c.max_dev, 0, kBig));
  if (c.llm_dir.empty()) return format_error(where + ": missing 'llm' (the LLM directory to start from)");
  if (c.train_manifest.empty()) return format_error(where + ": missing 'train_manifest'");
  if (c.output_dir.empty()) return format_error(where + ": missing 'output_dir'");

  // Encoder sizes: the defaults with the given keys replaced (llm_hidden comes from the LLM).
  top.seen.insert("encoder");
  GPS_ASSIGN(const json* je, train::object(j, "encoder", where));
  if (je) {
    json merged = json::parse(c.encoder.to_json());
    merged["conv_module_kernel"] = c.encoder.conv_module_kernel;  // to_json leaves it out when 0
    for (auto it = je->begin(); it != je->end(); ++it) {
      if (!merged.contains(it.key())) return format_error(where + ": encoder: unknown key '" + it.key() + "'");
      if (it.key() == "llm_hidden") return format_error(where + ": encoder: llm_hidden is the LLM's hidden size");
      merged[it.key()] = it.value();
    }
    auto enc = audio::SpeechEncoderConfig::from_json(merged.dump());
    if (!enc.ok()) return enc.error().with_context(where + ": encoder");
    c.encoder = *enc;
  }

  std::string llm = "lora";
  GPS_TRY(top.str("llm_training", llm));
  if (llm == "lora") c.llm_training = LlmTraining::Lora;
  else if (llm == "full") c.llm_training = LlmTraining::Full;
  else if (llm == "frozen") c.llm_training = LlmTraining::Frozen;
  else return top.bad("llm_training", "\"lora\", \"full\" or \"frozen\"");
  GPS_TRY(top.num("llm_lr_scale", c.llm_lr_scale, 0, 1e3));
  GPS_TRY(top.num("lora_rank", c.lora.rank, 1, 4096));
  GPS_TRY(top.num("lora_alpha", c.lora.alpha, 1e-6, 1e6));
  GPS_TRY(top.num("lora_dropout", c.lora.dropout, 0, 0.9));
  if (c.llm_training != LlmTraining::Lora) c.lora.rank = 0;

  GPS_TRY(top.num("ctc_weight", c.ctc_weight, 0, 1e3));
  GPS_TRY(top.num("ctc_only_steps", c.ctc_only_steps, 0, kBig));
  if (c.ctc_only_steps > 0 && c.ctc_weight <= 0)
    return format_error(where + ": ctc_only_steps needs a ctc_weight above 0");
  GPS_TRY(top.num("k_min", c.k_min, 1, 1e6));
  GPS_TRY(top.num("k_max", c.k_max, 1, 1e6));
  if (c.k_max < c.k_min) return format_error(where + ": k_max must be >= k_min");
  GPS_TRY(top.num("export_k", c.export_k, 0, 1e6));
  GPS_TRY(top.num("export_beam", c.export_beam, 1, 1024));
  if (c.export_k != 0 && (c.export_k < c.k_min || c.export_k > c.k_max))
    return format_error(where + ": export_k must be 0 (k_max) or within [k_min, k_max]");
  GPS_TRY(top.boolean("end_after_source", c.end_after_source));
  if (top.has("phi")) {
    const json& p = j["phi"];
    auto one = [](const json& v) -> std::optional<stream::Phi> {
      if (v.is_number()) return stream::Phi::parse(std::to_string(v.get<double>()));
      if (v.is_string()) return stream::Phi::parse(v.get<std::string>());
      return std::nullopt;
    };
    c.phis.clear();
    if (p.is_array()) {
      for (const json& v : p) {
        auto phi = one(v);
        if (!phi) return top.bad("phi", "a number >= 0, \"S\", or a non-empty list of them");
        c.phis.push_back(*phi);
      }
    } else if (auto phi = one(p)) {
      c.phis.push_back(*phi);
    }
    if (c.phis.empty()) return top.bad("phi", "a number >= 0, \"S\", or a non-empty list of them");
  }
  GPS_TRY(top.num("max_seq", c.max_seq, 16, 1e6));

  GPS_TRY(top.num("batch_utterances", c.batch_utterances, 1, 4096));
  GPS_TRY(top.num("steps", c.steps, 1, kBig));
  GPS_TRY(top.num("max_minutes", c.max_minutes, 0, 1e7));
  GPS_TRY(top.num("lr", c.schedule.lr, 1e-9, 10));
  GPS_TRY(top.num("warmup_steps", c.schedule.warmup_steps, 0, kBig));
  GPS_TRY(top.num("min_lr_ratio", c.schedule.min_lr_ratio, 0, 1));
  std::string sched = "cosine";
  GPS_TRY(top.str("schedule", sched));
  auto kind = train::parse_schedule(sched);
  if (!kind) return top.bad("schedule", "\"constant\", \"linear\" or \"cosine\"");
  c.schedule.kind = *kind;
  GPS_TRY(top.num("weight_decay", c.adam.weight_decay, 0, 10));
  GPS_TRY(top.num("beta2", c.adam.beta2, 0, 0.999999));
  GPS_TRY(top.num("clip", c.clip, 0, 1e9));

  GPS_TRY(top.boolean("noise", c.noise));
  GPS_TRY(top.num("snr_min_db", c.noise_options.snr_min_db, -30, 100));
  GPS_TRY(top.num("snr_max_db", c.noise_options.snr_max_db, -30, 100));
  GPS_TRY(top.num("clean_fraction", c.noise_options.clean_fraction, 0, 1));
  GPS_TRY(audio::validate_noise_options(c.noise_options));
  GPS_TRY(top.num("warp_min", c.augment.warp_min, 0.5, 2));
  GPS_TRY(top.num("warp_max", c.augment.warp_max, 0.5, 2));
  if (c.augment.warp_max < c.augment.warp_min) return format_error(where + ": warp_max must be >= warp_min");
  GPS_TRY(top.num("freq_masks", c.augment.freq_masks, 0, 16));
  GPS_TRY(top.num("freq_mask_bins", c.augment.freq_mask_bins, 0, static_cast<double>(audio::kLogMelBins)));
  GPS_TRY(top.num("time_masks", c.augment.time_masks, 0, 16));
  GPS_TRY(top.num("time_mask_frames", c.augment.time_mask_frames, 0, 1000));
  GPS_TRY(audio::validate_feature_augment_options(c.augment));
  GPS_TRY(top.num("seed", c.seed, 0, 9e15));
  GPS_TRY(top.num("threads", c.threads, 0, 1024));
  GPS_TRY(top.num("log_every", c.log_every, 1, kBig));
  GPS_TRY(top.num("dev_every", c.dev_every, 0, kBig));
  GPS_TRY(top.num("ckpt_every_steps", c.ckpt_every_steps, 0, kBig));
  GPS_TRY(top.num("keep_checkpoints", c.keep_checkpoints, 1, 1000));
  GPS_TRY(top.num("keep_every_steps", c.keep_every_steps, 0, kBig));
  GPS_TRY(top.done());
  return c;
}

}  // namespace gpstream::speech
