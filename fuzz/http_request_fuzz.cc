// libFuzzer entry for the request-head parser of the agent's HTTP server
// (sinks/http_request.h): every byte of it comes from the network, before
// any authentication.
//
// Checks, besides memory safety: the end FindRequestHeadEnd reports lies
// within the input and does not move when more bytes follow (the server
// reads a head in pieces), and a parsed head's path is never longer than
// its target.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ofu/net/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::size_t checksum = 0;
  const auto end = ofu::net::FindRequestHeadEnd(bytes);
  if (end) {
    if (*end > bytes.size()) std::abort();
    if (ofu::net::FindRequestHeadEnd(std::string(bytes) + "GET / HTTP/1.1\r\n\r\n") != end) std::abort();
    const auto head = ofu::net::ParseRequestHead(bytes.substr(0, *end));
    if (head.ok()) {
      if (head->path.size() > head->target.size()) std::abort();
      checksum += head->fields.size() + head->JoinedField("accept").size() + head->CountField("host") +
                  (head->Field("authorization") ? 1 : 0) + (head->KeepAlive() ? 1 : 0) +
                  static_cast<std::size_t>(head->content_length % 7);
    } else {
      checksum += head.error().message.size();
    }
  }
  // The whole input too, head or not: the parser must refuse what is not one.
  const auto whole = ofu::net::ParseRequestHead(bytes);
  checksum += whole.ok() ? whole->method.size() : whole.error().message.size();
  // Keeps the results (and so every read) observable.
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
