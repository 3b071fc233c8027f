// io::walk_keras3_tree: the one walk of Keras 3's weight tree, for reading and writing. Paths follow
// keras/src/saving/saving_lib.py: children by attribute ("cell"), list items by
// snake_case(class)[_N] ("layers/dense_1", "layers/p_re_lu"). Whole models are covered by the
// fixtures (tests/cpp/io/fixtures_test.cpp, round_trip_test.cpp, and Keras reloading our files).
#include <gtest/gtest.h>

#include "io/weights_io.h"
#include "kerascpp/layer.h"

namespace kerascpp {
namespace {

// A layer holding others as Keras layers do: one by attribute and a list (an RNN's cell, a model's layers).
class Holder : public Layer {
 public:
  Holder(LayerPtr cell, std::vector<LayerPtr> list) : Layer(Json{{"name", "holder"}}), cell_(cell), list_(list) {}
  std::string class_name() const override { return "Holder"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& s) const override { return s; }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override { return in; }
  std::vector<SaveableChildren> saveable_children() const override {
    std::vector<const Layer*> items;
    for (const auto& l : list_) items.push_back(l.get());
    return {{"cell", {cell_.get()}, false}, {"layers", items, true}};
  }

 private:
  LayerPtr cell_;
  std::vector<LayerPtr> list_;
};

LayerPtr dense(const std::string& name) { return make_layer("Dense", Json{{"name", name}, {"units", 2}}); }

TEST(WeightTree, ChildrenByAttributeAndListItemsBySnakeCaseClass) {
  auto holder = std::make_shared<Holder>(
      dense("c"), std::vector<LayerPtr>{dense("a"), make_layer("PReLU", Json{{"name", "p"}}), dense("b")});
  std::vector<std::string> paths;
  io::walk_keras3_tree(*holder, [&](const Layer& l, const std::string& path) { paths.push_back(l.name() + "@" + path); });
  EXPECT_EQ(paths, (std::vector<std::string>{"holder@", "c@cell", "a@layers/dense", "p@layers/p_re_lu",
                                             "b@layers/dense_1"}));
}

TEST(WeightTree, LocateRenamesAnAttributeForTheWholeSubtree) {
  Holder nested(dense("c"), {dense("a")});
  std::vector<std::string> paths;
  io::walk_keras3_tree(
      nested, [&](const Layer&, const std::string& path) { paths.push_back(path); },
      [](const std::string& parent, const std::string& attribute) {
        return io::tree_path(parent, attribute == "layers" ? "_layer_checkpoint_dependencies" : attribute);
      });
  EXPECT_EQ(paths, (std::vector<std::string>{"", "cell", "_layer_checkpoint_dependencies/dense"}));
  EXPECT_EQ(io::tree_path("", "vars"), "vars");
  EXPECT_EQ(io::tree_path("layers/lstm/cell", "vars"), "layers/lstm/cell/vars");
}

TEST(WeightTree, AnAttributeHoldingSeveralLayersIsAnError) {
  class Bad : public Holder {
   public:
    Bad() : Holder(dense("c"), {}) {}
    std::vector<SaveableChildren> saveable_children() const override { return {{"cell", {this, this}, false}}; }
  } bad;
  try {
    io::walk_keras3_tree(bad, [](const Layer&, const std::string&) {});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'cell'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kerascpp
