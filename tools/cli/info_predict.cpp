// kerascpp info / predict.
#include <iostream>

#include "commands.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "models/functional.h"

namespace kerascpp::cli {

int info(const Args& a) {
  Args args = a;
  KCPP_CHECK(args.size() == 1, ValueError, "usage: kerascpp info FILE");
  Model m = load_model(args[0]);
  std::cout << m.summary();
  if (!m.training_config().empty()) std::cout << "Training config: " << m.training_config().dump() << "\n";
  const auto& graph = dynamic_cast<const models::Functional&>(m.graph());
  if (const models::InferencePlan* plan = graph.inference_plan())
    std::cout << "Inference plan: " << plan->steps() << " steps, " << plan->floats_per_row()
              << " workspace floats per sample\n";
  else
    std::cout << "Inference: layer by layer (" << graph.why_not_planned() << ")\n";
  return 0;
}

int predict(const Args& a) {
  Args args = a;
  auto inputs = take_all(args, "--input");
  auto outputs = take_all(args, "--output");
  int64_t batch = std::stoll(take_option(args, "--batch-size", "32"));
  KCPP_CHECK(args.size() == 1 && !inputs.empty() && !outputs.empty(), ValueError,
             "usage: kerascpp predict FILE --input X.npy [--input ...] --output Y.npy [--output ...]");
  Model m = load_model(args[0]);
  std::vector<Tensor> x;
  for (const auto& p : inputs) x.push_back(io::read_npy(p));
  auto y = m.predict(x, batch);
  KCPP_CHECK(outputs.size() == y.size(), ValueError, "The model has ", y.size(), " output(s); ", outputs.size(),
             " --output path(s) were given");
  for (size_t i = 0; i < y.size(); ++i) io::write_npy(outputs[i], y[i]);
  return 0;
}

}  // namespace kerascpp::cli
