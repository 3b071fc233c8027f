// The graph that calls on symbolic tensors record (include/kerascpp/keras_tensor.h), and the
// Functional model made from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kerascpp/keras_tensor.h"

namespace kerascpp::models {

// One call of a layer on symbolic tensors (Keras's Node).
struct SymbolicNode {
  LayerPtr layer;
  // {"args": [...], "kwargs": {...}}; each tensor is {"class_name": "__keras_tensor__", "config":
  // {"kerascpp_tensor": i}}, i indexing `tensors`. Empty for an InputLayer's node.
  Json call = Json::object();
  std::vector<KerasTensor> tensors;
  std::vector<Shape> output_shapes;
  int sequence = 0;  // the order of the layer's calls (Keras's layer._inbound_nodes)
};

// The node of an InputLayer (its one output).
KerasTensor input_tensor(const LayerPtr& input_layer);
// A node made from a loaded graph's call (Functional::symbolic_outputs).
std::shared_ptr<SymbolicNode> recorded_node(const LayerPtr& layer, Json call, std::vector<KerasTensor> tensors,
                                            std::vector<Shape> output_shapes);

// keras.Model(inputs, outputs, name): the graph from the inputs to the outputs as a Functional model
// over the same layers (shared, not copied). ValueError "Graph disconnected" when an output needs a
// tensor the inputs do not lead to.
LayerPtr functional_from_tensors(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
                                 const std::string& name, const TensorNest& in = {}, const TensorNest& out = {});

}  // namespace kerascpp::models
