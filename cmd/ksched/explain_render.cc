#include "cmd/ksched/explain_render.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/time_format.h"

namespace ksched::cmd {
namespace {

namespace dom = simdjson::dom;

// The list's REASON column is cut here: the full message is one `ksched explain NS/NAME` away.
constexpr size_t kListReasonWidth = 80;
// The scheduler keeps the 3 best nodes; more would not fit a terminal anyway.
constexpr size_t kScoreColumns = 3;

std::string TypeName(dom::element_type t) {
  switch (t) {
    case dom::element_type::ARRAY: return "array";
    case dom::element_type::OBJECT: return "object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE: return "number";
    case dom::element_type::STRING: return "string";
    case dom::element_type::BOOL: return "boolean";
    case dom::element_type::NULL_VALUE: return "null";
  }
  return "value";
}

// One JSON object of the answer. Absent and null fields read as empty: the server leaves
// out what does not apply, and an older or newer server may lack or add fields. A field of
// another type than the schema's records the first such error, with its path, in the
// shared `error` and reads as empty too, so rendering needs no checks of its own and the
// caller looks at the error once, at the end.
class Fields {
 public:
  Fields(dom::object obj, std::string path, std::string& error)
      : obj_(obj), path_(std::move(path)), error_(&error) {}

  bool Has(std::string_view key) const { return Get(key).has_value(); }

  std::string Str(std::string_view key) const {
    auto v = Get(key);
    std::string_view s;
    if (!v) return "";
    if (v->get(s) == simdjson::SUCCESS) return std::string(s);
    Fail(key, "a string", *v);
    return "";
  }

  int64_t Int(std::string_view key) const {
    auto v = Get(key);
    if (!v) return 0;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    if (v->get(i) == simdjson::SUCCESS) return i;
    if (v->get(u) == simdjson::SUCCESS) return std::numeric_limits<int64_t>::max();
    if (v->get(d) == simdjson::SUCCESS && std::isfinite(d) && std::abs(d) < 9e18) return static_cast<int64_t>(d);
    Fail(key, "a number", *v);
    return 0;
  }

  bool Bool(std::string_view key) const {
    auto v = Get(key);
    bool b = false;
    if (v && v->get(b) != simdjson::SUCCESS) Fail(key, "a boolean", *v);
    return b;
  }

  std::optional<Fields> Object(std::string_view key) const {
    auto v = Get(key);
    dom::object o;
    if (!v) return std::nullopt;
    if (v->get(o) == simdjson::SUCCESS) return Fields(o, Path(key), *error_);
    Fail(key, "an object", *v);
    return std::nullopt;
  }

  // An array of objects; a member of another type is an error naming its index.
  std::vector<Fields> Objects(std::string_view key) const {
    std::vector<Fields> out;
    ForEach(key, [&](const std::string& path, dom::element e) {
      dom::object o;
      if (e.get(o) != simdjson::SUCCESS) return FailAt(path, "an object", e);
      out.emplace_back(o, path, *error_);
    });
    return out;
  }

  std::vector<std::string> Strs(std::string_view key) const {
    std::vector<std::string> out;
    ForEach(key, [&](const std::string& path, dom::element e) {
      std::string_view s;
      if (e.get(s) != simdjson::SUCCESS) return FailAt(path, "a string", e);
      out.emplace_back(s);
    });
    return out;
  }

  // Records a problem of the document as a whole, e.g. a missing required field.
  void Error(std::string message) const {
    if (error_->empty()) *error_ = std::move(message);
  }

 private:
  std::optional<dom::element> Get(std::string_view key) const {
    dom::element v;
    if (obj_.at_key(key).get(v) != simdjson::SUCCESS || v.is_null()) return std::nullopt;
    return v;
  }

  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  template <typename F>
  void ForEach(std::string_view key, F each) const {
    auto v = Get(key);
    dom::array arr;
    if (!v) return;
    if (v->get(arr) != simdjson::SUCCESS) return Fail(key, "an array", *v);
    size_t i = 0;
    for (dom::element e : arr) each(Path(key) + "[" + std::to_string(i++) + "]", e);
  }

  void Fail(std::string_view key, std::string_view want, dom::element got) const { FailAt(Path(key), want, got); }
  void FailAt(const std::string& path, std::string_view want, dom::element got) const {
    Error(path + ": want " + std::string(want) + ", got " + TypeName(got.type()));
  }

