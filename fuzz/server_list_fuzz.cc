// libFuzzer entry for a file of Prometheus servers (`--prometheus-file`,
// history/prometheus_servers.h): any bytes. A list it accepts has at least
// one URL, each http:// or https://, with no surrounding space or newline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/history/prometheus_servers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto urls = ofu::history::ParseServerList(std::string_view(reinterpret_cast<const char*>(data), size),
                                                  "servers.txt");
  if (!urls.ok()) return 0;
  if (urls->empty()) std::abort();
  for (const std::string& url : *urls) {
    if (!url.starts_with("http://") && !url.starts_with("https://")) std::abort();
    if (url.find('\n') != std::string::npos || url.back() == ' ') std::abort();
  }
  return 0;
}
