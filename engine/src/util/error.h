// Two kinds of failure, kept apart as Halide does: a UserError is bad input and
// becomes one line naming the fix with exit code 2; an internal_assert is a bug
// in kernelopt itself.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace kopt {

struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `file:line:col: message` — the form editors and terminals link to.
inline UserError located_error(const std::string& file, uint32_t line, uint32_t col, const std::string& msg) {
  return UserError(fmt::format("{}:{}:{}: {}", file, line, col + 1, msg));
}

[[noreturn]] inline void internal_error(const char* file, int line, const std::string& msg) {
  throw std::logic_error(fmt::format("internal error at {}:{}: {} (please report this)", file, line, msg));
}

}  // namespace kopt

#define KOPT_INTERNAL_ASSERT(cond, msg) \
  do {                                  \
    if (!(cond)) ::kopt::internal_error(__FILE__, __LINE__, msg); \
  } while (0)
