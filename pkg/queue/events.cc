#include "pkg/queue/events.h"

#include <algorithm>

namespace ksched::queue {

ClusterEventMap ClusterEventMap::FromPlugins(std::span<framework::Plugin* const> plugins) {
  ClusterEventMap map;
  for (framework::Plugin* plugin : plugins) {
    if (plugin == nullptr) continue;
    const auto* ext = dynamic_cast<const framework::EnqueueExtensions*>(plugin);
    if (ext == nullptr) {
      // We cannot know what helps this plugin; any event may.
      for (const framework::ClusterEvent& e : framework::kAllClusterEvents) {
        map.Register(plugin->Name(), {e, nullptr});
      }
      continue;
    }
    for (framework::ClusterEventWithHint& reg : ext->EventsToRegister()) {
      map.Register(plugin->Name(), std::move(reg));
    }
  }
  return map;
}

void ClusterEventMap::Register(std::string_view plugin, framework::ClusterEventWithHint registration) {
  registration.event.label = {};
  for (auto& [event, hints] : entries_) {
    if (event.SameRegistration(registration.event)) {
      hints.push_back({std::string(plugin), std::move(registration.hint_fn)});
      return;
    }
  }
  entries_.emplace_back(registration.event,
                        std::vector<RegisteredHint>{{std::string(plugin), std::move(registration.hint_fn)}});
}

bool ClusterEventMap::IsEventOfInterest(const framework::ClusterEvent& event) const {
  if (event.IsWildCard()) return true;
  for (const auto& [registered, hints] : entries_) {
    if (registered.Match(event)) return true;
  }
  return false;
}

void ClusterEventMap::MatchingHints(const framework::ClusterEvent& event,
                                    std::vector<const RegisteredHint*>* out) const {
  for (const auto& [registered, hints] : entries_) {
    if (!registered.Match(event)) continue;
    for (const RegisteredHint& h : hints) out->push_back(&h);
  }
}

std::vector<framework::ClusterEvent> ClusterEventMap::EventsOf(std::string_view plugin) const {
  std::vector<framework::ClusterEvent> out;
  for (const auto& [registered, hints] : entries_) {
    if (std::any_of(hints.begin(), hints.end(), [&](const RegisteredHint& h) { return h.plugin == plugin; }))
      out.push_back(registered);
  }
  return out;
}

}  // namespace ksched::queue
