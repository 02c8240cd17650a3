// The Python extension module `gpstream._gpstream` (docs/python.md): models, Sessions and the Scheduler, the
// layout function the C++ trainer uses (gpe.md §8.1) as numpy arrays, the tokenizer, and the BLEU, chrF and
// latency scorers. Errors become Python exceptions carrying the C++ message (ValueError for invalid
// arguments, FileNotFoundError for missing files, gpstream.Error otherwise). Forwards run with the GIL
// released, one at a time per model (a model's forward keeps scratch state).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/resample_stream.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/latency.h"
#include "eval/simultaneous.h"
#include "io/safetensors.h"
#include "kernels/attention_backward.h"
#include "model/model_config.h"
#include "speech/speech_model.h"
#include "speech/speech_transcriber.h"
#include "stream/layout.h"
#include "stream/scheduler.h"
#include "stream/session_settings.h"
#include "stream/streaming_model.h"
#include "train/dataset.h"
#include "train/export.h"
#include "train/train_model.h"
#include "util/version.h"

namespace py = pybind11;

namespace gpstream::python {
namespace {

// C++ exceptions that pybind11 turns into Python's at the module boundary (so they may be thrown with the
// GIL released): gpstream.Error for every failure that is not a bad argument or a missing file.
struct GpstreamError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct MissingFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void raise(const Error& e) {
  switch (e.code()) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::OutOfRange:
      throw py::value_error(e.message());
    case ErrorCode::NotFound:
      throw MissingFile(e.message());
    default:
      throw GpstreamError(e.message());
  }
}

template <typename T>
T take(Result<T> r) {
  if (!r) raise(r.error());
  return std::move(r).value();
}

void check(const Status& st) {
  if (!st.ok()) raise(st.error());
}

// The keyword arguments every streaming entry point takes, as the command line's options (SessionSettings).
stream::SessionSettings settings_from(const py::kwargs& kw) {
  stream::SessionSettings s;
  for (auto [key, value] : kw) {
    const std::string name = py::str(key);
    if (value.is_none()) continue;
    if (name == "paradigm")
      s.paradigm = value.cast<std::string>();
    else if (name == "k")
      s.k = value.cast<int>();
    else if (name == "phi")
      s.phi = py::str(value);
    else if (name == "end_after_source")
      s.end_after_source = value.cast<bool>() ? "on" : "off";
    else if (name == "max_tokens")
      s.max_tokens = value.cast<int>();
    else if (name == "beam")
      s.beam = value.cast<int>();
    else if (name == "policy")
      s.policy = value.cast<std::string>();
    else if (name == "tau")
      s.tau = value.cast<double>();
    else if (name == "min_lag")
      s.min_lag = value.cast<int>();
    else if (name == "max_lag")
      s.max_lag = value.cast<int>();
    else if (name == "frames")
      s.frames = value.cast<int>();
    else if (name == "agreement")
      s.agreement = value.cast<int>();
    else if (name == "layers")
      s.layers = value.cast<std::vector<int>>();
    else if (name == "sentence_ends")
      s.sentence_ends = value.cast<std::string>();
    else if (name == "sentence_end_bias")
      s.sentence_end_bias = value.cast<double>();
    else if (name == "sentence_end_lookahead")
      s.sentence_end_lookahead = value.cast<bool>() ? "on" : "off";
    else if (name == "temperature")
      s.temperature = value.cast<float>();
    else if (name == "top_k")
      s.top_k = value.cast<int>();
    else if (name == "top_p")
      s.top_p = value.cast<float>();
    else if (name == "repetition_penalty")
      s.repetition_penalty = value.cast<float>();
    else if (name == "seed")
      s.seed = value.cast<uint64_t>();
    else
      throw py::type_error("unexpected keyword argument '" + name + "'");
  }
  return s;
}

// A loaded model and the lock its forwards take (the GIL is released during them).
struct Model {
  stream::StreamingModel streaming;
  std::mutex forward_mutex;
  std::string path;

