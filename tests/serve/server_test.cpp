// Integration tests: a real server on an ephemeral loopback port with the shipped model
// (models/gpstream-en-fr). The oracles are the library paths the commands use: a Session stepped
// alone, as `gpstream translate` drives it, for WebSocket streams and POST /v1/translate, and
// eval::evaluate_sentence (`gpstream eval`) for SimulEval's remote protocol. No output is hard-coded,
// so the tests hold for any model put there.
#include "serve/server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "eval/latency.h"
#include "eval/simultaneous.h"
#include "serve_test_client.h"
#include "shipped_model_server.h"
#include "tokenizer/segment_encoder.h"

namespace gpstream::serve {
namespace {

using gpstream::testing::cat;
using gpstream::testing::HttpReply;
using gpstream::testing::WsClient;
using nlohmann::json;
namespace http = gpstream::testing::http;

struct Output {
  std::vector<std::string> words;
  std::vector<int> delays;
};

class ServeTest : public ShippedModelServerTest {
 protected:
  // `gpstream translate`'s session options with no flags: the model's defaults, 256 target tokens, greedy.
  static stream::SessionOptions defaults() {
    stream::SessionOptions so = model_->default_options();
    so.max_target_tokens = 256;
    so.sentence_ends = model_->sentence_ends();  // as the server's streams have them
    return so;
  }

  void start(ServerOptions o = {}) { start_server(std::move(o), defaults()); }

  // What `gpstream translate` prints for one line: a fresh Session, every word pushed, stepped alone.
  static Output translate_line(const std::string& line, stream::SessionOptions so) {
    Output out;
    auto s = stream::Session::create(*model_->model, *model_->codec, so);
    EXPECT_TRUE(s.ok());
    for (const auto& w : tokenizer::split_words(line)) EXPECT_TRUE((*s)->push_source(w).ok());
    EXPECT_TRUE((*s)->end_source().ok());
    for (;;) {
      auto e = (*s)->step();
      EXPECT_TRUE(e.ok());
      if (!e.ok() || e->kind == stream::EventKind::Finished) break;
      if (e->kind == stream::EventKind::Word) {
        out.words.push_back(e->word);
        out.delays.push_back(e->stream_delay);
      }
    }
    // Nothing is dropped in a continuous session (a plain one may end before its last word).
    if (so.continuous) {
      EXPECT_EQ((*s)->stream_words_read(), static_cast<int>(tokenizer::split_words(line).size()));
    }
    return out;
  }

