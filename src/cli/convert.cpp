// `gpstream convert INPUT OUTPUT [--type T] [--name NAME]`: a Hugging Face model directory to a GGUF file
// (T: f32, f16 (default), bf16, q8_0, q4_0), or a .gguf file to a Hugging Face directory (dequantized;
// T: f32 (default), f16, bf16). The direction follows INPUT: a .gguf file or a directory.
#include <cstdio>

#include "cli/command.h"
#include "model/gguf_model.h"
#include "model/model_convert.h"
#include "model/quantize_model.h"
#include "stream/model_meta.h"

namespace gpstream::cli {
namespace {

int run_convert(int argc, char** argv) {
  CLI::App app{"Convert a model: Hugging Face directory -> GGUF file, or GGUF file -> Hugging Face directory",
               "gpstream convert"};
  std::string input, output, type_s, name;
  app.add_option("input", input, "Hugging Face model directory, or a .gguf file")->required();
  app.add_option("output", output, "the .gguf file to write, or the directory to write")->required();
  app.add_option(
      "--type", type_s,
      "storage type: f32, f16, bf16, q8_0, q4_0 (to GGUF, default f16); f32, f16, bf16 (to a directory, "
      "default f32)");
  app.add_option("--name", name, "general.name of the GGUF (default: the directory's name)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  const bool to_hf = model::is_gguf_path(input);
  if (type_s.empty()) type_s = to_hf ? "f32" : "f16";
  auto type = model::parse_storage_type(type_s);
  if (!type)
    return std::fprintf(stderr, "gpstream convert: --type: %s\n", type.error().message().c_str()), kExitUsage;
  if (!to_hf && !model::is_gguf_path(output)) {
    std::fprintf(stderr, "gpstream convert: OUTPUT must end in .gguf when INPUT is a directory\n");
    return kExitUsage;
  }
  // A gpstream.json the commands could not load is refused now, not when the GGUF file is loaded.
  const model::HfToGgufOptions options{
      .name = name, .check_gpstream_json = [](const std::string& text, const std::string& path) -> Status {
        GPS_TRY(stream::ModelMeta::parse(text, path));
        return {};
      }};
  auto report = to_hf ? model::convert_gguf_to_hf(input, output, *type)
                      : model::convert_hf_to_gguf(input, output, *type, options);
  if (!report) return fail("convert", report.error());
  std::fprintf(stderr, "gpstream convert: wrote %s: %d tensors (%.1f MiB, %s)%s\n", output.c_str(),
               report->tensors, static_cast<double>(report->bytes) / (1 << 20), type_s.c_str(),
               report->tokenizer ? ", tokenizer" : ", no tokenizer");
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("convert",
                 "convert a model between a Hugging Face directory and a GGUF file (f32/f16/bf16/q8_0/q4_0)",
                 "gpstream convert models/gpstream-en-fr en-fr.q8_0.gguf --type q8_0",
                 gpstream::cli::run_convert);
