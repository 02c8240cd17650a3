// Speech training configuration parsing.
#include "speech/speech_train_config.h"

#include "audio/log_mel.h"
#include "util/json_reader.h"

namespace gpstream::speech {

using json = nlohmann::json;

namespace {
// Deepest JSON nesting accepted in a speech training config (the format nests 2 levels).
constexpr int kMaxSpeechTrainConfigJsonDepth = 16;
// Longest list of φ values drawn from.
constexpr size_t kMaxPhis = 64;
}  // namespace

Result<SpeechTrainConfig> parse_speech_train_config(const std::string& text, const std::string& where) {
  GPS_ASSIGN(json j, parse_json_object(text, where, kMaxSpeechTrainConfigJsonDepth));
  SpeechTrainConfig c;
  c.raw_json = text;
  // gpstream's own format: a key it does not read is a typo, refused.
  GPS_ASSIGN(JsonReader top, JsonReader::open(j, where, "", UnknownKeys::Refuse));
  constexpr int64_t kBig = 1'000'000'000'000'000;
  GPS_TRY(top.optional("llm", c.llm_dir));
  GPS_TRY(top.optional("train_manifest", c.train_manifest));
  GPS_TRY(top.optional("dev_manifest", c.dev_manifest));
  GPS_TRY(top.optional("output_dir", c.output_dir));
  GPS_TRY(top.optional("source_lang", c.source_lang));
  GPS_TRY(top.optional("target_lang", c.target_lang));
  GPS_TRY(top.optional("max_train", c.max_train, 0, kBig));
  GPS_TRY(top.optional("max_dev", c.max_dev, 0, kBig));
  if (c.llm_dir.empty())
    return format_error(where + ": missing field 'llm' (the LLM directory to start from)");
  if (c.train_manifest.empty()) return format_error(where + ": missing field 'train_manifest'");
  if (c.output_dir.empty()) return format_error(where + ": missing field 'output_dir'");

  // Encoder sizes: the defaults with the given keys replaced (llm_hidden comes from the LLM).
  GPS_ASSIGN(std::optional<JsonReader> encoder, top.optional_object("encoder"));
  if (encoder) {
    if (encoder->has("llm_hidden"))
      return encoder->error("llm_hidden", "is the LLM's hidden size, not set here");
    GPS_TRY(c.encoder.read_fields(*encoder, /*all_required=*/false));
    GPS_TRY(encoder->finish());
    if (Status s = c.encoder.validate(); !s.ok()) return s.error().with_context(where + ": field 'encoder'");
  }

  std::string llm = "lora";
  GPS_TRY(top.optional("llm_training", llm));
  if (llm == "lora")
    c.llm_training = LlmTraining::Lora;
  else if (llm == "full")
    c.llm_training = LlmTraining::Full;
  else if (llm == "frozen")
    c.llm_training = LlmTraining::Frozen;
  else
    return top.error("llm_training", "must be \"lora\", \"full\" or \"frozen\"");
  GPS_TRY(top.optional("llm_lr_scale", c.llm_lr_scale, 0, 1000));
  GPS_TRY(top.optional("lora_rank", c.lora.rank, 1, 4096));
  GPS_TRY(top.optional("lora_alpha", c.lora.alpha, 1e-6, 1'000'000));
  GPS_TRY(top.optional("lora_dropout", c.lora.dropout, 0, 0.9));
  if (c.llm_training != LlmTraining::Lora) c.lora.rank = 0;

  GPS_TRY(top.optional("ctc_weight", c.ctc_weight, 0, 1000));
  GPS_TRY(top.optional("ctc_only_steps", c.ctc_only_steps, 0, kBig));
  if (c.ctc_only_steps > 0 && c.ctc_weight <= 0)
    return format_error(where + ": ctc_only_steps needs a ctc_weight above 0");
  GPS_TRY(top.optional("k_min", c.k_min, 1, 1'000'000));
  GPS_TRY(top.optional("k_max", c.k_max, 1, 1'000'000));
  if (c.k_max < c.k_min) return format_error(where + ": k_max must be >= k_min");
  GPS_TRY(top.optional("export_k", c.export_k, 0, 1'000'000));
  GPS_TRY(top.optional("export_beam", c.export_beam, 1, 1024));
  if (c.export_k != 0 && (c.export_k < c.k_min || c.export_k > c.k_max))
    return format_error(where + ": export_k must be 0 (k_max) or within [k_min, k_max]");
  GPS_TRY(top.optional("end_after_source", c.end_after_source));
  if (auto p = top.find("phi")) {
    // One φ, or a non-empty list drawn from per utterance.
    c.phis.clear();
    if (p->json().is_array()) {
      GPS_ASSIGN(std::vector<JsonValue> items, p->elements(kMaxPhis));
      if (items.empty()) return p->error("must be a number >= 0, \"S\", or a non-empty list of them");
      for (const JsonValue& v : items) {
        GPS_ASSIGN(stream::Phi phi, stream::phi_from_json(v));
        c.phis.push_back(phi);
      }
    } else {
      GPS_ASSIGN(stream::Phi phi, stream::phi_from_json(*p));
      c.phis.push_back(phi);
    }
  }
  GPS_TRY(top.optional("max_seq", c.max_seq, 16, 1'000'000));

  GPS_TRY(top.optional("batch_utterances", c.batch_utterances, 1, 4096));
  GPS_TRY(top.optional("steps", c.steps, 1, kBig));
  GPS_TRY(top.optional("max_minutes", c.max_minutes, 0, 10'000'000));
  GPS_TRY(top.optional("lr", c.schedule.lr, 1e-9, 10));
  GPS_TRY(top.optional("warmup_steps", c.schedule.warmup_steps, 0, kBig));
  GPS_TRY(top.optional("min_lr_ratio", c.schedule.min_lr_ratio, 0, 1));
  std::string sched = "cosine";
  GPS_TRY(top.optional("schedule", sched));
  auto kind = train::parse_schedule(sched);
  if (!kind) return top.error("schedule", "must be \"constant\", \"linear\" or \"cosine\"");
  c.schedule.kind = *kind;
  GPS_TRY(top.optional("weight_decay", c.adam.weight_decay, 0, 10));
  GPS_TRY(top.optional("beta2", c.adam.beta2, 0, 0.999999));
  GPS_TRY(top.optional("clip", c.clip, 0, 1'000'000'000));

  GPS_TRY(top.optional("noise", c.noise));
  GPS_TRY(top.optional("snr_min_db", c.noise_options.snr_min_db, -30, 100));
  GPS_TRY(top.optional("snr_max_db", c.noise_options.snr_max_db, -30, 100));
  GPS_TRY(top.optional("clean_fraction", c.noise_options.clean_fraction, 0, 1));
  GPS_TRY(audio::validate_noise_options(c.noise_options));
  GPS_TRY(top.optional("warp_min", c.augment.warp_min, 0.5, 2));
  GPS_TRY(top.optional("warp_max", c.augment.warp_max, 0.5, 2));
  if (c.augment.warp_max < c.augment.warp_min) return format_error(where + ": warp_max must be >= warp_min");
  GPS_TRY(top.optional("freq_masks", c.augment.freq_masks, 0, 16));
  GPS_TRY(top.optional("freq_mask_bins", c.augment.freq_mask_bins, 0, static_cast<int>(audio::kLogMelBins)));
  GPS_TRY(top.optional("time_masks", c.augment.time_masks, 0, 16));
  GPS_TRY(top.optional("time_mask_frames", c.augment.time_mask_frames, 0, 1000));
  GPS_TRY(speech::validate_feature_augment_options(c.augment));
  GPS_TRY(top.optional("seed", c.seed, 0, 9'000'000'000'000'000));
  GPS_TRY(top.optional("threads", c.threads, 0, 1024));
  GPS_TRY(top.optional("log_every", c.log_every, 1, kBig));
  GPS_TRY(top.optional("dev_every", c.dev_every, 0, kBig));
  GPS_TRY(top.optional("ckpt_every_steps", c.ckpt_every_steps, 0, kBig));
  GPS_TRY(top.optional("ckpt_every_minutes", c.ckpt_every_minutes, 0, 1'000'000'000));
  GPS_TRY(top.optional("keep_checkpoints", c.keep_checkpoints, 1, 1000));
  GPS_TRY(top.optional("keep_every_steps", c.keep_every_steps, 0, kBig));
  GPS_TRY(top.finish());
  return c;
}

}  // namespace gpstream::speech
