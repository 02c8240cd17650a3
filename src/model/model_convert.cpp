// HF directory ↔ GGUF conversion (see model_convert.h).
#include "model/model_convert.h"

#include <filesystem>

#include "io/gguf.h"
#include "io/safetensors.h"
#include "model/gguf_families.h"
#include "model/gguf_model.h"
#include "model/model_config.h"
#include "model/quantize_model.h"
#include "model/tensor_names.h"
#include "tokenizer/gguf_vocab.h"
#include "util/mapped_file.h"

namespace gpstream::model {
namespace fs = std::filesystem;

Result<ConvertReport> convert_hf_to_gguf(const std::string& hf_dir, const std::string& gguf_path,
                                         io::DType type, const HfToGgufOptions& options) {
  GPS_ASSIGN(ModelConfig loaded_config, load_hf_config(hf_dir));
  GPS_ASSIGN(io::TensorMap hf, io::read_safetensors_dir(hf_dir));
  // Refuse tensors the table does not know (they would be silently dropped).
  for (const auto& [n, t] : hf.tensors) {
    (void)t;
    if (!tensor_id_from_hf(loaded_config, n) && n.find("rotary_emb.inv_freq") == std::string::npos)
      return unsupported(hf_dir + ": tensor " + n + " has no GGUF name");
  }
  // Gemma 2: norms as 1 + w, query_pre_attn_scalar folded into attn_q (in F32, before the storage type).
  GPS_ASSIGN(ModelForm form, to_llamacpp_form(loaded_config, hf));
  const ModelConfig& config = form.config;
  io::TensorMap stored = convert_model_tensors(config, form.tensors, type);
  std::string model_name = options.name;
  if (model_name.empty()) model_name = fs::path(hf_dir).lexically_normal().filename().string();
  if (model_name.empty())
    model_name = fs::absolute(hf_dir).lexically_normal().parent_path().filename().string();
  GPS_ASSIGN(io::GgufMetadata meta, gguf_metadata_for(config, model_name, gguf_file_type(type)));
  ConvertReport report;
  std::error_code ec;
  const fs::path dir(hf_dir);
  if (fs::exists(dir / "tokenizer.json", ec)) {
    GPS_ASSIGN(std::string tok, read_regular_text_file((dir / "tokenizer.json").string()));
    std::string tok_config;
    if (fs::exists(dir / "tokenizer_config.json", ec)) {
      GPS_ASSIGN(tok_config, read_regular_text_file((dir / "tokenizer_config.json").string()));
    }
    std::optional<int> bos, eos;
    if (config.bos_token_id >= 0) bos = config.bos_token_id;
    if (!config.eos_token_ids.empty()) eos = config.eos_token_ids[0];
    if (Status s = tokenizer::add_tokenizer_to_gguf(tok, tok_config, config.n_vocab, bos, eos, meta); !s.ok())
      return s.error().with_context(hf_dir);
    report.tokenizer = true;
  } else {
    meta.set("tokenizer.ggml.model", io::GgufValue::string("none"));
  }
  if (fs::exists(dir / "gpstream.json", ec)) {
    const std::string path = (dir / "gpstream.json").string();
    GPS_ASSIGN(std::string text, read_regular_text_file(path));
    if (options.check_gpstream_json)
      GPS_TRY(options.check_gpstream_json(text, path));  // refused now, not at load
    meta.set(kGpstreamJsonGgufKey, io::GgufValue::string(text));
  }
  io::TensorMap permuted;
  GPS_ASSIGN(auto tensors, gguf_tensors_from_hf(config, stored, permuted));
  for (const auto& t : tensors) report.bytes += t.data.bytes.size();
  report.tensors = static_cast<int>(tensors.size());
  GPS_TRY(io::write_gguf(gguf_path, meta, tensors));
  return report;
}

Result<ConvertReport> convert_gguf_to_hf(const std::string& gguf_path, const std::string& hf_dir,
                                         io::DType type) {
  if (type != io::DType::F32 && type != io::DType::F16 && type != io::DType::BF16)
    return invalid_argument("a Hugging Face directory stores f32, f16 or bf16 (got " +
                            std::string(io::dtype_name(type)) + ")");
  GPS_ASSIGN(io::GgufFile g, io::read_gguf(gguf_path));
  auto config = config_from_gguf(g);
  if (!config.ok()) return config.error().with_context(gguf_path);
  auto hf = hf_tensors_from_gguf(g, *config);
  if (!hf.ok()) return hf.error().with_context(gguf_path);
  // Gemma 2's norms back to Hugging Face's w (the file holds 1 + w).
  ModelForm form = to_hf_form(*config, *hf);
  ModelConfig c = form.config;
  c.torch_dtype = type == io::DType::F32 ? "float32" : type == io::DType::F16 ? "float16" : "bfloat16";
  // Every matrix and vector in the chosen float type (vectors stay F32, as convert_model_tensors keeps them).
  io::TensorMap plain;
  for (const auto& [n, t] : form.tensors.tensors) {
    if (io::dtype_is_quantized(t.dtype)) {
      plain.add_f32(n, t.shape, dequantize_tensor(t));
    } else {
      plain.tensors[n] = t;
    }
  }
  plain.owners.insert(plain.owners.end(), form.tensors.owners.begin(), form.tensors.owners.end());
  io::TensorMap out = convert_model_tensors(c, plain, type);
  std::vector<io::TensorToWrite> list;
  ConvertReport report;
  for (const auto& [n, t] : out.tensors) {
    list.push_back({n, t});
    report.bytes += t.bytes.size();
  }
  report.tensors = static_cast<int>(list.size());
  std::error_code ec;
  fs::create_directories(hf_dir, ec);
  if (ec) return io_error(hf_dir + ": cannot create directory: " + ec.message());
  const fs::path dir(hf_dir);
  GPS_TRY(io::write_safetensors((dir / "model.safetensors").string(), list, {{"format", "pt"}}));
  const std::string config_json = config_to_hf_json(c);
  GPS_TRY(write_file_atomic((dir / "config.json").string(), std::as_bytes(std::span(config_json))));
  auto tok = tokenizer::tokenizer_json_from_gguf(g.metadata);
  if (tok.ok()) {
    GPS_TRY(write_file_atomic((dir / "tokenizer.json").string(), std::as_bytes(std::span(*tok))));
    report.tokenizer = true;
    if (const io::GgufValue* v = g.metadata.find(tokenizer::kGgufTokenizerConfigKey);
        v && v->type == io::GgufType::String)
      GPS_TRY(write_file_atomic((dir / "tokenizer_config.json").string(), std::as_bytes(std::span(v->str))));
  } else if (tok.error().code() != ErrorCode::NotFound) {
    return tok.error().with_context(gguf_path);
  }
  if (const io::GgufValue* v = g.metadata.find(kGpstreamJsonGgufKey); v && v->type == io::GgufType::String)
    GPS_TRY(write_file_atomic((dir / "gpstream.json").string(), std::as_bytes(std::span(v->str))));
  return report;
}

}  // namespace gpstream::model
