// The Grafana dashboard (manifests/grafana/ksched-dashboard.json) finds ksched's series by
// metric and label name only; a renamed family or label would leave its panel empty with
// no error anywhere. This test reads every PromQL expression of the dashboard (the panels'
// targets and the template variables' label_values queries), picks out the scheduler_* /
// ksched_* series each one selects and the label names it matches on or groups by, and
// checks them against the scrape of a real Metrics in which every family has samples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/metrics/metrics.h"

namespace ksched::metrics {
namespace {

using framework::Code;
using simdjson::dom::element;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

const std::string kDashboard = KSCHED_DASHBOARD;

// ---- The scrape ----

// What the dashboard can see of a scrape: each family's TYPE, and the label names carried
// by each series name. A histogram's _bucket, _sum and _count are separate series here,
// since only _bucket carries `le`.
struct Scrape {
  std::map<std::string, std::string, std::less<>> types;
  std::map<std::string, std::set<std::string>, std::less<>> series_labels;
};

Scrape ParseScrape(const std::string& text) {
  Scrape s;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, name, type;
      words >> hash >> keyword >> name >> type;
      if (keyword == "TYPE") s.types[name] = type;
      continue;
    }
    const size_t end = line.find_first_of("{ ");
    std::set<std::string>& labels = s.series_labels[line.substr(0, end)];
    if (end == std::string::npos || line[end] != '{') continue;
    // name="value",...: values escape '"' and '\' with a backslash.
    size_t i = end + 1;
    while (i < line.size() && line[i] != '}') {
      const size_t eq = line.find('=', i);
      if (eq == std::string::npos) break;
      labels.insert(line.substr(i, eq - i));
      i = eq + 2;  // past ="
      while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
      ++i;  // past the closing quote
      if (i < line.size() && line[i] == ',') ++i;
    }
  }
  return s;
}

// ---- PromQL, as far as names go ----

// One series an expression reads, with the label names its matchers use.
struct Selector {
  std::string series;
  std::set<std::string> labels;
};

struct Query {
  std::vector<Selector> selectors;
  // Labels the expression needs on every series it reads: its by / without / on /
  // ignoring / group_left / group_right clauses, and label_values' label.
  std::set<std::string> grouping;
  // What the scanner could not make sense of.
  std::vector<std::string> problems;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool IsKschedSeries(std::string_view name) { return name.starts_with("scheduler_") || name.starts_with("ksched_"); }

// Words followed by a parenthesised list of label names.
const std::set<std::string, std::less<>>& GroupingWords() {
  static const auto* words =
      new std::set<std::string, std::less<>>{"by", "without", "on", "ignoring", "group_left", "group_right"};
  return *words;
}

// Words that may stand without a '(' after them: aggregations written `sum by (x) (...)`,
// operators and constants. Any other bare word would be a metric name.
const std::set<std::string, std::less<>>& PlainWords() {
  static const auto* words = new std::set<std::string, std::less<>>{
      "sum",  "min",      "max", "avg", "group",  "stddev", "stdvar", "count",  "count_values", "bottomk",
      "topk", "quantile", "and", "or",  "unless", "atan2",  "bool",   "offset", "inf",          "nan"};
  return *words;
}

// Finds metric names and label names in an expression; enough PromQL for dashboards:
// strings, Grafana variables ($var, ${var}) and durations are skipped, not interpreted.
class Scanner {
 public:
  explicit Scanner(std::string_view expr) : s_(expr) {}

