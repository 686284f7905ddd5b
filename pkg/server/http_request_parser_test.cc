// HttpRequestParser without sockets: what it accepts, what it refuses with which status,
// and that how the bytes are split never changes the outcome.
#include "pkg/server/http_request_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ksched::server {
namespace {

using State = HttpRequestParser::State;
using namespace std::string_literals;

HttpRequestParser ParseWhole(const std::string& input, HttpRequestLimits limits = {}) {
  HttpRequestParser parser(limits);
  parser.Parse(input);
  return parser;
}

TEST(HttpRequestParserTest, ParsesARequest) {
  HttpRequestParser p = ParseWhole(
      "GET /healthz?verbose=1 HTTP/1.1\r\nHost: 127.0.0.1:10259\r\naUtHoRiZaTiOn:  Bearer abc \r\n"
      "Authorization: Bearer second\r\nUser-Agent: kubelet\r\n\r\n");
  ASSERT_EQ(p.state(), State::kComplete) << p.error_message();
  EXPECT_EQ(p.request().method, "GET");
  EXPECT_EQ(p.request().target, "/healthz?verbose=1");
  EXPECT_EQ(p.request().path, "/healthz");
  EXPECT_EQ(p.request().host, "127.0.0.1:10259");
  EXPECT_EQ(p.request().authorization, "Bearer abc") << "the first one, trimmed";
  EXPECT_EQ(p.request().minor_version, 1);
  EXPECT_TRUE(p.request().keep_alive);
}

// The path is the target as sent up to '?': no decoding, no dot-segment removal, so
// the authorization check and the routing see the same string (handler.cc).
TEST(HttpRequestParserTest, PathIsNotDecodedOrNormalised) {
  for (const char* target : {"/%6detrics", "//metrics", "/healthz/../metrics", "/./metrics", "/metrics%3Fx"}) {
    HttpRequestParser p = ParseWhole(std::string("GET ") + target + " HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p.state(), State::kComplete) << target;
    EXPECT_EQ(p.request().path, target);
  }
}

TEST(HttpRequestParserTest, KeepAlive) {
  struct Case {
    std::string head;
    bool keep_alive;
  };
  for (const Case& c : std::vector<Case>{
           {"GET / HTTP/1.1\r\nHost: h\r\n", true},
           {"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n", false},
           {"GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, CLOSE\r\n", false},
           {"GET / HTTP/1.0\r\n", false},
           {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n", true},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n", false},
       }) {
    HttpRequestParser p = ParseWhole(c.head + "\r\n");
    ASSERT_EQ(p.state(), State::kComplete) << c.head << p.error_message();
    EXPECT_EQ(p.request().keep_alive, c.keep_alive) << c.head;
  }
}

TEST(HttpRequestParserTest, RefusesWithTheRightStatus) {
  struct Case {
    std::string input;
    int status;
  };
  for (const Case& c : std::vector<Case>{
           {"GET /x HTTP/2.0\r\n", 505},
           {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
           {"GET /x HTTP/1.1\r\n\r\n", 400},  // no Host
           {"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
           {"GET /x\r\n", 400},
           {"GET  /x HTTP/1.1\r\n", 400},
           {"GET /x HTTP/1.1 \r\n", 400},
           {"GET /x HTTP/1.x\r\n", 400},
           {"G@T /x HTTP/1.1\r\n", 400},
           {"GET http://h/metrics HTTP/1.1\r\n", 400},
           {"OPTIONS * HTTP/1.1\r\n", 400},
           {std::string("GET /a\x01 HTTP/1.1\r\n"), 400},
           {"GET /\xc3\xa9 HTTP/1.1\r\n", 400},
           {"GET / HTTP/1.1\rHost: h\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nName : x\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"s, 400},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 1\r\n\r\n", 400},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
           {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 300000000\r\n\r\n", 413},
           {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 411},
           {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
           {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400},
           {"GET / HTTP/1.1\r\nHost: h\r\nExpect: 101-wait\r\n\r\n", 417},
       }) {
    HttpRequestParser p = ParseWhole(c.input);
    ASSERT_EQ(p.state(), State::kError) << c.input;
    EXPECT_EQ(p.error_status(), c.status) << c.input << ": " << p.error_message();
    EXPECT_FALSE(p.error_message().empty());
  }
}

TEST(HttpRequestParserTest, HeaderLimitIsExact) {
  const std::string head = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
  const std::string end = "\r\n\r\n";
  const size_t limit = 1024;
  std::string fits = head + std::string(limit - head.size() - end.size(), 'a') + end;
  ASSERT_EQ(fits.size(), limit);
  EXPECT_EQ(ParseWhole(fits, {.max_header_bytes = limit}).state(), State::kComplete);
  HttpRequestParser over = ParseWhole(head + "a" + fits.substr(head.size()), {.max_header_bytes = limit});
  EXPECT_EQ(over.error_status(), 431);
  // A header that never ends is refused once the limit is reached, not at its end.
  HttpRequestParser endless({.max_header_bytes = limit});
  EXPECT_EQ(endless.Parse(head), head.size());
  size_t fed = head.size();
  while (endless.state() == State::kIncomplete && fed < 10 * limit) {
    endless.Parse(std::string(100, 'a'));
    fed += 100;
  }
  EXPECT_EQ(endless.error_status(), 431);
  EXPECT_LE(fed, limit + 100);
}

TEST(HttpRequestParserTest, SmallBodyIsSkippedAndPipelinedRequestsFollow) {
  const std::string first = "POST /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello";
  const std::string second = "\r\nGET /livez HTTP/1.1\r\nHost: h\r\n\r\n";  // a stray CRLF is ignored
  const std::string input = first + second;
  HttpRequestParser p;
  size_t used = p.Parse(input);
  ASSERT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(used, first.size());
  EXPECT_EQ(p.request().path, "/healthz");
  p.Reset();
  EXPECT_FALSE(p.started());
  EXPECT_EQ(p.Parse(input.substr(used)), second.size());
  ASSERT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(p.request().path, "/livez");
  EXPECT_EQ(p.request().content_length, 0u);
}

TEST(HttpRequestParserTest, ByteAtATimeGivesTheSameResult) {
  for (const std::string& input : {std::string("GET /metrics HTTP/1.1\nHost: h\nAuthorization: Bearer t\n\n"),
                                   std::string("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi"),
                                   std::string("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n")}) {
    HttpRequestParser whole = ParseWhole(input);
    HttpRequestParser bytes;
    for (char c : input) {
      if (bytes.state() != State::kIncomplete) break;
      bytes.Parse(std::string_view(&c, 1));
    }
    EXPECT_EQ(bytes.state(), whole.state()) << input;
    EXPECT_EQ(bytes.error_status(), whole.error_status()) << input;
    EXPECT_EQ(bytes.request().path, whole.request().path);
    EXPECT_EQ(bytes.request().authorization, whole.request().authorization);
  }
}

}  // namespace
}  // namespace ksched::server
