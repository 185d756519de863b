#include "ofu/attribution/small_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ofu::attribution {
namespace {

FileRead Failure(int err) {
  FileRead read;
  read.status = (err == ENOENT || err == ESRCH)   ? FileStatus::kMissing
                : (err == EACCES || err == EPERM) ? FileStatus::kDenied
                                                  : FileStatus::kFailed;
  read.error = std::strerror(err);
  return read;
}

}  // namespace

FileRead ReadSmallFile(const std::string& path, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Failure(errno);
  FileRead read;
  read.status = FileStatus::kOk;
  char buffer[4096];
  while (read.content.size() < limit) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Failure(err);  // e.g. ESRCH when the process exits mid-read
    }
    if (n == 0) break;
    read.content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (read.content.size() > limit) read.content.resize(limit);
  return read;
}

}  // namespace ofu::attribution
