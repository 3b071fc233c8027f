// What one of kerascpp's built-in Keras classes takes, read from its family's one list
// (src/training/optimizers/optimizer_list.inc, schedule_list.inc, losses/loss_list.inc,
// metrics/metric_list.inc). The Python package makes its classes from these.
//
//   for (const ClassInfo& c : optimizers::optimizer_classes()) std::cout << c.class_name << "\n";
#pragma once

#include <string>
#include <vector>

namespace kerascpp {

struct ClassInfo {
  std::string class_name;                // "Adam", as Keras names the class
  std::vector<std::string> arguments;    // the constructor's arguments in Keras's positional order
  std::vector<std::string> identifiers;  // the other strings get() takes for it ("adam"; "mse", "MSE")
};

}  // namespace kerascpp
