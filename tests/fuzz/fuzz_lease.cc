// libFuzzer target: the coordination.k8s.io/v1 Lease decoder (leader election reads the
// Lease on every renew) on arbitrary bytes, and the bodies the elector writes back.
//
// Invariants beyond "no crash", for well-formed input without repeated keys (the decoder
// does not validate the metadata it echoes, see fuzz_json.h): the update body built from
// a decoded Lease (its raw metadata echoed, client-go's LeaseLock.Update) decodes to the
// same record, metadata and resourceVersion; a create body decodes to the same record.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/leaderelection/lease.h"
#include "tests/fuzz/fuzz_json.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  const std::string_view input = fuzz::AsView(data, size);
  auto lease = leaderelection::DecodeLease(input);
  if (!lease.ok()) return 0;
  // Malformed input still goes through the encoders; only the checks need valid JSON.
  // Repeated keys are checked too: DecodeLease takes the last "metadata" object whole
  // (tests/data/fuzz/fuzz_lease/regression-duplicate-metadata.json once broke that).
  const bool valid = fuzz::IsValidJson(input, /*unique_keys=*/false);
  auto Check = [valid](bool ok, const char* what, std::string_view detail) {
    if (valid) fuzz::Check(ok, what, detail);
  };

  std::string update = leaderelection::EncodeLeaseUpdate(lease->raw_metadata, lease->record);
  auto again = leaderelection::DecodeLease(update);
  Check(again.ok(), "the update body decodes", again.ok() ? update : again.status().message());
  if (again.ok()) {
    Check(again->record == lease->record, "the update body carries the record", update);
    Check(again->raw_metadata == lease->raw_metadata, "the update body echoes the metadata", update);
    Check(again->resource_version == lease->resource_version, "the update body keeps the resourceVersion", update);
  }

  // The holder identity as a name too: any string must be escaped correctly.
  std::string create = leaderelection::EncodeNewLease("kube-system", lease->record.holder_identity, lease->record);
  auto created = leaderelection::DecodeLease(create);
  // The create body is ours alone, so it must be right whatever the input was.
  fuzz::Check(created.ok(), "the create body decodes", created.ok() ? create : created.status().message());
  fuzz::Check(created->record == lease->record, "the create body carries the record", create);
  return 0;
}
