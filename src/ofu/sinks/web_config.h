// The agent's web config: TLS and basic auth for /metrics, in the format of
// Prometheus' `--web.config.file` (the exporter-toolkit's web-configuration.md),
// so one file can serve node_exporter, dcgm-exporter and ofu alike:
//
//   tls_server_config:
//     cert_file: server.crt      # relative paths: against the file's directory
//     key_file: server.key
//     min_version: TLS12         # optional: TLS12 (default) or TLS13
//   basic_auth_users:
//     prometheus: $2y$10$...     # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//
// ofu implements a subset and fails closed: a key it does not implement
// (cert/key inline, client_ca_file, client_auth_type other than NoClientCert,
// max_version, cipher_suites, http_server_config, rate_limit,
// auth_excluded_paths, ...) is an error naming the key, never silently
// ignored, because ignoring a security setting serves with less protection
// than its author asked for.
//
// Errors name the file and the 1-based line.
//
// Thread-safety: ParseWebConfig/LoadWebConfig are pure functions of their
// inputs; a BasicAuthenticator may be shared by threads (it locks).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::sinks {

enum class TlsVersion { kTls12, kTls13 };

struct TlsServerConfig {
  std::string cert_file;                        // PEM certificate (chain), resolved against the config's directory
  std::string key_file;                         // PEM private key, resolved likewise
  TlsVersion min_version = TlsVersion::kTls12;  // exporter-toolkit's default
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;                   // absent: plain HTTP
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash; empty: no auth
};

// Parses the text of a web config. `source_name` names it in errors;
// relative cert/key paths are joined to `base_dir` (unchanged when it is
// empty). Touches no file: see CheckWebConfigFiles.
Result<WebConfig> ParseWebConfig(std::string_view text, std::string_view source_name, const std::string& base_dir);

// Checks that the files the config names can be opened for reading.
Status CheckWebConfigFiles(const WebConfig& config, std::string_view source_name);

// Reads `path`, parses it with its directory as base, and checks its files.
Result<WebConfig> LoadWebConfig(const std::string& path);

// Verifies basic-auth credentials against bcrypt hashes (libxcrypt).
//
// bcrypt costs ~70 ms at cost 10 by design, and Prometheus sends the same
// credentials every scrape, so successful verifications are cached (as the
// exporter-toolkit does). The cache key is SHA-256 over user, stored hash
// and password, so a hit proves this very password verified against this
// very hash before; failures are never cached, so there is nothing to hit
// with a wrong password. Verifications run one at a time (a flood of wrong
// passwords costs at most one core), and an unknown user is checked against
// a configured hash anyway, so timing does not reveal which users exist.
class BasicAuthenticator {
 public:
  // `users`: user -> bcrypt hash, as ParseWebConfig validated them.
  explicit BasicAuthenticator(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }

  // True when `password` is the user's. Thread-safe.
  bool Check(std::string_view user, std::string_view password);

  // True when this user and password verified before and are still cached:
  // Check would answer true without a bcrypt. False says nothing (ask
  // Check). Cheap, so an event loop may call it inline and hand only the
  // misses to a thread that may block on bcrypt. Thread-safe.
  bool CheckCached(std::string_view user, std::string_view password) const;

  // Verifications actually computed (not served from the cache); for tests.
  std::size_t bcrypt_runs() const;

 private:
  using Digest = std::array<unsigned char, 32>;
  static constexpr std::size_t kMaxCached = 100;

  const std::map<std::string, std::string> users_;
  mutable std::mutex cache_mutex_;
  std::set<Digest> verified_;    // guarded by cache_mutex_
  std::size_t bcrypt_runs_ = 0;  // guarded by cache_mutex_
  std::mutex bcrypt_mutex_;      // one bcrypt at a time
};

// Decodes an `Authorization: Basic <base64(user:password)>` header value.
// Absent when it is not Basic or is malformed.
struct BasicCredentials {
  std::string user;
  std::string password;
};
std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header);

}  // namespace ofu::sinks
