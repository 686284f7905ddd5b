#include "pkg/explain/decision_log.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "config/duration.h"
#include "pkg/api/json_writer.h"
#include "pkg/api/time_format.h"

namespace ksched::explain {

using framework::runtime::RejectionSummary;

// A verdict with its names interned. Shared by every pending pod that got the same one.
struct DecisionLog::Verdict {
  struct Reason {
    int32_t reason = 0;
    int32_t nodes = 0;
    uint8_t num_samples = 0;
    std::array<int32_t, RejectionSummary::kMaxSampleNodes> samples{};
    bool operator==(const Reason&) const = default;
  };
  struct Plugin {
    int32_t plugin = 0;
    bool pre_filter = false;
    int32_t nodes = 0;
    std::vector<Reason> reasons;
    bool operator==(const Plugin&) const = default;
  };
  // A closest node's reasons are one plugin's: rarely more than two ("Insufficient
  // cpu", "Insufficient memory"), kept inline.
  struct Closest {
    static constexpr size_t kMaxReasons = 3;
    int32_t node = 0;
    int32_t plugin = 0;
    uint8_t num_reasons = 0;
    std::array<int32_t, kMaxReasons> reasons{};
    bool operator==(const Closest&) const = default;
  };

  uint64_t hash = 0;
  std::string message;
  bool error = false;
  int32_t nodes = 0;
  int32_t considered_nodes = 0;
  bool summarized = false;
  std::vector<int32_t> rejected_by;
  std::vector<Plugin> plugins;
  std::vector<Closest> closest;

  bool SameAs(const Verdict& o) const {
    return message == o.message && error == o.error && nodes == o.nodes && considered_nodes == o.considered_nodes &&
           summarized == o.summarized && rejected_by == o.rejected_by && plugins == o.plugins && closest == o.closest;
  }
  size_t Bytes() const {
    size_t b = sizeof(Verdict) + message.capacity() + rejected_by.capacity() * sizeof(int32_t) +
               plugins.capacity() * sizeof(Plugin) + closest.capacity() * sizeof(Closest);
    for (const Plugin& p : plugins) b += p.reasons.capacity() * sizeof(Reason);
    return b;
  }
  // Every interned name it mentions.
  template <typename F>
  void ForEachName(F&& f) {
    for (int32_t& id : rejected_by) f(id);
    for (Plugin& p : plugins) {
      f(p.plugin);
      for (Reason& r : p.reasons) {
        f(r.reason);
        for (uint8_t i = 0; i < r.num_samples; ++i) f(r.samples[i]);
      }
    }
    for (Closest& c : closest) {
      f(c.node);
      f(c.plugin);
      for (uint8_t i = 0; i < c.num_reasons; ++i) f(c.reasons[i]);
    }
  }
};

// The last verdict of a pending pod, and how long it has held.
struct DecisionLog::Pending {
  int32_t profile = 0;
  int attempts = 0;
  Clock::time_point first_attempt{};
  Clock::time_point last_attempt{};
  // First attempt of the current run of rejections (an internal error ends a run).
  Clock::time_point unschedulable_since{};
  int same_verdict_attempts = 0;
  std::shared_ptr<Verdict> verdict;
  // Preemption started by the last attempt; rare, so out of line.
  struct Preemption {
    std::string nominated_node;
    std::vector<std::string> victims;
  };
  std::unique_ptr<Preemption> preemption;
  bool stuck_reported = false;
};

// A scheduled pod in the ring.
struct DecisionLog::Placed {
  std::string key;
  std::string uid;
  std::string profile;
  int attempts = 0;
  Clock::time_point first_attempt{};
  Clock::time_point time{};
  std::string node;
  int nodes = 0, feasible_nodes = 0, evaluated_nodes = 0;
  std::vector<framework::runtime::NodeScores> top_nodes;
};

namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  // splitmix64-style combine: cheap and well spread for ids and string hashes.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// Pending records are keyed by a 64-bit hash of the pod's UID rather than the 36-byte
// UID itself: a third of a record's size. Two UIDs meeting in 64 bits would only make
// two pods share a debug record.
uint64_t UidKey(std::string_view uid) { return std::hash<std::string_view>{}(uid); }

std::string GoDuration(Clock::duration d) {
  // Whole seconds read better in a reason ("12m3s", not "12m3.456789s").
  return config::FormatGoDuration(std::chrono::duration_cast<std::chrono::seconds>(d));
}

}  // namespace

