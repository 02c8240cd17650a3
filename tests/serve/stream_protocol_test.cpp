// /v1/stream client messages: every field checked, errors name the field; server JSON helpers and the
// SimulEval segments they write.
#include "serve/stream_protocol.h"

#include <gtest/gtest.h>

#include <cmath>

#include "serve/simuleval_agent.h"

namespace gpstream::serve {
namespace {

std::string error_of(std::string_view text) {
  auto m = parse_client_message(text);
  return m.ok() ? "" : m.error().message();
}

TEST(StreamProtocol, StartWithEveryOption) {
  auto m = parse_client_message(
      R"({"type": "start", "k": 3, "paradigm": "interleaved", "phi": "S", "source_lang": "en", "target_lang": "de", "continuous": false, "end_after_source": true, "beam": 4})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  const auto& o = std::get<StartMessage>(*m).options;
  EXPECT_EQ(o.k, 3);
  EXPECT_EQ(o.paradigm, stream::Paradigm::Interleaved);
  ASSERT_TRUE(o.phi.has_value());
  EXPECT_TRUE(o.phi->source_length);
  EXPECT_EQ(o.source_lang, "en");
  EXPECT_EQ(o.target_lang, "de");
  EXPECT_EQ(o.continuous, false);
  EXPECT_EQ(o.end_after_source, true);
  EXPECT_EQ(o.beam, 4);
  EXPECT_FALSE(o.policy.has_value());
  auto conf = parse_client_message(
      R"({"type": "start", "policy": {"name": "confidence", "tau": 0.3, "min_lag": 2, "max_lag": 5}})");
  ASSERT_TRUE(conf.ok()) << conf.error().message();
  EXPECT_EQ(std::get<StartMessage>(*conf).options.policy,
            (stream::PolicySpec{stream::PolicyKind::Confidence, 0.3, 2, 5}));
  auto la = parse_client_message(
      R"({"type": "start", "policy": {"name": "local-agreement", "min_lag": 2, "max_lag": 6}})");
  ASSERT_TRUE(la.ok()) << la.error().message();
  EXPECT_EQ(std::get<StartMessage>(*la).options.policy,
            (stream::PolicySpec{stream::PolicyKind::LocalAgreement, 0.5, 2, 6}));
  auto la3 = parse_client_message(
      R"({"type": "start", "policy": {"name": "local-agreement", "agreement": 3, "min_lag": 2}})");
  ASSERT_TRUE(la3.ok()) << la3.error().message();
  EXPECT_EQ(std::get<StartMessage>(*la3).options.policy,
            (stream::PolicySpec{.kind = stream::PolicyKind::LocalAgreement, .min_lag = 2, .agreement = 3}));
  auto aligned = parse_client_message(
      R"({"type": "start", "policy": {"name": "alignatt", "frames": 2, "layers": [3, 0], "min_lag": 0}})");
  ASSERT_TRUE(aligned.ok()) << aligned.error().message();
  EXPECT_EQ(std::get<StartMessage>(*aligned).options.policy,
            (stream::PolicySpec{
                .kind = stream::PolicyKind::AlignAtt, .min_lag = 0, .frames = 2, .layers = {3, 0}}));
  auto bare = parse_client_message(R"({"type": "start", "phi": 0.5})");
  ASSERT_TRUE(bare.ok());
  const auto& b = std::get<StartMessage>(*bare).options;
  EXPECT_FALSE(b.k.has_value());
  EXPECT_FALSE(b.end_after_source.has_value());
  EXPECT_FALSE(b.beam.has_value());
  EXPECT_FLOAT_EQ(b.phi->value, 0.5f);
}

TEST(StreamProtocol, SourceAndEnd) {
  auto s = parse_client_message(R"({"type": "source", "text": "Hel"})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(std::get<SourceMessage>(*s).text, "Hel");
  auto e = parse_client_message(R"({"type":"end"})");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(std::holds_alternative<EndMessage>(*e));
}

TEST(StreamProtocol, ErrorsNameTheField) {
  EXPECT_EQ(error_of("{\"type\": \"start\"").rfind("message: invalid JSON: ", 0), 0u);
  // The message object is level 0; 32 levels may nest inside it, not 33.
  EXPECT_EQ(error_of(std::string(34, '[').append(34, ']')), "message: JSON nested more than 32 levels deep");
  EXPECT_EQ(error_of(std::string(33, '[').append(33, ']')), "message must be a JSON object, got an array");
  std::string deep_k = R"({"type": "start", "k": )";
  deep_k.append(33, '[').append(33, ']').append("}");
  EXPECT_EQ(error_of(deep_k), "message: JSON nested more than 32 levels deep");
  deep_k = R"({"type": "start", "k": )";
  deep_k.append(32, '[').append(32, ']').append("}");
  EXPECT_EQ(error_of(deep_k), "'k': expected an integer, got an array");
  EXPECT_EQ(error_of("[1, 2]"), "message must be a JSON object, got an array");
  EXPECT_EQ(error_of("{}"), "message has no 'type'");
  EXPECT_EQ(error_of(R"({"type": 3})"), "'type': expected a string, got a number");
  EXPECT_EQ(error_of(R"({"type": "pause"})"),
            "'type': unknown message type 'pause' (expected start, source or end)");
  EXPECT_EQ(error_of(R"({"type": "start", "kk": 3})"), "unknown field 'kk'");
  EXPECT_EQ(error_of(R"({"type": "start", "k": 0})"), "'k': must be between 1 and 1000000, got 0");
  EXPECT_EQ(error_of(R"({"type": "start", "k": 2.5})"), "'k': expected an integer, got a number");
  EXPECT_EQ(error_of(R"({"type": "start", "k": "3"})"), "'k': expected an integer, got a string");
  EXPECT_NE(error_of(R"({"type": "start", "paradigm": "wait"})").find("'paradigm': unknown 'wait'"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"type": "start", "phi": -1})"), "'phi': expected a number >= 0 or \"S\"");
  EXPECT_EQ(error_of(R"({"type": "start", "phi": "T"})"), "'phi': expected a number >= 0 or \"S\", got 'T'");
  EXPECT_EQ(error_of(R"({"type": "start", "source_lang": "e n"})"),
            "'source_lang': expected a language code such as \"en\"");
  EXPECT_EQ(error_of(R"({"type": "start", "continuous": 1})"),
            "'continuous': expected true or false, got a number");
  EXPECT_EQ(error_of(R"({"type": "start", "end_after_source": "on"})"),
            "'end_after_source': expected true or false, got a string");
  EXPECT_EQ(error_of(R"({"type": "start", "beam": 0})"), "'beam': must be between 1 and 1024, got 0");
  EXPECT_EQ(error_of(R"({"type": "start", "beam": true})"), "'beam': expected an integer, got a boolean");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": "confidence"})"),
            "'policy': expected an object, got a string");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "nope"}})"),
            "'policy.name': unknown policy 'nope' (known: wait-k, confidence, local-agreement, alignatt)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"tau": 0.5}})"),
            "'policy': no 'name' (wait-k, confidence, local-agreement, alignatt)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "local-agreement", "tau": 0.5}})"),
            "'policy.tau': the local-agreement policy has no tau (the confidence policy's)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "wait-k", "max_lag": 3}})"),
            "'policy': the wait-k policy has no min_lag or max_lag (its lag is 'k')");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "tau": 2}})"),
            "'policy.tau': must be between 0 and 1");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "tau": "high"}})"),
            "'policy.tau': expected a number, got a string");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "min_lag": -1}})"),
            "'policy.min_lag': must be between 0 and 1000000, got -1");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "max_lag": 1e300}})"),
            "'policy.max_lag': expected an integer, got a number");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "max_lag": 99999999999}})"),
            "'policy.max_lag': must be between 1 and 1000000, got 99999999999");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "min_lag": 4, "max_lag": 2}})"),
            "'policy': min_lag (4) is greater than max_lag (2)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "lag": 2}})"),
            "'policy': unknown field 'lag'");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "agreement": 3}})"),
            "'policy.agreement': the confidence policy has no agreement (the local-agreement policy's)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "local-agreement", "agreement": 1}})"),
            "'policy.agreement': must be between 2 and 16, got 1");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "confidence", "frames": 2}})"),
            "'policy': the confidence policy has no frames or layers (the alignatt policy's)");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "alignatt", "frames": 0}})"),
            "'policy.frames': must be between 1 and 1000000, got 0");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "alignatt", "layers": [1, 1]}})"),
            "'policy': alignatt policy: layer 1 given twice");
  EXPECT_EQ(error_of(R"({"type": "start", "policy": {"name": "alignatt", "layers": [2.5]}})")
                .rfind("'policy.layers': expected an array of layer numbers from 0", 0),
            0u);
  EXPECT_EQ(error_of(R"({"type": "source"})"), "source message has no 'text'");
  EXPECT_EQ(error_of(R"({"type": "source", "text": null})"), "'text': expected a string, got null");
  EXPECT_EQ(error_of(R"({"type": "source", "text": "a", "more": 1})"), "unknown field 'more'");
  EXPECT_EQ(error_of(R"({"type": "end", "now": true})"), "unknown field 'now'");
  // Bad UTF-8.
  EXPECT_EQ(error_of("{\"type\": \"source\", \"text\": \"\xC3\"}").rfind("message: invalid JSON: ", 0), 0u);
}

