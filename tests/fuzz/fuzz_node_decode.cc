// libFuzzer target: the Node decoders (object, NodeList, watch event) on arbitrary bytes,
// then the node through the matchers the Filter plugins run and a re-encode.
//
// Invariants beyond "no crash": in-place and copied decodes agree; EncodeNode's output
// decodes to an equal node (json.h); a nodeSelector equal to the node's labels matches
// it; watch events that add, modify or delete carry their object.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/selector.h"
#include "tests/fuzz/fuzz_decode.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

void Exercise(const api::Node& node) {
  (void)api::FindResource(node.status.allocatable, "cpu");
  (void)api::FindResource(node.status.capacity, "memory");
  api::Pod pod;
  pod.spec.node_selector = node.metadata.labels;
  Check(api::RequiredNodeAffinity(pod).Matches(node), "a nodeSelector equal to the node's labels matches it");
  // Tolerating each taint by its own key, value and effect: nothing is left untolerated.
  std::vector<api::Toleration> tolerations;
  for (const auto& t : node.spec.taints) tolerations.push_back({.key = t.key, .value = t.value, .effect = t.effect});
  Check(api::FindUntoleratedTaint(node.spec.taints, tolerations, api::DoNotScheduleTaintsFilter) == nullptr,
        "a toleration equal to each taint tolerates them all");
}

struct NodeCodec {
  static auto One(api::JsonParser& p, api::JsonText t) { return api::DecodeNode(p, t); }
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeNodeList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeNodeWatchEvent(p, t); }
  static std::string Encode(const api::Node& o) { return api::EncodeNode(o); }
};

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  static api::JsonParser parser;  // reused across inputs, as an informer does
  const std::string_view input = fuzz::AsView(data, size);
  fuzz::CheckObjectDecoders<fuzz::NodeCodec>(parser, input, [](const api::Node& o) { fuzz::Exercise(o); });
  return 0;
}
