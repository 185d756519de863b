// ofu's HTTP client: GET a page (the scrape source reads dcgm-exporter) and
// POST a form (the Prometheus client's queries).
//
// The client is cpp-httplib, and it lives in a plugin, libofu-http.so, that
// OpenHttpClient() loads on first use. Linking cpp-httplib costs a process
// about 2.8 MiB of resident memory whether it makes a request or not: the
// library's load-time constructor initialises OpenSSL and loads its error
// strings, and with it libbrotli and zlib (docs/BENCHMARKS.md, issue 29). The
// agent on a GPU node reads NVML or DCGM and never makes a request, so it
// should not carry that; the commands that do (`--source scrape`,
// `report --prometheus`, `regress`, ...) load the plugin when they open a
// client.
//
// Where the plugin is looked for, in order (HttpPluginPaths): beside the
// running program (/proc/self/exe), in ../lib/ofu/ from it (the installed
// layout, deploy/install.cmake), and, only for a program that runs from
// inside the build tree it was built in (a test, a benchmark, a tool), that
// tree's apps/ofu/, where the plugin is built. An installed ofu never looks
// in a build tree.
//
// Thread-safety: a client is used by one thread at a time; separate clients
// may be used from separate threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/net/http_client_plugin.h"

namespace ofu::net {

struct HttpResponse {
  int status = 0;  // the HTTP status code, as sent (200, 404, 503, ...)
  std::string body;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Errors: kUnavailable with why no response came, in cpp-httplib's words
  // ("Connection", "Read", ...); the caller names the URL. Any HTTP status
  // is a response.
  virtual Result<HttpResponse> Get(const std::string& path) = 0;
  virtual Result<HttpResponse> PostForm(const std::string& path, const HttpForm& form) = 0;
};

// A client for `origin`, "http://host[:port]" (https:// too). Errors:
// kUnavailable when the plugin cannot be loaded from any of `plugin_paths`
// (naming each path and why) or is not of this build.
Result<std::unique_ptr<HttpClient>> OpenHttpClient(const std::string& origin, const HttpClientOptions& options,
                                                   const std::vector<std::string>& plugin_paths);
Result<std::unique_ptr<HttpClient>> OpenHttpClient(const std::string& origin, const HttpClientOptions& options);

// The paths to try for `program`, built in `build_tree` (see the file
// comment). Pure: looks at the paths only.
std::vector<std::string> HttpPluginPaths(const std::filesystem::path& program, const std::filesystem::path& build_tree);

// HttpPluginPaths of this process's program (/proc/self/exe) and this
// build's tree: what the two-argument OpenHttpClient tries.
std::vector<std::string> DefaultHttpPluginPaths();

}  // namespace ofu::net
