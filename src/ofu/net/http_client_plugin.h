// The boundary between ofu and its HTTP client plugin, libofu-http.so (see
// http_client.h for why the client is a plugin). Only http_client.cc and
// the plugin's one source file, http_client_plugin_entry.cc, include this.
//
// The plugin exports one C function, kHttpPluginSymbol, of type
// CreateHttpClientFn: it returns a new PluginHttpClient for `origin`
// ("http://host:port" or "https://host:port") that the caller owns, or
// nullptr when the caller's ABI version is not the plugin's. Plugin and
// program come from the same build, so the C++ types below are the same on
// both sides; they are plain (no ofu library types) so that the plugin links
// nothing of ofu's.
//
// Thread-safety: a PluginHttpClient is used by one thread at a time.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ofu::net {

inline constexpr int kHttpPluginAbiVersion = 1;
inline constexpr std::string_view kHttpPluginSymbol = "ofu_create_http_client";
inline constexpr std::string_view kHttpPluginFileName = "libofu-http.so";

struct HttpClientOptions {
  double timeout_s = 5;      // to connect, and between bytes read
  bool keep_alive = false;   // reuse the connection between requests
  bool tcp_nodelay = false;  // no Nagle delay between a request's head and body
};

// What one request gave: `error` empty and `status` the HTTP status, or
// `error` saying why there is no response (refused, timed out, ...).
struct PluginHttpResponse {
  std::string error;
  int status = 0;
  std::string body;
};

using HttpForm = std::vector<std::pair<std::string, std::string>>;

class PluginHttpClient {
 public:
  virtual ~PluginHttpClient() = default;
  virtual PluginHttpResponse Get(const std::string& path) = 0;
  // POST with an application/x-www-form-urlencoded body.
  virtual PluginHttpResponse PostForm(const std::string& path, const HttpForm& form) = 0;
};

using CreateHttpClientFn = PluginHttpClient* (*)(int abi_version, const char* origin, const HttpClientOptions* options);

}  // namespace ofu::net
