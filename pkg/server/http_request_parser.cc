#include "pkg/server/http_request_parser.h"

#include <algorithm>
#include <utility>

namespace ksched::server {
namespace {

// RFC 9110 tchar: the characters of a method or a header name.
bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsTokenChar(static_cast<unsigned char>(c)); });
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y && ((x | 0x20) != (y | 0x20) || (x | 0x20) < 'a' || (x | 0x20) > 'z')) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Visible ASCII only: no spaces, controls or raw non-ASCII bytes in a request target.
bool IsValidTarget(std::string_view target) {
  return std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// Field values may hold visible characters, spaces, tabs and obs-text, but no controls.
// Built by appending: GCC 12 at -O3 reports "literal" + std::string&& as an overlapping
// copy (pkg/util/strings.h).
std::string LargerThan(const char* what, size_t limit) {
  std::string out(what);
  out.append(" is larger than ").append(std::to_string(limit)).append(" bytes");
  return out;
}

bool IsValidFieldValue(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t') || u == 0x7f;
  });
}

}  // namespace

HttpRequestParser::HttpRequestParser(HttpRequestLimits limits) : limits_(limits) {}

void HttpRequestParser::Reset() { *this = HttpRequestParser(limits_); }

bool HttpRequestParser::Fail(int status, std::string message) {
  state_ = State::kError;
  error_status_ = status;
  error_message_ = std::move(message);
  line_.clear();
  return false;
}

size_t HttpRequestParser::Parse(std::string_view data) {
  size_t used = 0;
  while (used < data.size() && state_ == State::kIncomplete) {
    std::string_view rest = data.substr(used);
    if (phase_ == Phase::kBody) {
      // Read and dropped: no endpoint takes a body.
      size_t take = static_cast<size_t>(std::min<uint64_t>(body_remaining_, rest.size()));
      used += take;
      body_remaining_ -= take;
      if (body_remaining_ == 0) state_ = State::kComplete;
      continue;
    }
    size_t newline = rest.find('\n');
    size_t take = newline == std::string_view::npos ? rest.size() : newline + 1;
    if (take > limits_.max_header_bytes - header_bytes_) {
      Fail(431, LargerThan("the request header", limits_.max_header_bytes));
      break;
    }
    header_bytes_ += take;
    used += take;
    if (newline == std::string_view::npos) {
      line_.append(rest);
      break;
    }
    std::string_view piece = rest.substr(0, newline);
    std::string line;
    if (line_.empty()) {
      line.assign(piece);
    } else {
      line = std::move(line_);
      line_.clear();
      line.append(piece);
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF, or a bare LF as Go accepts
    if (!OnLine(line)) break;
  }
  return used;
}

bool HttpRequestParser::OnLine(std::string_view line) {
  if (line.find('\r') != std::string_view::npos) return Fail(400, "a bare CR in the request header");
  if (phase_ == Phase::kRequestLine) {
    if (line.empty()) return true;  // RFC 9112 2.2: empty lines before a request are ignored
    return ParseRequestLine(line);
  }
  if (line.empty()) return FinishHeaders();
  if (line.front() == ' ' || line.front() == '\t') return Fail(400, "obsolete line folding in the request header");
  return ParseHeader(line);
}

bool HttpRequestParser::ParseRequestLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return Fail(400, "malformed request line");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Fail(400, "malformed method");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[5] < '0' || version[5] > '9' ||
      version[6] != '.' || version[7] < '0' || version[7] > '9') {
    return Fail(400, "malformed HTTP version");
  }
  if (version[5] != '1') return Fail(505, "only HTTP/1.x is served");
  if (target.empty() || !IsValidTarget(target)) return Fail(400, "malformed request target");
  // Origin form only: the absolute form (a proxy's), "*" and the authority form have no
  // use here, and one form keeps the path the authorization check sees unambiguous.
  if (target.front() != '/') return Fail(400, "the request target must be an absolute path");
  request_.method.assign(method);
  request_.target.assign(target);
  request_.path.assign(target.substr(0, target.find('?')));
  request_.minor_version = version[7] - '0';
  phase_ = Phase::kHeaders;
  return true;
}

bool HttpRequestParser::ParseHeader(std::string_view line) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Fail(400, "malformed header line");
  std::string_view name = line.substr(0, colon);
  // Also rejects whitespace before the colon (RFC 9112 5.1), a smuggling vector.
  if (!IsToken(name)) return Fail(400, "malformed header name");
  std::string_view value = TrimOws(line.substr(colon + 1));
  if (!IsValidFieldValue(value)) return Fail(400, "invalid character in a header value");

  if (EqualsIgnoreCase(name, "Content-Length")) {
    if (value.empty() || value.size() > 18 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Fail(400, "malformed Content-Length");
    }
    uint64_t length = 0;
    for (char c : value) length = length * 10 + static_cast<uint64_t>(c - '0');
    if (have_content_length_ && length != request_.content_length) return Fail(400, "conflicting Content-Length headers");
    have_content_length_ = true;
    request_.content_length = length;
  } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
    if (have_transfer_encoding_) transfer_encoding_ += ',';
    transfer_encoding_.append(value);
    have_transfer_encoding_ = true;
  } else if (EqualsIgnoreCase(name, "Connection")) {
    for (size_t start = 0; start <= value.size();) {
      size_t comma = std::min(value.find(',', start), value.size());
      std::string_view option = TrimOws(value.substr(start, comma - start));
      if (EqualsIgnoreCase(option, "close")) connection_close_ = true;
      if (EqualsIgnoreCase(option, "keep-alive")) connection_keep_alive_ = true;
      start = comma + 1;
    }
  } else if (EqualsIgnoreCase(name, "Host")) {
    if (have_host_) return Fail(400, "more than one Host header");
    have_host_ = true;
    request_.host.assign(value);
  } else if (EqualsIgnoreCase(name, "Authorization")) {
    if (!have_authorization_) request_.authorization.assign(value);
    have_authorization_ = true;
  } else if (EqualsIgnoreCase(name, "Expect") && !value.empty()) {
    if (!EqualsIgnoreCase(value, "100-continue")) return Fail(417, "unsupported Expect header");
    expect_continue_ = true;
  }
  return true;
}

bool HttpRequestParser::FinishHeaders() {
  if (request_.minor_version >= 1 && !have_host_) return Fail(400, "missing required Host header");
  if (have_transfer_encoding_) {
    // A body of unknown length; and with Content-Length too, the classic smuggling pair.
    if (have_content_length_) return Fail(400, "both Transfer-Encoding and Content-Length");
    if (EqualsIgnoreCase(TrimOws(transfer_encoding_), "chunked")) {
      return Fail(411, "chunked request bodies are not accepted");
    }
    return Fail(501, "unsupported Transfer-Encoding");
  }
  request_.keep_alive =
      !connection_close_ && (request_.minor_version >= 1 || connection_keep_alive_);
  if (request_.content_length > limits_.max_body_bytes) {
    return Fail(413, LargerThan("the request body", limits_.max_body_bytes));
  }
  if (request_.content_length > 0 && expect_continue_) {
    // The client waits for "100 Continue" that never comes: answer at once, and close,
    // since the body may still follow.
    request_.keep_alive = false;
    state_ = State::kComplete;
    return true;
  }
  body_remaining_ = request_.content_length;
  if (body_remaining_ == 0) {
    state_ = State::kComplete;
  } else {
    phase_ = Phase::kBody;
  }
  return true;
}

}  // namespace ksched::server
