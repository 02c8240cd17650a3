// Errors: recoverable failures from outside input are values (Result<T>), broken invariants abort.
// Error carries a code plus a message that says what and where (file, tensor, field, line,
// expected vs got). Only cli/ turns errors into exit codes; the library never exits or prints.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gpstream {

enum class ErrorCode { InvalidArgument, NotFound, Io, Format, Unsupported, OutOfRange, Internal };

class [[nodiscard]] Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prepends context ("loading model.safetensors: ") to the message.
  Error with_context(const std::string& context) const { return Error(code_, context + ": " + message_); }

 private:
  ErrorCode code_;
  std::string message_;
};

inline Error invalid_argument(std::string m) {
  return Error(ErrorCode::InvalidArgument, std::move(m));
}
inline Error format_error(std::string m) {
  return Error(ErrorCode::Format, std::move(m));
}
inline Error io_error(std::string m) {
  return Error(ErrorCode::Io, std::move(m));
}
inline Error unsupported(std::string m) {
  return Error(ErrorCode::Unsupported, std::move(m));
}
inline Error not_found(std::string m) {
  return Error(ErrorCode::NotFound, std::move(m));
}
inline Error out_of_range(std::string m) {
  return Error(ErrorCode::OutOfRange, std::move(m));
}

// A value or an Error. Access to the wrong alternative is a bug and aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & {
    check_ok();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check_ok();
    return std::get<0>(v_);
  }
  T&& value() && {
    check_ok();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const {
    if (ok()) {
      std::fprintf(stderr, "gpstream: Result::error() on a value\n");
      std::abort();
    }
    return std::get<1>(v_);
  }

 private:
  void check_ok() const {
    if (!ok()) {
      std::fprintf(stderr, "gpstream: unchecked error: %s\n", std::get<1>(v_).message().c_str());
      std::abort();
    }
  }
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

[[noreturn]] inline void assert_fail(const char* cond, const char* msg, const char* file, int line) {
  std::fprintf(stderr, "gpstream: internal error at %s:%d: %s (%s)\n", file, line, msg, cond);
  std::abort();
}

}  // namespace gpstream

// A broken invariant (a bug, never bad input): aborts with file:line, also in release builds.
#define GPS_ASSERT(cond, msg)                                             \
  do {                                                                    \
    if (!(cond)) ::gpstream::assert_fail(#cond, msg, __FILE__, __LINE__); \
  } while (0)

// Propagates an error from a Result/Status expression out of a function returning Result/Status.
#define GPS_TRY(expr)                                \
  do {                                               \
    auto&& gps_try_r_ = (expr);                      \
    if (!gps_try_r_.ok()) return gps_try_r_.error(); \
  } while (0)

#define GPS_CONCAT_INNER(a, b) a##b
#define GPS_CONCAT(a, b) GPS_CONCAT_INNER(a, b)
// GPS_ASSIGN(auto x, expr): binds the value of a Result or returns its error.
#define GPS_ASSIGN(decl, expr) GPS_ASSIGN_IMPL(GPS_CONCAT(gps_assign_r_, __LINE__), decl, expr)
#define GPS_ASSIGN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                     \
  if (!tmp.ok()) return tmp.error();     \
  decl = std::move(tmp).value()
