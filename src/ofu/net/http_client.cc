#include "ofu/net/http_client.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "ofu/platform/dynamic_library.h"

namespace ofu::net {
namespace {

// Holds the plugin's client and the library its code lives in; the client
// goes first.
class LoadedHttpClient final : public HttpClient {
 public:
  LoadedHttpClient(std::unique_ptr<platform::DynamicLibrary> library, std::unique_ptr<PluginHttpClient> client)
      : library_(std::move(library)), client_(std::move(client)) {}

  Result<HttpResponse> Get(const std::string& path) override { return Answer(client_->Get(path)); }
  Result<HttpResponse> PostForm(const std::string& path, const HttpForm& form) override {
    return Answer(client_->PostForm(path, form));
  }

 private:
  static Result<HttpResponse> Answer(PluginHttpResponse response) {
    if (!response.error.empty()) return Error::Unavailable("{}", response.error);
    return HttpResponse{response.status, std::move(response.body)};
  }

  std::unique_ptr<platform::DynamicLibrary> library_;
  // Declared after library_, so destroyed before it: its code lives there.
  std::unique_ptr<PluginHttpClient> client_;
};

}  // namespace

std::vector<std::string> HttpPluginPaths(const std::filesystem::path& program,
                                         const std::filesystem::path& build_tree) {
  std::vector<std::string> paths = platform::PluginPathsBeside(program, kHttpPluginFileName);
  // Inside the build tree: the program's path starts with the tree's, a
  // whole component at a time.
  const std::filesystem::path tree = build_tree.lexically_normal();
  const std::filesystem::path where = program.lexically_normal();
  auto [tree_end, where_end] = std::mismatch(tree.begin(), tree.end(), where.begin(), where.end());
  if (!tree.empty() && tree_end == tree.end()) paths.push_back((tree / "apps" / "ofu" / kHttpPluginFileName).string());
  return paths;
}

std::vector<std::string> DefaultHttpPluginPaths() {
  std::error_code unreadable;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", unreadable);
  return HttpPluginPaths(unreadable ? std::filesystem::path() : program, OFU_BUILD_TREE);
}

Result<std::unique_ptr<HttpClient>> OpenHttpClient(const std::string& origin, const HttpClientOptions& options,
                                                   const std::vector<std::string>& plugin_paths) {
  auto library = platform::DynamicLibrary::Open(plugin_paths);
  if (!library.ok()) {
    return Error::Unavailable("ofu's HTTP client plugin did not load ({}); it is built beside ofu as {}",
                              library.error().message, kHttpPluginFileName);
  }
  auto create = (*library)->Function<CreateHttpClientFn>({kHttpPluginSymbol});
  PluginHttpClient* client = create == nullptr ? nullptr : create(kHttpPluginAbiVersion, origin.c_str(), &options);
  if (client == nullptr) {
    return Error::Unavailable("{} is not an ofu HTTP client plugin of this build (ABI {})", (*library)->path(),
                              kHttpPluginAbiVersion);
  }
  return std::unique_ptr<HttpClient>(new LoadedHttpClient(std::move(*library),
                                                          std::unique_ptr<PluginHttpClient>(client)));
}

Result<std::unique_ptr<HttpClient>> OpenHttpClient(const std::string& origin, const HttpClientOptions& options) {
  return OpenHttpClient(origin, options, DefaultHttpPluginPaths());
}

}  // namespace ofu::net
