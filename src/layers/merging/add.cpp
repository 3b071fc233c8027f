// keras.layers.Add (keras/src/layers/merging/add.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Add : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Add"; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::add; }
};

}  // namespace
LayerPtr make_add(Json c) { return std::make_shared<Add>(std::move(c)); }
}  // namespace kerascpp::layers
