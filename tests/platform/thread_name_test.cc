// NameThisThread (thread_name.h): the name the kernel keeps for a thread,
// read back from /proc/self/task/TID/comm, cut at 15 bytes.
#include "ofu/platform/thread_name.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace ofu::platform {
namespace {

// The name of the calling thread as the kernel keeps it.
std::string ThisThreadsName() {
  std::ifstream comm("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

TEST(NameThisThread, ShortNamesAreKeptAndLongOnesCutAt15Bytes) {
  std::string short_name, long_name;
  std::thread([&] {
    NameThisThread("ofu-http");
    short_name = ThisThreadsName();
    NameThisThread("ofu-a-very-long-thread-name");
    long_name = ThisThreadsName();
  }).join();
  EXPECT_EQ(short_name, "ofu-http");
  EXPECT_EQ(long_name, "ofu-a-very-long");
  EXPECT_EQ(long_name.size(), kMaxThreadNameBytes);
}

}  // namespace
}  // namespace ofu::platform
