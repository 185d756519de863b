// TLS (tls.h): when a new connection may get its SSL object, from the bytes
// of its first record (synthetic record headers, written here), and a
// context that names the file it cannot load.
#include "ofu/net/tls.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "net/web_test_support.h"

namespace ofu::net {
namespace {

using ::testing::HasSubstr;

// A handshake record header announcing `length` bytes of body.
std::string HandshakeHeader(std::size_t length) {
  return std::string{'\x16', '\x03', '\x01', static_cast<char>(length >> 8), static_cast<char>(length & 0xff)};
}

TEST(NextFirstRecordStep, WaitsForTheHeaderThenForTheWholeRecord) {
  // One byte of a handshake record: wait for the 5-byte header.
  FirstRecordStep step = NextFirstRecordStep(std::string_view("\x16", 1), 1, false);
  EXPECT_EQ(step.kind, FirstRecordStep::kWait);
  EXPECT_EQ(step.wanted, kTlsRecordHeader);
  // The header says 512 bytes follow; 300 are in.
  step = NextFirstRecordStep(HandshakeHeader(512), 300, false);
  EXPECT_EQ(step.kind, FirstRecordStep::kWait);
  EXPECT_EQ(step.wanted, 517u);
  // All in: start.
  EXPECT_EQ(NextFirstRecordStep(HandshakeHeader(512), 517, false).kind, FirstRecordStep::kStart);
}

TEST(NextFirstRecordStep, WaitsForAtMost8KiBOfAHugeRecord) {
  const FirstRecordStep step = NextFirstRecordStep(HandshakeHeader(0x4000), 100, false);
  EXPECT_EQ(step.kind, FirstRecordStep::kWait);
  EXPECT_EQ(step.wanted, kFirstRecordWait);
  EXPECT_EQ(NextFirstRecordStep(HandshakeHeader(0x4000), kFirstRecordWait, false).kind, FirstRecordStep::kStart);
}

TEST(NextFirstRecordStep, PlainHttpStartsAtOnceForOpenSslToRefuse) {
  EXPECT_EQ(NextFirstRecordStep("GET /", 5, false).kind, FirstRecordStep::kStart);
  EXPECT_EQ(NextFirstRecordStep("G", 1, false).kind, FirstRecordStep::kStart);
}

TEST(NextFirstRecordStep, APartOfARecordAndAHangUpIsAFailedHandshake) {
  EXPECT_EQ(NextFirstRecordStep(HandshakeHeader(512), 100, true).kind, FirstRecordStep::kTruncated);
  EXPECT_EQ(NextFirstRecordStep(std::string_view("\x16\x03", 2), 2, true).kind, FirstRecordStep::kTruncated);
  // Whole, then the hang-up: still a handshake to try.
  EXPECT_EQ(NextFirstRecordStep(HandshakeHeader(10), 15, true).kind, FirstRecordStep::kStart);
}

TEST(TlsContext, MissingCertificateNamesTheFile) {
  ofu::testing::TempDir dir;
  auto context = TlsContext::Create({dir.path() + "/none.crt", dir.path() + "/none.key", TlsVersion::kTls12});
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(context.error().message, HasSubstr("cannot serve TLS: tls_server_config.cert_file '"));
  EXPECT_THAT(context.error().message, HasSubstr("/none.crt'"));
  EXPECT_EQ(OpenSslErrors(), "unknown OpenSSL error");  // the queue was left empty
}

}  // namespace
}  // namespace ofu::net
