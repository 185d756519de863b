// A shared library opened with dlopen, and its symbols.
//
// NVML, DCGM and CUPTI are never linked: ofu must start on machines without
// them and say what is missing. Open() tries each candidate path in order
// (a bare soname goes through the dynamic linker's search; a path with a
// '/' is used as is) and reports every failure when none opens.
//
// Symbol() takes names newest version first ("nvmlInit_v2", "nvmlInit") and
// returns the first one the library exports, so one binary works across
// driver generations. The library stays loaded until the object dies;
// pointers obtained from it must not outlive it.
//
// Thread-safety: Symbol() may be called from several threads.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::platform {

class DynamicLibrary {
 public:
  // Errors: kUnavailable, naming every path tried and dlerror()'s reason.
  static Result<std::unique_ptr<DynamicLibrary>> Open(const std::vector<std::string>& candidates);

  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The address of the first of `names` that the library exports, with the
  // name found; {nullptr, ""} when none is.
  struct Found {
    void* address = nullptr;
    std::string_view name;
  };
  Found Symbol(std::initializer_list<std::string_view> names) const;

  // Typed convenience: the first exported symbol as a function pointer.
  template <typename Fn>
  Fn Function(std::initializer_list<std::string_view> names) const {
    return reinterpret_cast<Fn>(Symbol(names).address);
  }

  const std::string& path() const { return path_; }

  // True for ofu's own in-tree test doubles (tests/doubles/), which export
  // kTestDoubleMarker. Data from a double is synthetic and every source
  // must say so, so a recording made in a test is never taken for a GPU's.
  bool IsTestDouble() const { return Symbol({kTestDoubleMarker}).address != nullptr; }
  static constexpr std::string_view kTestDoubleMarker = "ofu_test_double_marker";

 private:
  DynamicLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// Where ofu looks for one of its own plugins (libofu-kubelet.so,
// libofu-http.so), given the program that opens it: beside the program,
// then in ../lib/ofu/ from it (the installed layout, deploy/install.cmake).
std::vector<std::string> PluginPathsBeside(const std::filesystem::path& program, std::string_view file_name);

}  // namespace ofu::platform
