// ofu's HTTP client through its plugin (http_client.h): loaded from the
// build tree by the default paths, a GET and a form POST against a real
// server on loopback, an error that names every path when the plugin is
// missing, and a library that is not the plugin refused.
#include "ofu/net/http_client.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/loopback_http_server.h"

namespace ofu::net {
namespace {

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.server().Get("/page", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("a page", "text/plain");
    });
    http_.server().Get("/missing", [](const httplib::Request&, httplib::Response& response) { response.status = 404; });
    http_.server().Post("/form", [](const httplib::Request& request, httplib::Response& response) {
      response.set_content(fmt::format("query={} time={}", request.get_param_value("query"),
                                       request.get_param_value("time")),
                           "text/plain");
    });
    port_ = http_.Start();
    ASSERT_GT(port_, 0);
  }
  std::string Origin() const { return fmt::format("http://127.0.0.1:{}", port_); }

  int port_ = 0;
  ofu::testing::LoopbackHttpServer http_;  // last: stopped first
};

TEST_F(HttpClientTest, GetsAPageAndPostsAFormThroughThePlugin) {
  auto client = OpenHttpClient(Origin(), HttpClientOptions{});
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto page = (*client)->Get("/page");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "a page");

  auto missing = (*client)->Get("/missing");
  ASSERT_TRUE(missing.ok());  // any status is a response
  EXPECT_EQ(missing->status, 404);

  auto posted = (*client)->PostForm("/form", {{"query", "sum(up) by (job)"}, {"time", "12.500"}});
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  EXPECT_EQ(posted->body, "query=sum(up) by (job) time=12.500");
}

TEST_F(HttpClientTest, NoServerIsUnavailableWithTheReason) {
  HttpClientOptions options;
  options.timeout_s = 1;
  http_.Stop();
  auto client = OpenHttpClient(Origin(), options);
  ASSERT_TRUE(client.ok()) << client.error().message;  // opening connects nothing
  auto page = (*client)->Get("/page");
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(page.error().message, "Connection");  // cpp-httplib's word; the caller names the URL
}

TEST(HttpClientPlugin, AMissingPluginNamesEveryPathTried) {
  auto client = OpenHttpClient("http://127.0.0.1:1", HttpClientOptions{},
                               {"/nonexistent/a/libofu-http.so", "/nonexistent/b/libofu-http.so"});
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(client.error().message.find("/nonexistent/a/libofu-http.so"), std::string::npos) << client.error().message;
  EXPECT_NE(client.error().message.find("/nonexistent/b/libofu-http.so"), std::string::npos);
  EXPECT_NE(client.error().message.find("built beside ofu"), std::string::npos);
}

TEST(HttpClientPlugin, ALibraryThatIsNotThePluginIsRefused) {
  // The NVML double: a shared library that loads but exports no HTTP client.
  auto client = OpenHttpClient("http://127.0.0.1:1", HttpClientOptions{}, {OFU_FAKE_NVML_PATH});
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.error().message.find("is not an ofu HTTP client plugin of this build"), std::string::npos)
      << client.error().message;
}

// An installed ofu looks beside itself and in ../lib/ofu/ only; a program
// inside the build tree (a test, a benchmark) also in the tree's apps/ofu/.
TEST(HttpClientPlugin, OnlyAProgramInsideTheBuildTreeLooksInIt) {
  EXPECT_EQ(HttpPluginPaths("/usr/bin/ofu", "/src/ofu/build"),
            (std::vector<std::string>{"/usr/bin/libofu-http.so", "/usr/lib/ofu/libofu-http.so"}));
  EXPECT_EQ(HttpPluginPaths("/src/ofu/build/tests/sources_test", "/src/ofu/build"),
            (std::vector<std::string>{"/src/ofu/build/tests/libofu-http.so", "/src/ofu/build/lib/ofu/libofu-http.so",
                                      "/src/ofu/build/apps/ofu/libofu-http.so"}));
  // A sibling whose name starts with the tree's is not inside it.
  EXPECT_EQ(HttpPluginPaths("/src/ofu/build-asan/apps/ofu/ofu", "/src/ofu/build").size(), 2u);
  EXPECT_EQ(HttpPluginPaths("/src/ofu/build/apps/ofu/../../x/ofu", "/src/ofu/build").size(), 3u);
}

}  // namespace
}  // namespace ofu::net
