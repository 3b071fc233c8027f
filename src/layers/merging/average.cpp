// keras.layers.Average (keras/src/layers/merging/average.py).
#include "layers/layer_list.h"
#include "layers/merging/base_merge.h"

namespace kerascpp::layers {
namespace {

class Average : public BaseMerge {
 public:
  using BaseMerge::BaseMerge;
  std::string class_name() const override { return "Average"; }
  bool averages() const override { return true; }

 protected:
  ops::BinaryOp op() const override { return ops::BinaryOp::add; }
  Tensor merge(const std::vector<Tensor>& in) const override {
    return ops::scale_shift(BaseMerge::merge(in), 1.f / static_cast<float>(in.size()), 0.f);
  }
};

}  // namespace
LayerPtr make_average(Json c) { return std::make_shared<Average>(std::move(c)); }
}  // namespace kerascpp::layers
