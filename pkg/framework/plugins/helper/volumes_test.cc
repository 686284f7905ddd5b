#include "pkg/framework/plugins/helper/volumes.h"

#include <gtest/gtest.h>

namespace ksched::framework::plugins::helper {
namespace {

using Zones = std::set<std::string, std::less<>>;

TEST(VolumesHelperTest, LabelZonesToSet) {
  struct Case {
    std::string value;
    bool ok;
    Zones want;
  };
  const Case cases[] = {
      {"us-west1-a", true, {"us-west1-a"}},
      {"us-west1-c__us-west1-a", true, {"us-west1-a", "us-west1-c"}},
      {" us-west1-a __us-west1-b", true, {"us-west1-a", "us-west1-b"}},
      {"us-west1-a__us-west1-a", true, {"us-west1-a"}},
      {"", false, {}},
      {"us-west1-a__", false, {}},
      {"__us-west1-a", false, {}},
      {"a__ __b", false, {}},
  };
  for (const Case& c : cases) {
    auto got = LabelZonesToSet(c.value);
    ASSERT_EQ(got.ok(), c.ok) << c.value;
    if (c.ok) {
      EXPECT_EQ(*got, c.want) << c.value;
    }
  }
}

TEST(VolumesHelperTest, SplitZoneLabelKeepsEveryPiece) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitZoneLabel("us-west1-a"), V{"us-west1-a"});
  EXPECT_EQ(SplitZoneLabel("a__b__c"), (V{"a", "b", "c"}));
  EXPECT_EQ(SplitZoneLabel(""), V{""});
  EXPECT_EQ(SplitZoneLabel("a____b"), (V{"a", "", "b"}));
  EXPECT_EQ(SplitZoneLabel("a__"), (V{"a", ""}));
  EXPECT_EQ(SplitZoneLabel("a_b"), V{"a_b"});
}

TEST(VolumesHelperTest, NotFoundMessagesAreTheListers) {
  EXPECT_EQ(ClaimNotFound("c"), "persistentvolumeclaim \"c\" not found");
  EXPECT_EQ(VolumeNotFound("v"), "persistentvolume \"v\" not found");
  EXPECT_EQ(StorageClassNotFound("s"), "storageclass.storage.k8s.io \"s\" not found");
}

}  // namespace
}  // namespace ksched::framework::plugins::helper
