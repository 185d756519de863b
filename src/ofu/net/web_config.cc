#include "ofu/net/web_config.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace ofu::net {
namespace {

// Web configs are a few lines; anything this large is not one.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// Keys of the exporter-toolkit format that ofu does not implement, with what
// to do instead. Listed so the error can say "not supported" rather than
// "unknown": the file is valid for other exporters.
constexpr std::string_view kUnsupportedTopLevel[] = {"http_server_config", "rate_limit", "auth_excluded_paths"};
constexpr std::string_view kUnsupportedTls[] = {"cert",
                                                "key",
                                                "client_ca",
                                                "client_ca_file",
                                                "client_allowed_sans",
                                                "max_version",
                                                "cipher_suites",
                                                "prefer_server_cipher_suites",
                                                "curve_preferences"};

bool Contains(const std::string_view* begin, const std::string_view* end, std::string_view key) {
  return std::find(begin, end, key) != end;
}

// 1-based line of a node, 0 when yaml-cpp has none.
int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

class Parser {
 public:
  Parser(std::string_view source_name, const std::string& base_dir) : source_(source_name), base_dir_(base_dir) {}

  Result<WebConfig> Parse(std::string_view text) {
    if (text.size() > kMaxConfigBytes) {
      return Error::MalformedInput("{}: {} bytes is too large for a web config (limit {})", source_, text.size(),
                                   kMaxConfigBytes);
    }
    try {
      const YAML::Node root = YAML::Load(std::string(text));
      return ParseRoot(root);
    } catch (const YAML::Exception& e) {
      const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
      return Error::MalformedInput("{}:{}: not valid YAML: {}", source_, line, e.msg);
    }
  }

 private:
  Error At(const YAML::Node& node, std::string_view message) const {
    return Error::MalformedInput("{}:{}: {}", source_, LineOf(node), message);
  }

