// The web config (exporter-toolkit's format) and the basic-auth check.
#include "ofu/net/web_config.h"

#include <crypt.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "net/web_test_support.h"
#include "ofu/net/basic_auth.h"

namespace ofu::net {
namespace {

using ::testing::HasSubstr;

// bcrypt("fakepassword") at cost 10, made by Go's golang.org/x/crypto/bcrypt:
// the decoy hash in exporter-toolkit's web/handler.go. Checks that libxcrypt
// reads hashes the Prometheus ecosystem writes ($2y$).
constexpr char kGoHashOfFakepassword[] = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

using ofu::testing::Bcrypt;
using ofu::testing::TempDir;

TEST(WebConfigTest, ParsesTlsAndUsersAndResolvesRelativePathsAgainstBaseDir) {
  const std::string text =
      "tls_server_config:\n"
      "  cert_file: server.crt\n"
      "  key_file: /etc/ofu/server.key\n"
      "  min_version: TLS13\n"
      "basic_auth_users:\n"
      "  alice: " +
      std::string(kGoHashOfFakepassword) + "\n";
  auto config = ParseWebConfig(text, "web.yml", "/etc/ofu/conf.d");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_TRUE(config->tls.has_value());
  EXPECT_EQ(config->tls->cert_file, "/etc/ofu/conf.d/server.crt");
  EXPECT_EQ(config->tls->key_file, "/etc/ofu/server.key");  // absolute: unchanged
  EXPECT_EQ(config->tls->min_version, TlsVersion::kTls13);
  ASSERT_EQ(config->basic_auth_users.size(), 1u);
  EXPECT_EQ(config->basic_auth_users.at("alice"), kGoHashOfFakepassword);
}

TEST(WebConfigTest, EmptyFileMeansPlainHttpWithoutAuth) {
  auto config = ParseWebConfig("", "web.yml", "");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_FALSE(config->tls.has_value());
  EXPECT_TRUE(config->basic_auth_users.empty());
}

TEST(WebConfigTest, UnknownKeyIsAnErrorNamingKeyAndLine) {
  auto config = ParseWebConfig("basic_auth_users:\n  bob: " + std::string(kGoHashOfFakepassword) +
                                   "\ntls_server_confg:\n  cert_file: a\n",
                               "web.yml", "");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kMalformedInput);
  EXPECT_THAT(config.error().message, HasSubstr("web.yml:3:"));
  EXPECT_THAT(config.error().message, HasSubstr("tls_server_confg"));
}

TEST(WebConfigTest, UnimplementedSecuritySettingFailsClosed) {
  auto config = ParseWebConfig("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_ca_file: ca.crt\n",
                               "web.yml", "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr("web.yml:4:"));
  EXPECT_THAT(config.error().message, HasSubstr("client_ca_file is not supported"));

  auto mtls = ParseWebConfig(
      "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: RequireAndVerifyClientCert\n",
      "web.yml", "");
  ASSERT_FALSE(mtls.ok());
  EXPECT_THAT(mtls.error().message, HasSubstr("web.yml:4:"));

  auto limit = ParseWebConfig("rate_limit:\n  burst: 20\n", "web.yml", "");
  ASSERT_FALSE(limit.ok());
  EXPECT_THAT(limit.error().message, HasSubstr("web.yml:1: 'rate_limit' is not supported"));
}

TEST(WebConfigTest, MalformedYamlNamesTheLine) {
  auto config = ParseWebConfig("basic_auth_users:\n  alice: x\n  bob: y: z\n", "web.yml", "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr("web.yml:"));
  EXPECT_THAT(config.error().message, HasSubstr("not valid YAML"));

  auto tab = ParseWebConfig("tls_server_config:\n  cert_file: a\n key_file: [b\n", "web.yml", "");
  ASSERT_FALSE(tab.ok());
  EXPECT_THAT(tab.error().message, HasSubstr("web.yml:3:"));
}

TEST(WebConfigTest, TlsNeedsCertAndKey) {
  auto missing_key = ParseWebConfig("tls_server_config:\n  cert_file: a.crt\n", "web.yml", "");
  ASSERT_FALSE(missing_key.ok());
  EXPECT_THAT(missing_key.error().message, HasSubstr("web.yml:1: tls_server_config needs key_file"));

  auto empty = ParseWebConfig("tls_server_config:\n", "web.yml", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("tls_server_config is empty"));
}

TEST(WebConfigTest, RejectsWhatIsNotABcryptHashWithoutPrintingIt) {
  auto config = ParseWebConfig("basic_auth_users:\n  alice: plaintext-secret\n", "web.yml", "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr("web.yml:2: basic_auth_users.alice: not a bcrypt hash"));
  EXPECT_THAT(config.error().message, ::testing::Not(HasSubstr("plaintext-secret")));

  auto duplicate = ParseWebConfig("basic_auth_users:\n  a: " + std::string(kGoHashOfFakepassword) +
                                      "\n  a: " + std::string(kGoHashOfFakepassword) + "\n",
                                  "web.yml", "");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_THAT(duplicate.error().message, HasSubstr("web.yml:3: basic_auth_users: duplicate key 'a'"));
}

TEST(WebConfigTest, LoadResolvesAgainstTheFilesDirectoryAndChecksFiles) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.Write("server.crt", "not checked here");
  const std::string path = dir.Write("web.yml",
                                     "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");

  auto missing = LoadWebConfig(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  EXPECT_THAT(missing.error().message, HasSubstr("key_file '" + dir.path() + "/server.key' cannot be read"));

  dir.Write("server.key", "not checked here");
  auto config = LoadWebConfig(path);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->tls->cert_file, dir.path() + "/server.crt");

  auto absent = LoadWebConfig(dir.path() + "/nope.yml");
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.error().message, HasSubstr("nope.yml: cannot open"));
}

TEST(BasicAuthenticatorTest, AcceptsHashesMadeByGo) {
  BasicAuthenticator auth(std::map<std::string, std::string>{{"prometheus", kGoHashOfFakepassword}});
  EXPECT_TRUE(auth.Check("prometheus", "fakepassword"));
  EXPECT_FALSE(auth.Check("prometheus", "fakepassword2"));
  EXPECT_FALSE(auth.Check("prometheus", "fakepasswor"));
}

TEST(BasicAuthenticatorTest, CachesSuccessOnlyAndNeverLetsAWrongPasswordThrough) {
  const std::string hash = Bcrypt("s3cret");
  ASSERT_EQ(hash.size(), 60u);
  BasicAuthenticator auth(std::map<std::string, std::string>{{"alice", hash}, {"bob", Bcrypt("other")}});

  EXPECT_TRUE(auth.Check("alice", "s3cret"));
  EXPECT_EQ(auth.bcrypt_runs(), 1u);
  EXPECT_TRUE(auth.Check("alice", "s3cret"));
  EXPECT_EQ(auth.bcrypt_runs(), 1u);  // served from the cache

  EXPECT_FALSE(auth.Check("alice", "wrong"));
  EXPECT_FALSE(auth.Check("alice", "wrong"));
  EXPECT_EQ(auth.bcrypt_runs(), 3u);              // failures are computed every time
  EXPECT_FALSE(auth.Check("bob", "s3cret"));      // alice's password is not bob's
  EXPECT_FALSE(auth.Check("mallory", "s3cret"));  // unknown user, still a bcrypt
  EXPECT_EQ(auth.bcrypt_runs(), 5u);
  EXPECT_FALSE(auth.Check("alice", std::string("s3cret\0x", 8)));
  EXPECT_FALSE(auth.Check("alice", ""));
}

TEST(BasicAuthorizationTest, DecodesBasicCredentials) {
  // base64("alice:s3cret:with colon") = YWxpY2U6czNjcmV0OndpdGggY29sb24=
  auto credentials = ParseBasicAuthorization("Basic YWxpY2U6czNjcmV0OndpdGggY29sb24=");
  ASSERT_TRUE(credentials.has_value());
  EXPECT_EQ(credentials->user, "alice");
  EXPECT_EQ(credentials->password, "s3cret:with colon");

  auto lower = ParseBasicAuthorization("basic YTpi");  // "a:b"
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(lower->user, "a");
  EXPECT_EQ(lower->password, "b");

  auto two_pad = ParseBasicAuthorization("Basic YTo=");  // "a:"
  ASSERT_TRUE(two_pad.has_value());
  EXPECT_EQ(two_pad->password, "");

  EXPECT_FALSE(ParseBasicAuthorization("").has_value());
  EXPECT_FALSE(ParseBasicAuthorization("Bearer YTpi").has_value());
  EXPECT_FALSE(ParseBasicAuthorization("BasicYTpi").has_value());
  EXPECT_FALSE(ParseBasicAuthorization("Basic YTpi=").has_value());  // length not a multiple of 4
  EXPECT_FALSE(ParseBasicAuthorization("Basic Y T p").has_value());  // not the alphabet
  EXPECT_FALSE(ParseBasicAuthorization("Basic YWJj").has_value());   // "abc": no colon
  EXPECT_FALSE(ParseBasicAuthorization("Basic ====").has_value());
}

}  // namespace
}  // namespace ofu::net