DecisionLog::DecisionLog(DecisionLogOptions options) : options_(std::move(options)), clock_(*options_.clock) {}
DecisionLog::~DecisionLog() = default;

std::vector<queue::QueuedPodState> DecisionLog::Queued() const {
  return options_.queued_pods ? options_.queued_pods() : std::vector<queue::QueuedPodState>{};
}

std::shared_ptr<DecisionLog::Verdict> DecisionLog::Intern(const Failure& f) {
  auto v = std::make_shared<Verdict>();
  v->message = f.message;
  v->error = f.error;
  v->nodes = f.nodes;
  v->rejected_by.reserve(f.rejected_by.size());
  for (const std::string& p : f.rejected_by) v->rejected_by.push_back(names_.Intern(p));
  std::sort(v->rejected_by.begin(), v->rejected_by.end());
  if (f.summary != nullptr) {
    v->summarized = true;
    v->considered_nodes = f.summary->considered_nodes;
    // Sized exactly: thousands of these may be held at once.
    v->plugins.reserve(f.summary->plugins.size());
    v->closest.reserve(f.summary->closest_nodes.size());
    for (const RejectionSummary::PluginRejections& p : f.summary->plugins) {
      Verdict::Plugin& vp = v->plugins.emplace_back();
      vp.plugin = names_.Intern(p.plugin);
      vp.pre_filter = p.pre_filter;
      vp.nodes = p.nodes;
      vp.reasons.reserve(p.reasons.size());
      for (const RejectionSummary::Reason& r : p.reasons) {
        Verdict::Reason& vr = vp.reasons.emplace_back();
        vr.reason = names_.Intern(r.reason);
        vr.nodes = r.nodes;
        for (const std::string& n : r.sample_nodes) {
          if (vr.num_samples == vr.samples.size()) break;
          vr.samples[vr.num_samples++] = names_.Intern(n);
        }
      }
    }
    for (const RejectionSummary::ClosestNode& c : f.summary->closest_nodes) {
      Verdict::Closest& vc = v->closest.emplace_back();
      vc.node = names_.Intern(c.node);
      vc.plugin = names_.Intern(c.plugin);
      for (const std::string& r : c.reasons) {
        if (vc.num_reasons == vc.reasons.size()) break;
        vc.reasons[vc.num_reasons++] = names_.Intern(r);
      }
    }
  }
  uint64_t h = std::hash<std::string>{}(v->message);
  h = Mix(h, (v->error ? 1 : 0) | (v->summarized ? 2 : 0));
  h = Mix(h, static_cast<uint64_t>(v->nodes));
  h = Mix(h, static_cast<uint64_t>(v->considered_nodes));
  v->ForEachName([&](int32_t& id) { h = Mix(h, static_cast<uint64_t>(id)); });
  for (const Verdict::Plugin& p : v->plugins) {
    h = Mix(h, static_cast<uint64_t>(p.nodes));
    for (const Verdict::Reason& r : p.reasons) h = Mix(h, static_cast<uint64_t>(r.nodes));
  }
  v->hash = h;

  auto [begin, end] = verdicts_.equal_range(h);
  for (auto it = begin; it != end;) {
    std::shared_ptr<Verdict> existing = it->second.lock();
    if (!existing) {
      it = verdicts_.erase(it);
      continue;
    }
    if (existing->SameAs(*v)) return existing;
    ++it;
  }
  v->message.shrink_to_fit();
  verdicts_.emplace(h, v);
  return v;
}

void DecisionLog::RecordFailure(const Failure& f) {
  MutexLock lock(mu_);
  auto [it, inserted] = pending_.try_emplace(UidKey(f.pod->metadata.uid));
  Pending& p = it->second;
  if (inserted) p.first_attempt = f.time;
  p.profile = names_.Intern(f.profile);
  p.attempts = f.attempts;
  p.last_attempt = f.time;
  std::shared_ptr<Verdict> v = Intern(f);
  if (v->error) {
    p.same_verdict_attempts = 0;
  } else if (p.verdict && !p.verdict->error && p.verdict == v) {
    ++p.same_verdict_attempts;
  } else {
    if (!p.verdict || p.verdict->error) p.unschedulable_since = f.time;
    p.same_verdict_attempts = 1;
  }
  p.verdict = std::move(v);
  // A later attempt that waits for the victims to leave keeps the preemption on record.
  if (f.nomination.has_value() && f.nomination->empty()) p.preemption.reset();
  if (f.nomination.has_value() && !f.nomination->empty()) {
    p.preemption = std::make_unique<Pending::Preemption>(Pending::Preemption{*f.nomination, f.victims});
  }
}

