// The request-head parser behind the agent's HTTP server: where a head ends,
// what it says, and what it refuses (the cases where lenient readers
// disagree about a request's extent).
#include "ofu/net/http_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ofu::net {
namespace {

using ::testing::HasSubstr;

TEST(HttpRequestHead, FindsTheEndOfTheHead) {
  EXPECT_EQ(FindRequestHeadEnd(""), std::nullopt);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n"), std::nullopt);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r"), std::nullopt);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 27u);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next"), 27u);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\nHost: x\n\n"), 24u);
  EXPECT_EQ(FindRequestHeadEnd("GET / HTTP/1.1\n\r\n"), 17u);
  // Empty lines before the request line are skipped, not taken as the end.
  EXPECT_EQ(FindRequestHeadEnd("\r\n\r\n"), std::nullopt);
  EXPECT_EQ(FindRequestHeadEnd("\r\nGET / HTTP/1.1\r\n\r\n"), 20u);
}

TEST(HttpRequestHead, ParsesRequestLineAndFields) {
  auto head = ParseRequestHead(
      "GET /metrics?x=1 HTTP/1.1\r\nHost: node:9477\r\nAccept: text/plain\r\n"
      "accept:  application/openmetrics-text \t\r\nAuthorization: Basic YTpi\r\n\r\n");
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(head->method, "GET");
  EXPECT_EQ(head->target, "/metrics?x=1");
  EXPECT_EQ(head->path, "/metrics");
  EXPECT_EQ(head->major_version, 1);
  EXPECT_EQ(head->minor_version, 1);
  EXPECT_EQ(head->Field("host"), "node:9477");
  EXPECT_EQ(head->Field("AUTHORIZATION"), "Basic YTpi");
  EXPECT_EQ(head->Field("Cookie"), std::nullopt);
  EXPECT_EQ(head->JoinedField("Accept"), "text/plain, application/openmetrics-text");
  EXPECT_EQ(head->CountField("accept"), 2u);
  EXPECT_EQ(head->content_length, 0u);
  EXPECT_TRUE(head->KeepAlive());
}

TEST(HttpRequestHead, TargetsAndVersions) {
  auto absolute = ParseRequestHead("GET HTTP://node:9477/healthz#frag HTTP/1.1\n\n");
  ASSERT_TRUE(absolute.ok()) << absolute.error().message;
  EXPECT_EQ(absolute->path, "/healthz");
  auto bare = ParseRequestHead("GET https://node HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->path, "/");
  auto asterisk = ParseRequestHead("OPTIONS * HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(asterisk.ok());
  EXPECT_EQ(asterisk->path, "*");

  auto old = ParseRequestHead("\r\nGET / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->minor_version, 0);
  EXPECT_FALSE(old->KeepAlive());
  auto old_kept = ParseRequestHead("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
  ASSERT_TRUE(old_kept.ok());
  EXPECT_TRUE(old_kept->KeepAlive());
  auto closing = ParseRequestHead("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n");
  ASSERT_TRUE(closing.ok());
  EXPECT_FALSE(closing->KeepAlive());
  auto two = ParseRequestHead("GET / HTTP/2.0\r\n\r\n");
  ASSERT_TRUE(two.ok());  // the server answers 505
  EXPECT_EQ(two->major_version, 2);
}

TEST(HttpRequestHead, ContentLengthAndTransferEncoding) {
  auto length = ParseRequestHead("POST / HTTP/1.1\r\nContent-Length: 12\r\ncontent-length: 12, 12\r\n\r\n");
  ASSERT_TRUE(length.ok()) << length.error().message;
  EXPECT_EQ(length->content_length, 12u);
  auto chunked = ParseRequestHead("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(chunked.ok());
  EXPECT_TRUE(chunked->has_transfer_encoding);

  for (const char* bad :
       {"Content-Length: 12\r\nContent-Length: 13", "Content-Length: 12, 13", "Content-Length: -1",
        "Content-Length: 0x10", "Content-Length: ", "Content-Length: 1 2", "Content-Length: 9999999999999999999999"}) {
    auto parsed = ParseRequestHead(std::string("POST / HTTP/1.1\r\n") + bad + "\r\n\r\n");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedInput);
    EXPECT_THAT(parsed.error().message, HasSubstr("Content-Length")) << bad;
  }
}

TEST(HttpRequestHead, RefusesWhatReadersCouldTakeDifferently) {
  const char* bad[] = {
      "GET / HTTP/1.1\r\nHost : x\r\n\r\n",            // whitespace before the colon
      "GET / HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n",  // obsolete line folding
      "GET / HTTP/1.1\r\nX-A: 1\r2\r\n\r\n",           // bare CR
      "GET / HTTP/1.1\r\nX-A: 1\x01\r\n\r\n",          // control character in a value
      "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
      "GET / HTTP/1.1\r\n: empty name\r\n\r\n",
      "GET  / HTTP/1.1\r\n\r\n",  // two spaces
      "GET / HTTP/1.1 \r\n\r\n",
      "GET /\x7f HTTP/1.1\r\n\r\n",
      "G(T / HTTP/1.1\r\n\r\n",
      "GET / HTTP/1\r\n\r\n",
      "GET / FTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\n",  // no empty line
      "\r\n",
  };
  for (const char* head : bad) {
    auto parsed = ParseRequestHead(head);
    EXPECT_FALSE(parsed.ok()) << head;
  }
  // Obs-text in a value is allowed (RFC 9110 §5.5), and an empty value.
  EXPECT_TRUE(ParseRequestHead("GET / HTTP/1.1\r\nX-A: caf\xc3\xa9\r\nX-B:\r\n\r\n").ok());
}

}  // namespace
}  // namespace ofu::net
