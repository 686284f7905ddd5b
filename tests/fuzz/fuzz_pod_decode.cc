// libFuzzer target: the Pod decoders (object, PodList, watch event) on arbitrary bytes,
// then what the scheduler does with a decoded pod: its affinity terms and node selectors
// are parsed and matched, and it is re-encoded.
//
// Invariants beyond "no crash": decoding in place (padded buffer) and from a copy give
// the same result; EncodePod's output decodes to an equal pod (json.h); a watch event
// that adds, modifies or deletes carries an object whose resourceVersion it reports.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/api/json.h"
#include "pkg/api/pod_affinity.h"
#include "pkg/api/selector.h"
#include "tests/fuzz/fuzz_decode.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using api::Node;
using api::Pod;

// A node the pod's own selectors can match: its labels, its nodeName, and one taint per
// toleration, so matchers and toleration checks run on fuzzer-chosen strings.
Node NodeFor(const Pod& pod) {
  Node node;
  node.metadata.name = pod.spec.node_name;
  node.metadata.labels = pod.metadata.labels;
  for (const auto& t : pod.spec.tolerations) node.spec.taints.push_back({t.key, t.value, t.effect});
  return node;
}

void Exercise(const Pod& pod) {
  (void)pod.Key();
  (void)pod.FindCondition("PodScheduled");
  const Node node = NodeFor(pod);
  (void)api::RequiredNodeAffinity(pod).Matches(node);
  if (pod.spec.affinity.has_value() && pod.spec.affinity->node_affinity.has_value()) {
    const auto& na = *pod.spec.affinity->node_affinity;
    if (na.required) (void)api::NodeSelectorMatcher::Parse(*na.required).Matches(node);
    if (auto preferred = api::PreferredTermsMatcher::Parse(na.preferred); preferred.ok()) {
      (void)preferred->Score(node);
    }
  }
  if (auto terms = api::ParsePodAffinityTerms(pod)) {
    for (const auto& t : terms->required_affinity) (void)t.Matches(pod, &pod.metadata.labels);
    for (const auto& t : terms->preferred_anti_affinity) (void)t.term.Matches(pod, nullptr);
  }
  for (const auto& c : pod.spec.topology_spread_constraints) {
    if (c.label_selector) {
      if (auto m = api::LabelSelectorMatcher::Parse(*c.label_selector); m.ok()) (void)m->Matches(pod.metadata.labels);
    }
  }
  (void)api::FindUntoleratedTaint(node.spec.taints, pod.spec.tolerations, api::DoNotScheduleTaintsFilter);
}

struct PodCodec {
  static auto One(api::JsonParser& p, api::JsonText t) { return api::DecodePod(p, t); }
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePodList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePodWatchEvent(p, t); }
  static std::string Encode(const api::Pod& o) { return api::EncodePod(o); }
};

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  // One parser for the whole run, as an informer reuses one per stream: state left over
  // from a failed decode must not affect the next.
  static api::JsonParser parser;
  const std::string_view input = fuzz::AsView(data, size);
  fuzz::CheckObjectDecoders<fuzz::PodCodec>(parser, input, [](const api::Pod& o) { fuzz::Exercise(o); });
  return 0;
}
