// `gpstream init-model -o DIR --tokenizer TOK [--layers N --hidden N ...]`: writes a Hugging Face model
// directory with random weights (config.json, model.safetensors, tokenizer.json, gpstream.json). For
// trying the pipeline end to end, benchmarks, and as the start of from-scratch training.
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "io/safetensors.h"
#include "model/random_init.h"
#include "stream/model_meta.h"
#include "tokenizer/tokenizer.h"
#include "util/mapped_file.h"
#include "util/memory_budget.h"

namespace gpstream::cli {
namespace {

int run_init_model(int argc, char** argv) {
  CLI::App app{"Write a model directory with random weights", "gpstream init-model"};
  std::string out, tok_path, arch = "llama", dtype = "f32";
  model::ModelConfig c;
  c.n_embd = 256;
  c.n_ff = 704;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.rope_theta = 10000;
  c.norm_eps = 1e-5f;
  c.tie_word_embeddings = true;
  uint64_t seed = 1;
  app.add_option("-o,--output", out, "output directory")->required();
  app.add_option("--tokenizer", tok_path, "tokenizer.json (or its directory), copied into the model")
      ->required();
  app.add_option("--arch", arch, "llama or qwen2 (qwen2: biases on q, k, v)")
      ->check(CLI::IsMember({"llama", "qwen2"}))
      ->capture_default_str();
  app.add_option("--layers", c.n_layer, "transformer blocks")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--hidden", c.n_embd, "hidden size (a multiple of --heads)")
      ->check(CLI::Range(2, 65536))
      ->capture_default_str();
  app.add_option("--intermediate", c.n_ff, "SwiGLU feed-forward size")
      ->check(CLI::Range(1, 262144))
      ->capture_default_str();
  app.add_option("--heads", c.n_head, "attention heads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--kv-heads", c.n_head_kv, "key/value heads (divides --heads)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--dtype", dtype, "f32, bf16 or f16")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the random weights")->capture_default_str();
  bool untied = false;
  app.add_flag("--untied", untied, "separate output projection (default: tied to the embeddings)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  auto tok = tokenizer::Tokenizer::load(tok_path);
  if (!tok) return fail("init-model", tok.error());
  c.n_vocab = tok->vocab_size();
  c.tie_word_embeddings = !untied;
  if (c.n_embd % c.n_head)
    return std::fprintf(stderr, "gpstream init-model: hidden must be a multiple of heads\n"), kExitUsage;
  c.head_dim = c.n_embd / c.n_head;
  if (arch == "qwen2") c.architecture = "Qwen2ForCausalLM", c.model_type = "qwen2", c.qkv_bias = true;
  if (auto bos = tok->bos_id()) c.bos_token_id = *bos;
  if (auto eos = tok->eos_id()) c.eos_token_ids = {*eos};
  if (Status s = c.validate(); !s.ok())
    return std::fprintf(stderr, "gpstream init-model: %s\n", s.error().message().c_str()), kExitUsage;
  model::RandomInitOptions ro;
  ro.seed = seed;
  ro.dtype = dtype == "f32" ? io::DType::F32 : dtype == "bf16" ? io::DType::BF16 : io::DType::F16;
  c.torch_dtype = dtype == "f32" ? "float32" : dtype == "bf16" ? "bfloat16" : "float16";
  // The tensors, then their serialized copy.
  if (Status s =
          check_memory_budget(saturating_product({c.n_params(), 2 * io::dtype_size(ro.dtype)}), "this model");
      !s.ok())
    return fail("init-model", s.error());
  io::TensorMap t = model::random_tensors(c, ro);
  std::filesystem::create_directories(out);
  std::vector<io::TensorToWrite> w;
  for (const auto& [name, data] : t.tensors) w.push_back({name, data});
  if (Status s = io::write_safetensors(out + "/model.safetensors", w, {{"format", "pt"}}); !s.ok())
    return fail("init-model", s.error());
  const std::string cfg = model::config_to_hf_json(c);
  if (Status s = write_file_atomic(out + "/config.json", std::as_bytes(std::span(cfg))); !s.ok())
    return fail("init-model", s.error());
  const std::string meta = stream::ModelMeta().to_json();
  if (Status s = write_file_atomic(out + "/gpstream.json", std::as_bytes(std::span(meta))); !s.ok())
    return fail("init-model", s.error());
  namespace fs = std::filesystem;
  fs::path tp = fs::is_directory(tok_path) ? fs::path(tok_path) / "tokenizer.json" : fs::path(tok_path);
  std::error_code ec;
  fs::copy_file(tp, fs::path(out) / "tokenizer.json", fs::copy_options::overwrite_existing, ec);
  if (!ec && fs::exists(tp.parent_path() / "tokenizer_config.json"))
    fs::copy_file(tp.parent_path() / "tokenizer_config.json", fs::path(out) / "tokenizer_config.json",
                  fs::copy_options::overwrite_existing, ec);
  if (ec) return fail("init-model", io_error("copying the tokenizer: " + ec.message()));
  std::printf("%s: %zu parameters\n", out.c_str(), c.n_params());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND(
    "init-model", "write a model directory with random weights",
    "gpstream init-model -o tiny --tokenizer models/gpstream-en-fr --layers 2 --hidden 64 --heads 2",
    gpstream::cli::run_init_model);
