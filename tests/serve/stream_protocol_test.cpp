// /v1/stream client messages: every field checked, errors name the field; server JSON helpers.
#include "serve/stream_protocol.h"

#include <gtest/gtest.h>

namespace gpstream::serve {
namespace {

std::string error_of(std::string_view text) {
  auto m = parse_client_message(text);
  return m.ok() ? "" : m.error().message();
}

TEST(StreamProtocol, StartWithEveryOption) {
  auto m = parse_client_message(
      R"({"type": "start", "k": 3, "paradigm": "interleaved", "phi": "S", "source_lang": "en", "target_lang": "de", "continuous": false})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  const auto& o = std::get<StartMessage>(*m).options;
  EXPECT_EQ(o.k, 3);
  EXPECT_EQ(o.paradigm, stream::Paradigm::Interleaved);
  ASSERT_TRUE(o.phi.has_value());
  EXPECT_TRUE(o.phi->source_length);
  EXPECT_EQ(o.source_lang, "en");
  EXPECT_EQ(o.target_lang, "de");
  EXPECT_EQ(o.continuous, false);
  auto bare = parse_client_message(R"({"type": "start", "phi": 0.5})");
  ASSERT_TRUE(bare.ok());
  const auto& b = std::get<StartMessage>(*bare).options;
  EXPECT_FALSE(b.k.has_value());
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
  EXPECT_EQ(error_of("{\"type\": \"start\""), "message is not valid JSON");
  EXPECT_EQ(error_of("[1, 2]"), "message must be a JSON object, got an array");
  EXPECT_EQ(error_of("{}"), "message has no 'type'");
  EXPECT_EQ(error_of(R"({"type": 3})"), "'type': expected a string, got a number");
  EXPECT_EQ(error_of(R"({"type": "pause"})"), "'type': unknown message type 'pause' (expected start, source or end)");
  EXPECT_EQ(error_of(R"({"type": "start", "kk": 3})"), "unknown field 'kk'");
  EXPECT_EQ(error_of(R"({"type": "start", "k": 0})"), "'k': must be between 1 and 1000000, got 0");
  EXPECT_EQ(error_of(R"({"type": "start", "k": 2.5})"), "'k': expected an integer, got a number");
  EXPECT_EQ(error_of(R"({"type": "start", "k": "3"})"), "'k': expected an integer, got a string");
  EXPECT_NE(error_of(R"({"type": "start", "paradigm": "wait"})").find("'paradigm': unknown 'wait'"), std::string::npos);
  EXPECT_EQ(error_of(R"({"type": "start", "phi": -1})"), "'phi': expected a number >= 0 or \"S\"");
  EXPECT_EQ(error_of(R"({"type": "start", "phi": "T"})"), "'phi': expected a number >= 0 or \"S\", got 'T'");
  EXPECT_EQ(error_of(R"({"type": "start", "source_lang": "e n"})"), "'source_lang': expected a language code such as \"en\"");
  EXPECT_EQ(error_of(R"({"type": "start", "continuous": 1})"), "'continuous': expected true or false, got a number");
  EXPECT_EQ(error_of(R"({"type": "source"})"), "source message has no 'text'");
  EXPECT_EQ(error_of(R"({"type": "source", "text": null})"), "'text': expected a string, got null");
  EXPECT_EQ(error_of(R"({"type": "source", "text": "a", "more": 1})"), "unknown field 'more'");
  EXPECT_EQ(error_of(R"({"type": "end", "now": true})"), "unknown field 'now'");
  EXPECT_EQ(error_of("{\"type\": \"source\", \"text\": \"\xC3\"}"), "message is not valid JSON");  // bad UTF-8
}

TEST(StreamProtocol, JsonHelpers) {
  EXPECT_EQ(json_string("a\"b\\c\n\x01é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
  EXPECT_EQ(json_ms(12.5), "12.5");
  EXPECT_EQ(json_ms(3), "3");
  EXPECT_EQ(json_ms(0.0004), "0");
  EXPECT_EQ(json_ms(1.23456), "1.235");
  EXPECT_EQ(error_event("busy", "full"), R"({"type": "error", "code": "busy", "message": "full"})");
}

}  // namespace
}  // namespace gpstream::serve