void DecisionLog::RecordPlacement(Placement pl) {
  const api::Pod& pod = *pl.pod;
  Placed placed{.key = pod.Key(),
                .uid = pod.metadata.uid,
                .profile = std::string(pl.profile),
                .attempts = pl.attempts,
                .first_attempt = pl.time,
                .time = pl.time,
                .node = std::move(pl.node),
                .nodes = pl.nodes,
                .feasible_nodes = pl.feasible_nodes,
                .evaluated_nodes = pl.evaluated_nodes,
                .top_nodes = std::move(pl.top_nodes)};
  MutexLock lock(mu_);
  if (auto it = pending_.find(UidKey(pod.metadata.uid)); it != pending_.end()) {
    placed.first_attempt = it->second.first_attempt;
    pending_.erase(it);
  }
  if (options_.scheduled_records == 0) return;
  if (placed_.size() >= options_.scheduled_records) {
    auto it = placed_by_key_.find(placed_.front().key);
    if (it != placed_by_key_.end() && it->second == placed_seq_) placed_by_key_.erase(it);
    placed_.pop_front();
    ++placed_seq_;
  }
  placed_by_key_[placed.key] = placed_seq_ + placed_.size();
  placed_.push_back(std::move(placed));
}

std::vector<std::pair<std::string, std::vector<std::string>>> DecisionLog::WakeUpEvents(const Pending& p) const {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  auto profile = options_.plugin_events.find(names_.at(p.profile));
  if (profile == options_.plugin_events.end() || !p.verdict) return out;
  for (int32_t id : p.verdict->rejected_by) {
    const std::string_view plugin = names_.at(id);
    auto events = profile->second.find(plugin);
    if (events == profile->second.end()) continue;
    for (const std::string& e : events->second) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == e; });
      if (it == out.end()) it = out.insert(out.end(), {e, {}});
      it->second.emplace_back(plugin);
    }
  }
  return out;
}

bool DecisionLog::CanBeWoken(const Pending& p) const {
  auto profile = options_.plugin_events.find(names_.at(p.profile));
  if (profile == options_.plugin_events.end()) return false;
  for (int32_t id : p.verdict->rejected_by) {
    auto events = profile->second.find(names_.at(id));
    if (events != profile->second.end() && !events->second.empty()) return true;
  }
  return false;
}

std::string DecisionLog::StuckReason(const Pending& p, Clock::time_point now) const {
  if (!p.verdict || p.verdict->error) return "";
  if (!p.verdict->rejected_by.empty() && !CanBeWoken(p)) {
    std::string plugins;
    for (int32_t id : p.verdict->rejected_by) {
      if (!plugins.empty()) plugins += ", ";
      plugins += names_.at(id);
    }
    return "no cluster event registered by the plugins that rejected it (" + plugins +
           ") can make it schedulable; only the retry after " + GoDuration(options_.retry_after) +
           " in unschedulablePods will try again: " + p.verdict->message;
  }
  const Clock::duration for_how_long = now - p.unschedulable_since;
  if (for_how_long >= options_.stuck_after && p.same_verdict_attempts >= options_.stuck_attempts) {
    return "unschedulable for " + GoDuration(for_how_long) + " with the same verdict in its last " +
           std::to_string(p.same_verdict_attempts) + " attempts: " + p.verdict->message;
  }
  return "";
}

std::vector<StuckPod> DecisionLog::Sweep() {
  std::vector<queue::QueuedPodState> queued = Queued();
  const Clock::time_point now = clock_.Now();
  std::unordered_map<uint64_t, const queue::QueuedPodState*> by_uid;
  for (const auto& st : queued) by_uid.emplace(UidKey(st.pod->metadata.uid), &st);
  std::vector<StuckPod> out;
  MutexLock lock(mu_);
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto q = by_uid.find(it->first);
    if (q == by_uid.end()) {
      // Neither queued nor in flight: deleted, or bound by someone else. (A failure is
      // recorded while its pod is still in flight, so a fresh record is never lost here.)
      it = pending_.erase(it);
      continue;
    }
    Pending& p = it->second;
    if (!p.stuck_reported) {
      std::string reason = StuckReason(p, now);
      if (!reason.empty()) {
        p.stuck_reported = true;
        out.push_back({q->second->pod, std::string(names_.at(p.profile)), std::move(reason)});
      }
    }
    ++it;
  }
  CompactNames();
  return out;
}

