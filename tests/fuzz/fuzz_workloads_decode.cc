// libFuzzer target: the decoders of the lean objects (Namespace, Service,
// ReplicationController, ReplicaSet, StatefulSet, PodDisruptionBudget, and the storage
// objects PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver:
// object, list, watch event) on arbitrary bytes. Each input goes through all 33: they
// share the document and metadata code, and an input that steers one kind's decoder deep
// is usually a near miss for the others.
//
// Invariants beyond "no crash": in-place and copied decodes agree; watch events that
// add, modify or delete carry their object; decoded selectors parse or fail cleanly and
// a parsed one matches its own matchLabels (when it has no expressions).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/api/json.h"
#include "pkg/api/selector.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using namespace ksched::api;

void ExerciseSelector(const LabelSelector& selector) {
  auto m = LabelSelectorMatcher::Parse(selector);
  if (!m.ok()) return;
  (void)m->Matches(selector.match_labels);
  if (selector.match_expressions.empty()) {
    Check(m->Matches(selector.match_labels), "a matchLabels selector matches its own labels");
  }
}

void Exercise(const Namespace& ns) { (void)ns.Name(); }
void Exercise(const Service& s) {
  if (s.selector) (void)MatchesNodeSelectorMap(*s.selector, *s.selector);
}
void Exercise(const ReplicationController& rc) {
  Check(MatchesNodeSelectorMap(rc.selector, rc.selector), "a selector map matches itself");
}
void Exercise(const ReplicaSet& rs) {
  if (rs.selector) ExerciseSelector(*rs.selector);
}
void Exercise(const StatefulSet& ss) {
  if (ss.selector) ExerciseSelector(*ss.selector);
}
void Exercise(const PodDisruptionBudget& pdb) {
  if (pdb.selector) ExerciseSelector(*pdb.selector);
}
void Exercise(const PersistentVolumeClaim& c) {
  if (c.selector) ExerciseSelector(*c.selector);
  (void)c.StorageClass();
}
void Exercise(const PersistentVolume& pv) {
  if (!pv.node_affinity) return;
  for (const auto& term : *pv.node_affinity) {
    for (const auto& r : term.match_expressions) (void)r.key.size();
  }
}
void Exercise(const StorageClass& sc) { (void)sc.WaitForFirstConsumer(); }
void Exercise(const CSINode& n) {
  for (const auto& d : n.drivers) Check(n.FindDriver(d.name) != nullptr, "a CSINode finds its own drivers");
}
void Exercise(const CSIDriver& d) { (void)d.Name(); }

template <typename T, typename One, typename List, typename Event>
void DecodeAll(JsonParser& parser, std::string_view input, std::string& text, One one, List list, Event event) {
  auto obj = one(parser, JsonText(text));  // in place (the caller reserved padding)
  auto copied = one(parser, JsonText(input));
  Check(obj.ok() == copied.ok(), "in-place and copied decodes agree");
  if (obj.ok()) {
    Check(**obj == **copied, "in-place and copied decodes give equal objects");
    Exercise(**obj);
  }
  if (auto l = list(parser, JsonText(text)); l.ok()) {
    for (const auto& item : l->items) {
      Check(item != nullptr, "list items are not null");
      Exercise(*item);
    }
  }
  if (auto ev = event(parser, JsonText(text)); ev.ok()) {
    if (ev->type == WatchEventType::kAdded || ev->type == WatchEventType::kModified ||
        ev->type == WatchEventType::kDeleted) {
      Check(ev->object != nullptr, "ADDED/MODIFIED/DELETED events carry an object");
    }
    if (ev->object) {
      Check(ev->resource_version == ev->object->metadata.resource_version,
            "the event's resourceVersion is its object's");
      Exercise(*ev->object);
    }
  }
}

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched::api;
  using ksched::fuzz::DecodeAll;
  static JsonParser parser;  // reused across inputs, as an informer does
  const std::string_view input = ksched::fuzz::AsView(data, size);
  std::string text(input);
  (void)JsonText::Padded(text);  // reserves the padding; `text` is not modified below

  // Overload sets cannot be passed as template arguments: wrap each decoder.
#define KSCHED_DECODERS(T)                                                                    \
  DecodeAll<T>(                                                                               \
      parser, input, text, [](JsonParser& p, JsonText j) { return Decode##T(p, j); },         \
      [](JsonParser& p, JsonText j) { return Decode##T##List(p, j); },                       \
      [](JsonParser& p, JsonText j) { return Decode##T##WatchEvent(p, j); })
  KSCHED_DECODERS(Namespace);
  KSCHED_DECODERS(Service);
  KSCHED_DECODERS(ReplicationController);
  KSCHED_DECODERS(ReplicaSet);
  KSCHED_DECODERS(StatefulSet);
  KSCHED_DECODERS(PodDisruptionBudget);
  KSCHED_DECODERS(PersistentVolumeClaim);
  KSCHED_DECODERS(PersistentVolume);
  KSCHED_DECODERS(StorageClass);
  KSCHED_DECODERS(CSINode);
  KSCHED_DECODERS(CSIDriver);
#undef KSCHED_DECODERS
  return 0;
}
