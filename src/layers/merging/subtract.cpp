// keras.layers.Subtract (keras/src/layers/merging/subtract.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Subtract : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Subtract"; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::subtract; }
  size_t min_inputs() const override { return 2; }
  size_t max_inputs() const override { return 2; }
};

}  // namespace
LayerPtr make_subtract(Json c) { return std::make_shared<Subtract>(std::move(c)); }
}  // namespace kerascpp::layers