  Query Scan() {
    Query q;
    for (SkipSpace(); i_ < s_.size(); SkipSpace()) {
      const char c = s_[i_];
      if (c == '"' || c == '\'' || c == '`') {
        if (!SkipString()) q.problems.push_back("unterminated string");
      } else if (c == '$') {
        SkipVariable();
      } else if (c == '[') {  // [5m], [$__rate_interval], a subquery's [1h:1m]
        const size_t close = s_.find(']', i_);
        i_ = close == std::string_view::npos ? s_.size() : close + 1;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {  // 0.99, 5m, 1e3
        while (i_ < s_.size() && (IsIdentChar(s_[i_]) || s_[i_] == '.')) ++i_;
      } else if (IsIdentStart(c)) {
        Word(q);
      } else if (c == '{') {
        q.problems.push_back("a selector without a metric name");
        std::set<std::string> ignored;
        Matchers(ignored, q);
      } else {
        ++i_;
      }
    }
    return q;
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }

  std::string Ident() {
    const size_t start = i_;
    while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }

  // At a quote: past the closing one. Raw (`) strings have no escapes.
  bool SkipString() {
    const char quote = s_[i_++];
    while (i_ < s_.size() && s_[i_] != quote) i_ += (s_[i_] == '\\' && quote != '`') ? 2 : 1;
    if (i_ >= s_.size()) return false;
    ++i_;
    return true;
  }

  void SkipVariable() {
    ++i_;
    if (i_ < s_.size() && s_[i_] == '{') {
      const size_t close = s_.find('}', i_);
      i_ = close == std::string_view::npos ? s_.size() : close + 1;
    } else {
      while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
    }
  }

  void Word(Query& q) {
    std::string word = Ident();
    SkipSpace();
    const char next = i_ < s_.size() ? s_[i_] : '\0';
    if (GroupingWords().contains(word)) {
      if (next == '(') LabelList(q.grouping, q);  // group_left may stand alone
    } else if (IsKschedSeries(word)) {
      Selector sel{.series = std::move(word)};
      if (next == '{') Matchers(sel.labels, q);
      q.selectors.push_back(std::move(sel));
    } else if (next != '(' && !PlainWords().contains(word)) {
      // Not a function call nor an operator: a metric that is not ksched's (or a typo).
      q.problems.push_back("`" + word + "` is not a scheduler_* or ksched_* metric");
    }
  }

  // At '(': label names up to ')'.
  void LabelList(std::set<std::string>& out, Query& q) {
    ++i_;
    for (SkipSpace(); i_ < s_.size(); SkipSpace()) {
      if (s_[i_] == ')') {
        ++i_;
        return;
      }
      if (s_[i_] == ',') {
        ++i_;
      } else if (IsIdentStart(s_[i_])) {
        out.insert(Ident());
      } else {
        break;
      }
    }
    q.problems.push_back("a malformed label list");
  }

  // At '{': label matchers `name op "value"` up to '}'.
  void Matchers(std::set<std::string>& out, Query& q) {
    ++i_;
    for (SkipSpace(); i_ < s_.size(); SkipSpace()) {
      if (s_[i_] == '}') {
        ++i_;
        return;
      }
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (!IsIdentStart(s_[i_])) break;
      out.insert(Ident());
      SkipSpace();
      while (i_ < s_.size() && (s_[i_] == '=' || s_[i_] == '!' || s_[i_] == '~')) ++i_;
      SkipSpace();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'' && s_[i_] != '`') || !SkipString()) break;
    }
    q.problems.push_back("a malformed selector");
  }

  std::string_view s_;
  size_t i_ = 0;
};

Query ScanExpr(std::string_view expr) { return Scanner(expr).Scan(); }

// A query variable's `label_values(<series selector>, <label>)`: the selector is scanned
// like a panel's expression, and <label> must exist on its series.
Query ScanVariableQuery(const std::string& query) {
  static const std::regex kLabelValues(R"(^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$)");
  std::smatch m;
  if (!std::regex_match(query, m, kLabelValues)) {
    Query q;
    q.problems.push_back("not label_values(<series>, <label>)");
    return q;
  }
  Query q = ScanExpr(m[1].str());
  q.grouping.insert(m[2].str());
  return q;
}

// ---- The check ----

// Target labels Prometheus attaches at scrape time (the dashboard's $job selector, the
// per-replica breakdown); ksched's own output never carries them.
const std::set<std::string, std::less<>>& TargetLabels() {
  static const auto* labels = new std::set<std::string, std::less<>>{"job", "instance"};
  return *labels;
}

// The family a series belongs to: the series itself, or for a histogram's _bucket, _sum
// or _count the name without the suffix (ksched exports no summaries). Empty if the
// scrape has no such family.
std::string FamilyOf(const Scrape& scrape, const std::string& series) {
  if (scrape.types.contains(series)) return series;
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (!series.ends_with(suffix)) continue;
    const std::string family = series.substr(0, series.size() - suffix.size());
    auto it = scrape.types.find(family);
    if (it != scrape.types.end() && it->second == "histogram") return family;
  }
  return "";
}

