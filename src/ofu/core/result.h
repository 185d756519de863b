// Errors as values at library boundaries.
//
// A function that can fail returns Result<T> (or Status when there is no
// value). The error carries a code that the command line maps to an exit
// status, and a message written for the person who has to fix the input:
// it names the file, the line or the field.
//
// Thread-safety: plain values; no shared state.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

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

  // Factories, one per code: Error::Io("{}: cannot open: {}", path, why).
  // The message is a fmt format string checked at compile time.
  template <typename... Args>
  static Error InvalidArgument(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Error Io(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kIo, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Error MalformedInput(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kMalformedInput, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Error UnknownModel(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kUnknownModel, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Error NoData(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kNoData, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Error Unavailable(fmt::format_string<Args...> f, Args&&... args) {
    return {ErrorCode::kUnavailable, fmt::format(f, std::forward<Args>(args)...)};
  }

  // The same error with `context` in front: "reading run.om: line 3: ...".
  Error WithContext(std::string_view context) const { return {code, fmt::format("{}: {}", context, message)}; }
};

namespace result_internal {
// Called when value() is asked of an error: a programming error. The code
// base has no exceptions to throw, so it says what the error was and stops.
[[noreturn]] inline void DieOnValueOfError(const Error& error) {
  std::fprintf(stderr, "ofu: internal error: value() of a failed Result: %s\n", error.message.c_str());
  std::abort();
}
}  // namespace result_internal

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit on purpose
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok(). On an error it aborts with the error's message.
  const T& value() const& {
    CheckOk();
    return *std::get_if<T>(&state_);
  }
  T& value() & {
    CheckOk();
    return *std::get_if<T>(&state_);
  }
  T&& value() && {
    CheckOk();
    return std::move(*std::get_if<T>(&state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // Precondition: !ok().
  const Error& error() const { return std::get<Error>(state_); }

 private:
  void CheckOk() const {
    if (const Error* e = std::get_if<Error>(&state_)) result_internal::DieOnValueOfError(*e);
  }

  std::variant<T, Error> state_;
};

struct Ok {};
using Status = Result<Ok>;

inline Status OkStatus() { return Ok{}; }

}  // namespace ofu

// In a function returning Status or any Result: returns the error `expr`
// gives, and goes on otherwise. `expr` is a Status or a Result whose value
// is not needed. Binds a reference (a temporary lives to the end of the
// `if`), so that a named Status is not copied.
#define OFU_RETURN_IF_ERROR(expr)                              \
  do {                                                         \
    if (const auto& ofu_status_ = (expr); !ofu_status_.ok()) { \
      return ofu_status_.error();                              \
    }                                                          \
  } while (false)

// In a function returning Status or any Result:
//   OFU_ASSIGN_OR_RETURN(Recording recording, ReadRecording(path));
//   OFU_ASSIGN_OR_RETURN(existing_variable, Parse(text));
// evaluates the Result once; on an error returns it, else moves its value
// into the left-hand side.
#define OFU_ASSIGN_OR_RETURN(lhs, expr) OFU_ASSIGN_OR_RETURN_IMPL_(OFU_RESULT_CONCAT_(ofu_result_, __LINE__), lhs, expr)
// `tmp` is a name and `lhs` may be a declaration: neither can be put in
// parentheses, as clang-tidy's bugprone-macro-parentheses asks.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define OFU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.error();               \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
#define OFU_RESULT_CONCAT_(a, b) OFU_RESULT_CONCAT_INNER_(a, b)
#define OFU_RESULT_CONCAT_INNER_(a, b) a##b
