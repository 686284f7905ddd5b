#include "pkg/api/storage.h"

namespace ksched::api {

std::string_view PersistentVolumeClaim::StorageClass() const {
  if (const std::string* beta = annotations.Get(kAnnBetaStorageClass)) return *beta;
  return storage_class_name ? std::string_view(*storage_class_name) : std::string_view();
}

const CSINodeDriver* CSINode::FindDriver(std::string_view name) const {
  for (const CSINodeDriver& d : drivers) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace ksched::api
