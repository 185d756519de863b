// Errors as values at library boundaries.
//
// A function that can fail returns Result<T> (or Status when there is no
// value). The error carries a code that the command line maps to an exit
// status, and a message written for the person who has to fix the input:
// it names the file, the line or the field.
//
// Thread-safety: plain values; no shared state.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ofu {

enum class ErrorCode {
  kInvalidArgument,  // a caller passed something unusable (bad flag value, ...)
  kIo,               // a file could not be opened or read
  kMalformedInput,   // a file was read but its content is not valid
  kUnknownModel,     // a GPU model is not in the spec database
  kNoData,           // valid input, but nothing to compute from
  kUnavailable,      // a library, driver, GPU or server cannot be used (missing,
                     // no permission, not supported); the message says what to do
};

struct Error {
  ErrorCode code;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Error error) : state_(std::move(error)) {}      // NOLINT: implicit on purpose

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // Precondition: !ok().
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

struct Ok {};
using Status = Result<Ok>;

inline Status OkStatus() { return Ok{}; }

}  // namespace ofu

// In a function returning Status: returns the Status `expr` gives when it
// is an error, and goes on otherwise.
#define OFU_RETURN_IF_ERROR(expr)               \
  do {                                          \
    if (::ofu::Status s_ = (expr); !s_.ok()) {  \
      return s_;                                \
    }                                           \
  } while (false)
