// What the HTTP-server and web-config tests share: bcrypt hashes made here
// and a scratch directory that removes itself.
#pragma once

#include <crypt.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace ofu::testing {

// A bcrypt hash at the lowest cost (4), so tests stay fast; "" on failure.
inline std::string Bcrypt(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 4, nullptr, 0, setting, sizeof setting) == nullptr) return "";
  auto data = std::make_unique<crypt_data>();
  const char* hash = crypt_rn(password.c_str(), setting, data.get(), static_cast<int>(sizeof(crypt_data)));
  return hash == nullptr ? "" : hash;
}

class TempDir {
 public:
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "ofu-web-XXXXXX").string();
    path_ = mkdtemp(name.data()) != nullptr ? name : "";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace ofu::testing
