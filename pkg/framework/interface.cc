// Out-of-line pieces of the framework interfaces (interface.h).
#include "pkg/framework/interface.h"

#include <algorithm>
#include <iterator>

namespace ksched::framework {

void CycleState::DropSchedulingOnlyData() {
  std::erase_if(data_, [](const Entry& e) { return e.data != nullptr && !e.data->NeededForBinding(); });
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto out = std::make_unique<CycleState>();
  out->data_.reserve(data_.size());
  for (const Entry& e : data_) {
    // A null entry cannot be cloned; keep the key so Read() still finds "nothing".
    out->data_.push_back({e.key, e.data ? e.data->Clone() : nullptr});
  }
  out->skip_filter_plugins = skip_filter_plugins;
  out->skip_score_plugins = skip_score_plugins;
  out->skip_filter_mask = skip_filter_mask;
  out->record_plugin_metrics = record_plugin_metrics;
  return out;
}


PreFilterResult PreFilterResult::Merge(const PreFilterResult& other) const {
  if (AllNodes()) return other;
  if (other.AllNodes()) return *this;
  PreFilterResult out;
  out.node_names.emplace();
  std::set_intersection(node_names->begin(), node_names->end(), other.node_names->begin(),
                        other.node_names->end(), std::inserter(*out.node_names, out.node_names->end()),
                        std::less<>());
  return out;
}

}  // namespace ksched::framework
