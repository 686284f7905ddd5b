// libFuzzer target: the CEL interpreter (pkg/cel) on arbitrary expression text, as a
// DeviceClass's or ResourceClaim's selectors[].cel.expression reaches it. The input is
// compiled as a device selector; one that compiles is evaluated against a few fixed
// devices under the default cost limit (resourceapi.CELSelectorExpressionMaxCost).
//
// Expressions come from users' objects, so beyond "no crash, leak, hang or 2 GB" (the
// fuzzer's -timeout and -rss_limit_mb), the invariants are:
//   - compiling is deterministic: a second compile, and a SelectorCache lookup, give the
//     same outcome and the same error message;
//   - evaluation errors are InvalidArgument (a CEL runtime error) or OutOfRange (the
//     cost limit), never another code, and evaluating twice gives the same result;
//   - a successful evaluation stays within the cost limit it was given.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/cel/device_selector.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using api::Device;

constexpr std::string_view kDriver = "gpu.example.com";
// resourceapi.CELSelectorExpressionMaxCost, what DeviceSelector::Matches applies.
constexpr uint64_t kCostLimit = 1'000'000;

// Attributes of every type (int, bool, string, semver with pre-release and build),
// capacities, qualified names in the driver's domain and in a second one.
std::vector<Device> Devices() {
  std::vector<Device> devices(3);
  Device& gpu = devices[0];
  gpu.name = "gpu-0";
  gpu.attributes["model"].value = std::string("A100");
  gpu.attributes["count"].value = int64_t{8};
  gpu.attributes["min"].value = int64_t{INT64_MIN};
  gpu.attributes["ecc"].value = true;
  gpu.attributes["driverVersion"].value = *api::SemVersion::Parse("1.2.3-rc.1+build.5");
  gpu.attributes["gpu.example.com/uuid"].value = std::string("GPU-\xc3\xa9\x00z", 8);
  gpu.attributes["other.example.com/zone"].value = std::string("z1");
  gpu.attributes["other.example.com/version"].value = *api::SemVersion::Parse("0.0.1");
  gpu.capacity["memory"].value = *api::Quantity::Parse("80Gi");
  gpu.capacity["cores"].value = *api::Quantity::Parse("1500m");
  gpu.capacity["other.example.com/slots"].value = *api::Quantity::Parse("4");
  gpu.allow_multiple_allocations = true;

  Device& nic = devices[1];
  nic.name = "nic-1";
  nic.attributes["count"].value = int64_t{-1};
  nic.attributes["model"].value = std::string("");
  nic.attributes["ecc"].value = false;
  nic.attributes["driverVersion"].value = *api::SemVersion::Parse("10.20.30");
  nic.capacity["memory"].value = *api::Quantity::Parse("1e3");
  nic.capacity["bandwidth"].value = *api::Quantity::Parse("9223372036854775807");

  devices[2].name = "empty";  // no attributes or capacity: every lookup fails
  return devices;
}

// `twice`: evaluate again to check determinism (on one device only: an expression
// near the cost limit takes a while under the sanitizers, and the fuzzer's timeout is
// per input).
void CheckEvaluation(const cel::DeviceSelector& selector, const Device& device, bool twice) {
  uint64_t cost = 0;
  auto first = selector.Matches(kDriver, device, kCostLimit, &cost);
  if (first.ok()) {
    Check(cost <= kCostLimit, "a successful evaluation is within its cost limit", selector.expression());
  } else {
    const auto code = first.status().code();
    Check(code == StatusCode::kInvalidArgument || code == StatusCode::kOutOfRange,
          "evaluation fails with InvalidArgument or OutOfRange", first.status().message());
  }
  if (!twice) return;
  auto second = selector.Matches(kDriver, device);
  Check(second.ok() == first.ok(), "evaluation is deterministic", selector.expression());
  if (first.ok()) {
    Check(*first == *second, "evaluation gives the same result twice", selector.expression());
  } else {
    Check(first.status().message() == second.status().message(), "evaluation fails the same way twice",
          first.status().message());
  }
}

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  static const std::vector<api::Device> devices = fuzz::Devices();
  // A small cache so inputs evict each other, as the plugin's (10 entries) does.
  static cel::SelectorCache cache(4);
  const std::string expression(fuzz::AsView(data, size));

  auto selector = cel::DeviceSelector::Compile(expression);
  auto again = cel::DeviceSelector::Compile(expression);
  auto cached = cache.Get(expression);
  fuzz::Check(selector.ok() == again.ok() && selector.ok() == cached.ok(), "compiling is deterministic", expression);
  if (!selector.ok()) {
    fuzz::Check(selector.status().code() == StatusCode::kInvalidArgument, "compile errors are InvalidArgument",
                selector.status().message());
    fuzz::Check(selector.status().message() == again.status().message() &&
                    selector.status().message() == cached.status().message(),
                "compile errors are the same every time", selector.status().message());
    return 0;
  }
  fuzz::Check((*selector)->expression() == expression, "a selector keeps its expression");
  for (size_t i = 0; i < devices.size(); ++i) fuzz::CheckEvaluation(**selector, devices[i], /*twice=*/i == 0);
  return 0;
}