  // Session options from keyword settings. The model's sentence-end detector is built on first use by a
  // forward, so this takes the forward lock too (with the GIL released while it waits).
  stream::SessionOptions session_options(const py::kwargs& kw) {
    const stream::SessionSettings settings = settings_from(kw);
    py::gil_scoped_release release;
    std::lock_guard lock(forward_mutex);
    return take(stream::session_options(streaming, settings));
  }
};

// A speech model (encoder and LLM) loaded for streaming recognition, and the lock its forwards take.
struct SpeechModelHandle {
  speech::SpeechModel speech;
  std::mutex forward_mutex;
  std::string path;
};

// One utterance at a time of streaming recognition: samples at `sample_rate` go through gpstream's exact
// streaming resampler (audio/resample_stream.h) to 16 kHz when the rate differs, then into a
// SpeechTranscriber, whose words come back with SimulEval's speech timing.
struct PyTranscriber {
  std::shared_ptr<SpeechModelHandle> model;
  std::unique_ptr<speech::SpeechTranscriber> transcriber;
  uint32_t sample_rate = 0;
  std::optional<audio::ResampleStream> resampler;
  std::vector<float> resampled;

  PyTranscriber(std::shared_ptr<SpeechModelHandle> m, uint32_t rate, const py::kwargs& kw)
      : model(std::move(m)), sample_rate(rate) {
    const stream::SessionSettings settings = settings_from(kw);
    py::gil_scoped_release release;
    std::lock_guard lock(model->forward_mutex);
    const stream::SessionOptions so = take(stream::session_options(model->speech.llm, settings));
    transcriber = take(speech::SpeechTranscriber::create(model->speech, so));
    start_resampler();
  }
  void start_resampler() {
    resampler.reset();
    if (sample_rate != audio::kLogMelSampleRate)
      resampler =
          take(audio::ResampleStream::create(sample_rate, static_cast<uint32_t>(audio::kLogMelSampleRate)));
  }
  std::vector<speech::TranscribedWord> push(py::array_t<float, py::array::c_style | py::array::forcecast> a) {
    if (a.ndim() != 1) throw py::value_error("samples: a one-dimensional array of mono samples");
    if (transcriber->finished()) throw py::value_error("push after finish(): call reset() first");
    std::vector<speech::TranscribedWord> words;
    const std::span<const float> in(a.data(), static_cast<size_t>(a.size()));
    py::gil_scoped_release release;
    std::lock_guard lock(model->forward_mutex);
    if (resampler) {
      resampled.clear();
      resampler->push(in, resampled);
      check(transcriber->push(resampled.data(), resampled.size(), words));
    } else {
      check(transcriber->push(in.data(), in.size(), words));
    }
    return words;
  }
  std::vector<speech::TranscribedWord> finish() {
    if (transcriber->finished()) throw py::value_error("finish() twice: call reset() first");
    std::vector<speech::TranscribedWord> words;
    py::gil_scoped_release release;
    std::lock_guard lock(model->forward_mutex);
    if (resampler) {
      resampled.clear();
      resampler->finish(resampled);
      check(transcriber->push(resampled.data(), resampled.size(), words));
    }
    check(transcriber->finish(words));
    return words;
  }
  void reset() {
    check(transcriber->reset());
    start_resampler();
  }
};

const char* event_kind_name(stream::EventKind k) {
  switch (k) {
    case stream::EventKind::Word:
      return "word";
    case stream::EventKind::NeedSource:
      return "need_source";
    case stream::EventKind::SegmentEnd:
      return "segment_end";
    case stream::EventKind::Finished:
      return "finished";
    case stream::EventKind::Tentative:
      return "tentative";
  }
  return "?";
}

// One live stream over a model: the Session and the model it runs on (kept alive by the Python object).
struct PySession {
  std::shared_ptr<Model> model;
  std::unique_ptr<stream::Session> session;

