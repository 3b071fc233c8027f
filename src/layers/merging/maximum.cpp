// keras.layers.Maximum (keras/src/layers/merging/maximum.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Maximum : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Maximum"; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::maximum; }
};

}  // namespace
LayerPtr make_maximum(Json c) { return std::make_shared<Maximum>(std::move(c)); }
}  // namespace kerascpp::layers