// Everything a query would miss in `scrape`, one message each: a series ksched does not
// export (or that has no samples), a label its series do not carry, a word that is no
// ksched metric. Empty when every name resolves.
std::vector<std::string> Missing(const Query& q, const Scrape& scrape) {
  std::vector<std::string> out = q.problems;
  if (q.selectors.empty()) out.push_back("selects no scheduler_* or ksched_* series");
  for (const Selector& sel : q.selectors) {
    if (FamilyOf(scrape, sel.series).empty()) {
      out.push_back(sel.series + ": not exported by ksched");
      continue;
    }
    auto it = scrape.series_labels.find(sel.series);
    if (it == scrape.series_labels.end()) {
      // E.g. a histogram read without its _bucket/_sum/_count suffix.
      out.push_back(sel.series + ": no samples in the scrape");
      continue;
    }
    std::set<std::string> wanted = sel.labels;
    wanted.insert(q.grouping.begin(), q.grouping.end());
    for (const std::string& label : wanted) {
      if (!it->second.contains(label) && !TargetLabels().contains(label)) {
        out.push_back(sel.series + ": no label `" + label + "`");
      }
    }
  }
  return out;
}

// ---- The dashboard ----

// One PromQL expression of the dashboard and where it is, for messages.
struct DashboardQuery {
  std::string where;
  std::string expr;
  bool variable = false;  // a template variable's label_values query
};

struct Dashboard {
  std::string title, uid;
  int64_t schema_version = 0;
  std::vector<int64_t> panel_ids;
  std::map<std::string, std::string> variables;  // name -> type
  std::vector<DashboardQuery> queries;
  std::vector<std::string> problems;  // structure the test expects but did not find
};

// The string at a JSON pointer ("/datasource/uid"); empty if absent or not a string.
std::string StringAt(const element& e, std::string_view pointer) {
  std::string_view s;
  if (e.at_pointer(pointer).get_string().get(s) != simdjson::SUCCESS) return "";
  return std::string(s);
}

// Panels, with the panels of collapsed rows; every target must query the dashboard's
// ${datasource} variable, so the one import choice applies to all of them.
void CollectPanels(const element& parent, Dashboard& d) {
  simdjson::dom::array panels;
  if (parent.at_pointer("/panels").get_array().get(panels) != simdjson::SUCCESS) return;
  for (element panel : panels) {
    const std::string title = StringAt(panel, "/title");
    int64_t id = 0;
    if (panel.at_pointer("/id").get_int64().get(id) == simdjson::SUCCESS) d.panel_ids.push_back(id);
    if (StringAt(panel, "/type") == "row") {
      CollectPanels(panel, d);
      continue;
    }
    const std::string where = "panel \"" + title + "\"";
    simdjson::dom::array targets;
    if (panel.at_pointer("/targets").get_array().get(targets) != simdjson::SUCCESS || targets.size() == 0) {
      d.problems.push_back(where + ": no targets");
      continue;
    }
    for (element target : targets) {
      const std::string expr = StringAt(target, "/expr");
      if (expr.empty()) d.problems.push_back(where + ": a target without expr");
      if (StringAt(target, "/datasource/uid") != "${datasource}") {
        d.problems.push_back(where + ": a target not on ${datasource}");
      }
      if (!expr.empty()) d.queries.push_back({.where = where, .expr = expr});
    }
  }
}

