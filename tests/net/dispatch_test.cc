// Request dispatch (dispatch.h): what CheckRequest refuses and with which
// status, the Router's 404 and 405, and the bytes FormatReply writes.
// Requests are written here by hand (synthetic).
#include "ofu/net/dispatch.h"

#include <string>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ofu::net {
namespace {

using ::testing::HasSubstr;

// The reply CheckRequest refuses `head` with; status 0 when it accepts it.
Reply Refusal(std::string_view head, std::size_t max_body = 100) {
  auto checked = CheckRequest(head, max_body);
  if (const auto* reply = std::get_if<Reply>(&checked)) return *reply;
  return Reply{0, "", "", {}};
}

HttpRequestHead Head(std::string_view text) {
  auto checked = CheckRequest(text, 100);
  EXPECT_TRUE(std::holds_alternative<HttpRequestHead>(checked)) << text;
  return std::holds_alternative<HttpRequestHead>(checked) ? std::get<HttpRequestHead>(checked) : HttpRequestHead{};
}

TEST(CheckRequest, AcceptsAnHttp11GetWithinTheBodyLimit) {
  EXPECT_EQ(Refusal("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n").status, 0);
  EXPECT_EQ(Refusal("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n").status, 0);
  EXPECT_EQ(Head("GET /metrics?x=1 HTTP/1.0\r\n\r\n").path, "/metrics");
}

TEST(CheckRequest, RefusesWithTheStatusForEachFault) {
  const Reply malformed = Refusal("GET / HTTP/1.1\r\nBad Field : x\r\n\r\n");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_THAT(malformed.body, ::testing::StartsWith("bad request: "));
  EXPECT_EQ(Refusal("GET / HTTP/2.0\r\n\r\n").status, 505);
  EXPECT_EQ(Refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status, 501);
  EXPECT_EQ(Refusal("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n").status, 413);
}

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    router_.Add("/here", [](const HttpRequestHead& request) {
      Reply reply;
      reply.body = "here for " + request.method;
      return reply;
    });
  }
  Router router_;
};

TEST_F(RouterTest, ServesGetAndHeadOfAKnownPath) {
  EXPECT_EQ(router_.Route(Head("GET /here HTTP/1.1\r\n\r\n")).body, "here for GET");
  EXPECT_EQ(router_.Route(Head("HEAD /here?q HTTP/1.1\r\n\r\n")).body, "here for HEAD");
}

TEST_F(RouterTest, UnknownPathIs404AndOtherMethodsAre405WithAllow) {
  const Reply missing = router_.Route(Head("GET /there HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "not found; see /\n");
  // The method is checked first: a POST to an unknown path is 405 too.
  for (const char* head : {"POST /here HTTP/1.1\r\n\r\n", "DELETE /there HTTP/1.1\r\n\r\n"}) {
    const Reply refused = router_.Route(Head(head));
    EXPECT_EQ(refused.status, 405) << head;
    ASSERT_EQ(refused.headers.size(), 1u);
    EXPECT_EQ(refused.headers[0].first, "Allow");
    EXPECT_EQ(refused.headers[0].second, "GET, HEAD");
  }
}

TEST_F(RouterTest, AddReplacesAPathsHandler) {
  router_.Add("/here", [](const HttpRequestHead&) { return Reply{204, kTextPlain, "", {}}; });
  EXPECT_EQ(router_.Route(Head("GET /here HTTP/1.1\r\n\r\n")).status, 204);
}

TEST(FormatReply, WritesStatusLineFieldsAndBody) {
  Reply reply;
  reply.status = 401;
  reply.body = "unauthorized\n";
  reply.headers.emplace_back("WWW-Authenticate", "Basic realm=\"ofu\"");
  EXPECT_EQ(FormatReply(reply, false, true, false),
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 13\r\n"
            "WWW-Authenticate: Basic realm=\"ofu\"\r\nConnection: close\r\n\r\nunauthorized\n");
}

TEST(FormatReply, HeadKeepsTheLengthButNotTheBodyAndKeepAliveIsSaidOnlyWhenAsked) {
  Reply reply;
  reply.body = "ok\n";
  EXPECT_EQ(FormatReply(reply, true, false, true),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
            "Connection: keep-alive\r\n\r\n");
  EXPECT_EQ(FormatReply(reply, false, false, false),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n\r\nok\n");
}

TEST(FormatReply, CannedRepliesAndReasonPhrases) {
  EXPECT_EQ(Unauthorized().status, 401);
  const Reply busy = AuthenticationBusy();
  EXPECT_EQ(busy.status, 503);
  EXPECT_THAT(FormatReply(busy, false, true, false), HasSubstr("\r\nRetry-After: 1\r\n"));
  EXPECT_EQ(ReasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(ReasonPhrase(418), "Unknown");
}

}  // namespace
}  // namespace ofu::net
