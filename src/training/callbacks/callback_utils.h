// Internal helpers shared by the callbacks: keyword arguments, Python's number formatting (the text
// Keras prints and writes is Python's), and MonitorCallback's logic
// (keras/src/callbacks/monitor_callback.py). Nothing outside src/training/callbacks includes this.
#pragma once

#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>

#include "kerascpp/callbacks.h"

namespace kerascpp::callbacks::detail {

// ValueError naming the keys of `kwargs` that `callback` does not take (and a non-object kwargs).
void check_kwargs(const std::string& callback, const Json& kwargs, std::initializer_list<const char*> allowed);
// kwargs[key] as a number / integer / bool / string, or `fallback` when absent; ValueError naming
// the key and the value when it has another type. A null number is nullopt (Keras's None).
double num_arg(const std::string& callback, const Json& kwargs, const char* key, double fallback);
std::optional<double> opt_num_arg(const std::string& callback, const Json& kwargs, const char* key);
int int_arg(const std::string& callback, const Json& kwargs, const char* key, int fallback);
bool bool_arg(const std::string& callback, const Json& kwargs, const char* key, bool fallback);
std::string str_arg(const std::string& callback, const Json& kwargs, const char* key, const std::string& fallback);

// Where Keras's io_utils.print_msg writes (sys.stdout).
std::ostream& msg_out();
// warnings.warn, once per callback (Python's default filter shows a warning once per place in the
// code), through kerascpp::warn.
void warn_once(bool& warned, const std::string& message);
// "loss,val_loss": Keras's ','.join(list(logs.keys())).
std::string join_keys(const Logs& logs);

// Python's repr(float) / str(float): the shortest text that reads back to the same double, with
// Python's switch to exponent form ("1e-05", "1e+16", "0.0001", "123.0", "inf", "nan").
std::string python_float_repr(double v);
// Python's format(value, spec) for an int (is_int) or a float: "02d", ".4e", ">10.3f", ",", "%"...
// ValueError with Python's message for a spec the type does not take.
std::string python_format(double value, bool is_int, const std::string& spec);

// MonitorCallback's mode check: an unknown mode warns and falls back to "auto".
std::string checked_mode(const std::string& callback, const std::string& mode, bool& warned);
// _set_monitor_op: whether greater values are better. "min" / "max" decide; "auto" knows "loss"
// and the Keras metrics by the names they log (see monitor_callback.cpp), else ValueError as Keras.
bool monitor_greater(const std::string& callback, const std::string& monitor, const std::string& mode);
// _is_improvement: no reference (None) is always an improvement; min_delta is taken as |min_delta|
// in the direction of improvement, as Keras negates it for "less".
bool is_improvement(double current, const std::optional<double>& reference, bool greater, double min_delta);

// ReduceLROnPlateau.on_epoch_end once the monitored value `current` is known: updates the counters
// and returns the learning rate to set, if the rate is reduced. `lr` is the optimizer's current
// rate as read from its float32 variable. Kept free of the Model so that it can be tested alone.
struct PlateauSettings {
  double factor = 0.1, min_delta = 1e-4, min_lr = 0;
  int patience = 10, cooldown = 0;
  bool greater = false;
};
struct PlateauState {
  std::optional<double> best;
  int wait = 0, cooldown_counter = 0;
};
std::optional<double> plateau_step(const PlateauSettings& s, PlateauState& state, double current, double lr);

}  // namespace kerascpp::callbacks::detail
