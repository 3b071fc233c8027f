// Error types of kerascpp and the two macros that raise them.
//
// User errors (bad files, wrong shapes, unknown layers) throw a subclass of kerascpp::Error whose
// message names the file / place, what was expected and what was received, in Keras style. The
// Python package maps them to ValueError / OSError / NotImplementedError / TypeError.
//
//   KCPP_CHECK(x.rank() == 2, ValueError, "Dense expects a 2D input. Received: shape=", x.shape());
//   KCPP_ASSERT(offset <= size);  // internal invariant: a bug in kerascpp if it fails
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kerascpp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Invalid value, shape, config (Python: ValueError).
class ValueError : public Error {
 public:
  using Error::Error;
};
// Missing, unreadable, truncated or foreign file (Python: OSError).
class IOError : public Error {
 public:
  using Error::Error;
};
// A valid Keras feature that kerascpp does not support, e.g. a Lambda layer (Python: NotImplementedError).
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
// Wrong kind of argument (Python: TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};
// A broken internal invariant: a bug in kerascpp, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename T>
void append(std::ostringstream& os, const T& v) {
  os << v;
}
template <typename T>
void append(std::ostringstream& os, const std::vector<T>& v) {
  os << '(';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
}
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (append(os, args), ...);
  return os.str();
}
}  // namespace detail

}  // namespace kerascpp

#define KCPP_THROW(Type, ...) throw ::kerascpp::Type(::kerascpp::detail::concat(__VA_ARGS__))
#define KCPP_CHECK(cond, Type, ...) \
  do {                              \
    if (!(cond)) KCPP_THROW(Type, __VA_ARGS__); \
  } while (0)
#define KCPP_ASSERT(cond)                                                                   \
  do {                                                                                      \
    if (!(cond))                                                                            \
      KCPP_THROW(InternalError, "internal error: ", #cond, " failed at ", __FILE__, ":", __LINE__); \
  } while (0)