  PySession(std::shared_ptr<Model> m, const py::kwargs& kw, bool continuous) : model(std::move(m)) {
    stream::SessionOptions so = model->session_options(kw);
    so.continuous = continuous;
    session = take(stream::Session::create(*model->streaming.model, *model->streaming.codec, so));
  }
  stream::Event step() {
    py::gil_scoped_release release;
    std::lock_guard lock(model->forward_mutex);
    return take(session->step());
  }
};

struct PyScheduler {
  std::shared_ptr<Model> model;
  stream::Scheduler scheduler;
  std::vector<py::object> members;  // the sessions added, kept alive while scheduled

  explicit PyScheduler(std::shared_ptr<Model> m) : model(std::move(m)), scheduler(*model->streaming.model) {}
  int add(py::object session) {
    PySession& s = session.cast<PySession&>();
    if (s.model != model) throw py::value_error("the session runs on another model than the scheduler's");
    const int handle = scheduler.add(s.session.get());
    if (members.size() <= static_cast<size_t>(handle)) members.resize(handle + 1);
    members[handle] = std::move(session);
    return handle;
  }
  void remove(int handle) {
    if (handle < 0 || static_cast<size_t>(handle) >= members.size() || members[handle].is_none())
      throw py::value_error("no session with handle " + std::to_string(handle));
    scheduler.remove(handle);
    members[handle] = py::none();
  }
  std::vector<std::pair<int, stream::Event>> round() {
    std::vector<std::pair<int, stream::Event>> events;
    std::optional<Error> failed;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(model->forward_mutex);
      auto r = scheduler.round([&](int h, const stream::Event& e) { events.emplace_back(h, e); });
      if (!r) failed = r.error();
    }
    if (failed) raise(*failed);
    return events;
  }
};

template <typename T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

// layout(): the training sequence of one pair, as the C++ trainer builds it (train::sequence_from_layout).
py::dict layout(Model& m, const std::string& source, const std::string& target, const std::string& paradigm,
                int k, const std::string& phi, bool end_after_source, const std::string& positions_removed,
                bool dense_mask) {
  stream::LayoutOptions lo;
  const auto p = stream::parse_paradigm(paradigm);
  if (!p)
    throw py::value_error("paradigm: unknown '" + paradigm + "' (known: " + stream::paradigm_names() + ")");
  lo.paradigm = *p;
  if (k < 1) throw py::value_error("k: wait-k's lag is at least 1");
  lo.k = k;
  const auto parsed_phi = stream::Phi::parse(phi);
  if (!parsed_phi) throw py::value_error("phi: expected a number >= 0 or S, got '" + phi + "'");
  lo.phi = *parsed_phi;
  lo.end_after_source = end_after_source;
  const auto removed = stream::parse_positions_removed(positions_removed);
  if (!removed)
    throw py::value_error("positions_removed: none, source, target or all, not '" + positions_removed + "'");
  lo.positions_removed = *removed;
  lo.n_vocab = m.streaming.model->config().n_vocab;
  const stream::Layout l = take(stream::make_layout(*m.streaming.codec, source, target, lo));
  const train::TrainSequence seq = train::sequence_from_layout(l);
  const size_t n = seq.size();
  py::dict out;
  out["ids"] = to_array(seq.ids);
  out["positions"] = to_array(seq.positions);
  out["groups"] = to_array(seq.groups);
  out["n_src"] = to_array(seq.n_src);
  out["n_tgt"] = to_array(seq.n_tgt);
  out["labels"] = to_array(seq.labels);
  std::vector<float> weights(n);
  for (size_t i = 0; i < n; ++i) weights[i] = seq.labels[i] >= 0 ? 1.0f : 0.0f;
  out["loss_weights"] = to_array(weights);
  out["delays"] = to_array(l.delays);
  out["n_source_rows"] = l.n_source_rows;
  out["n_target_rows"] = l.n_target_rows;
  if (dense_mask) {
    std::vector<float> additive(n * n);
    kernels::attention_mask_build(additive.data(), seq.groups.data(), seq.n_src.data(), seq.n_tgt.data(),
                                  static_cast<int64_t>(n));
    py::array_t<bool> mask({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(n)});
    bool* d = mask.mutable_data();
    for (size_t ij = 0; ij < n * n; ++ij) d[ij] = additive[ij] == 0.0f;
    out["mask"] = mask;
  }
  return out;
}