  // Keys of a mapping, in order, rejecting duplicates: yaml-cpp keeps
  // either silently, and which password counts must not be a guess.
  Result<std::vector<std::pair<YAML::Node, YAML::Node>>> Entries(const YAML::Node& map, std::string_view what) const {
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    std::set<std::string> seen;
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) return At(entry.first, fmt::format("{}: keys must be strings", what));
      if (!seen.insert(entry.first.Scalar()).second) {
        return At(entry.first, fmt::format("{}: duplicate key '{}'", what, entry.first.Scalar()));
      }
      entries.emplace_back(entry.first, entry.second);
    }
    return entries;
  }

  Result<std::string> String(const YAML::Node& key, const YAML::Node& value) const {
    if (!value.IsScalar()) {
      return At(value.IsNull() ? key : value, fmt::format("'{}' must be a string", key.Scalar()));
    }
    return value.Scalar();
  }

  Result<WebConfig> ParseRoot(const YAML::Node& root) {
    WebConfig config;
    if (root.IsNull()) return config;  // an empty file: plain HTTP, no auth (as exporter-toolkit)
    if (!root.IsMap()) return At(root, "the web config must be a mapping (tls_server_config, basic_auth_users)");
    OFU_ASSIGN_OR_RETURN(auto entries, Entries(root, "web config"));
    for (const auto& [key, value] : entries) {
      const std::string& name = key.Scalar();
      if (name == "tls_server_config") {
        OFU_ASSIGN_OR_RETURN(auto tls, ParseTls(key, value));
        config.tls = std::move(tls);
      } else if (name == "basic_auth_users") {
        OFU_ASSIGN_OR_RETURN(auto users, ParseUsers(value));
        config.basic_auth_users = std::move(users);
      } else if (Contains(std::begin(kUnsupportedTopLevel), std::end(kUnsupportedTopLevel), name)) {
        return At(key, fmt::format("'{}' is not supported by ofu; remove it (ofu refuses to serve with "
                                   "settings it would ignore)",
                                   name));
      } else {
        return At(key, fmt::format("unknown key '{}' (known: tls_server_config, basic_auth_users)", name));
      }
    }
    return config;
  }

  Result<TlsServerConfig> ParseTls(const YAML::Node& key, const YAML::Node& value) {
    // exporter-toolkit serves plain HTTP for an empty tls_server_config; a
    // section written but left empty more likely means TLS was intended.
    if (value.IsNull() || (value.IsMap() && value.size() == 0)) {
      return At(key, "tls_server_config is empty: give cert_file and key_file, or remove it");
    }
    if (!value.IsMap()) return At(value, "tls_server_config must be a mapping");
    OFU_ASSIGN_OR_RETURN(auto entries, Entries(value, "tls_server_config"));
    TlsServerConfig tls;
    for (const auto& [field, field_value] : entries) {
      const std::string& name = field.Scalar();
      if (name == "cert_file" || name == "key_file") {
        OFU_ASSIGN_OR_RETURN(auto path, String(field, field_value));
        if (path.empty()) return At(field, fmt::format("tls_server_config.{} is empty", name));
        (name == "cert_file" ? tls.cert_file : tls.key_file) = Resolve(path);
      } else if (name == "min_version") {
        OFU_ASSIGN_OR_RETURN(auto version, String(field, field_value));
        if (version == "TLS12") {
          tls.min_version = TlsVersion::kTls12;
        } else if (version == "TLS13") {
          tls.min_version = TlsVersion::kTls13;
        } else {
          return At(field_value,
                    fmt::format("tls_server_config.min_version '{}': ofu accepts TLS12 or TLS13", version));
        }
      } else if (name == "client_auth_type") {
        OFU_ASSIGN_OR_RETURN(auto type, String(field, field_value));
        // NoClientCert is the default; anything else asks for client
        // certificates, which ofu does not implement.
        if (type != "NoClientCert") {
          return At(field_value, fmt::format("tls_server_config.client_auth_type '{}' is not supported by ofu "
                                             "(only NoClientCert); use basic_auth_users",
                                             type));
        }
      } else if (Contains(std::begin(kUnsupportedTls), std::end(kUnsupportedTls), name)) {
        return At(field, fmt::format("tls_server_config.{} is not supported by ofu; remove it (ofu refuses "
                                     "to serve with settings it would ignore)",
                                     name));
      } else {
        return At(field, fmt::format("unknown key 'tls_server_config.{}'", name));
      }
    }
    if (tls.cert_file.empty()) return At(key, "tls_server_config needs cert_file");
    if (tls.key_file.empty()) return At(key, "tls_server_config needs key_file");
    return tls;
  }

  Result<std::map<std::string, std::string>> ParseUsers(const YAML::Node& value) {
    std::map<std::string, std::string> users;
    if (value.IsNull()) return users;  // "no basic authentication is required"
    if (!value.IsMap()) return At(value, "basic_auth_users must be a mapping of user: bcrypt-hash");
    OFU_ASSIGN_OR_RETURN(auto entries, Entries(value, "basic_auth_users"));
    for (const auto& [user, hash] : entries) {
      const std::string& name = user.Scalar();
      if (name.empty() || name.find(':') != std::string::npos) {
        return At(user, fmt::format("basic_auth_users: user '{}' must be non-empty and without ':'", name));
      }
      if (!hash.IsScalar() || !IsBcryptHash(hash.Scalar())) {
        // The hash itself stays out of the message: it is a secret.
        return At(hash.IsNull() ? user : hash,
                  fmt::format("basic_auth_users.{}: not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 60 "
                              "characters); make one with htpasswd -nBC 10 \"\" | tr -d ':\\n'",
                              name));
      }
      users[name] = hash.Scalar();
    }
    return users;
  }

  static bool IsBcryptHash(std::string_view hash) {
    if (hash.size() != 60) return false;
    if (hash.substr(0, 4) != "$2a$" && hash.substr(0, 4) != "$2b$" && hash.substr(0, 4) != "$2y$") return false;
    if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$') return false;
    const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
    if (cost < 4 || cost > 31) return false;
    return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
      return c == '.' || c == '/' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    });
  }

  // As exporter-toolkit's SetDirectory: relative paths are relative to the
  // config file, so a config and its certificates move together.
  std::string Resolve(const std::string& path) const {
    const std::filesystem::path p(path);
    if (p.is_absolute() || base_dir_.empty()) return path;
    return (std::filesystem::path(base_dir_) / p).string();
  }

  std::string source_;
  std::string base_dir_;
};

Status CheckReadable(const std::string& path, std::string_view field, std::string_view source_name) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Error::Io("{}: tls_server_config.{} '{}' cannot be read", source_name, field, path);
  }
  return OkStatus();
}

}  // namespace

Result<WebConfig> ParseWebConfig(std::string_view text, std::string_view source_name, const std::string& base_dir) {
  return Parser(source_name, base_dir).Parse(text);
}

Status CheckWebConfigFiles(const WebConfig& config, std::string_view source_name) {
  if (!config.tls) return OkStatus();
  if (auto status = CheckReadable(config.tls->cert_file, "cert_file", source_name); !status.ok()) return status;
  return CheckReadable(config.tls->key_file, "key_file", source_name);
}

Result<WebConfig> LoadWebConfig(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error::Io("{}: cannot open the web config", path);
  std::string text(kMaxConfigBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) return Error::Io("{}: read failed", path);
  text.resize(static_cast<std::size_t>(file.gcount()));
  OFU_ASSIGN_OR_RETURN(auto config, ParseWebConfig(text, path, std::filesystem::path(path).parent_path().string()));
  OFU_RETURN_IF_ERROR(CheckWebConfigFiles(config, path));
  return config;
}

}  // namespace ofu::net
