// The agent's HTTP endpoint on a loopback port: content negotiation, health,
// basic auth, TLS and request limits, through cpp-httplib clients.
#include "ofu/sinks/metrics_server.h"

#include <crypt.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sinks/web_test_support.h"
#include <httplib.h>

#include "ofu/sources/clock.h"

namespace ofu::sinks {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// What Prometheus 2.x/3.x sends when scraping.
constexpr char kPrometheusAccept[] =
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

using ofu::testing::Bcrypt;
using ofu::testing::TempDir;

// A self-signed P-256 certificate for CN=localhost and its key, as PEM files.
bool WriteSelfSignedCertificate(const std::string& cert_path, const std::string& key_path) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"),
                                                           EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) return false;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return false;

  FILE* cert_file = std::fopen(cert_path.c_str(), "w");
  if (cert_file == nullptr) return false;
  const bool cert_ok = PEM_write_X509(cert_file, cert.get()) == 1;
  std::fclose(cert_file);
  FILE* key_file = std::fopen(key_path.c_str(), "w");
  if (key_file == nullptr) return false;
  const bool key_ok = PEM_write_PrivateKey(key_file, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(key_file);
  return cert_ok && key_ok;
}

WindowBatch OneGpuBatch(double end_s) {
  GpuWindow gpu;
  gpu.identity.key = "GPU-1234";
  gpu.identity.uuid = "GPU-1234";
  gpu.identity.gpu_index = "0";
  gpu.identity.model = "NVIDIA H100 80GB HBM3";
  gpu.sku = "h100-sxm5";
  gpu.architecture = "hopper";
  gpu.window.start_s = end_s - 1;
  gpu.window.end_s = end_s;
  gpu.window.ofu = 0.25;
  gpu.window.tensor_active = 0.5;
  gpu.window.sm_clock_mhz = 1755;
  gpu.window.busy = true;
  WindowBatch batch;
  batch.end_s = end_s;
  batch.window_s = 1;
  batch.gpus.push_back(gpu);
  return batch;
}

class MetricsServerTest : public ::testing::Test {
 protected:
  MetricsServerTest() : state_(MetricsOptions{"1.2.3", "replay", 1, 3}, clock_) {}

  void SetUp() override { ASSERT_TRUE(state_.Consume(OneGpuBatch(1000)).ok()); }

  httplib::Client Plain() {
    httplib::Client client("127.0.0.1", server_.port());
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(5, 0);
    return client;
  }

  sources::FakeClock clock_{1000};
  MetricsState state_;
  MetricsServer server_{state_};
};

TEST_F(MetricsServerTest, ServesPrometheusTextByDefault) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  EXPECT_GT(server_.port(), 0);
  auto response = Plain().Get("/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(response->body, HasSubstr("ofu_utilized_seconds_total{uuid=\"GPU-1234\",gpu=\"0\"} 0.25\n"));
  EXPECT_THAT(response->body, HasSubstr("ofu_gpu_info{"));
  EXPECT_THAT(response->body, ::testing::Not(HasSubstr("# EOF")));
}

TEST_F(MetricsServerTest, ServesOpenMetricsToPrometheus) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  auto response = Plain().Get("/metrics", {{"Accept", kPrometheusAccept}});
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_THAT(response->body, HasSubstr("# TYPE ofu_utilized_seconds counter\n"));
  EXPECT_THAT(response->body, EndsWith("# EOF\n"));

  auto head = Plain().Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(MetricsServerTest, HealthzTurnsUnhealthyAfterThreeWindowsWithoutData) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  auto healthy = Plain().Get("/healthz");
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
  EXPECT_EQ(healthy->body, "ok\n");

  clock_.SleepS(3.5);  // 3 windows of 1 s, and then some
  auto stale = Plain().Get("/healthz");
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 503);
  EXPECT_THAT(stale->body, StartsWith("no window from the replay source for 3.5 s"));

  ASSERT_TRUE(state_.Consume(OneGpuBatch(1003.5)).ok());
  auto again = Plain().Get("/healthz");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST_F(MetricsServerTest, IndexNotFoundAndMethods) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  auto index = Plain().Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_THAT(index->body, HasSubstr("/metrics"));
  EXPECT_THAT(index->body, HasSubstr("/healthz"));

  auto missing = Plain().Get("/metricz");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  auto post = Plain().Post("/metrics", "x=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = Plain().Delete("/healthz");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  httplib::Request trace;
  trace.method = "TRACE";
  trace.path = "/metrics";
  auto traced = Plain().send(trace);
  ASSERT_TRUE(traced);
  EXPECT_EQ(traced->status, 405);
}

