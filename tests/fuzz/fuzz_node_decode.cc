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

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using ksched::fuzz::Check;
  static api::JsonParser parser;  // reused across inputs, as an informer does
  const std::string_view input = fuzz::AsView(data, size);
  std::string text(input);

  auto node = api::DecodeNode(parser, api::JsonText::Padded(text));
  auto copied = api::DecodeNode(parser, api::JsonText(input));  // no padding: decoded from a copy
  Check(node.ok() == copied.ok(), "in-place and copied decodes agree");
  if (node.ok()) {
    Check(**node == **copied, "in-place and copied decodes give equal nodes");
    fuzz::Exercise(**node);
    std::string encoded = api::EncodeNode(**node);
    auto again = api::DecodeNode(parser, api::JsonText::Padded(encoded));
    Check(again.ok(), "EncodeNode output decodes", again.ok() ? "" : again.status().message());
    Check(**again == **node, "EncodeNode round trip gives an equal node", encoded);
  }

  auto list = api::DecodeNodeList(parser, api::JsonText(text));
  if (list.ok()) {
    for (const auto& item : list->items) {
      Check(item != nullptr, "list items are not null");
      fuzz::Exercise(*item);
    }
  }

  auto event = api::DecodeNodeWatchEvent(parser, api::JsonText(text));
  if (event.ok()) {
    const auto type = event->type;
    if (type == api::WatchEventType::kAdded || type == api::WatchEventType::kModified ||
        type == api::WatchEventType::kDeleted) {
      Check(event->object != nullptr, "ADDED/MODIFIED/DELETED events carry an object");
    }
    if (event->object) {
      Check(event->resource_version == event->object->metadata.resource_version,
            "the event's resourceVersion is its object's");
      fuzz::Exercise(*event->object);
    }
  }
  return 0;
}
