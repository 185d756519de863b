#include "ofu/sources/clock.h"

#include <chrono>
#include <thread>

namespace ofu::sources {

double SystemClock::NowS() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(since_epoch).count();
}

void SystemClock::SleepS(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace ofu::sources
