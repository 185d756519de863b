// libFuzzer entry for the agent's web config (YAML, exporter-toolkit format)
// and the Authorization header parser: both read bytes from outside.
//
// ParseWebConfig touches no file, so the fuzzer only exercises parsing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ofu/net/basic_auth.h"
#include "ofu/net/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto config = ofu::net::ParseWebConfig(text, "fuzz.yml", "/etc/ofu");
  std::size_t checksum = config.ok() ? config->basic_auth_users.size() + (config->tls ? 1 : 0)
                                     : config.error().message.size();
  const auto credentials = ofu::net::ParseBasicAuthorization(text);
  if (credentials) checksum += credentials->user.size() + credentials->password.size();
  // Keeps the results (and so every read) observable.
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
