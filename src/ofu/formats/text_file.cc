#include "ofu/formats/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ofu::formats {

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error::Io("{}: cannot read: {}", path, std::strerror(errno));
  return text.str();
}

}  // namespace ofu::formats
