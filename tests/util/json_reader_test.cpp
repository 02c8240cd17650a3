// JsonReader / JsonValue (util/json_reader.h): typed fields with their file and key path in every error;
// integers that must be integral and in range (2^63 and 2^64 at the edges, fractions refused, never
// truncated); numbers in range; nested objects and lists with their paths; strict readers refuse keys never
// asked for, tolerant ones skip them. Every expected message below is written out by hand from the format
// "<file>: field '<path>' <what>".
#include "util/json_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace gpstream {
namespace {

using json = nlohmann::json;

JsonReader open_strict(const json& j, const std::string& file = "c.json") {
  auto r = JsonReader::open(j, file, "", UnknownKeys::Refuse);
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

void expect_message(const Status& s, const std::string& expected, ErrorCode code) {
  ASSERT_FALSE(s.ok()) << "expected: " << expected;
  EXPECT_EQ(s.error().message(), expected);
  EXPECT_EQ(s.error().code(), code) << s.error().message();
}

TEST(JsonReader, ReadsTypedFieldsAndKeepsDefaultsForAbsentOrNull) {
  const json j = json::parse(R"({"name": "x", "on": true, "n": 7, "big": 5000000000, "r": 0.25,
                                 "gone": null, "whole": 3.0})");
  JsonReader r = open_strict(j);
  std::string name = "default";
  bool on = false;
  int n = 0;
  int64_t big = 0;
  float rate = 0;
  int gone = 42;
  int missing = 9;
  uint32_t whole = 0;
  ASSERT_TRUE(r.optional("name", name).ok());
  ASSERT_TRUE(r.optional("on", on).ok());
  ASSERT_TRUE(r.optional("n", n, 1, 10).ok());
  ASSERT_TRUE(r.optional("big", big).ok());
  ASSERT_TRUE(r.optional("r", rate, 0.0, 1.0).ok());
  ASSERT_TRUE(r.optional("gone", gone).ok());
  ASSERT_TRUE(r.optional("missing", missing).ok());
  ASSERT_TRUE(r.optional("whole", whole, 1u, 3u).ok());  // 3.0 is an integer: accepted, exactly
  EXPECT_EQ(name, "x");
  EXPECT_TRUE(on);
  EXPECT_EQ(n, 7);
  EXPECT_EQ(big, 5000000000);
  EXPECT_EQ(rate, 0.25f);
  EXPECT_EQ(gone, 42);
  EXPECT_EQ(missing, 9);
  EXPECT_EQ(whole, 3u);
  EXPECT_TRUE(r.finish().ok());
}

TEST(JsonReader, RequiredFieldMissingOrNullNamesFileAndKey) {
  const json j = json::parse(R"({"a": null})");
  JsonReader r = open_strict(j, "dir/config.json");
  int a = 0;
  std::string b;
  expect_message(r.required("a", a), "dir/config.json: missing field 'a'", ErrorCode::Format);
  expect_message(r.required("b", b), "dir/config.json: missing field 'b'", ErrorCode::Format);
}

TEST(JsonReader, TypeErrorsNameTheExpectedAndTheGivenType) {
  const json j = json::parse(R"({"s": 1, "b": "yes", "i": "7", "f": [1], "o": 2})");
  JsonReader r = open_strict(j);
  std::string s;
  bool b = false;
  int i = 0;
  double f = 0;
  expect_message(r.optional("s", s), "c.json: field 's' must be a string, got number", ErrorCode::Format);
  expect_message(r.optional("b", b), "c.json: field 'b' must be true or false, got string",
                 ErrorCode::Format);
  expect_message(r.optional("i", i), "c.json: field 'i' must be an integer, got string", ErrorCode::Format);
  expect_message(r.optional("f", f, 0.0, 1.0), "c.json: field 'f' must be a number, got array",
                 ErrorCode::Format);
  auto o = r.optional_object("o");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message(), "c.json: field 'o' must be an object, got number");
}

TEST(JsonReader, IntegersMustBeIntegralNeverTruncated) {
  const json j = json::parse(R"({"half": 2.5, "tiny": 1e-300, "neg": -0.5})");
  JsonReader r = open_strict(j);
  int v = 11;
  expect_message(r.optional("half", v), "c.json: field 'half' must be an integer, got number",
                 ErrorCode::Format);
  expect_message(r.optional("tiny", v), "c.json: field 'tiny' must be an integer, got number",
                 ErrorCode::Format);
  expect_message(r.optional("neg", v), "c.json: field 'neg' must be an integer, got number",
                 ErrorCode::Format);
  EXPECT_EQ(v, 11);  // untouched on error
}

