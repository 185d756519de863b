// libofu-http.so: ofu's HTTP client on cpp-httplib (http_client.h says why
// it is a plugin; http_client_plugin.h is the boundary).
#include <httplib.h>

#include <chrono>

#include "ofu/net/http_client_plugin.h"

namespace ofu::net {
namespace {

class HttplibClient final : public PluginHttpClient {
 public:
  HttplibClient(const std::string& origin, const HttpClientOptions& options) : client_(origin) {
    const auto timeout =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(options.timeout_s));
    client_.set_connection_timeout(timeout);
    client_.set_read_timeout(timeout);
    client_.set_keep_alive(options.keep_alive);
    client_.set_tcp_nodelay(options.tcp_nodelay);
  }

  PluginHttpResponse Get(const std::string& path) override { return Of(client_.Get(path)); }

  PluginHttpResponse PostForm(const std::string& path, const HttpForm& form) override {
    httplib::Params params;
    for (const auto& [name, value] : form) params.emplace(name, value);
    return Of(client_.Post(path, params));
  }

 private:
  static PluginHttpResponse Of(const httplib::Result& result) {
    PluginHttpResponse response;
    if (!result) {
      response.error = httplib::to_string(result.error());
      return response;
    }
    response.status = result->status;
    response.body = result->body;
    return response;
  }

  httplib::Client client_;
};

}  // namespace
}  // namespace ofu::net

extern "C" __attribute__((visibility("default"))) ofu::net::PluginHttpClient* ofu_create_http_client(
    int abi_version, const char* origin, const ofu::net::HttpClientOptions* options) {
  if (abi_version != ofu::net::kHttpPluginAbiVersion || origin == nullptr || options == nullptr) return nullptr;
  return new ofu::net::HttplibClient(origin, *options);
}
