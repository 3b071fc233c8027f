// keras.layers.Multiply (keras/src/layers/merging/multiply.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Multiply : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Multiply"; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::multiply; }
};

}  // namespace
LayerPtr make_multiply(Json c) { return std::make_shared<Multiply>(std::move(c)); }
}  // namespace kerascpp::layers
