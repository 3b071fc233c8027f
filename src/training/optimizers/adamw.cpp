// keras.optimizers.AdamW (keras/src/optimizers/adamw.py): Adam whose weight_decay defaults to
// 0.004 and must be set; the decay itself is the base class's (var -= var * wd * lr before the step).
#include "training/optimizers/adam.h"

namespace kerascpp::optimizers::detail {
namespace {

class AdamW final : public Adam {
 public:
  explicit AdamW(const Json& config) : Adam(config, "AdamW", "adam_w", 0.004) {
    KCPP_CHECK(!config_["weight_decay"].is_null(), ValueError,
               "Argument `weight_decay` must be a float. Received: weight_decay=None");
  }
};

}  // namespace

OptimizerPtr make_adamw(const Json& config) { return std::make_shared<AdamW>(config); }

}  // namespace kerascpp::optimizers::detail
