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
// The users' passwords are checked by basic_auth.h.
//
// Thread-safety: ParseWebConfig/LoadWebConfig are pure functions of their
// inputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::net {

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

}  // namespace ofu::net
