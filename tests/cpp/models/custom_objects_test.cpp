// custom_objects: a layer class the file names but kerascpp does not know, supplied by the caller.
#include <gtest/gtest.h>

#include "../test_paths.h"
#include "support/fixture_check.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

// damaged/unknown_layer.h5 is the seed MLP with its first Dense renamed "FancyDense"; this stands in.
class FancyDense : public Layer {
 public:
  explicit FancyDense(const Json& c) : Layer(c), units_(c.at("units").get<int64_t>()) {}
  std::string class_name() const override { return "FancyDense"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    return {{in[0][0], units_}};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Tensor y = ops::bias_add(ops::matmul(in[0], kernel_->value()), bias_->value());
    return {ops::unary(ops::UnaryOp::relu, y)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    kernel_ = add_weight("kernel", {in[0].back(), units_});
    bias_ = add_weight("bias", {units_});
  }

 private:
  int64_t units_;
  VariablePtr kernel_, bias_;
};

TEST(CustomObjects, SupplyAnUnknownLayer) {
  const std::string file = testing::fixture("damaged/unknown_layer.h5");
  EXPECT_THROW(load_model(file), ValueError);
  LoadOptions options;
  options.custom_objects["FancyDense"] = [](const Json& c) { return std::make_shared<FancyDense>(c); };
  Model m = load_model(file, options);
  const std::string dir = testing::fixture("seed_mlp_2x10/keras3");
  Tensor y = m.predict({io::read_npy(dir + "/input_0.npy")})[0];
  Tensor want = io::read_npy(dir + "/output_0.npy");
  for (int64_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.data<float>()[i], want.data<float>()[i], 1e-5);
}

TEST(CustomObjects, TakePrecedenceOverBuiltIns) {
  int made = 0;
  LoadOptions options;
  options.custom_objects["Dense"] = [&](const Json& c) {
    ++made;
    return make_layer("Dense", c);
  };
  load_model(testing::fixture("nested_model/keras3/model.keras"), options);
  EXPECT_EQ(made, 6);  // every Dense of the file, nested models included
}

}  // namespace
}  // namespace kerascpp
