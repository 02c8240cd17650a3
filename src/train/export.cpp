// Hugging Face and PEFT export.
#include "train/export.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "util/mapped_file.h"

namespace gpstream::train {
namespace {

Status write_text(const std::string& path, const std::string& text) {
  return write_file_atomic(
      path, std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::vector<io::TensorToWrite> tensors_of(const io::TensorMap& m) {
  std::vector<io::TensorToWrite> out;
  for (const auto& [name, data] : m.tensors) out.push_back({name, data});
  return out;
}

}  // namespace

Status export_hf(TrainModel& model, const std::string& dir, const HfExportOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  model::ModelConfig c = model.config();
  c.torch_dtype = o.dtype == io::DType::BF16 ? "bfloat16" : "float32";
  GPS_TRY(write_text(dir + "/config.json", model::config_to_hf_json(c)));
  io::TensorMap tensors;
  if (model.lora_enabled() && o.merge_lora) {
    const std::vector<float> saved = model.base().values;
    model.merge_lora_into_base();
    tensors = model.base().to_tensors(o.dtype);
    model.base().values = saved;
  } else {
    tensors = model.base().to_tensors(o.dtype);
  }
  GPS_TRY(io::write_safetensors(dir + "/model.safetensors", tensors_of(tensors), {{"format", "pt"}}));
  nlohmann::ordered_json g;
  if (c.bos_token_id >= 0) g["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_ids.size() == 1)
    g["eos_token_id"] = c.eos_token_ids[0];
  else if (!c.eos_token_ids.empty())
    g["eos_token_id"] = c.eos_token_ids;
  g["do_sample"] = false;
  GPS_TRY(write_text(dir + "/generation_config.json", g.dump(2) + "\n"));
  if (!o.tokenizer_path.empty()) {
    std::string src = o.tokenizer_path;
    if (std::filesystem::is_directory(src)) {
      for (const char* extra : {"tokenizer_config.json", "special_tokens_map.json"})
        if (std::filesystem::exists(src + "/" + extra)) {
          GPS_ASSIGN(std::string t, read_text_file(src + "/" + extra));
          GPS_TRY(write_text(dir + "/" + extra, t));
        }
      src += "/tokenizer.json";
    }
    GPS_ASSIGN(std::string text, read_text_file(src));
    GPS_TRY(write_text(dir + "/tokenizer.json", text));
  }
  GPS_TRY(write_text(dir + "/gpstream.json", o.meta.to_json()));
  return {};
}

Status export_peft(const TrainModel& model, const std::string& dir, const std::string& base_model) {
  if (!model.lora_enabled()) return invalid_argument("PEFT export: the model has no LoRA adapters");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  GPS_TRY(
      write_text(dir + "/adapter_config.json", lora_adapter_config_json(model.lora_options(), base_model)));
  const io::TensorMap t = model.lora().to_tensors(io::DType::F32);
  return io::write_safetensors(dir + "/adapter_model.safetensors", tensors_of(t), {{"format", "pt"}});
}

Status load_peft_adapter(TrainModel& model, const std::string& dir) {
  if (!model.lora_enabled()) return invalid_argument("LoRA init given but LoRA is off (rank 0)");
  io::TensorMap t;
  GPS_TRY(io::read_safetensors(dir + "/adapter_model.safetensors", t));
  auto st = model.lora().load(t);
  if (!st.ok()) return st.error().with_context(dir);
  return {};
}

}  // namespace gpstream::train