void DecisionLog::CompactNames() {
  // Node names churn (autoscaled nodes come and go), so the table is rebuilt from the
  // live verdicts once most of it is garbage.
  if (names_.size() < 4096) return;
  std::vector<std::shared_ptr<Verdict>> live;
  for (auto it = verdicts_.begin(); it != verdicts_.end();) {
    if (auto v = it->second.lock()) {
      live.push_back(std::move(v));
      ++it;
    } else {
      it = verdicts_.erase(it);
    }
  }
  std::unordered_set<int32_t> used;
  for (auto& v : live) v->ForEachName([&](int32_t& id) { used.insert(id); });
  for (auto& [uid, p] : pending_) used.insert(p.profile);
  if (used.size() * 2 > names_.size()) return;
  StringIndex fresh;
  std::unordered_map<int32_t, int32_t> remap;
  for (int32_t id : used) remap[id] = fresh.Intern(names_.at(id));
  for (auto& v : live) v->ForEachName([&](int32_t& id) { id = remap.at(id); });
  for (auto& [uid, p] : pending_) p.profile = remap.at(p.profile);
  names_ = std::move(fresh);
}

std::map<std::string, size_t> DecisionLog::StuckCounts() const {
  std::vector<queue::QueuedPodState> queued = Queued();
  std::map<std::string, size_t> counts;
  for (const auto& [profile, events] : options_.plugin_events) counts[profile] = 0;
  const Clock::time_point now = clock_.Now();
  MutexLock lock(mu_);
  for (const auto& st : queued) {
    auto it = pending_.find(UidKey(st.pod->metadata.uid));
    if (it == pending_.end()) continue;
    if (!StuckReason(it->second, now).empty()) ++counts[std::string(names_.at(it->second.profile))];
  }
  return counts;
}

std::string DecisionLog::Wall(Clock::time_point t) const {
  const auto wall = clock_.WallNow() - std::chrono::duration_cast<std::chrono::system_clock::duration>(clock_.Now() - t);
  return api::FormatTime(std::chrono::time_point_cast<std::chrono::system_clock::duration>(wall));
}

std::string DecisionLog::PodsJson() const {
  std::vector<queue::QueuedPodState> queued = Queued();
  const Clock::time_point now = clock_.Now();
  MutexLock lock(mu_);
  struct Row {
    const queue::QueuedPodState* st;
    const Pending* p;
    std::string stuck;
  };
  std::vector<Row> rows;
  rows.reserve(queued.size());
  size_t stuck = 0;
  for (const auto& st : queued) {
    auto it = pending_.find(UidKey(st.pod->metadata.uid));
    const Pending* p = it == pending_.end() ? nullptr : &it->second;
    Row r{&st, p, p ? StuckReason(*p, now) : std::string()};
    if (!r.stuck.empty()) ++stuck;
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.stuck.empty() != b.stuck.empty()) return !a.stuck.empty();
    if (a.st->initial_attempt_timestamp != b.st->initial_attempt_timestamp)
      return a.st->initial_attempt_timestamp < b.st->initial_attempt_timestamp;
    return a.st->pod->Key() < b.st->pod->Key();
  });

  std::string out;
  out.reserve(128 + rows.size() * 256);
  api::JsonWriter w(out);
  w.BeginObject();
  w.Key("pods");
  w.BeginArray();
  for (const Row& r : rows) {
    const api::Pod& pod = *r.st->pod;
    w.BeginObject();
    w.Field("namespace", pod.metadata.namespace_);
    w.Field("name", pod.metadata.name);
    w.Field("uid", pod.metadata.uid);
    w.Field("profile", pod.spec.scheduler_name);
    w.Field("queue", r.st->queue);
    w.IntField("attempts", r.p ? std::max(r.p->attempts, r.st->attempts) : r.st->attempts);
    w.Field("pendingSince", Wall(r.st->initial_attempt_timestamp));
    if (r.p) w.Field("lastAttempt", Wall(r.p->last_attempt));
    w.Field("reason", r.p && r.p->verdict ? std::string_view(r.p->verdict->message) : std::string_view());
    w.Key("stuck");
    w.Bool(!r.stuck.empty());
    w.Field("stuckReason", r.stuck);
    w.EndObject();
  }
  w.EndArray();
  w.IntField("pendingPods", static_cast<int64_t>(rows.size()));
  w.IntField("stuckPods", static_cast<int64_t>(stuck));
  w.EndObject();
  return out;
}

