#include "ofu/platform/thread_name.h"

#include <pthread.h>

#include <string>

namespace ofu::platform {

void NameThisThread(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadNameBytes));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace ofu::platform
