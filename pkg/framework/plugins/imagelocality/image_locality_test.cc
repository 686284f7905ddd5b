#include "pkg/framework/plugins/imagelocality/image_locality.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/noderesources/test_util.h"

namespace ksched::framework::plugins::imagelocality {
namespace {

using noderesources::fixtures::FakeHandle;

api::ContainerImage Image(std::vector<std::string> names, int64_t size_mb) {
  return api::ContainerImage{std::move(names), size_mb * kMB};
}

api::NodePtr ImageNode(std::string name, std::vector<api::ContainerImage> images) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = std::move(name);
  n->status.images = std::move(images);
  return n;
}

api::PodPtr ImagePod(std::vector<std::string> images, std::vector<std::string> init_images = {}) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = "p";
  for (auto& i : images) p->spec.containers.push_back(api::Container{.image = std::move(i)});
  for (auto& i : init_images) p->spec.init_containers.push_back(api::Container{.image = std::move(i)});
  return p;
}

// Upstream TestImageLocalityPriority's nodes.
std::vector<api::ContainerImage> Node403002000() {
  return {Image({"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40),
          Image({"gcr.io/300:latest", "gcr.io/300:v1"}, 300), Image({"gcr.io/2000:latest"}, 2000)};
}
std::vector<api::ContainerImage> Node25010() {
  return {Image({"gcr.io/250:latest"}, 250), Image({"gcr.io/10:latest", "gcr.io/10:v1"}, 10)};
}
std::vector<api::ContainerImage> Node60040900() {
  return {Image({"gcr.io/600:latest"}, 600), Image({"gcr.io/40:latest"}, 40), Image({"gcr.io/900:latest"}, 900)};
}
std::vector<api::ContainerImage> Node300600900() {
  return {Image({"gcr.io/300:latest"}, 300), Image({"gcr.io/600:latest"}, 600), Image({"gcr.io/900:latest"}, 900)};
}
std::vector<api::ContainerImage> Node400030() {
  return {Image({"gcr.io/4000:latest"}, 4000), Image({"gcr.io/30:latest"}, 30)};
}
std::vector<api::ContainerImage> Node203040() {
  return {Image({"gcr.io/20:latest"}, 20), Image({"gcr.io/30:latest"}, 30), Image({"gcr.io/40:latest"}, 40)};
}

TEST(ImageLocalityTest, Scores) {
  struct Case {
    std::string name;
    api::PodPtr pod;
    std::vector<api::NodePtr> nodes;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      // machine1: 40M/2 < 23M -> 0; machine2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5.
      {"two images spread on two nodes, prefer the larger image one", ImagePod({"gcr.io/40", "gcr.io/250"}),
       {ImageNode("machine1", Node403002000()), ImageNode("machine2", Node25010())}, {0, 5}},
      // machine1: 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7.
      {"two images on one node, prefer this node", ImagePod({"gcr.io/40", "gcr.io/300"}),
       {ImageNode("machine1", Node403002000()), ImageNode("machine2", Node25010())}, {7, 0}},
      {"if exceed limit, use limit", ImagePod({"gcr.io/10", "gcr.io/4000"}),
       {ImageNode("machine1", Node400030()), ImageNode("machine2", Node25010())}, {100, 0}},
      // machine1: 100 * (4000M/3 - 23M) / (2000M - 23M) = 66.
      {"if exceed limit, use limit (with node which has no images present)", ImagePod({"gcr.io/10", "gcr.io/4000"}),
       {ImageNode("machine1", Node400030()), ImageNode("machine2", Node25010()), ImageNode("machine3", {})},
       {66, 0, 0}},
      // machine1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (3000M - 23M) = 32; machine2 adds 300M/3: 36.
      {"pod with multiple large images, machine2 is preferred", ImagePod({"gcr.io/300", "gcr.io/600", "gcr.io/900"}),
       {ImageNode("machine1", Node60040900()), ImageNode("machine2", Node300600900()), ImageNode("machine3", {})},
       {32, 36, 0}},
      // machine1: 100 * (30M + 40M/2 - 23M) / (2000M - 23M) = 1.
      {"pod with multiple small images", ImagePod({"gcr.io/30", "gcr.io/40"}),
       {ImageNode("machine1", Node203040()), ImageNode("machine2", Node400030())}, {1, 0}},
      // Init containers count too (current upstream): 100 * (4000M/2 + 30M/2 - 23M) / (3000M - 23M) = 66.
      {"init container images count", ImagePod({"gcr.io/10", "gcr.io/30"}, {"gcr.io/4000"}),
       {ImageNode("machine1", Node400030()), ImageNode("machine2", Node25010())}, {66, 0}},
      {"pod without containers", ImagePod({}), {ImageNode("machine1", Node400030())}, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHandle handle(cache::Snapshot::FromObjects(c.nodes, {}));
    auto plugin = ImageLocality::New(std::monostate{}, handle);
    ASSERT_TRUE(plugin.ok());
    auto& score_plugin = dynamic_cast<ScorePlugin&>(**plugin);
    CycleState state;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      int64_t score = -1;
      ASSERT_TRUE(score_plugin.Score(state, *c.pod, *handle.Snapshot().Get(c.nodes[i]->Name()), score).IsSuccess());
      EXPECT_EQ(score, c.want[i]) << c.nodes[i]->Name();
    }
  }
}

TEST(ImageLocalityTest, NormalizedImageName) {
  const std::pair<std::string, std::string> cases[] = {
      {"root", "root:latest"},
      {"gcr.io:5000/root", "gcr.io:5000/root:latest"},
      {"root:tag", "root:tag"},
      {"root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2",
       "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(NormalizedImageName(in), want) << in;
}

TEST(ImageLocalityTest, RejectsArgs) {
  FakeHandle handle;
  EXPECT_FALSE(ImageLocality::New(config::NodeResourcesFitArgs{}, handle).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins::imagelocality