Dashboard LoadDashboard(const std::string& path) {
  Dashboard d;
  simdjson::dom::parser parser;
  element doc;
  if (auto error = parser.load(path).get(doc); error != simdjson::SUCCESS) {
    d.problems.push_back(path + ": " + simdjson::error_message(error));
    return d;
  }
  d.title = StringAt(doc, "/title");
  d.uid = StringAt(doc, "/uid");
  if (doc.at_pointer("/schemaVersion").get_int64().get(d.schema_version) != simdjson::SUCCESS) {
    d.problems.push_back("no schemaVersion");
  }
  CollectPanels(doc, d);
  simdjson::dom::array variables;
  if (doc.at_pointer("/templating/list").get_array().get(variables) != simdjson::SUCCESS) {
    d.problems.push_back("no templating.list");
    return d;
  }
  for (element v : variables) {
    const std::string name = StringAt(v, "/name");
    const std::string type = StringAt(v, "/type");
    d.variables[name] = type;
    if (type != "query") continue;
    // Grafana 10+ stores the query as {"query": "...", "refId": ...}; older ones as a
    // string. `definition` is what the editor shows; both must hold up.
    std::string query = StringAt(v, "/query/query");
    if (query.empty()) query = StringAt(v, "/query");
    const std::string where = "variable $" + name;
    if (query.empty()) d.problems.push_back(where + ": no query");
    for (const std::string& q : {query, StringAt(v, "/definition")}) {
      if (!q.empty()) d.queries.push_back({.where = where, .expr = q, .variable = true});
    }
  }
  return d;
}

Query ScanQuery(const DashboardQuery& dq) { return dq.variable ? ScanVariableQuery(dq.expr) : ScanExpr(dq.expr); }

// A Metrics in which every family has samples, so that each series and label the
// dashboard reads shows up in the scrape: the scrape-time gauges have sources (without
// one a gauge family is left out), and each labelled family has seen one observation (a
// family with no label combination yet has no sample lines, so no labels to check).
std::unique_ptr<Metrics> BusyMetrics() {
  MetricsOptions options;
  options.pending_pods = [] {
    return queue::PendingPodCounts{.active = 1, .backoff = 1, .unschedulable = 1, .gated = 1};
  };
  options.cache_sizes = [] { return CacheSizes{.nodes = 3, .pods = 2, .assumed_pods = 1}; };
  options.unschedulable_pods = [] { return UnschedulablePodCounts{{{"NodeResourcesFit", "ksched"}, 1}}; };
  options.stuck_pods = [] { return std::map<std::string, size_t>{{"ksched", 1}}; };
  auto m = std::make_unique<Metrics>(std::move(options));
  m->SetGoroutinesSource("binding", [] { return int64_t{2}; });
  m->IncomingPod(queue::kActiveQueueName, "PodAdd");
  m->ObserveAttempt("scheduled", "ksched", 0.01);
  m->ObserveAttempt("unschedulable", "ksched", 0.02);
  m->ObserveAlgorithm(0.005);
  m->ObservePodScheduled(2, 0.5);
  m->ObserveExtensionPoint("Filter", Code::kSuccess, "ksched", 0.001);
  m->ObservePlugin("Filter", "NodeResourcesFit", Code::kUnschedulable, 0.0001);
  m->ObservePermitWait(Code::kSuccess, 0.01);
  m->ObservePreemptionAttempt();
  m->ObservePreemptionVictims(2);
  return m;
}

TEST(DashboardTest, IsAGrafanaDashboardOnAPrometheusDatasourceVariable) {
  const Dashboard d = LoadDashboard(kDashboard);
  ASSERT_THAT(d.problems, IsEmpty());
  EXPECT_EQ(d.title, "ksched");
  EXPECT_FALSE(d.uid.empty());
  // Grafana migrates older schemas on import; 36+ is the datasource-reference format
  // ({"type", "uid"}) the targets use.
  EXPECT_GE(d.schema_version, 36);
  EXPECT_THAT(d.variables, Contains(Pair("datasource", "datasource")));
  EXPECT_THAT(d.variables, Contains(Pair("job", "query")));
  EXPECT_THAT(d.variables, Contains(Pair("profile", "query")));
  ASSERT_FALSE(d.panel_ids.empty());
  EXPECT_EQ(std::set<int64_t>(d.panel_ids.begin(), d.panel_ids.end()).size(), d.panel_ids.size())
      << "panel ids must be unique";
}

