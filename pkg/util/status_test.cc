#include "pkg/util/status.h"

#include <gtest/gtest.h>

namespace ksched {
namespace {

TEST(StatusTest, OkAndError) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = NotFound("pods \"p\" not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: pods \"p\" not found");
  EXPECT_EQ(s.WithContext("binding").message(), "binding: pods \"p\" not found");
}

TEST(StatusOrTest, HoldsValueOrError) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 42);
  StatusOr<int> e = InvalidArgument("bad");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ksched
