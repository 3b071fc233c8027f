// The kerascpp._kerascpp extension module; the Keras API shape lives in python/kerascpp/*.py.
#include "common.h"

NB_MODULE(_kerascpp, m) {
  // Models own Python objects of custom layers (and keep them past interpreter shutdown order).
  nanobind::set_leak_warnings(false);
  m.doc() = "Native core of kerascpp (see python/kerascpp for the Keras-shaped API)";
  kcpy::bind_errors(m);
  kcpy::bind_tensor(m);
  kcpy::bind_variable(m);
  kcpy::bind_layer(m);
  kcpy::bind_model(m);
  kcpy::bind_build(m);
  kcpy::bind_custom(m);
  kcpy::bind_training(m);
  kcpy::bind_callbacks(m);
  kcpy::bind_distribute(m);
}
