// gpstream.json: end_after_source is read, written back only when set, refused when not a boolean, and
// reaches the session options a model gives its commands.
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

}  // namespace
}  // namespace gpstream::stream
