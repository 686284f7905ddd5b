#include "pkg/cel/semver.h"

#include <vector>

namespace ksched::cel {
namespace {

bool OnlyDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}
bool OnlyAlnum(std::string_view s) {
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}
// Go's %q for the ASCII text versions are made of.
std::string Q(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
std::vector<std::string_view> SplitN(std::string_view s, char sep, size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    size_t p = s.find(sep);
    if (p == std::string_view::npos) break;
    out.push_back(s.substr(0, p));
    s.remove_prefix(p + 1);
  }
  out.push_back(s);
  return out;
}
// strconv.ParseUint(s, 10, 64)'s errors for digit strings.
std::string ParseUintError(std::string_view s) {
  if (s.empty()) return "strconv.ParseUint: parsing \"\": invalid syntax";
  return "strconv.ParseUint: parsing " + Q(s) + ": value out of range";
}
bool FitsUint64(std::string_view digits) {
  if (digits.empty()) return false;
  std::string_view max = "18446744073709551615";
  size_t i = 0;
  while (i + 1 < digits.size() && digits[i] == '0') ++i;
  digits.remove_prefix(i);
  return digits.size() < max.size() || (digits.size() == max.size() && digits <= max);
}

// Why blang/semver's Parse rejects `s` (only called for rejected text).
std::string Explain(std::string_view s) {
  if (s.empty()) return "Version string empty";
  auto parts = SplitN(s, '.', 3);
  if (parts.size() != 3) return "No Major.Minor.Patch elements found";
  const char* names[] = {"major", "minor"};
  const char* caps[] = {"Major", "Minor"};
  for (int i = 0; i < 2; ++i) {
    std::string_view p = parts[static_cast<size_t>(i)];
    if (!OnlyDigits(p)) return std::string("Invalid character(s) found in ") + names[i] + " number " + Q(p);
    if (p.size() > 1 && p[0] == '0') return std::string(caps[i]) + " number must not contain leading zeroes " + Q(p);
    if (!FitsUint64(p)) return ParseUintError(p);
  }
  std::string_view patch = parts[2];
  std::vector<std::string_view> build, pre;
  if (size_t b = patch.find('+'); b != std::string_view::npos) {
    build = SplitN(patch.substr(b + 1), '.', SIZE_MAX);
    patch = patch.substr(0, b);
  }
  if (size_t p = patch.find('-'); p != std::string_view::npos) {
    pre = SplitN(patch.substr(p + 1), '.', SIZE_MAX);
    patch = patch.substr(0, p);
  }
  if (!OnlyDigits(patch)) return "Invalid character(s) found in patch number " + Q(patch);
  if (patch.size() > 1 && patch[0] == '0') return "Patch number must not contain leading zeroes " + Q(patch);
  if (!FitsUint64(patch)) return ParseUintError(patch);
  for (std::string_view p : pre) {
    if (p.empty()) return "Prerelease is empty";
    if (OnlyDigits(p)) {
      if (p.size() > 1 && p[0] == '0') return "Numeric PreRelease version must not contain leading zeroes " + Q(p);
      if (!FitsUint64(p)) return ParseUintError(p);
    } else if (!OnlyAlnum(p)) {
      return "Invalid character(s) found in prerelease " + Q(p);
    }
  }
  for (std::string_view b : build) {
    if (b.empty()) return "Build meta data is empty";
    if (!OnlyAlnum(b)) return "Invalid character(s) found in build meta data " + Q(b);
  }
  return "Invalid semantic version";
}

}  // namespace

std::optional<api::SemVersion> ParseSemver(std::string_view text, bool normalize, std::string* error) {
  std::string normalized;
  if (normalize) {
    if (text.starts_with('v')) text.remove_prefix(1);
    auto parts = SplitN(text, '.', 3);
    std::vector<std::string> fixed;
    for (std::string_view p : parts) {
      std::string s(p);
      if (s.size() > 1) {
        size_t z = s.find_first_not_of('0');
        s = z == std::string::npos ? "" : s.substr(z);
        if (s.empty() || s[0] < '0' || s[0] > '9') s = "0" + s;
      }
      fixed.push_back(std::move(s));
    }
    if (fixed.size() < 3) {
      if (fixed.back().find_first_of("+-") != std::string::npos) {
        if (error != nullptr) *error = "short version cannot contain PreRelease/Build meta data";
        return std::nullopt;
      }
      while (fixed.size() < 3) fixed.push_back("0");
    }
    normalized = fixed[0] + "." + fixed[1] + "." + fixed[2];
    text = normalized;
  }
  auto v = api::SemVersion::Parse(text);
  if (!v && error != nullptr) *error = Explain(text);
  return v;
}

}  // namespace ksched::cel
