// SemVersion (semver 2.0.0, https://semver.org) and qualified attribute names.
#include "pkg/api/resource.h"

#include <charconv>

namespace ksched::api {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsIdentifierChars(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) return false;
  }
  return true;
}

// A numeric identifier: digits, no leading zero, fits uint64.
bool ParseNumber(std::string_view s, uint64_t& out) {
  if (!IsDigits(s) || (s.size() > 1 && s[0] == '0')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<SemVersion> SemVersion::Parse(std::string_view text) {
  SemVersion v;
  std::string_view rest = text;
  if (size_t plus = rest.find('+'); plus != std::string_view::npos) {
    v.build = std::string(rest.substr(plus + 1));
    rest = rest.substr(0, plus);
    // Build identifiers: non-empty [0-9A-Za-z-], leading zeros allowed.
    std::string_view b = v.build;
    while (true) {
      size_t dot = b.find('.');
      if (!IsIdentifierChars(b.substr(0, dot))) return std::nullopt;
      if (dot == std::string_view::npos) break;
      b.remove_prefix(dot + 1);
    }
  }
  if (size_t dash = rest.find('-'); dash != std::string_view::npos) {
    std::string_view pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    while (true) {
      size_t dot = pre.find('.');
      std::string_view id = pre.substr(0, dot);
      uint64_t unused;
      if (!IsIdentifierChars(id)) return std::nullopt;
      if (IsDigits(id) && !ParseNumber(id, unused)) return std::nullopt;
      v.pre_release.emplace_back(id);
      if (dot == std::string_view::npos) break;
      pre.remove_prefix(dot + 1);
    }
  }
  size_t d1 = rest.find('.');
  if (d1 == std::string_view::npos) return std::nullopt;
  size_t d2 = rest.find('.', d1 + 1);
  if (d2 == std::string_view::npos) return std::nullopt;
  if (!ParseNumber(rest.substr(0, d1), v.major) || !ParseNumber(rest.substr(d1 + 1, d2 - d1 - 1), v.minor) ||
      !ParseNumber(rest.substr(d2 + 1), v.patch)) {
    return std::nullopt;
  }
  return v;
}

int SemVersion::Compare(const SemVersion& other) const {
  auto cmp = [](uint64_t a, uint64_t b) { return a < b ? -1 : a > b ? 1 : 0; };
  if (int c = cmp(major, other.major)) return c;
  if (int c = cmp(minor, other.minor)) return c;
  if (int c = cmp(patch, other.patch)) return c;
  // A version without pre-release identifiers has the higher precedence.
  if (pre_release.empty() && other.pre_release.empty()) return 0;
  if (pre_release.empty()) return 1;
  if (other.pre_release.empty()) return -1;
  for (size_t i = 0; i < pre_release.size() && i < other.pre_release.size(); ++i) {
    const std::string& a = pre_release[i];
    const std::string& b = other.pre_release[i];
    bool an = IsDigits(a), bn = IsDigits(b);
    if (an && bn) {
      uint64_t x = 0, y = 0;
      std::from_chars(a.data(), a.data() + a.size(), x);
      std::from_chars(b.data(), b.data() + b.size(), y);
      if (int c = cmp(x, y)) return c;
    } else if (an != bn) {
      return an ? -1 : 1;  // numeric identifiers sort before alphanumeric ones
    } else if (int c = a.compare(b)) {
      return c < 0 ? -1 : 1;
    }
  }
  return cmp(pre_release.size(), other.pre_release.size());
}

std::string SemVersion::String() const {
  std::string out = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (size_t i = 0; i < pre_release.size(); ++i) {
    out += i == 0 ? '-' : '.';
    out += pre_release[i];
  }
  if (!build.empty()) out += "+" + build;
  return out;
}

std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view name, std::string_view driver) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

}  // namespace ksched::api
