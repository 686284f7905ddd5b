// Shared helpers of the CEL tests: a sample device and a one-line evaluation.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/resource.h"
#include "pkg/cel/device_selector.h"

namespace ksched::cel::testing {

inline constexpr std::string_view kDriver = "gpu.example.com";

// A GPU of driver gpu.example.com: attributes model "A100", count 8, ecc true,
// driverVersion 1.2.3 (unqualified, so in the driver's domain) and
// other.example.com/zone "z1"; capacity memory 80Gi and other.example.com/slots 4.
inline api::Device SampleDevice() {
  api::Device d;
  d.name = "gpu-0";
  d.attributes["model"].value = std::string("A100");
  d.attributes["count"].value = int64_t{8};
  d.attributes["ecc"].value = true;
  d.attributes["driverVersion"].value = *api::SemVersion::Parse("1.2.3");
  d.attributes["other.example.com/zone"].value = std::string("z1");
  d.capacity["memory"].value = *api::Quantity::Parse("80Gi");
  d.capacity["other.example.com/slots"].value = *api::Quantity::Parse("4");
  return d;
}

// "true", "false", "error: <runtime message>" or "compile: <compile message>".
inline std::string Eval(std::string_view expression, const api::Device& device = SampleDevice(),
                       std::string_view driver = kDriver) {
  auto selector = DeviceSelector::Compile(expression);
  if (!selector.ok()) return "compile: " + selector.status().message();
  auto matches = (*selector)->Matches(driver, device);
  if (!matches.ok()) return "error: " + matches.status().message();
  return *matches ? "true" : "false";
}

struct Case {
  std::string_view expression;
  std::string_view want;
};

}  // namespace ksched::cel::testing