TEST(StreamProtocol, JsonHelpers) {
  EXPECT_EQ(reply_text({{"type", "x"}, {"a", 1}}), R"({"type":"x","a":1})");
  EXPECT_EQ(ms_value(12.5).dump(), "12.5");
  EXPECT_EQ(ms_value(3).dump(), "3.0");
  EXPECT_EQ(ms_value(0.0004).dump(), "0.0");
  EXPECT_EQ(ms_value(-0.0004).dump(), "0.0");
  EXPECT_EQ(ms_value(1.23456).dump(), "1.235");
  EXPECT_EQ(ms_value(1.0625).dump(), "1.062");  // an exact tie: half to even, as "%.3f"
  EXPECT_EQ(ms_value(0.0005).dump(), "0.001");  // just above the tie in binary
  EXPECT_EQ(ms_value(1.0005).dump(), "1.0");    // just below it
  EXPECT_EQ(ms_value(3723004.1239).dump(), "3723004.124");
  EXPECT_TRUE(ms_value(std::nan("")).is_null());
  EXPECT_TRUE(ms_value(-HUGE_VAL).is_null());
  EXPECT_EQ(error_event("busy", "full"), R"({"type":"error","code":"busy","message":"full"})");
}

// Quotes, backslashes, control characters and non-ASCII text in a reply come out escaped (UTF-8 kept
// as is), and the reply parses back to the same strings; invalid UTF-8 is replaced by U+FFFD.
TEST(StreamProtocol, RepliesEscapeTheirText) {
  const std::string message = "say \"hi\" \\ back\x01\x1f\n\tcaf\u00e9 \u2014 \U0001F600";
  const std::string event = error_event("bad_message", message);
  EXPECT_EQ(
      event,
      R"({"type":"error","code":"bad_message","message":"say \"hi\" \\ back\u0001\u001f\n\tcafé — 😀"})");
  const auto parsed = nlohmann::json::parse(event);
  EXPECT_EQ(parsed["message"], message);
  EXPECT_EQ(parsed["code"], "bad_message");
  EXPECT_EQ(error_event("bad_message", "a\xff\xc3!"),
            "{\"type\":\"error\",\"code\":\"bad_message\",\"message\":\"a\uFFFD\uFFFD!\"}");
}

