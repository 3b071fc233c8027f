// kerascpp's C++ exceptions become the Python exceptions Keras raises, with the C++ message.
#include "common.h"

namespace kcpy {

void bind_errors(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const kerascpp::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const kerascpp::IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const kerascpp::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const kerascpp::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const kerascpp::Error& e) {  // InternalError and anything new
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace kcpy
