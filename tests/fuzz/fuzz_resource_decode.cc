// libFuzzer target: the resource.k8s.io/v1 decoders (DeviceClass, ResourceSlice,
// ResourceClaim, ResourceClaimTemplate: object, list, watch event; all twelve on every
// input), then what the DynamicResources plugin does with a decoded object: class and
// claim selectors are compiled through a SelectorCache, and a slice's devices, with
// fuzzer-chosen attributes and capacities, are matched against fixed CEL selectors
// that read every attribute and capacity.
//
// Invariants beyond "no crash" (fuzz_decode.h): in-place and copied decodes agree;
// EncodeResourceClaim's output decodes to an equal claim; add/modify/delete events
// carry their object. Device matching may fail with a CEL runtime error (a missing
// attribute), InvalidArgument, never anything else.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/resource.h"
#include "pkg/cel/device_selector.h"
#include "tests/fuzz/fuzz_decode.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using namespace ksched::api;

cel::SelectorCache& Cache() {
  static cel::SelectorCache cache;
  return cache;
}

void CompileSelectors(const std::vector<api::DeviceSelector>& selectors) {
  for (const auto& s : selectors) (void)Cache().Get(s.cel_expression);
}

void CompileSelectors(const ResourceClaimSpec& spec) {
  for (const auto& r : spec.requests) {
    if (r.exactly) CompileSelectors(r.exactly->selectors);
    for (const auto& sub : r.first_available) CompileSelectors(sub.selectors);
  }
}

// Selectors that walk the device's whole attribute and capacity maps, in the driver's
// domain and in every domain, so the conversion of decoded values to CEL runs on them.
const std::vector<std::shared_ptr<const cel::DeviceSelector>>& DeviceSelectors() {
  static const auto selectors = [] {
    std::vector<std::shared_ptr<const cel::DeviceSelector>> v;
    for (const char* e : {
             R"(device.driver in device.attributes && device.attributes[device.driver].all(k, k != ""))",
             R"(device.attributes.exists(d, device.attributes[d].exists(k, string(device.attributes[d][k]) == "x")))",
             R"(device.capacity.all(d, device.capacity[d].all(k, device.capacity[d][k].sign() >= 0)))",
             R"(device.capacity.exists(d, device.capacity[d].exists(k,
                  device.capacity[d][k].isGreaterThan(quantity("1Gi")) || device.capacity[d][k].asApproximateFloat() < 0.5)))",
             R"(device.attributes.exists(d, device.attributes[d].exists(k,
                  isSemver(string(device.attributes[d][k])) || type(device.attributes[d][k]) == int)))",
             R"(device.allowMultipleAllocations || size(device.attributes) + size(device.capacity) > 1)",
         }) {
      auto s = cel::DeviceSelector::Compile(e);
      Check(s.ok(), "the fixed device selectors compile", s.ok() ? e : s.status().message());
      v.push_back(*s);
    }
    return v;
  }();
  return selectors;
}

void Exercise(const DeviceClass& c) { CompileSelectors(c.selectors); }
void Exercise(const ResourceClaim& c) { CompileSelectors(c.spec); }
void Exercise(const ResourceClaimTemplate& t) { CompileSelectors(t.spec); }
void Exercise(const ResourceSlice& slice) {
  for (const auto& device : slice.devices) {
    for (const auto& selector : DeviceSelectors()) {
      auto m = selector->Matches(slice.driver, device);
      if (!m.ok()) {
        Check(m.status().code() == StatusCode::kInvalidArgument, "matching a decoded device fails only in CEL",
              m.status().message());
      }
    }
  }
}

// Overload sets cannot be template arguments: one codec per kind.
#define KSCHED_RESOURCE_CODEC(T)                                                              \
  struct T##Codec {                                                                           \
    static auto One(JsonParser& p, JsonText t) { return Decode##T(p, t); }                    \
    static auto List(JsonParser& p, JsonText t) { return Decode##T##List(p, t); }             \
    static auto Event(JsonParser& p, JsonText t) { return Decode##T##WatchEvent(p, t); }      \
  };
KSCHED_RESOURCE_CODEC(DeviceClass)
KSCHED_RESOURCE_CODEC(ResourceSlice)
KSCHED_RESOURCE_CODEC(ResourceClaimTemplate)
#undef KSCHED_RESOURCE_CODEC

// The only resource kind ksched writes back whole (the claim's status update).
struct ResourceClaimCodec {
  static auto One(JsonParser& p, JsonText t) { return DecodeResourceClaim(p, t); }
  static auto List(JsonParser& p, JsonText t) { return DecodeResourceClaimList(p, t); }
  static auto Event(JsonParser& p, JsonText t) { return DecodeResourceClaimWatchEvent(p, t); }
  static std::string Encode(const ResourceClaim& c) { return EncodeResourceClaim(c); }
};

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched::fuzz;
  static ksched::api::JsonParser parser;  // reused across inputs, as an informer does
  const std::string_view input = AsView(data, size);
  auto exercise = [](const auto& obj) { Exercise(obj); };
  CheckObjectDecoders<DeviceClassCodec>(parser, input, exercise);
  CheckObjectDecoders<ResourceSliceCodec>(parser, input, exercise);
  CheckObjectDecoders<ResourceClaimCodec>(parser, input, exercise);
  CheckObjectDecoders<ResourceClaimTemplateCodec>(parser, input, exercise);
  return 0;
}