py::dict bleu_dict(const eval::BleuScore& s, const std::string& signature) {
  py::dict d;
  d["score"] = s.score;
  d["counts"] = s.counts;
  d["totals"] = s.totals;
  d["precisions"] = s.precisions;
  d["bp"] = s.bp;
  d["sys_len"] = s.sys_len;
  d["ref_len"] = s.ref_len;
  d["signature"] = signature;
  return d;
}

eval::BleuOptions bleu_options(const std::string& tokenize, bool lowercase, const std::string& smooth) {
  eval::BleuOptions o;
  o.tokenize = take(eval::parse_tokenizer(tokenize));
  o.lowercase = lowercase;
  o.smooth_method = take(eval::parse_smooth_method(smooth));
  return o;
}

double latency(const std::vector<double>& delays, double source_length, double target_length,
               const std::string& metric) {
  const eval::MetricFn fn = eval::metric_fn(metric);
  if (!fn)
    throw py::value_error("metric: AL, LAAL, AP, DAL, StartOffset, EndOffset, RTF or NumChunks, not '" +
                          metric + "'");
  if (delays.empty()) throw py::value_error("no delays: the metric is undefined for an empty hypothesis");
  return fn(delays, source_length, target_length);
}

// One sequence of the trainer from a layout dict (the arrays layout() returns), checked against the model.
template <typename T>
std::vector<T> array_field(const py::dict& d, const char* key) {
  if (!d.contains(key)) throw py::value_error(std::string("a layout without '") + key + "'");
  const auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(d[key]);
  if (!a || a.ndim() != 1)
    throw py::value_error(std::string("layout '") + key + "': a one-dimensional array");
  return std::vector<T>(a.data(), a.data() + a.size());
}

train::TrainSequence sequence_from_dict(const py::dict& d) {
  train::TrainSequence s;
  s.ids = array_field<int32_t>(d, "ids");
  s.positions = array_field<float>(d, "positions");
  s.groups = array_field<uint8_t>(d, "groups");
  s.n_src = array_field<int32_t>(d, "n_src");
  s.n_tgt = array_field<int32_t>(d, "n_tgt");
  s.labels = array_field<int32_t>(d, "labels");
  return s;
}

// The C++ trainer's loss and gradients over a batch of layouts: the reference a second trainer (the PyTorch
// recipe) is checked against. No dropout. Every base parameter is trained, or with lora_adapter (a PEFT
// adapter folder) only those adapters, at rank and alpha of its adapter_config.json on every projection.
py::dict trainer_gradients(const std::string& model_dir, const std::vector<py::dict>& layouts, int threads,
                           const std::string& lora_adapter) {
  if (layouts.empty()) throw py::value_error("no layouts");
  train::LoraOptions lora;
  if (!lora_adapter.empty()) {
    std::ifstream in(lora_adapter + "/adapter_config.json");
    const nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
    if (config.is_discarded() || !config.is_object() || !config.contains("r") ||
        !config["r"].is_number_integer() || !config.contains("lora_alpha") ||
        !config["lora_alpha"].is_number())
      throw py::value_error(lora_adapter + "/adapter_config.json: no PEFT config with r and lora_alpha");
    lora.rank = config["r"].get<int>();
    lora.alpha = config["lora_alpha"].get<float>();
    if (lora.rank < 1 || lora.rank > 4096) throw py::value_error("adapter_config.json: r of 1 to 4096");
  }
  train::TrainBatch batch;
  int64_t longest = 0;
  for (const py::dict& d : layouts) {
    batch.seqs.push_back(sequence_from_dict(d));
    longest = std::max<int64_t>(longest, static_cast<int64_t>(batch.seqs.back().size()));
  }
  double loss_sum = 0;
  std::unique_ptr<train::TrainModel> tm;
  {
    py::gil_scoped_release release;
    const model::ModelConfig config = take(model::load_hf_config(model_dir));
    const io::TensorMap tensors = take(io::read_safetensors_dir(model_dir));
    for (const train::TrainSequence& s : batch.seqs) check(s.validate(config.n_vocab, config.n_embd));
    tm = take(train::TrainModel::create(config, tensors, lora, 0,
                                        train::TrainShape{batch.n_tokens(), longest}, threads));
    if (lora.rank > 0) check(train::load_peft_adapter(*tm, lora_adapter));
    train::ForwardOptions fo;
    fo.training = false;
    loss_sum = take(tm->forward(batch, fo));
    tm->zero_grad();
    tm->backward(1.0f);
  }
  py::dict grads;
  for (const train::ParamTensor& t : tm->trainable().tensors) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    py::array_t<float> a(shape);
    std::copy_n(tm->grads().data() + t.offset, t.numel, a.mutable_data());
    grads[py::str(t.name)] = a;
  }
  py::dict out;
  out["loss_sum"] = loss_sum;
  out["n_labels"] = batch.n_labels();
  out["gradients"] = grads;
  return out;
}

}  // namespace
}  // namespace gpstream::python