  dom::object obj_;
  std::string path_;
  std::string* error_;
};

// Parses `json` and renders its root object; malformed JSON and wrong field types come
// back as errors naming the problem.
template <typename Render>
StatusOr<std::string> RenderDocument(std::string_view json, Render render) {
  dom::parser parser;
  dom::element root;
  if (auto e = parser.parse(json.data(), json.size()).get(root))
    return InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(e));
  dom::object obj;
  if (root.get(obj) != simdjson::SUCCESS) return InvalidArgument("want a JSON object, got " + TypeName(root.type()));
  std::string error;
  std::string out = render(Fields(obj, "", error));
  if (!error.empty()) return InvalidArgument(std::move(error));
  return out;
}

// Display width: UTF-8 continuation bytes take no column ("…" in a cut reason).
size_t Width(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Cuts `s` to `width` columns, ending in "…" when cut, never inside a UTF-8 sequence.
std::string Truncate(std::string s, size_t width) {
  if (Width(s) <= width) return s;
  size_t cols = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((s[i] & 0xC0) != 0x80 && ++cols == width) break;  // i starts the width-th column
  }
  s.resize(i);
  return s + "…";
}

// Rows printed in columns two spaces apart, as kubectl prints its tables. The last column
// is not padded, so no line ends in spaces.
class Table {
 public:
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  std::string Render(std::string_view indent = "") const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      widths.resize(std::max(widths.size(), row.size()));
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
    }
    std::string out;
    for (const auto& row : rows_) {
      out += indent;
      for (size_t i = 0; i < row.size(); ++i) {
        out += row[i];
        if (i + 1 < row.size()) out.append(widths[i] + 2 - Width(row[i]), ' ');
      }
      out += '\n';
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::string Count(int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// "10:04:11" on options.now's UTC date, else "2026-11-25 10:04:11"; text that is not
// RFC 3339 is shown as the server sent it.
std::string ShowTime(const std::string& rfc3339, const RenderOptions& options) {
  auto t = api::ParseTime(rfc3339);
  if (!t) return rfc3339;
  std::string s = api::FormatTime(*t);  // 2026-11-25T10:04:11Z
  std::string date = s.substr(0, 10), clock = s.substr(11, 8);
  if (options.now && api::FormatTime(*options.now).substr(0, 10) == date) return clock;
  return date + " " + clock;
}

std::string Title(const Fields& pod) {
  std::string t = "Pod " + pod.Str("namespace") + "/" + pod.Str("name");
  if (std::string profile = pod.Str("profile"); !profile.empty()) t += " (profile " + profile + ")";
  return t;
}

// Where the pod waits: "in backoffQ since 10:05:31 (backoff until 10:05:41)".
std::string QueuePhrase(const Fields& queue, const RenderOptions& options) {
  const std::string name = queue.Str("name");
  std::string s;
  if (name == "gated") {
    s = "gated";
    if (std::string by = queue.Str("gatedBy"); !by.empty()) s += " by " + by;
  } else if (name == "scheduling") {
    s = "in a scheduling or binding cycle";
  } else {
    s = "in " + (name.empty() ? std::string("an unknown queue") : name);
  }
  if (std::string since = queue.Str("since"); !since.empty()) s += " since " + ShowTime(since, options);
  if (std::string until = queue.Str("backoffUntil"); !until.empty())
    s += " (backoff until " + ShowTime(until, options) + ")";
  return s;
}

std::string SampleNodes(const std::vector<std::string>& samples, int64_t nodes, std::string_view stage) {
  // PreFilter rejects the pod before any node is looked at: it counts them all, names none.
  if (samples.empty()) return stage == "PreFilter" ? "(every node)" : "-";
  std::string s = Join(samples, ", ");
  if (nodes > static_cast<int64_t>(samples.size()))
    s += " and " + std::to_string(nodes - static_cast<int64_t>(samples.size())) + " more";
  return s;
}

// The last attempt's verdict: its message, the plugins x reasons table, the nodes one fix
// away, and preemption.
void RenderFailure(const Fields& failure, const std::string& last_attempt, const RenderOptions& options,
                   std::string& out) {
  std::string time = failure.Str("time");
  if (time.empty()) time = last_attempt;
  out += "Last attempt";
  if (!time.empty()) out += " " + ShowTime(time, options);
  if (failure.Bool("error")) {
    out += " failed with an internal error (no plugin rejected the pod; it is retried after backoff)";
  } else if (int64_t same = failure.Int("sameVerdictAttempts"); same > 1) {
    out += " (the same verdict " + std::to_string(same) + " times in a row)";
  }
  if (std::string message = failure.Str("message"); !message.empty()) out += ": " + message;
  out += "\n";

  std::vector<Fields> plugins = failure.Objects("plugins");
  bool filter_rows = false;
  if (!plugins.empty()) {
    Table table;
    table.Row({"PLUGIN", "STAGE", "REASON", "NODES", "SAMPLE NODES"});
    for (const Fields& p : plugins) {
      const std::string plugin = p.Str("plugin"), stage = p.Str("stage");
      filter_rows |= stage != "PreFilter";
      std::vector<Fields> reasons = p.Objects("reasons");
      if (reasons.empty()) table.Row({plugin, stage, "-", std::to_string(p.Int("nodes")), "-"});
      for (const Fields& r : reasons) {
        const int64_t nodes = r.Int("nodes");
        table.Row({plugin, stage, r.Str("reason"), std::to_string(nodes),
                   SampleNodes(r.Strs("sampleNodes"), nodes, stage)});
      }
    }
    out += "\n" + table.Render();
  }

  std::vector<Fields> closest = failure.Objects("closestNodes");
  if (!closest.empty()) {
    Table table;
    for (const Fields& c : closest) {
      std::string why = c.Str("plugin");
      if (std::string reasons = Join(c.Strs("reasons"), "; "); !reasons.empty()) why += ": " + reasons;
      table.Row({c.Str("node"), why});
    }
    out += "\nClosest nodes (rejected by one plugin only):\n" + table.Render("  ");
  } else if (filter_rows && failure.Has("closestNodes")) {
    out += "\nNo node is rejected by one plugin only: each needs two or more fixes.\n";
  }

  if (auto preemption = failure.Object("preemption")) {
    const std::string nominated = preemption->Str("nominatedNode");
    const std::vector<std::string> victims = preemption->Strs("victims");
    out += "\nPreemption: ";
    out += nominated.empty() ? "no nominated node" : "nominated node " + nominated;
    out += victims.empty() ? ", no victims" : ", victims: " + Join(victims, ", ");
    out += "\n";
  }
}

// The cluster events that would move the pod back to activeQ, or that none can.
void RenderWakeUp(const Fields& pod, std::string& out) {
  if (!pod.Has("wakeUpEvents")) return;  // a server that does not report them
  const std::string retry = pod.Str("retryAfter");
  std::vector<std::string> events;
  for (const Fields& e : pod.Objects("wakeUpEvents")) {
    std::string event = e.Str("event");
    if (std::string plugins = Join(e.Strs("plugins"), ", "); !plugins.empty()) event += " (" + plugins + ")";
    events.push_back(std::move(event));
  }
  if (events.empty()) {
    out += "\nNo registered cluster event can move it; only the unschedulable timeout will";
    if (!retry.empty()) out += " (after " + retry + " in unschedulablePods)";
    out += ".\n";
    return;
  }
  out += "\nWould be retried on: " + Join(events, ", ");
  if (!retry.empty()) out += ";\n  and in any case after " + retry + " in unschedulablePods";
  out += "\n";
}

void RenderPending(const Fields& pod, const RenderOptions& options, std::string& out) {
  out += Title(pod) + ": " + pod.Str("status");
  if (std::string since = pod.Str("pendingSince"); !since.empty()) out += " since " + ShowTime(since, options);
  out += ", " + Count(pod.Int("attempts"), "attempt");
  auto queue = pod.Object("queue");
  if (queue) out += "; " + QueuePhrase(*queue, options);
  out += "\n";
  if (pod.Bool("stuck")) {
    const std::string why = pod.Str("stuckReason");
    out += "Stuck" + (why.empty() ? std::string(".") : ": " + why) + "\n";
  }
  if (queue && queue->Str("name") == "gated") {
    std::string by = queue->Str("gatedBy");
    out += "Not attempted while the PreEnqueue plugin " + (by.empty() ? std::string("that gated it") : by) +
           " holds it back" + (by == "SchedulingGates" ? " (until the pod's schedulingGates are removed)" : "") +
           ".\n";
  }
  const std::string last_attempt = pod.Str("lastAttempt");
  auto failure = pod.Object("lastFailure");
  if (!failure) {
    out += last_attempt.empty() ? "Not attempted yet.\n" : "Last attempt " + ShowTime(last_attempt, options) + ".\n";
    return;
  }
  RenderFailure(*failure, last_attempt, options, out);
  // After an internal error the pod is retried after backoff, whatever happens.
  if (!failure->Bool("error")) RenderWakeUp(pod, out);
}

void RenderScheduled(const Fields& pod, const RenderOptions& options, std::string& out) {
  out += Title(pod) + ": Scheduled";
  auto scheduled = pod.Object("scheduled");
  if (!scheduled) {
    out += "\n";
    return;
  }
  out += " to " + scheduled->Str("node");
  if (std::string time = scheduled->Str("time"); !time.empty()) out += " at " + ShowTime(time, options);
  out += " after " + Count(pod.Int("attempts"), "attempt") + ": " + std::to_string(scheduled->Int("feasibleNodes")) +
         " of " + Count(scheduled->Int("nodes"), "node") + " feasible, " +
         std::to_string(scheduled->Int("evaluatedNodes")) + " evaluated\n";

  std::vector<Fields> top = scheduled->Objects("topNodes");
  if (top.size() > kScoreColumns) top.erase(top.begin() + kScoreColumns, top.end());
  // Rows: every Score plugin seen on any top node, in the server's order.
  std::vector<std::string> plugins;
  std::vector<std::vector<std::pair<std::string, int64_t>>> scores;  // per top node
  for (const Fields& node : top) {
    auto& node_scores = scores.emplace_back();
    for (const Fields& p : node.Objects("plugins")) {
      node_scores.emplace_back(p.Str("plugin"), p.Int("score"));
      if (std::find(plugins.begin(), plugins.end(), node_scores.back().first) == plugins.end())
        plugins.push_back(node_scores.back().first);
    }
  }
  if (plugins.empty()) {
    if (top.size() == 1) out += "\nOnly one feasible node: no Score plugin ran.\n";
    return;
  }
  Table table;
  std::vector<std::string> header = {"PLUGIN"}, total = {"TOTAL"};
  for (const Fields& node : top) {
    header.push_back(node.Str("node"));
    total.push_back(std::to_string(node.Int("score")));
  }
  table.Row(std::move(header));
  for (const std::string& plugin : plugins) {
    std::vector<std::string> row = {plugin};
    for (const auto& node_scores : scores) {
      auto it = std::find_if(node_scores.begin(), node_scores.end(), [&](const auto& s) { return s.first == plugin; });
      row.push_back(it == node_scores.end() ? "-" : std::to_string(it->second));
    }
    table.Row(std::move(row));
  }
  table.Row(std::move(total));
  out += "\n" + table.Render();
}

}  // namespace

StatusOr<std::string> RenderPodText(std::string_view json, const RenderOptions& options) {
  return RenderDocument(json, [&](const Fields& pod) {
    std::string out;
    if (!pod.Has("name")) pod.Error("missing \"name\": not a /debug/pods/{namespace}/{name} answer");
    if (pod.Str("status") == "Scheduled") {
      RenderScheduled(pod, options, out);
    } else {
      RenderPending(pod, options, out);
    }
    return out;
  });
}

StatusOr<std::string> RenderPodListText(std::string_view json, const RenderOptions& options) {
  return RenderDocument(json, [&](const Fields& root) {
    if (!root.Has("pods")) root.Error("missing \"pods\": not a /debug/pods answer");
    std::vector<Fields> pods = root.Objects("pods");
    int64_t stuck = 0;
    Table table;
    table.Row({"NAMESPACE/NAME", "PROFILE", "QUEUE", "ATTEMPTS", "PENDING SINCE", "STUCK", "REASON"});
    for (const Fields& pod : pods) {
      const bool is_stuck = pod.Bool("stuck");
      stuck += is_stuck;
      const std::string since = pod.Str("pendingSince"), reason = pod.Str("reason");
      table.Row({pod.Str("namespace") + "/" + pod.Str("name"), pod.Str("profile"), pod.Str("queue"),
                 std::to_string(pod.Int("attempts")), since.empty() ? "-" : ShowTime(since, options),
                 is_stuck ? "yes" : "no", reason.empty() ? "-" : Truncate(reason, kListReasonWidth)});
    }
    // The server's count, when given, is the one its gauge reports.
    if (root.Has("stuckPods")) stuck = root.Int("stuckPods");
    std::string out = pods.empty() ? "" : table.Render();
    return out + std::to_string(pods.size()) + " pending, " + std::to_string(stuck) + " stuck\n";
  });
}

}  // namespace ksched::cmd