TEST(JsonReader, IntegerRangesAreCheckedBeforeNarrowing) {
  // 4294967297 = 2^32 + 1 would narrow to 1 as an int32; 2^31 = 2147483648 is one past int32's maximum.
  const json j = json::parse(R"({"wrap": 4294967297, "past": 2147483648, "low": 0, "high": 11, "neg": -1})");
  JsonReader r = open_strict(j);
  int v = 5;
  expect_message(r.optional("wrap", v),
                 "c.json: field 'wrap' must be an integer in [-2147483648, 2147483647], got "
                 "4294967297",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("past", v),
                 "c.json: field 'past' must be an integer in [-2147483648, 2147483647], got "
                 "2147483648",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("low", v, 1, 10), "c.json: field 'low' must be an integer in [1, 10], got 0",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("high", v, 1, 10), "c.json: field 'high' must be an integer in [1, 10], got 11",
                 ErrorCode::OutOfRange);
  uint64_t u = 0;
  expect_message(r.optional("neg", u),
                 "c.json: field 'neg' must be an integer in [0, 18446744073709551615], got -1",
                 ErrorCode::OutOfRange);
  EXPECT_EQ(v, 5);
}

TEST(JsonReader, Int64AndUint64EdgesDoNotOverflow) {
  // 9223372036854775807 = 2^63 - 1 fits int64; 9223372036854775808 = 2^63 does not (nlohmann keeps it as an
  // unsigned integer); 18446744073709551615 = 2^64 - 1 fits uint64; 18446744073709551616 = 2^64 is parsed as
  // a double; 1e19 is a double holding an integer above 2^63 and below 2^64. Doubles are shown in the shorter
  // of their exact decimal and scientific forms ("1e+19", but "18446744073709551616" for 2^64).
  const json j = json::parse(R"({"max": 9223372036854775807, "two63": 9223372036854775808,
                                 "umax": 18446744073709551615, "two64": 18446744073709551616, "e19": 1e19,
                                 "huge": 1e300, "min": -9223372036854775808})");
  JsonReader r = open_strict(j);
  int64_t s = 0;
  ASSERT_TRUE(r.optional("max", s).ok());
  EXPECT_EQ(s, INT64_MAX);
  ASSERT_TRUE(r.optional("min", s).ok());
  EXPECT_EQ(s, INT64_MIN);
  const std::string int64_range = "[-9223372036854775808, 9223372036854775807]";
  expect_message(r.optional("two63", s),
                 "c.json: field 'two63' must be an integer in " + int64_range + ", got 9223372036854775808",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("e19", s),
                 "c.json: field 'e19' must be an integer in " + int64_range + ", got 1e+19",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("huge", s),
                 "c.json: field 'huge' must be an integer in " + int64_range + ", got 1e+300",
                 ErrorCode::OutOfRange);
  uint64_t u = 0;
  ASSERT_TRUE(r.optional("umax", u).ok());
  EXPECT_EQ(u, UINT64_MAX);
  ASSERT_TRUE(r.optional("e19", u).ok());
  EXPECT_EQ(u, 10000000000000000000ull);
  expect_message(
      r.optional("two64", u),
      "c.json: field 'two64' must be an integer in [0, 18446744073709551615], got 18446744073709551616",
      ErrorCode::OutOfRange);
}

TEST(JsonReader, NumberRanges) {
  const json j = json::parse(R"({"lr": 11, "eps": -0.5, "ok": 1e-3, "float_max": 1e39})");
  JsonReader r = open_strict(j);
  double lr = 0;
  float eps = 0;
  expect_message(r.optional("lr", lr, 0.0, 10.0), "c.json: field 'lr' must be a number in [0, 10], got 11",
                 ErrorCode::OutOfRange);
  expect_message(r.optional("eps", eps, 0.0, 1.0), "c.json: field 'eps' must be a number in [0, 1], got -0.5",
                 ErrorCode::OutOfRange);
  ASSERT_TRUE(r.optional("ok", lr, 0.0, 1.0).ok());
  EXPECT_EQ(lr, 0.001);
  // 1e39 is above float's largest finite value (about 3.4e38): the caller's range refuses it before
  // narrowing.
  expect_message(r.optional("float_max", eps, 0.0, 1e30),
                 "c.json: field 'float_max' must be a number in [0, 1e+30], got 1e+39",
                 ErrorCode::OutOfRange);
}

