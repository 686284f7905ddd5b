#include "pkg/framework/plugins/defaultbinder/default_binder.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/noderesources/test_util.h"

namespace ksched::framework::plugins::defaultbinder {
namespace {

using noderesources::fixtures::FakeHandle;

TEST(DefaultBinderTest, Bind) {
  struct Case {
    std::string name;
    ksched::Status api_result;
    Status want;
  };
  const std::vector<Case> cases = {
      {"successful", ksched::Status::OK(), Status::Success()},
      {"binding error", ksched::Status(StatusCode::kConflict, "pod p is already assigned to node \"n\""),
       Status::FromError(ksched::Status(StatusCode::kConflict, "pod p is already assigned to node \"n\""))},
  };
  for (const Case& c : cases) {
    FakeHandle handle;
    handle.bind_result = c.api_result;
    auto plugin = DefaultBinder::New(std::monostate{}, handle);
    ASSERT_TRUE(plugin.ok());
    auto& binder = dynamic_cast<BindPlugin&>(**plugin);
    EXPECT_EQ(binder.Name(), "DefaultBinder");
    api::Pod pod;
    pod.metadata.namespace_ = "ns";
    pod.metadata.name = "foo";
    pod.metadata.uid = "foo-uid";
    CycleState state;
    Status got = binder.Bind(state, pod, "foohost.kubernetes.mydomain.com");
    EXPECT_EQ(got, c.want) << c.name;
    EXPECT_EQ(got.code(), c.api_result.ok() ? Code::kSuccess : Code::kError) << c.name;
    ASSERT_EQ(handle.binds.size(), 1u);
    EXPECT_EQ(handle.binds[0].first, "ns/foo");
    EXPECT_EQ(handle.binds[0].second, "foohost.kubernetes.mydomain.com");
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::defaultbinder