  bool sessions_drain(int seconds = 20) {
    for (int i = 0; i < seconds * 20; ++i) {
      if (server_->open_sessions() == 0 && server_->metrics().sessions_active == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

const std::vector<std::string> kSentences = {
    "The cat sat on the mat.",
    "I would like a cup of coffee, please!",
    "Where is the train station?",
    "We are going to the market tomorrow morning because the shops are closed today.",
};

// Streams `text` in chunks of `chunk` bytes (cutting words and UTF-8 anywhere); returns the messages.
std::vector<json> stream_text(int port, const std::string& start, const std::string& text, size_t chunk) {
  WsClient c(port);
  EXPECT_TRUE(c.send(start));
  auto ready = c.read_json();
  EXPECT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  for (size_t i = 0; i < text.size(); i += chunk)
    EXPECT_TRUE(c.send(json{{"type", "source"}, {"text", text.substr(i, chunk)}}.dump()));
  EXPECT_TRUE(c.send(R"({"type": "end"})"));
  auto msgs = c.read_all();
  EXPECT_EQ(c.close_code(), 1000);
  return msgs;
}

// Words and delays per segment from a stream's events; checks the event sequence's shape.
std::vector<Output> segments_of(const std::vector<json>& msgs) {
  std::vector<Output> segs(1);
  EXPECT_FALSE(msgs.empty());
  for (size_t i = 0; i < msgs.size(); ++i) {
    const json& m = msgs[i];
    if (m["type"] == "word") {
      EXPECT_EQ(m["segment"].get<size_t>(), segs.size() - 1);
      EXPECT_EQ(m["index"].get<size_t>(), segs.back().words.size());
      EXPECT_GE(m["lag_ms"].get<double>(), 0.0);
      segs.back().words.push_back(m["word"]);
      segs.back().delays.push_back(m["delay"]);
    } else if (m["type"] == "segment_end") {
      EXPECT_EQ(m["words"].get<size_t>(), segs.back().words.size());
      segs.emplace_back();
    } else {
      EXPECT_EQ(m["type"], "finished") << m.dump();
      EXPECT_EQ(i + 1, msgs.size());
    }
  }
  if (segs.back().words.empty()) segs.pop_back();  // the stream ended right after a sentence
  return segs;
}

TEST_F(ServeTest, ContinuousStreamGivesTranslatesWordsAndDelaysPerSentence) {
  start();
  std::string text;
  for (const auto& s : kSentences) text += s + " ";
  for (size_t chunk : {size_t{1}, size_t{7}, text.size()}) {
    auto segs = segments_of(stream_text(port_, R"({"type": "start"})", text, chunk));
    ASSERT_EQ(segs.size(), kSentences.size()) << "chunk " << chunk;
    for (size_t i = 0; i < kSentences.size(); ++i) {
      Output want = translate_line(kSentences[i], defaults());
      EXPECT_EQ(segs[i].words, want.words) << "sentence " << i << " chunk " << chunk;
      EXPECT_EQ(segs[i].delays, want.delays) << "sentence " << i << " chunk " << chunk;
    }
  }
  EXPECT_TRUE(sessions_drain());
}

TEST_F(ServeTest, StreamOptionsReachTheSession) {
  start();
  const std::string line = kSentences[3];
  for (const char* paradigm : {"group", "interleaved", "batch-stream"}) {
    const std::string start_msg =
        json{{"type", "start"}, {"k", 2}, {"phi", "S"}, {"continuous", false}, {"paradigm", paradigm}}.dump();
    auto segs = segments_of(stream_text(port_, start_msg, line, 5));
    ASSERT_EQ(segs.size(), 1u);
    stream::SessionOptions so = defaults();
    so.k = 2;
    so.phi = *stream::Phi::parse("S");
    so.paradigm = *stream::parse_paradigm(paradigm);
    Output want = translate_line(line, so);
    EXPECT_EQ(segs[0].words, want.words) << paradigm;
    EXPECT_EQ(segs[0].delays, want.delays) << paradigm;
  }
  // The confidence policy, from the start message's "policy" object.
  const std::string start_msg =
      json{{"type", "start"},
           {"continuous", false},
           {"policy", {{"name", "confidence"}, {"tau", 0.5}, {"min_lag", 1}, {"max_lag", 4}}}}
          .dump();
  auto segs = segments_of(stream_text(port_, start_msg, line, 5));
  ASSERT_EQ(segs.size(), 1u);
  stream::SessionOptions so = defaults();
  so.policy = {stream::PolicyKind::Confidence, 0.5, 1, 4};
  Output want = translate_line(line, so);
  EXPECT_EQ(segs[0].words, want.words);
  EXPECT_EQ(segs[0].delays, want.delays);
}

// The local-agreement policy: the same words and delays as a Session alone, and its tentative words as
// "tentative" events between them, each as the Session's Tentative events say.
TEST_F(ServeTest, LocalAgreementStreamsSendTentativeWords) {
  start();
  const std::string line = kSentences[3];
  const std::string start_msg =
      json{{"type", "start"},
           {"continuous", false},
           {"policy", {{"name", "local-agreement"}, {"min_lag", 1}, {"max_lag", 6}}}}
          .dump();
  WsClient c(port_);
  ASSERT_TRUE(c.send(start_msg));
  auto ready = c.read_json();
  ASSERT_TRUE(ready && (*ready)["type"] == "ready") << (ready ? ready->dump() : "closed");
  EXPECT_EQ((*ready)["policy"],
            (json{{"name", "local-agreement"}, {"agreement", 2}, {"min_lag", 1}, {"max_lag", 6}}));
  for (size_t i = 0; i < line.size(); i += 5)
    ASSERT_TRUE(c.send(json{{"type", "source"}, {"text", line.substr(i, 5)}}.dump()));
  ASSERT_TRUE(c.send(R"({"type": "end"})"));
  std::vector<json> msgs = c.read_all();
  EXPECT_EQ(c.close_code(), 1000);
  std::vector<std::vector<std::string>> tentative;
  std::vector<json> rest;
  for (const json& m : msgs) {
    if (m["type"] == "tentative") {
      EXPECT_EQ(m["segment"], 0);
      tentative.push_back(m["words"].get<std::vector<std::string>>());
    } else {
      rest.push_back(m);
    }
  }
  auto segs = segments_of(rest);
  ASSERT_EQ(segs.size(), 1u);
  stream::SessionOptions so = defaults();
  so.policy.kind = stream::PolicyKind::LocalAgreement;
  so.policy.min_lag = 1;
  so.policy.max_lag = 6;
  Output want = translate_line(line, so);
  EXPECT_EQ(segs[0].words, want.words);
  EXPECT_EQ(segs[0].delays, want.delays);
  // The Session's Tentative events, stepped alone with the whole source.
  auto s = stream::Session::create(*model_->model, *model_->codec, so);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->push_source(line).ok());
  ASSERT_TRUE((*s)->end_source().ok());
  std::vector<std::vector<std::string>> want_tentative;
  for (;;) {
    auto e = (*s)->step();
    ASSERT_TRUE(e.ok());
    if (e->kind == stream::EventKind::Finished) break;
    if (e->kind == stream::EventKind::Tentative) want_tentative.push_back(e->words);
  }
  EXPECT_FALSE(want_tentative.empty());
  EXPECT_EQ(tentative, want_tentative);
  // Sampling or the word beam cannot run it: bad_options.
  WsClient b(port_);
  ASSERT_TRUE(b.send(json{{"type", "start"}, {"beam", 2}, {"policy", {{"name", "local-agreement"}}}}.dump()));
  auto refused = b.read_json();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ((*refused)["type"], "error") << refused->dump();
  EXPECT_EQ((*refused)["code"], "bad_options") << refused->dump();
}

TEST_F(ServeTest, ConcurrentStreamsShareBatchedForwards) {
  start();
  const int n = 6;
  std::vector<std::vector<Output>> got(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      const std::string start_msg = json{{"type", "start"}, {"continuous", false}, {"k", 1 + i % 4}}.dump();
      got[i] = segments_of(stream_text(port_, start_msg, kSentences[i % kSentences.size()], 3 + i));
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    stream::SessionOptions so = defaults();
    so.k = 1 + i % 4;
    Output want = translate_line(kSentences[i % kSentences.size()], so);
    ASSERT_EQ(got[i].size(), 1u) << i;
    EXPECT_EQ(got[i][0].words, want.words) << i;
    EXPECT_EQ(got[i][0].delays, want.delays) << i;
  }
  EXPECT_TRUE(sessions_drain());
  EXPECT_EQ(server_->metrics().sessions_total, n);
  EXPECT_GT(server_->metrics().forwards, 0);
}

TEST_F(ServeTest, HealthAndMetrics) {
  start();
  HttpReply h = gpstream::testing::http_request(port_, http::verb::get, "/health");
  ASSERT_EQ(h.status, 200);
  json hj = json::parse(h.body);
  EXPECT_EQ(hj["status"], "ok");
  EXPECT_EQ(hj["sessions"], 0);
  EXPECT_EQ(hj["k"], model_->meta.k);
  EXPECT_EQ(hj["paradigm"], stream::paradigm_name(model_->meta.paradigm));
  segments_of(stream_text(port_, R"({"type": "start"})", kSentences[0], 4));
  ASSERT_TRUE(sessions_drain());
  HttpReply m = gpstream::testing::http_request(port_, http::verb::get, "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.content_type.rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_NE(m.body.find("\ngpstream_sessions_active 0\n"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("\ngpstream_sessions_total 1\n"), std::string::npos) << m.body;
  const size_t words = translate_line(kSentences[0], defaults()).words.size();
  EXPECT_NE(m.body.find(cat("\ngpstream_target_words_total ", std::to_string(words), "\n")),
            std::string::npos);
  EXPECT_NE(m.body.find(cat("gpstream_word_lag_seconds_count ", std::to_string(words), "\n")),
            std::string::npos);
  EXPECT_NE(m.body.find("# TYPE gpstream_tokens_per_second gauge"), std::string::npos);
  EXPECT_NE(m.body.find("\ngpstream_queue_depth 0\n"), std::string::npos);
}

TEST_F(ServeTest, TranslateEndpointGivesWordsDelaysAndLatency) {
  start();
  const std::string text = kSentences[0] + "\n\n" + kSentences[2] + "\n";
  HttpReply r = gpstream::testing::http_request(port_, http::verb::post, "/v1/translate",
                                                json{{"text", text}, {"k", 3}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["sentences"].size(), 3u);
  stream::SessionOptions so = defaults();
  so.k = 3;
  std::vector<std::string> lines = {kSentences[0], "", kSentences[2]};
  std::string all;
  for (size_t i = 0; i < 3; ++i) {
    const json& s = j["sentences"][i];
    Output want = lines[i].empty() ? Output{} : translate_line(lines[i], so);
    EXPECT_EQ(s["words"].get<std::vector<std::string>>(), want.words) << i;
    EXPECT_EQ(s["delays"].get<std::vector<int>>(), want.delays) << i;
    std::string joined;
    for (size_t w = 0; w < want.words.size(); ++w) joined += (w ? " " : "") + want.words[w];
    EXPECT_EQ(s["translation"], joined);
    all += (i ? "\n" : "") + joined;
    if (want.words.empty()) continue;
    // AL and LAAL over the hypothesis length (no reference): the eval/ formulas on these delays, the same
    // double arithmetic on both sides, and written as Python's repr (the shortest string that parses back to
    // the same double): equal to the bit.
    std::vector<double> d(want.delays.begin(), want.delays.end());
    const double src = static_cast<double>(tokenizer::split_words(lines[i]).size());
    const double tgt = static_cast<double>(want.words.size());
    EXPECT_EQ(s["scores"]["AL"].get<double>(), eval::latency_al(d, src, tgt));
    EXPECT_EQ(s["scores"]["LAAL"].get<double>(), eval::latency_laal(d, src, tgt));
    EXPECT_EQ(s["scores"]["AP"].get<double>(), eval::latency_ap(d, src, tgt));
  }
  EXPECT_EQ(j["translation"], all);
  EXPECT_TRUE(j["scores"].contains("DAL"));
  // With a reference: BLEU first, then latency over the reference length.
  HttpReply rr = gpstream::testing::http_request(
      port_, http::verb::post, "/v1/translate",
      json{{"text", kSentences[0]}, {"reference", "Le chat était assis sur le tapis."}}.dump());
  ASSERT_EQ(rr.status, 200) << rr.body;
  EXPECT_TRUE(json::parse(rr.body)["scores"].contains("BLEU"));
  EXPECT_TRUE(sessions_drain());
}

// The reply is written by nlohmann::json: a line with quotes, a backslash, a control character and
// non-ASCII text comes back escaped in "source" and parses back to the line; numbers are numbers.
TEST_F(ServeTest, TranslateReplyEscapesTheSourceLine) {
  start();
  const std::string line = "He said \"hi\" \\ to Zo\u00eb\x01 at the caf\u00e9.";
  HttpReply r = gpstream::testing::http_request(port_, http::verb::post, "/v1/translate",
                                                json{{"text", line}, {"k", 3}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.rfind(R"({"translation":")", 0), 0u) << r.body;
  EXPECT_NE(r.body.find(R"({"source":"He said \"hi\" \\ to Zoë\u0001 at the café.","translation":")"),
            std::string::npos)
      << r.body;
  const json j = json::parse(r.body);
  ASSERT_EQ(j["sentences"].size(), 1u);
  const json& s = j["sentences"][0];
  EXPECT_EQ(s["source"], line);
  ASSERT_EQ(s["elapsed_ms"].size(), s["delays"].size());
  for (size_t i = 0; i < s["delays"].size(); ++i) {
    EXPECT_TRUE(s["delays"][i].is_number_integer()) << r.body;
    EXPECT_TRUE(s["elapsed_ms"][i].is_number_float()) << r.body;
  }
  EXPECT_TRUE(sessions_drain());
}

// Every word of every line is translated: a line of two sentences, one of fifty, and a long one with no
// sentence end at all (cut into segments at word boundaries), each equal to a continuous Session run alone.
TEST_F(ServeTest, TranslateEndpointReadsEveryWordOfEveryLine) {
  std::string two = kSentences[0], fifty, no_end;
  two.append(" ").append(kSentences[2]);
  for (int i = 0; i < 50; ++i) fifty.append(i ? " " : "").append(kSentences[i % 3]);
  for (int i = 0; i < 150; ++i) no_end.append(i ? " " : "").append(i % 2 ? "button" : "document");
  const std::vector<std::string> lines = {two, fifty, no_end};
  stream::SessionOptions so = defaults();
  so.continuous = true;
  std::vector<Output> want;
  for (const auto& line : lines)
    want.push_back(translate_line(line, so));  // before the server shares the model
  start();
  HttpReply r = gpstream::testing::http_request(port_, http::verb::post, "/v1/translate",
                                                json{{"text", two + "\n" + fifty + "\n" + no_end}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["sentences"].size(), 3u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& s = j["sentences"][i];
    EXPECT_EQ(s["words"].get<std::vector<std::string>>(), want[i].words) << i;
    EXPECT_EQ(s["delays"].get<std::vector<int>>(), want[i].delays) << i;
    // Delays count the line's words: the last reaches the line's end.
    ASSERT_FALSE(want[i].delays.empty());
    EXPECT_EQ(want[i].delays.back(), static_cast<int>(tokenizer::split_words(lines[i]).size())) << i;
  }
  EXPECT_TRUE(sessions_drain());
}

TEST_F(ServeTest, HttpErrorsAreStructured) {
  ServerOptions o;
  o.max_body_bytes = 1000;
  start(o);
  auto post = [&](const std::string& body) {
    return gpstream::testing::http_request(port_, http::verb::post, "/v1/translate", body);
  };
  HttpReply bad = post("{\"text\": ");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(bad.body)["code"], "bad_request");
  EXPECT_EQ(post(R"({"text": "a", "speed": 2})").status, 400);
  EXPECT_EQ(post(R"({"text": 3})").status, 400);
  EXPECT_EQ(post(R"({"text": "a", "k": 0})").status, 400);
  EXPECT_EQ(post(R"({"text": "a\nb", "reference": "x"})").status, 400);
  EXPECT_EQ(post(R"({"text": "a", "target_lang": "xx"})").status, 400);
  EXPECT_EQ(post(json{{"text", std::string(2000, 'a')}}.dump()).status, 413);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::get, "/v1/translate").status, 405);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::get, "/nope").status, 404);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::get, "/../CMakeLists.txt").status, 404);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::delete_, "/health").status, 405);
  EXPECT_TRUE(sessions_drain());
}

// SimulEval's remote evaluator (evaluator/remote.py) and TextToTextInstance, as a test client:
// POST /reset; then PUT /input with the next word (finished on the last; an EmptySegment(finished)
// after the source) and GET /output, until a segment says finished; each word of a received
// content gets delay = words sent so far.
eval::InstanceRecord simuleval_remote(int port, const std::string& source) {
  const auto words = tokenizer::split_words(source);
  EXPECT_EQ(gpstream::testing::http_request(port, http::verb::post, "/reset").status, 200);
  eval::InstanceRecord rec;
  std::vector<std::string> prediction;
  size_t step = 0;
  bool finished = false;
  for (int guard = 0; !finished && guard < 10000; ++guard) {
    json seg;
    if (step >= words.size()) {
      seg = {{"index", 0},
             {"content", json::array()},
             {"finished", true},
             {"is_empty", true},
             {"data_type", nullptr}};
    } else {
      seg = {{"index", step},     {"content", words[step]}, {"finished", step + 1 == words.size()},
             {"is_empty", false}, {"data_type", "text"},    {"tgt_lang", nullptr}};
      ++step;
    }
    EXPECT_EQ(gpstream::testing::http_request(port, http::verb::put, "/input", seg.dump()).status, 200);
    HttpReply out = gpstream::testing::http_request(port, http::verb::get, "/output");
    EXPECT_EQ(out.status, 200);
    json o = json::parse(out.body);
    if (o["is_empty"].get<bool>()) {
      finished = o["finished"];
      continue;
    }
    finished = o["finished"];
    std::string content = o["content"];
    for (const auto& w : tokenizer::split_words(content)) {
      prediction.push_back(w);
      rec.delays.push_back(static_cast<double>(step));
    }
  }
  EXPECT_TRUE(finished);
  for (size_t i = 0; i < prediction.size(); ++i) rec.prediction += (i ? " " : "") + prediction[i];
  return rec;
}

TEST_F(ServeTest, SimulEvalRemoteProtocolMatchesGpstreamEval) {
  start();
  for (const auto& s : kSentences) {
    eval::InstanceRecord got = simuleval_remote(port_, s);
    eval::SimultaneousOptions simuleval_protocol;
    simuleval_protocol.read_whole_line = false;  // the remote agent's instance ends at the model's end marker
    auto want =
        eval::evaluate_sentence(*model_->model, *model_->codec, defaults(), {s, ""}, simuleval_protocol);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(got.prediction, want->prediction) << s;
    EXPECT_EQ(got.delays, want->delays) << s;
  }
  // GET / : SimulEval's agent info for programs, the demo page for browsers.
  HttpReply info = gpstream::testing::http_request(port_, http::verb::get, "/", "", "*/*");
  ASSERT_EQ(info.status, 200);
  EXPECT_NE(json::parse(info.body)["info"].get<std::string>().find(cat("k=", std::to_string(model_->meta.k))),
            std::string::npos);
  HttpReply page =
      gpstream::testing::http_request(port_, http::verb::get, "/", "", "text/html,application/xhtml+xml");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::put, "/input", "{bad").status, 400);
  EXPECT_EQ(gpstream::testing::http_request(port_, http::verb::put, "/input",
                                            R"({"data_type": "speech", "content": [0.1]})")
                .status,
            400);
  EXPECT_TRUE(sessions_drain());
}