TEST(SimulEvalSegments, WrittenWithSimulEvalsFieldsAndEscaped) {
  EXPECT_EQ(
      simuleval_text_segment("Le chat", false),
      R"({"index":0,"content":"Le chat","finished":false,"is_empty":false,"data_type":"text","tgt_lang":null})");
  EXPECT_EQ(simuleval_empty_segment(true),
            R"({"index":0,"content":[],"finished":true,"is_empty":true,"data_type":null,"tgt_lang":null})");
  const std::string content = "\"Où\" \\n\x02 l\u2019été";
  const std::string segment = simuleval_text_segment(content, true);
  EXPECT_EQ(
      segment,
      R"({"index":0,"content":"\"Où\" \\n\u0002 l’été","finished":true,"is_empty":false,"data_type":"text","tgt_lang":null})");
  // What SimulEval's client reads back, and what this agent reads from it.
  EXPECT_EQ(nlohmann::json::parse(segment)["content"], content);
  auto read_back = parse_simuleval_segment(segment);
  ASSERT_TRUE(read_back.ok()) << read_back.error().message();
  EXPECT_EQ(read_back->content, content);
  EXPECT_TRUE(read_back->finished);
}

TEST(StreamProtocol, AudioStartFields) {
  auto m =
      parse_client_message(R"({"type": "start", "audio_format": "s16le", "sample_rate": 44100, "k": 2})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  const auto& start = std::get<StartMessage>(*m);
  ASSERT_TRUE(start.audio.format && start.audio.sample_rate && start.options.k);
  EXPECT_TRUE(*start.audio.format == PcmFormat::S16LE);
  EXPECT_EQ(*start.audio.sample_rate, 44100u);
  EXPECT_EQ(*start.options.k, 2);
  auto plain = parse_client_message(R"({"type": "start"})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(std::get<StartMessage>(*plain).audio.any());
  auto error_of = [](std::string_view text) {
    auto r = parse_client_message(text);
    return r.ok() ? std::string("(accepted)") : r.error().message();
  };
  EXPECT_EQ(error_of(R"({"type": "start", "audio_format": "mp3"})"),
            "'audio_format': expected \"f32le\" or \"s16le\", got 'mp3'");
  EXPECT_EQ(error_of(R"({"type": "start", "audio_format": 16})"),
            "'audio_format': expected \"f32le\" or \"s16le\", got a number");
  EXPECT_EQ(error_of(R"({"type": "start", "sample_rate": 7999})"),
            "'sample_rate': must be between 8000 and 192000 Hz, got 7999");
  EXPECT_EQ(error_of(R"({"type": "start", "sample_rate": 16000.5})"),
            "'sample_rate': expected an integer, got a number");
  EXPECT_EQ(error_of(R"({"type": "source", "text": "a", "sample_rate": 16000})"),
            "unknown field 'sample_rate'");
}

TEST(StreamProtocol, DecodesPcmFrames) {
  // s16le: bytes by hand. 0x8000 = -32768 -> -1; 0x7fff = 32767 -> 32767/32768; 0x0001 -> 1/32768.
  const unsigned char s16[] = {0x00, 0x80, 0xff, 0x7f, 0x01, 0x00};
  auto a = decode_pcm(std::as_bytes(std::span(s16)), PcmFormat::S16LE);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<float>{-1.0f, 32767.0f / 32768.0f, 1.0f / 32768.0f}));
  // f32le: 0.5 = 0x3f000000, -2 = 0xc0000000.
  const unsigned char f32[] = {0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0xc0};
  auto b = decode_pcm(std::as_bytes(std::span(f32)), PcmFormat::F32LE);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<float>{0.5f, -2.0f}));
  EXPECT_TRUE(decode_pcm({}, PcmFormat::F32LE).ok());
  auto odd = decode_pcm(std::as_bytes(std::span(s16, 5)), PcmFormat::S16LE);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message(),
            "a binary frame of 5 bytes is not a whole number of s16le samples (2 bytes each)");
  EXPECT_FALSE(decode_pcm(std::as_bytes(std::span(f32, 6)), PcmFormat::F32LE).ok());
  const unsigned char inf[] = {0x00, 0x00, 0x80, 0x7f};  // +inf
  auto bad = decode_pcm(std::as_bytes(std::span(inf)), PcmFormat::F32LE);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "sample 0 of a binary frame is not a finite number");
}

}  // namespace
}  // namespace gpstream::serve