TEST_F(MetricsServerTest, BasicAuthGuardsEveryPath) {
  WebConfig config;
  config.basic_auth_users = {{"prometheus", Bcrypt("scrape-me")}};
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, config).ok());

  auto none = Plain().Get("/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Basic realm=\"ofu\"");
  EXPECT_THAT(none->body, ::testing::Not(HasSubstr("ofu_")));

  for (const char* path : {"/metrics", "/healthz", "/", "/nope"}) {
    auto client = Plain();
    client.set_basic_auth("prometheus", "wrong");
    auto wrong = client.Get(path);
    ASSERT_TRUE(wrong) << path;
    EXPECT_EQ(wrong->status, 401) << path;
  }

  auto stranger = Plain();
  stranger.set_basic_auth("mallory", "scrape-me");
  auto unknown = stranger.Get("/metrics");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);

  auto client = Plain();
  client.set_basic_auth("prometheus", "scrape-me");
  auto right = client.Get("/metrics");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  EXPECT_THAT(right->body, HasSubstr("ofu_gpu_up{uuid=\"GPU-1234\",gpu=\"0\"} 1\n"));
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(MetricsServerTest, ServesTlsAndRefusesPlainHttpOnTheSamePort) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ASSERT_TRUE(WriteSelfSignedCertificate(dir.path() + "/server.crt", dir.path() + "/server.key"));
  auto config = ParseWebConfig("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n", "web.yml",
                               dir.path());
  ASSERT_TRUE(config.ok()) << config.error().message;
  auto started = server_.Start("127.0.0.1", 0, *config);
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_TRUE(server_.tls());

  httplib::SSLClient tls("127.0.0.1", server_.port());
  tls.enable_server_certificate_verification(false);
  tls.set_connection_timeout(2, 0);
  tls.set_read_timeout(5, 0);
  auto response = tls.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->body, HasSubstr("ofu_build_info{version=\"1.2.3\",source=\"replay\"} 1"));

  auto plain = Plain().Get("/metrics");
  EXPECT_FALSE(plain) << "plain HTTP got status " << plain->status;

  // Verification on: the self-signed certificate is refused by the client,
  // so the server really presented it.
  httplib::SSLClient verifying("127.0.0.1", server_.port());
  verifying.set_connection_timeout(2, 0);
  EXPECT_FALSE(verifying.Get("/metrics"));
}

TEST_F(MetricsServerTest, BadCertificateFailsStartNamingTheFile) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  WebConfig config;
  config.tls = TlsServerConfig{dir.path() + "/missing.crt", dir.path() + "/missing.key", TlsVersion::kTls12};
  auto started = server_.Start("127.0.0.1", 0, config);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(started.error().message, HasSubstr("cert_file '" + dir.path() + "/missing.crt'"));
  EXPECT_EQ(server_.port(), 0);
}

TEST_F(MetricsServerTest, OversizedHeadersAreRejectedAndServingGoesOn) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  // One header over the limit, and many small ones that add up past it.
  auto big = Plain().Get("/metrics", {{"X-Big", std::string(20000, 'a')}});
  // httplib refuses a header line over 8 KiB itself (400 in 0.11).
  ASSERT_TRUE(big);
  EXPECT_GE(big->status, 400);
  EXPECT_LT(big->status, 500);
  httplib::Headers many;
  for (int i = 0; i < 40; ++i) many.emplace("X-Header-" + std::to_string(i), std::string(400, 'b'));
  auto summed = Plain().Get("/metrics", many);
  ASSERT_TRUE(summed);
  EXPECT_EQ(summed->status, 431);

  auto body = Plain().Post("/metrics", std::string(64 * 1024, 'c'), "text/plain");
  ASSERT_TRUE(body);
  EXPECT_EQ(body->status, 413);

  auto after = Plain().Get("/healthz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(MetricsServerTest, PortInUseIsAnErrorAndStopIsIdempotent) {
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());
  MetricsServer second(state_);
  auto clash = second.Start("127.0.0.1", server_.port(), std::nullopt);
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.error().message, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(server_.port())));
  EXPECT_FALSE(server_.Start("127.0.0.1", 0, std::nullopt).ok());  // already started

  server_.Stop();
  server_.Stop();
  EXPECT_EQ(server_.port(), 0);
  ASSERT_TRUE(server_.Start("127.0.0.1", 0, std::nullopt).ok());  // and again
  auto response = Plain().Get("/healthz");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

}  // namespace
}  // namespace ofu::sinks