// Opens a stream and sends `bad`; returns (error code in the event, close code).
std::pair<std::string, int> bad_message(int port, const std::string& bad, bool binary = false,
                                        bool start = true) {
  WsClient c(port);
  if (start) {
    c.send(R"({"type": "start"})");
    c.read_json();
  }
  if (binary)
    c.send_binary(bad);
  else
    c.send(bad);
  std::string code;
  for (auto m = c.read_json(); m; m = c.read_json())
    if ((*m)["type"] == "error") code = (*m)["code"];
  return {code, c.close_code()};
}

TEST_F(ServeTest, BadClientsGetAnErrorAndACloseCode) {
  ServerOptions o;
  o.max_message_bytes = 4096;
  o.engine.max_sessions = 2;
  o.engine.max_backlog_words = 50;
  o.engine.max_pending_bytes = 1000;
  start(o);
  EXPECT_EQ(bad_message(port_, "{\"type\": \"sou"), std::make_pair(std::string("bad_message"), 1008));
  EXPECT_EQ(bad_message(port_, R"({"type": "source", "text": "a", "x": 1})"),
            std::make_pair(std::string("bad_message"), 1008));
  EXPECT_EQ(bad_message(port_, "\x01\x02", true), std::make_pair(std::string("binary_frame"), 1003));
  EXPECT_EQ(bad_message(port_, R"({"type": "source", "text": "a"})", false, false),
            std::make_pair(std::string("protocol"), 1008));
  EXPECT_EQ(bad_message(port_, R"({"type": "start"})"), std::make_pair(std::string("protocol"), 1008));
  EXPECT_EQ(bad_message(port_, R"({"type": "start", "k": -2})", false, false),
            std::make_pair(std::string("bad_message"), 1008));
  EXPECT_EQ(bad_message(port_, R"({"type": "start", "source_lang": "zz"})", false, false),
            std::make_pair(std::string("bad_options"), 1008));
  EXPECT_EQ(bad_message(port_, R"({"type": "start", "policy": {"name": "nope"}})", false, false),
            std::make_pair(std::string("bad_message"), 1008));
  EXPECT_EQ(
      bad_message(port_, R"({"type": "start", "paradigm": "interleaved", "policy": {"name": "confidence"}})",
                  false, false),
      std::make_pair(std::string("bad_options"), 1008));
  EXPECT_EQ(bad_message(port_, json{{"type", "source"}, {"text", std::string(5000, 'a')}}.dump()).second,
            1009);
  {
    std::string many;
    for (int i = 0; i < 60; ++i) many.append("w").append(std::to_string(i)).append(" ");
    EXPECT_EQ(bad_message(port_, json{{"type", "source"}, {"text", many}}.dump()),
              std::make_pair(std::string("backlog_full"), 1008));
  }
  EXPECT_EQ(bad_message(port_, json{{"type", "source"}, {"text", std::string(4000, 'x')}}.dump()).second,
            1008);  // word too long
  ASSERT_TRUE(sessions_drain());
  {  // max sessions: a third stream is refused with 1013 (try again later)
    WsClient a(port_), b(port_);
    a.send(R"({"type": "start"})");
    b.send(R"({"type": "start"})");
    EXPECT_EQ((*a.read_json())["type"], "ready");
    EXPECT_EQ((*b.read_json())["type"], "ready");
    EXPECT_EQ(bad_message(port_, R"({"type": "start"})", false, false),
              std::make_pair(std::string("busy"), 1013));
  }
  EXPECT_TRUE(sessions_drain());
  EXPECT_GT(server_->metrics().ws_protocol_errors, 8);
}

