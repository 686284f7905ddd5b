// libFuzzer target: the cluster reader of `ksched simulate` (pkg/simulate/cluster_files.h)
// on arbitrary YAML or JSON. A hostile file must give an InvalidArgument that names the
// file, never a crash; every object it accepts has a kind simulate serves and a name,
// and its JSON reads back (the in-memory API server merges patches into it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/simulate/cluster_files.h"
#include "pkg/simulate/json_patch.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  simulate::ClusterObjects out;
  Status s = simulate::ParseClusterText(fuzz::AsView(data, size), "input", out);
  if (!s.ok()) {
    fuzz::Check(s.code() == StatusCode::kInvalidArgument, "bad input is InvalidArgument", s.ToString());
    fuzz::Check(s.message().rfind("input", 0) == 0, "an error names the file", s.message());
    return 0;
  }
  for (const simulate::SourceObject& o : out.objects) {
    fuzz::Check(o.kind != nullptr && simulate::FindKind(o.kind->kind) == o.kind, "an accepted object's kind is served");
    fuzz::Check(!o.name.empty(), "an accepted object has a name", o.source);
    auto merged = simulate::MergePatch(o.json, R"({"metadata":{"resourceVersion":"1"}})");
    fuzz::Check(merged.ok(), "an accepted object's JSON takes a patch", o.json);
  }
  return 0;
}