TEST(JsonReader, StrictRefusesUnknownKeysTolerantSkipsThem) {
  const json j = json::parse(R"({"k": 1, "k_mx": 2})");
  {
    JsonReader r = open_strict(j, "models/m/gpstream.json");
    int k = 0;
    int k_max = 0;
    ASSERT_TRUE(r.optional("k", k).ok());
    ASSERT_TRUE(r.optional("k_max", k_max).ok());
    expect_message(r.finish(), "models/m/gpstream.json: unknown key 'k_mx' (known: k k_max)",
                   ErrorCode::Format);
  }
  {
    auto r = JsonReader::open(j, "config.json", "", UnknownKeys::Ignore);
    ASSERT_TRUE(r.ok());
    int k = 0;
    ASSERT_TRUE(r->optional("k", k).ok());
    EXPECT_EQ(k, 1);
    EXPECT_TRUE(r->finish().ok());
  }
  // A key asked for but absent is not "unknown"; a key present and null, once asked for, is consumed.
  const json with_null = json::parse(R"({"a": null})");
  JsonReader r = open_strict(with_null);
  EXPECT_FALSE(r.has("a"));
  EXPECT_TRUE(r.finish().ok());
}

TEST(JsonReader, NestedObjectsCarryTheirPathAndMode) {
  const json j = json::parse(R"({"rope_scaling": {"factor": "8", "extra": {"deep": 1.5}}, "unused": 0})");
  auto top = JsonReader::open(j, "m/config.json", "", UnknownKeys::Ignore);
  ASSERT_TRUE(top.ok());
  auto rs = top->required_object("rope_scaling");
  ASSERT_TRUE(rs.ok());
  EXPECT_EQ(rs->mode(), UnknownKeys::Ignore);
  float factor = 0;
  expect_message(rs->required("factor", factor, 0.0, 1e6),
                 "m/config.json: field 'rope_scaling.factor' must be a number, got string",
                 ErrorCode::Format);
  auto extra = rs->optional_object("extra");
  ASSERT_TRUE(extra.ok());
  ASSERT_TRUE(extra->has_value());
  int deep = 0;
  expect_message((*extra)->required("deep", deep),
                 "m/config.json: field 'rope_scaling.extra.deep' must be an integer, got number",
                 ErrorCode::Format);
  auto absent = top->optional_object("absent");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  auto missing = top->required_object("absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "m/config.json: missing field 'absent'");

  // In a strict reader a nested object's unknown key is named with its full path.
  const json t = json::parse(R"({"template": {"name": "x", "promt": "y"}})");
  JsonReader strict = open_strict(t, "g.json");
  auto tmpl = strict.required_object("template");
  ASSERT_TRUE(tmpl.ok());
  std::string name;
  ASSERT_TRUE(tmpl->optional("name", name).ok());
  expect_message(tmpl->finish(), "g.json: unknown key 'template.promt' (known: name)", ErrorCode::Format);
  EXPECT_TRUE(strict.finish().ok());
}

TEST(JsonReader, ListElementsCarryTheirIndex) {
  const json j = json::parse(R"({"eos_token_id": [1, 2, "three"], "long": [1, 2, 3, 4]})");
  JsonReader r = open_strict(j, "config.json");
  auto v = r.require("eos_token_id");
  ASSERT_TRUE(v.ok());
  auto items = v->elements(8);
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 3u);
  auto first = (*items)[0].integer<int>(0, 10);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 1);
  auto third = (*items)[2].integer<int>(0, 10);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().message(), "config.json: field 'eos_token_id[2]' must be an integer, got string");
  auto long_list = r.require("long");
  ASSERT_TRUE(long_list.ok());
  auto too_many = long_list->elements(3);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().message(), "config.json: field 'long' has 4 entries, more than 3");
  auto not_list = (*items)[0].elements(3);
  ASSERT_FALSE(not_list.ok());
  EXPECT_EQ(not_list.error().message(), "config.json: field 'eos_token_id[0]' must be a list, got number");
}

TEST(JsonReader, ParseJsonObjectNamesTheFile) {
  auto bad = parse_json_object("{\"a\": ", "t.json", 8);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message().rfind("t.json: invalid JSON", 0), 0u) << bad.error().message();
  auto list = parse_json_object("[1]", "t.json", 8);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message(), "t.json: not a JSON object (got array)");
  auto deep = parse_json_object(R"({"a": {"b": {"c": 1}}})", "t.json", 2);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message(), "t.json: JSON nested more than 2 levels deep");
  auto ok = parse_json_object(R"({"a": {"b": 1}})", "t.json", 2);
  EXPECT_TRUE(ok.ok());
}

}  // namespace
}  // namespace gpstream