TEST_F(ServeTest, IdleStreamsAreClosed) {
  ServerOptions o;
  o.idle_timeout_ms = 300;
  start(o);
  WsClient c(port_);
  c.send(R"({"type": "start"})");
  c.send(R"({"type": "source", "text": "The cat "})");
  std::string code;
  for (auto m = c.read_json(); m; m = c.read_json())
    if ((*m)["type"] == "error") code = (*m)["code"];
  EXPECT_EQ(code, "idle_timeout");
  EXPECT_EQ(c.close_code(), 1008);
  EXPECT_TRUE(sessions_drain());
}

// Faults during a small load run: good streams run while other clients send malformed, truncated,
// binary and oversized messages or drop their connections at random moments. Every good stream's
// output must equal translate's, and every session must be freed.
TEST_F(ServeTest, FaultsLeaveOtherStreamsCorrectAndFreeEverySession) {
  // The oracles are computed before the server starts: translate_line() steps a Session on the same
  // model::Transformer the server's engine thread uses, and a Transformer's forward() is not reentrant
  // (one shared workspace). Computed after the good streams, they raced with the engine still stepping
  // the attackers' streams (closes are only queued when the attackers return), and an oracle came out
  // wrong (":") under CPU load.
  std::vector<std::vector<Output>> want(4);
  for (int i = 0; i < 4; ++i)
    for (int r = 0; r < 2; ++r)
      want[i].push_back(translate_line(kSentences[(i + r) % kSentences.size()], defaults()));
  ServerOptions o;
  o.max_message_bytes = 2048;
  o.engine.max_sessions = 32;
  start(o);
  std::atomic<bool> stop{false};
  std::atomic<int> faults{0};
  std::vector<std::thread> attackers;
  for (int t = 0; t < 3; ++t)
    attackers.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      const std::vector<std::string> junk = {"{\"type\": \"source\", \"text\": \"trunc",
                                             "not json",
                                             "[]",
                                             "{\"type\": 7}",
                                             "{\"type\": \"end\", \"x\": 0}",
                                             "{\"type\": \"start\", \"k\": \"five\"}",
                                             std::string(3000, '{'),
                                             "{\"type\": \"source\", \"text\": \"\xff\"}"};
      while (!stop) {
        try {
          WsClient c(port_, 5);
          const int mode = static_cast<int>(rng() % 4);
          if (mode != 0) {
            c.send(R"({"type": "start", "continuous": true})");
            c.send(R"({"type": "source", "text": "The weather is nice and the sun sh"})");
          }
          if (mode == 1) {
            c.abort();  // vanish mid-stream
          } else if (mode == 2) {
            c.send_binary("\x00\x01\x02");
            c.read_all();
          } else {
            c.send(junk[rng() % junk.size()]);
            if (rng() % 2)
              c.abort();
            else
              c.read_all();
          }
          ++faults;
        } catch (const std::exception&) {
          ++faults;
        }
      }
    });
  std::vector<std::vector<Output>> got(4);
  std::vector<std::thread> good;
  for (int i = 0; i < 4; ++i)
    good.emplace_back([&, i] {
      std::string text;
      for (int r = 0; r < 2; ++r) text += kSentences[(i + r) % kSentences.size()] + " ";
      got[i] = segments_of(stream_text(port_, R"({"type": "start"})", text, 2 + i));
    });
  for (auto& t : good) t.join();
  while (faults < 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto& t : attackers) t.join();
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(got[i].size(), 2u) << i;
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(got[i][r].words, want[i][r].words) << i << " " << r;
      EXPECT_EQ(got[i][r].delays, want[i][r].delays) << i << " " << r;
    }
  }
  EXPECT_TRUE(sessions_drain());
  EXPECT_EQ(server_->metrics().backlog_words, 0);
}

TEST_F(ServeTest, StopEndsOpenStreams) {
  start();
  WsClient c(port_);
  c.send(R"({"type": "start"})");
  EXPECT_EQ((*c.read_json())["type"], "ready");
  c.send(R"({"type": "source", "text": "The cat sat "})");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server_->stop();
  EXPECT_EQ(server_->open_sessions(), 0);
  server_.reset();  // closes every socket: the client's read ends at once
  while (c.read_json()) {
  }
  EXPECT_TRUE(c.closed());
}

}  // namespace
}  // namespace gpstream::serve
