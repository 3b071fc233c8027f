// keras.layers.Minimum (keras/src/layers/merging/minimum.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Minimum : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Minimum"; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::minimum; }
};

}  // namespace
LayerPtr make_minimum(Json c) { return std::make_shared<Minimum>(std::move(c)); }
}  // namespace kerascpp::layers
