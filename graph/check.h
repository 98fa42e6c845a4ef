// User errors vs internal bugs (see Note [Two kinds of failure]).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

// Note [Two kinds of failure]
// BRAZE_CHECK is for mistakes a user can make (a shape that does not
// broadcast, an axis out of range). It throws a standard exception whose
// message names the op and the values involved; the bindings map
// std::invalid_argument to ValueError and std::out_of_range to IndexError
// (an AxisError, an axis out of range, to NumPy's AxisError, which is
// both an IndexError and a ValueError).
// BRAZE_ASSERT is for braze's own invariants. A failing assert is a bug in
// braze, never in the user's program, and says so.

namespace braze {

// An axis argument out of range for a tensor's rank (BRAZE_CHECK_AXIS).
struct AxisError : std::out_of_range {
  using std::out_of_range::out_of_range;
};

}  // namespace braze

namespace braze::detail {

template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

[[noreturn]] void throw_internal(const char* file, int line, const char* cond,
                                 const std::string& msg);

}  // namespace braze::detail

#define BRAZE_CHECK(cond, ...)                                               \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      throw std::invalid_argument(::braze::detail::concat(__VA_ARGS__));     \
  } while (0)

#define BRAZE_CHECK_INDEX(cond, ...)                                         \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      throw std::out_of_range(::braze::detail::concat(__VA_ARGS__));         \
  } while (0)

#define BRAZE_CHECK_AXIS(cond, ...)                                          \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      throw ::braze::AxisError(::braze::detail::concat(__VA_ARGS__));        \
  } while (0)

#define BRAZE_ASSERT(cond, ...)                                              \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::braze::detail::throw_internal(__FILE__, __LINE__, #cond,             \
                                      ::braze::detail::concat(__VA_ARGS__)); \
  } while (0)
