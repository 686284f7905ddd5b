// Type checking and compilation of a parsed selector in the DRA environment
// (k8s.io/dynamic-resource-allocation/cel/compile.go): the one variable `device`,
// the base Kubernetes libraries, and the requirement that the result is a bool.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/cel/eval.h"
#include "pkg/util/status.h"

namespace ksched::cel {

struct Program {
  NodePtr root;
  int slots = 0;  // comprehension and bind variables
};

// The `device` fields of the environment with DRAConsumableCapacity (compile.go's
// deviceTypeV134ConsumableCapacity): driver, attributes, capacity,
// allowMultipleAllocations.
//
// Errors are InvalidArgument with upstream's message: "compilation failed: ERROR:
// <input>:1:8: ..." for parse and type errors, "must evaluate to bool or the unknown
// type, not int" for a non-bool result.
StatusOr<std::unique_ptr<const Program>> CompileProgram(std::string_view expression);

}  // namespace ksched::cel
