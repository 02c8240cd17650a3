// gpstream.json: end_after_source and beam are read, written back only when set, refused when malformed,
// and reach the session options a model gives its commands.
#include "stream/model_meta.h"

#include <gtest/gtest.h>

namespace gpstream::stream {
namespace {

TEST(ModelMeta, EndAfterSourceRoundTrips) {
  auto off = ModelMeta::parse(R"({"k": 3})", "t");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->end_after_source);
  EXPECT_EQ(off->to_json().find("end_after_source"), std::string::npos);
  auto on = ModelMeta::parse(R"({"k": 7, "end_after_source": true})", "t");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->end_after_source);
  auto again = ModelMeta::parse(on->to_json(), "t2");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->end_after_source);
  EXPECT_EQ(again->k, 7);
  auto bad = ModelMeta::parse(R"({"end_after_source": 1})", "t.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("t.json: field 'end_after_source' must be true or false"), std::string::npos);
}

TEST(ModelMeta, BeamRoundTrips) {
  auto plain = ModelMeta::parse(R"({"k": 7})", "t");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->beam, 1);
  EXPECT_EQ(plain->to_json().find("beam"), std::string::npos);
  auto four = ModelMeta::parse(R"({"k": 7, "beam": 4})", "t");
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->beam, 4);
  auto again = ModelMeta::parse(four->to_json(), "t");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->beam, 4);
  for (const char* bad : {R"({"beam": 0})", R"({"beam": "4"})", R"({"beam": 1.5})"}) {
    auto r = ModelMeta::parse(bad, "t.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("field 'beam' must be a positive integer"), std::string::npos);
  }
}

// A `trained` record nested 300,000 levels deep (600 KB) overflowed the stack where it was dumped back to text;
// documents deeper than kMaxModelMetaJsonDepth are refused while parsing, naming the file. The shipped
// models' records nest 3 levels; a record at the limit still loads.
TEST(ModelMeta, DeeplyNestedDocumentsAreRefusedWithoutCrashing) {
  auto nested = [](int levels) {
    return R"({"k": 7, "trained": )" + std::string(static_cast<size_t>(levels), '[') +
           std::string(static_cast<size_t>(levels), ']') + "}";
  };
  auto deep = ModelMeta::parse(nested(300000), "gpstream.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message().find("gpstream.json: JSON nested more than 64 levels deep"), std::string::npos)
      << deep.error().message();
  // The top-level object is level 0, so `trained` may hold kMaxModelMetaJsonDepth levels of arrays.
  auto at_limit = ModelMeta::parse(nested(kMaxModelMetaJsonDepth), "gpstream.json");
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().message();
  EXPECT_EQ(at_limit->k, 7);
  EXPECT_FALSE(ModelMeta::parse(nested(kMaxModelMetaJsonDepth + 1), "gpstream.json").ok());
}

}  // namespace
}  // namespace gpstream::stream