TEST(DashboardTest, EveryQueriedMetricAndLabelIsExported) {
  const Dashboard d = LoadDashboard(kDashboard);
  ASSERT_THAT(d.problems, IsEmpty());
  ASSERT_FALSE(d.queries.empty());
  const auto m = BusyMetrics();
  const Scrape scrape = ParseScrape(m->Serialize());

  std::set<std::string> families;
  for (const DashboardQuery& dq : d.queries) {
    const Query q = ScanQuery(dq);
    EXPECT_THAT(Missing(q, scrape), IsEmpty()) << dq.where << ": " << dq.expr;
    for (const Selector& sel : q.selectors) families.insert(FamilyOf(scrape, sel.series));
  }
  // The metric families the dashboard must show (upstream kube-scheduler's names, plus
  // ksched's stuck pods); a dropped panel fails here.
  for (const char* family :
       {"scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds",
        "scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pending_pods", "scheduler_unschedulable_pods",
        "scheduler_goroutines", "scheduler_preemption_attempts_total", "scheduler_preemption_victims",
        "scheduler_framework_extension_point_duration_seconds", "ksched_stuck_pods"}) {
    EXPECT_THAT(families, Contains(family));
  }
}

// The checker bites: names and labels ksched does not export are reported.
TEST(DashboardTest, CheckerReportsWhatKschedDoesNotExport) {
  const auto m = BusyMetrics();
  const Scrape scrape = ParseScrape(m->Serialize());
  auto missing = [&](std::string_view expr) { return Missing(ScanExpr(expr), scrape); };

  EXPECT_THAT(missing("sum(rate(scheduler_not_a_metric[5m]))"),
              ElementsAre(HasSubstr("scheduler_not_a_metric: not exported")));
  EXPECT_THAT(missing("sum by (node) (scheduler_pending_pods)"), ElementsAre(HasSubstr("no label `node`")));
  EXPECT_THAT(missing(R"(scheduler_pending_pods{queues="active"})"), ElementsAre(HasSubstr("no label `queues`")));
  // A counter has no buckets; a histogram is read through its suffixes; only _bucket has le.
  EXPECT_THAT(missing("rate(scheduler_schedule_attempts_total_bucket[5m])"), ElementsAre(HasSubstr("not exported")));
  EXPECT_THAT(missing("rate(scheduler_scheduling_attempt_duration_seconds[5m])"), ElementsAre(HasSubstr("no samples")));
  EXPECT_THAT(missing("sum by (le) (rate(scheduler_scheduling_attempt_duration_seconds_count[5m]))"),
              ElementsAre(HasSubstr("no label `le`")));
  // A typo in the prefix is not silently skipped.
  EXPECT_THAT(missing("sum(schduler_pending_pods)"), Contains(HasSubstr("`schduler_pending_pods`")));
  EXPECT_THAT(missing(R"(scheduler_pending_pods{queue="active")"), Contains(HasSubstr("malformed selector")));
  EXPECT_THAT(Missing(ScanVariableQuery("label_values(scheduler_schedule_attempts_total, plugin)"), scrape),
              ElementsAre(HasSubstr("no label `plugin`")));

  // What exists passes: suffixes, le, target labels, Grafana variables, awkward strings.
  EXPECT_THAT(missing(R"(histogram_quantile(0.99, sum by (le, extension_point) )"
                      R"((rate(scheduler_framework_extension_point_duration_seconds_bucket{job=~"$job", )"
                      R"(status!="Success", profile=~"${profile}"}[$__rate_interval]))))"),
              IsEmpty());
  EXPECT_THAT(missing(R"(sum by (instance) (scheduler_pending_pods{queue=~"a|b,}\"c"}) > bool 1e-05)"), IsEmpty());
  EXPECT_THAT(Missing(ScanVariableQuery(R"(label_values(scheduler_unschedulable_pods{job=~"$job"}, plugin))"), scrape),
              IsEmpty());

  // A scrape-time gauge without a source is absent, and so reported.
  Metrics idle;
  const Scrape empty = ParseScrape(idle.Serialize());
  EXPECT_THAT(Missing(ScanExpr("sum(ksched_stuck_pods)"), empty), ElementsAre(HasSubstr("not exported")));
  EXPECT_THAT(Missing(ScanExpr("sum by (queue) (scheduler_pending_pods)"), empty),
              ElementsAre(HasSubstr("not exported")));
}

}  // namespace
}  // namespace ksched::metrics
