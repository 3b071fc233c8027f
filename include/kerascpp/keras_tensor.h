// Building models in code, as Keras's functional API does: symbolic tensors (KerasTensor) from
// layers::Input, layers called on them, and Model(inputs, outputs) over the graph they record.
//
//   auto x = kerascpp::layers::Input({8});
//   auto h = kerascpp::layers::Dense({{"units", 16}, {"activation", "relu"}})(x);
//   auto y = kerascpp::layers::Dense({{"units", 1}})(h);
//   kerascpp::Model model({x}, {y});
//
// A call builds the layer for its inputs' shapes (its weights start from their Keras initializers) and
// records itself; nothing is computed. A layer called twice is shared (one set of weights); the layers
// of a loaded model can be called too (transfer learning), and Model::input() / Layer outputs of a
// loaded model are symbolic tensors of its graph (a feature extractor: Model(m.inputs(), {t})).
// Symbolic tensors are values: copy them freely; the graph lives while a tensor of it does.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp {
namespace models {
struct SymbolicNode;
}

class KerasTensor {
 public:
  KerasTensor() = default;
  KerasTensor(std::shared_ptr<const models::SymbolicNode> node, int index) : node_(std::move(node)), index_(index) {}
  bool defined() const { return node_ != nullptr; }
  const Shape& shape() const;  // the batch dimension -1
  DType dtype() const { return DType::float32; }
  // The layer whose call made it, and which of the call's outputs it is (Keras's _keras_history).
  const LayerPtr& layer() const;
  int index() const { return index_; }
  const std::shared_ptr<const models::SymbolicNode>& node() const { return node_; }
  bool operator==(const KerasTensor& o) const { return node_ == o.node_ && index_ == o.index_; }

 private:
  std::shared_ptr<const models::SymbolicNode> node_;
  int index_ = 0;
};

// How a model's inputs or outputs are nested, as Keras keeps and saves them: a list (the default),
// one tensor (single), or a dict (keys: one per tensor, sorted as Keras flattens dicts).
struct TensorNest {
  bool single = false;
  std::vector<std::string> keys;
};

// One argument of a call: a tensor, a list of tensors (a merge's inputs, an RNN's initial_state), or
// a plain value (use_causal_mask=true).
using CallArgument = std::variant<KerasTensor, std::vector<KerasTensor>, Json>;

// layer(*args, **kwargs) on symbolic tensors: binds the arguments as a graph would, builds the layer
// for their shapes (initialising its weights when this call creates them) and records the call.
// Returns its outputs (several for return_state, return_attention_scores). ValueError naming the layer
// for shapes it cannot take; NotImplementedError for an argument it does not.
std::vector<KerasTensor> call_layer(const LayerPtr& layer, const std::vector<CallArgument>& args,
                                    const std::map<std::string, CallArgument>& kwargs = {});

// The same with the call in Keras's config form, {"args": [...], "kwargs": {...}}, each tensor as
// {"class_name": "__keras_tensor__", "config": {"kerascpp_tensor": i}} for tensors[i] (for bindings:
// any nesting of arguments). seed: for the weights this call creates (else the random device).
std::vector<KerasTensor> call_layer_json(const LayerPtr& layer, Json call, std::vector<KerasTensor> tensors,
                                         std::optional<uint64_t> seed = std::nullopt);

// What the layer constructors of kerascpp/layers.h return: the layer, callable on symbolic tensors.
class LayerRef : public LayerPtr {
 public:
  LayerRef() = default;
  LayerRef(LayerPtr layer) : LayerPtr(std::move(layer)) {}  // NOLINT: a LayerPtr is one
  // layer(x, **options): one input tensor, one output (ValueError for a call with several).
  KerasTensor operator()(const KerasTensor& x, const Json& options = Json::object()) const;
  // layer([a, b], **options): one list argument (merges).
  KerasTensor operator()(const std::vector<KerasTensor>& xs, const Json& options = Json::object()) const;
};

}  // namespace kerascpp
