#include "ofu/platform/dynamic_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace ofu::platform {

Result<std::unique_ptr<DynamicLibrary>> DynamicLibrary::Open(const std::vector<std::string>& candidates) {
  std::string reasons;
  for (const auto& path : candidates) {
    // RTLD_LOCAL keeps the library's symbols out of the global namespace, so
    // two versions of a vendor library cannot collide.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle, path));
    const char* why = dlerror();
    reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", why != nullptr ? why : path);
  }
  if (candidates.empty()) return Error::Unavailable("no library path to try");
  return Error::Unavailable("{}", reasons);
}

DynamicLibrary::~DynamicLibrary() { dlclose(handle_); }

DynamicLibrary::Found DynamicLibrary::Symbol(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    const std::string z(name);
    if (void* address = dlsym(handle_, z.c_str())) return {address, name};
  }
  return {};
}

std::vector<std::string> PluginPathsBeside(const std::filesystem::path& program, std::string_view file_name) {
  const std::filesystem::path dir = program.parent_path();
  return {(dir / file_name).string(), (dir.parent_path() / "lib" / "ofu" / file_name).string()};
}

}  // namespace ofu::platform
