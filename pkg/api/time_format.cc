#include "pkg/api/time_format.h"

#include <cstdio>
#include <ctime>

namespace ksched::api {
namespace {

std::string Format(std::chrono::system_clock::time_point t, bool micros) {
  using namespace std::chrono;
  auto secs = floor<seconds>(t);
  std::time_t tt = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  if (micros) {
    auto us = duration_cast<microseconds>(t - secs).count();
    std::snprintf(buf + n, sizeof(buf) - n, ".%06lldZ", static_cast<long long>(us));
  } else {
    std::snprintf(buf + n, sizeof(buf) - n, "Z");
  }
  return buf;
}

}  // namespace

std::string FormatMicroTime(std::chrono::system_clock::time_point t) { return Format(t, true); }
std::string FormatTime(std::chrono::system_clock::time_point t) { return Format(t, false); }

std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view s) {
  using namespace std::chrono;
  auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, sec;
  if (!digits(0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' || !digits(8, 2, d) ||
      (s[10] != 'T' && s[10] != 't') || !digits(11, 2, h) || s[13] != ':' || !digits(14, 2, mi) || s[16] != ':' ||
      !digits(17, 2, sec)) {
    return std::nullopt;
  }
  year_month_day ymd{year(y), month(static_cast<unsigned>(mo)), day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  size_t pos = 19;
  nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000, ns = 0;
    size_t start = pos;
    for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
      ns += (s[pos] - '0') * scale;
      scale /= 10;
    }
    if (pos == start) return std::nullopt;
    frac = nanoseconds(ns);
  }
  minutes offset{0};
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !digits(pos + 4, 2, om))
      return std::nullopt;
    offset = minutes(oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  auto t = sys_days(ymd) + hours(h) + minutes(mi) + seconds(sec) + frac - offset;
  return time_point_cast<system_clock::duration>(t);
}

}  // namespace ksched::api