PYBIND11_MODULE(_gpstream, m) {
  using namespace gpstream;
  using namespace gpstream::python;
  m.doc() = "gpstream: streaming LLMs with group position encoding (docs/python.md)";
  m.attr("__version__") = version();
  py::register_exception<GpstreamError>(m, "Error", PyExc_RuntimeError);
  py::register_exception<MissingFile>(m, "MissingFileError", PyExc_FileNotFoundError);

  py::class_<stream::Event>(m, "Event", "What a Session's step() produced")
      .def_property_readonly("kind", [](const stream::Event& e) { return event_kind_name(e.kind); })
      .def_readonly("word", &stream::Event::word)
      .def_readonly("delay", &stream::Event::delay)
      .def_readonly("delay_ms", &stream::Event::delay_ms)
      .def_readonly("elapsed_ms", &stream::Event::elapsed_ms)
      .def_readonly("stream_delay", &stream::Event::stream_delay)
      .def_readonly("stream_elapsed_ms", &stream::Event::stream_elapsed_ms)
      .def_readonly("segment_end_read", &stream::Event::segment_end_read)
      .def_readonly("truncated", &stream::Event::truncated)
      .def_readonly("units_carried", &stream::Event::units_carried)
      .def_readonly("words", &stream::Event::words)
      .def("__repr__", [](const stream::Event& e) {
        return "Event(" + std::string(event_kind_name(e.kind)) +
               (e.kind == stream::EventKind::Word ? ", '" + e.word + "', delay=" + std::to_string(e.delay)
                                                  : "") +
               ")";
      });

  py::class_<Model, std::shared_ptr<Model>>(m, "Model", "A model directory loaded for streaming")
      .def(py::init([](const std::string& path, int threads, const std::string& template_name,
                       const std::string& src_lang, const std::string& tgt_lang) {
             if (!std::filesystem::exists(path))
               throw MissingFile(path + ": no such model directory or file");
             auto model = std::make_shared<Model>();
             model->path = path;
             py::gil_scoped_release release;
             model->streaming =
                 take(stream::StreamingModel::load(path, threads, template_name, src_lang, tgt_lang));
             return model;
           }),
           py::arg("path"), py::arg("threads") = 0, py::arg("template") = "", py::arg("src_lang") = "",
           py::arg("tgt_lang") = "")
      .def_readonly("path", &Model::path)
      .def_property_readonly("n_vocab", [](const Model& x) { return x.streaming.model->config().n_vocab; })
      .def_property_readonly("n_layer", [](const Model& x) { return x.streaming.model->config().n_layer; })
      .def_property_readonly("paradigm",
                             [](const Model& x) { return stream::paradigm_name(x.streaming.meta.paradigm); })
      .def_property_readonly("k", [](const Model& x) { return x.streaming.meta.k; })
      .def(
          "tokenize",
          [](const Model& x, const std::string& text) { return x.streaming.tokenizer->encode(text); },
          py::arg("text"), "token ids of text (no special tokens)")
      .def(
          "detokenize",
          [](const Model& x, const std::vector<int32_t>& ids) {
            for (int32_t id : ids)
              if (id < 0 || id >= x.streaming.model->config().n_vocab)
                throw py::value_error("token id " + std::to_string(id) + " outside the vocabulary");
            return x.streaming.tokenizer->decode(ids);
          },
          py::arg("ids"))
      .def(
          "translate",
          [](std::shared_ptr<Model> x, const std::string& source, const py::kwargs& kw) {
            stream::SessionOptions so = x->session_options(kw);
            eval::InstanceRecord rec;
            {
              py::gil_scoped_release release;
              std::lock_guard lock(x->forward_mutex);
              rec = take(
                  eval::evaluate_sentence(*x->streaming.model, *x->streaming.codec, so, {source, ""}, {}));
            }
            py::dict d;
            d["translation"] = rec.prediction;
            // Text delays are whole source words: ints, as instances.log has them.
            d["delays"] = std::vector<int64_t>(rec.delays.begin(), rec.delays.end());
            d["elapsed_ms"] = rec.elapsed;
            d["unit_delays"] = std::vector<int64_t>(rec.unit_delays.begin(), rec.unit_delays.end());
            return d;
          },
          py::arg("source"),
          "translates one line as `gpstream eval` does (every word read): translation, delays (source words "
          "read per target word), elapsed_ms, unit_delays; keyword arguments as Session's");

  py::class_<PySession>(m, "Session", "One live stream (continuous=True: sentence by sentence, unbounded)")
      .def(py::init([](std::shared_ptr<Model> model, bool continuous, const py::kwargs& kw) {
             return std::make_unique<PySession>(std::move(model), kw, continuous);
           }),
           py::arg("model"), py::arg("continuous") = false)
      .def(
          "push_source",
          [](PySession& s, const std::string& text, std::optional<double> arrival_ms) {
            check(s.session->push_source(text, arrival_ms));
          },
          py::arg("text"), py::arg("arrival_ms") = py::none())
      .def("end_source", [](PySession& s) { check(s.session->end_source()); })
      .def("end_segment", [](PySession& s) { check(s.session->end_segment()); })
      .def("step", &PySession::step, "runs until a word, a need for source, a segment end or the end")
      .def_property_readonly("finished", [](const PySession& s) { return s.session->finished(); })
      .def_property_readonly("words_read", [](const PySession& s) { return s.session->words_read(); })
      .def_property_readonly("units_read", [](const PySession& s) { return s.session->units_read(); })
      .def_property_readonly("stats", [](const PySession& s) {
        const stream::SessionStats& st = s.session->stats();
        py::dict d;
        d["source_tokens"] = st.source_tokens;
        d["target_tokens"] = st.target_tokens;
        d["refeeds"] = st.refeeds;
        d["forwards"] = st.forwards;
        return d;
      });

  py::class_<speech::TranscribedWord>(m, "TranscribedWord", "A word a Transcriber wrote, with its timing")
      .def_readonly("text", &speech::TranscribedWord::text)
      .def_readonly("chunks", &speech::TranscribedWord::chunks, "encoder chunks read when it was written")
      .def_readonly("delay_ms", &speech::TranscribedWord::delay_ms,
                    "ms of audio consumed (SimulEval's delay)")
      .def_readonly("elapsed_ms", &speech::TranscribedWord::elapsed_ms, "delay_ms + computation ms")
      .def("__repr__", [](const speech::TranscribedWord& w) {
        return "TranscribedWord('" + w.text + "', delay_ms=" + std::to_string(w.delay_ms) + ")";
      });

  py::class_<SpeechModelHandle, std::shared_ptr<SpeechModelHandle>>(
      m, "SpeechModel", "A speech model directory (streaming encoder and LLM) loaded for recognition")
      .def(py::init([](const std::string& path, int threads) {
             if (!std::filesystem::exists(path)) throw MissingFile(path + ": no such model directory");
             auto model = std::make_shared<SpeechModelHandle>();
             model->path = path;
             py::gil_scoped_release release;
             model->speech = take(speech::SpeechModel::load(path, threads));
             return model;
           }),
           py::arg("path"), py::arg("threads") = 0)
      .def_readonly("path", &SpeechModelHandle::path)
      .def_property_readonly(
          "chunk_ms", [](const SpeechModelHandle& x) { return x.speech.chunk_ms(); },
          "audio per source unit (one encoder chunk), ms")
      .def_property_readonly("k", [](const SpeechModelHandle& x) { return x.speech.llm.meta.k; })
      .def_property_readonly("sample_rate",
                             [](const SpeechModelHandle&) { return audio::kLogMelSampleRate; });

  py::class_<PyTranscriber>(m, "Transcriber",
                            "Streaming recognition of one utterance at a time: push samples, finish, reset")
      .def(py::init([](std::shared_ptr<SpeechModelHandle> model, uint32_t sample_rate, const py::kwargs& kw) {
             return std::make_unique<PyTranscriber>(std::move(model), sample_rate, kw);
           }),
           py::arg("model"), py::arg("sample_rate") = audio::kLogMelSampleRate)
      .def("push", &PyTranscriber::push, py::arg("samples"),
           "consumes mono samples (any count) and returns the words they let the model write")
      .def("finish", &PyTranscriber::finish, "end of the audio: returns the remaining words")
      .def("reset", &PyTranscriber::reset, "starts the next utterance")
      .def_property_readonly("transcript", [](const PyTranscriber& t) { return t.transcriber->transcript(); })
      .def_property_readonly("finished", [](const PyTranscriber& t) { return t.transcriber->finished(); })
      .def_property_readonly("audio_ms", [](const PyTranscriber& t) { return t.transcriber->audio_ms(); })
      .def_property_readonly("compute_ms", [](const PyTranscriber& t) { return t.transcriber->compute_ms(); })
      .def_readonly("sample_rate", &PyTranscriber::sample_rate);

  m.def(
      "resample",
      [](py::array_t<float, py::array::c_style | py::array::forcecast> a, uint32_t from_rate,
         uint32_t to_rate) {
        if (a.ndim() != 1) throw py::value_error("samples: a one-dimensional array");
        std::vector<float> out;
        {
          py::gil_scoped_release release;
          out = take(audio::resample(std::span<const float>(a.data(), static_cast<size_t>(a.size())),
                                     from_rate, to_rate));
        }
        return py::array_t<float>(static_cast<py::ssize_t>(out.size()), out.data());
      },
      py::arg("samples"), py::arg("from_rate"), py::arg("to_rate") = audio::kLogMelSampleRate,
      "gpstream's resampler (the speech front end's): the whole signal at once");

  py::class_<PyScheduler>(m, "Scheduler", "Steps many Sessions of one model in one batched forward per round")
      .def(py::init<std::shared_ptr<Model>>(), py::arg("model"))
      .def("add", &PyScheduler::add, py::arg("session"), "adds a session; returns its handle")
      .def("remove", &PyScheduler::remove, py::arg("handle"))
      .def("round", &PyScheduler::round,
           "one batched forward over every session with work: [(handle, Event)] ([] when none has any)");

  m.def(
      "layout",
      [](std::shared_ptr<Model> model, const std::string& source, const std::string& target,
         const std::string& paradigm, int k, py::object phi, bool end_after_source,
         const std::string& positions_removed, bool dense_mask) {
        return layout(*model, source, target, paradigm, k, py::str(phi), end_after_source, positions_removed,
                      dense_mask);
      },
      py::arg("model"), py::arg("source"), py::arg("target"), py::arg("paradigm") = "group", py::arg("k") = 5,
      py::arg("phi") = "0", py::arg("end_after_source") = false, py::arg("positions_removed") = "none",
      py::arg("dense_mask") = false,
      "one pair laid out as the paradigm streams it and the C++ trainer trains it (gpe.md §8.1): ids, "
      "positions, groups (0 source, 1 target), n_src/n_tgt (each row's visible source and target rows), "
      "labels (-1: none), loss_weights, delays; mask[i, j] (row i sees row j) with dense_mask");

  m.def("trainer_gradients", &trainer_gradients, py::arg("model_dir"), py::arg("layouts"),
        py::arg("threads") = 1, py::arg("lora_adapter") = "",
        "the C++ trainer over a batch of layouts (dicts as layout() returns): loss_sum (cross-entropy summed "
        "over "
        "the labelled rows), n_labels, and gradients of loss_sum by tensor name (Hugging Face names; with "
        "lora_adapter, a PEFT adapter folder, the adapters' PEFT names)");
  m.def(
      "corpus_bleu",
      [](const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
         const std::string& tokenize, bool lowercase, const std::string& smooth) {
        const eval::BleuOptions o = bleu_options(tokenize, lowercase, smooth);
        const eval::BleuResult r = take(eval::corpus_bleu(hyps, refs, o));
        return bleu_dict(r.score, eval::bleu_signature(o, r.num_refs));
      },
      py::arg("hypotheses"), py::arg("references"), py::arg("tokenize") = "13a", py::arg("lowercase") = false,
      py::arg("smooth") = "exp",
      "sacreBLEU's corpus BLEU; references as sacreBLEU takes them: a list of streams, each one reference "
      "per "
      "hypothesis");
  m.def(
      "sentence_bleu",
      [](const std::string& hyp, const std::vector<std::string>& refs, const std::string& tokenize,
         bool lowercase, const std::string& smooth) {
        const eval::BleuOptions o = eval::sentence_bleu_options(bleu_options(tokenize, lowercase, smooth));
        const std::vector<std::string_view> views(refs.begin(), refs.end());
        return bleu_dict(take(eval::sentence_bleu(hyp, views, o)),
                         eval::bleu_signature(o, static_cast<int>(refs.size())));
      },
      py::arg("hypothesis"), py::arg("references"), py::arg("tokenize") = "13a", py::arg("lowercase") = false,
      py::arg("smooth") = "exp", "sacreBLEU's sentence_bleu (effective order on)");
  m.def(
      "corpus_chrf",
      [](const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
         int word_order, int char_order, int beta, bool lowercase, bool eps_smoothing) {
        if (char_order < 0 || word_order < 0 || char_order > 100 || word_order > 100 || beta < 0 ||
            beta > 100)
          throw py::value_error("char_order, word_order and beta: 0 to 100");
        eval::ChrfOptions o;
        o.word_order = word_order;
        o.char_order = char_order;
        o.beta = beta;
        o.lowercase = lowercase;
        o.eps_smoothing = eps_smoothing;
        const eval::ChrfResult r = take(eval::corpus_chrf(hyps, refs, o));
        py::dict d;
        d["score"] = r.score;
        d["name"] = eval::chrf_name(o);
        d["signature"] = eval::chrf_signature(o, r.num_refs);
        return d;
      },
      py::arg("hypotheses"), py::arg("references"), py::arg("word_order") = 0, py::arg("char_order") = 6,
      py::arg("beta") = 2, py::arg("lowercase") = false, py::arg("eps_smoothing") = false,
      "sacreBLEU's corpus chrF (word_order=2: chrF++)");
  m.def("latency", &latency, py::arg("delays"), py::arg("source_length"), py::arg("target_length"),
        py::arg("metric") = "LAAL",
        "SimulEval's latency of one instance: delays per target word, source and target lengths");
}
