// kerascpp's C++ exceptions become the Python exceptions Keras raises, with the C++ message, and its
// warnings (kerascpp::warn) become Python warnings (UserWarning, as Keras's), under the warnings filters.
#include "common.h"
#include "kerascpp/warnings.h"

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
  // Warnings may come from threads that released the GIL (fit, predict): take it. A filter that turns
  // the warning into an error raises it from the call that warned.
  kerascpp::set_warning_sink([](const std::string& message) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw nb::python_error();
  });
  // Back to std::cerr before the interpreter goes away (a model may outlive it and still warn).
  nb::module_::import_("atexit").attr("register")(
      nb::cpp_function([] { kerascpp::set_warning_sink(nullptr); }));
}

}  // namespace kcpy