void DecisionLog::WritePending(std::string& out, const queue::QueuedPodState& st, const Pending* p,
                               Clock::time_point now) const {
  const api::Pod& pod = *st.pod;
  api::JsonWriter w(out);
  w.BeginObject();
  w.Field("namespace", pod.metadata.namespace_);
  w.Field("name", pod.metadata.name);
  w.Field("uid", pod.metadata.uid);
  w.Field("profile", pod.spec.scheduler_name);
  w.Field("status", "Pending");
  w.IntField("attempts", p ? std::max(p->attempts, st.attempts) : st.attempts);
  w.Field("pendingSince", Wall(st.initial_attempt_timestamp));
  if (p) {
    w.Field("firstAttempt", Wall(p->first_attempt));
    w.Field("lastAttempt", Wall(p->last_attempt));
  }
  w.Key("queue");
  w.BeginObject();
  w.Field("name", st.queue);
  w.Field("since", Wall(st.since));
  if (st.backoff_until) w.Field("backoffUntil", Wall(*st.backoff_until));
  w.FieldIfSet("gatedBy", st.gating_plugin);
  w.EndObject();
  const std::string stuck = p ? StuckReason(*p, now) : std::string();
  w.Key("stuck");
  w.Bool(!stuck.empty());
  w.Field("stuckReason", stuck);
  if (p && p->verdict) {
    const Verdict& v = *p->verdict;
    w.Key("lastFailure");
    w.BeginObject();
    w.Field("time", Wall(p->last_attempt));
    w.Field("message", v.message);
    w.Key("error");
    w.Bool(v.error);
    w.IntField("nodes", v.nodes);
    if (v.summarized && v.considered_nodes != v.nodes && !v.plugins.empty() && !v.plugins[0].pre_filter)
      w.IntField("consideredNodes", v.considered_nodes);
    w.Key("rejectedBy");
    w.BeginArray();
    for (int32_t id : v.rejected_by) w.String(names_.at(id));
    w.EndArray();
    w.Key("plugins");
    w.BeginArray();
    for (const Verdict::Plugin& vp : v.plugins) {
      w.BeginObject();
      w.Field("plugin", names_.at(vp.plugin));
      w.Field("stage", vp.pre_filter ? "PreFilter" : "Filter");
      w.IntField("nodes", vp.nodes);
      w.Key("reasons");
      w.BeginArray();
      for (const Verdict::Reason& r : vp.reasons) {
        w.BeginObject();
        w.Field("reason", names_.at(r.reason));
        w.IntField("nodes", r.nodes);
        w.Key("sampleNodes");
        w.BeginArray();
        for (uint8_t i = 0; i < r.num_samples; ++i) w.String(names_.at(r.samples[i]));
        w.EndArray();
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.Key("closestNodes");
    w.BeginArray();
    for (const Verdict::Closest& c : v.closest) {
      w.BeginObject();
      w.Field("node", names_.at(c.node));
      w.Field("plugin", names_.at(c.plugin));
      w.Key("reasons");
      w.BeginArray();
      for (uint8_t i = 0; i < c.num_reasons; ++i) w.String(names_.at(c.reasons[i]));
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.IntField("sameVerdictAttempts", p->same_verdict_attempts);
    if (p->preemption) {
      w.Key("preemption");
      w.BeginObject();
      w.Field("nominatedNode", p->preemption->nominated_node);
      w.Key("victims");
      w.BeginArray();
      for (const std::string& victim : p->preemption->victims) w.String(victim);
      w.EndArray();
      w.EndObject();
    }
    w.EndObject();
  }
  w.Key("wakeUpEvents");
  w.BeginArray();
  if (p) {
    for (const auto& [event, plugins] : WakeUpEvents(*p)) {
      w.BeginObject();
      w.Field("event", event);
      w.Key("plugins");
      w.BeginArray();
      for (const std::string& plugin : plugins) w.String(plugin);
      w.EndArray();
      w.EndObject();
    }
  }
  w.EndArray();
  w.Field("retryAfter", GoDuration(options_.retry_after));
  w.EndObject();
}

void DecisionLog::WritePlaced(std::string& out, const Placed& p) const {
  api::JsonWriter w(out);
  const size_t slash = p.key.find('/');
  w.BeginObject();
  w.Field("namespace", std::string_view(p.key).substr(0, slash));
  w.Field("name", std::string_view(p.key).substr(slash + 1));
  w.Field("uid", p.uid);
  w.Field("profile", p.profile);
  w.Field("status", "Scheduled");
  w.IntField("attempts", p.attempts);
  w.Field("firstAttempt", Wall(p.first_attempt));
  w.Key("scheduled");
  w.BeginObject();
  w.Field("node", p.node);
  w.Field("time", Wall(p.time));
  w.IntField("nodes", p.nodes);
  w.IntField("feasibleNodes", p.feasible_nodes);
  w.IntField("evaluatedNodes", p.evaluated_nodes);
  w.Key("topNodes");
  w.BeginArray();
  for (const auto& n : p.top_nodes) {
    w.BeginObject();
    w.Field("node", n.node);
    w.IntField("score", n.total);
    w.Key("plugins");
    w.BeginArray();
    for (const auto& [plugin, score] : n.plugins) {
      w.BeginObject();
      w.Field("plugin", plugin);
      w.IntField("score", score);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

std::optional<std::string> DecisionLog::PodJson(std::string_view ns, std::string_view name) const {
  const std::string key = std::string(ns) + "/" + std::string(name);
  std::optional<queue::QueuedPodState> st = options_.queued_pod ? options_.queued_pod(key) : std::nullopt;
  const Clock::time_point now = clock_.Now();
  MutexLock lock(mu_);
  std::string out;
  if (st) {
    auto it = pending_.find(UidKey(st->pod->metadata.uid));
    WritePending(out, *st, it == pending_.end() ? nullptr : &it->second, now);
    return out;
  }
  auto it = placed_by_key_.find(key);
  if (it == placed_by_key_.end()) return std::nullopt;
  WritePlaced(out, placed_[it->second - placed_seq_]);
  return out;
}

size_t DecisionLog::PendingBytes() const {
  MutexLock lock(mu_);
  size_t b = 0;
  std::unordered_set<const Verdict*> counted;
  for (const auto& [uid, p] : pending_) {
    // The map node (next, key, record, malloc header).
    b += sizeof(void*) + sizeof(uint64_t) + sizeof(Pending) + 2 * sizeof(void*);
    // The verdict with its control block and its entry in verdicts_.
    if (p.verdict && counted.insert(p.verdict.get()).second) b += p.verdict->Bytes() + 4 * sizeof(void*);
    if (p.preemption) {
      b += sizeof(Pending::Preemption) + p.preemption->nominated_node.capacity();
      for (const auto& v : p.preemption->victims) b += sizeof(std::string) + v.capacity();
    }
  }
  b += pending_.bucket_count() * sizeof(void*);
  b += verdicts_.size() * (sizeof(uint64_t) + sizeof(std::weak_ptr<Verdict>) + 2 * sizeof(void*));
  // The name table: a view, a hash and a slot per name, plus the characters.
  for (size_t i = 0; i < names_.size(); ++i) {
    const size_t len = names_.at(static_cast<int32_t>(i)).size();
    b += sizeof(std::string) + (len > 15 ? len + 1 : 0) + sizeof(std::string_view) + sizeof(size_t) + 2 * sizeof(int32_t);
  }
  return b;
}

size_t DecisionLog::PendingRecords() const {
  MutexLock lock(mu_);
  return pending_.size();
}

std::pair<int, std::string> ServeDebugPods(const DecisionLog* log, std::string_view path) {
  constexpr std::string_view kPrefix = "/debug/pods";
  auto error = [](int status, std::string_view message) {
    std::string body;
    api::JsonWriter w(body);
    w.BeginObject();
    w.Field("error", message);
    w.EndObject();
    return std::make_pair(status, std::move(body));
  };
  if (log == nullptr) return error(404, "the decision log is off (--explain-records=0)");
  if (!path.starts_with(kPrefix)) return error(404, "not found");
  std::string_view rest = path.substr(kPrefix.size());
  if (rest.empty() || rest == "/") return {200, log->PodsJson()};
  rest.remove_prefix(1);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size() ||
      rest.find('/', slash + 1) != std::string_view::npos) {
    return error(404, "expected /debug/pods/{namespace}/{name}");
  }
  const std::string_view ns = rest.substr(0, slash), name = rest.substr(slash + 1);
  std::optional<std::string> body = log->PodJson(ns, name);
  if (!body) {
    return error(404, "pod " + std::string(ns) + "/" + std::string(name) +
                          " is not known to ksched: not pending in one of its profiles, nor among the recently "
                          "scheduled pods");
  }
  return {200, std::move(*body)};
}

}  // namespace ksched::explain
