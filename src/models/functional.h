// Functional: a graph of layer calls built from a canonical Functional or Sequential config, and
// itself a Layer (a model nested in a model is one layer of the outer graph).
//
// Canonical config (the Keras 3 dialect; src/io normalises every other dialect into it):
//   {"name": "model", "layers": [{"class_name": "Dense", "name": "d", "config": {...},
//     "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__",
//                                  "config": {"keras_history": ["input", 0, 0]}}], "kwargs": {}}]}, ...],
//    "input_layers": [["input", 0, 0]], "output_layers": [["d", 0, 0]]}
// Sequential configs ({"name", "layers"}) are chained in order.
//
// call() is const and keeps all of its state on the stack: many threads may call one model at once.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/mapping_cache.h"
#include "kerascpp/keras_tensor.h"
#include "kerascpp/layer.h"
#include "layers/build_budget.h"
#include "layers/regularizers.h"
#include "models/inference_plan.h"

namespace kerascpp::models {

class Functional : public Layer {
 public:
  // class_name: "Functional", "Model" or "Sequential"; config: the inner config; custom: layers the
  // caller supplies (may be null); existing: layers already made, by the names the config gives them
  // (a model built from symbolic tensors shares its layers; may be null); budget: what a model read
  // from a file may take (layers/build_budget.h), shared with its nested models (may be null).
  Functional(const std::string& class_name, Json config, const CustomObjects* custom = nullptr,
             const std::map<std::string, LayerPtr>* existing = nullptr, BuildBudget* budget = nullptr);

  std::string class_name() const override { return class_name_; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& input_shapes) const override;
  // Runs the graph: on its inference plan when the call is one the plan takes, else call_graph().
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const CallContext& ctx) const override;
  // The same into the caller's float32 `outputs` (Model::call_into): on the plan straight into them
  // when it takes the call, else computed and copied. ValueError when one is not of its output's shape.
  void call_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, const CallContext& ctx) const;
  // Runs the graph layer by layer (the interpreter): every call, training included.
  std::vector<Tensor> call_graph(const std::vector<Tensor>& inputs, const CallContext& ctx) const;
  // The inference plan made with the graph (models/inference_plan.h), or null; then why_not_planned()
  // says why ("layer 'lstm' (LSTM) is not planned").
  const InferencePlan* inference_plan() const { return inference_plan_.get(); }
  const std::string& why_not_planned() const { return why_not_planned_; }
  // Bytes of pages that interpreted calls freed and the next ones take (call(), core/mapping_cache.h).
  size_t idle_page_bytes() const { return pages_.bytes_held(); }
  // Compiles the inference plans again, this graph's and those of the models nested in it, for a
  // model no one uses yet whose weights were given new storage (Variable::share): plans keep weight
  // addresses.
  void rebuild_inference_plans();
  std::vector<Layer*> sublayers() const override;  // Keras's model.layers
  Json get_config() const override;

  const std::vector<Shape>& input_shapes() const { return input_shapes_; }
  const std::vector<Shape>& output_shapes() const { return output_shapes_; }
  // Names of the model inputs / outputs (dict keys when the model was built with dicts, else the
  // input layer names / output layer names).
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  // model.layers entries by index, with how they were called, for summaries.
  struct LayerCall {
    Layer* layer;
    std::vector<Shape> output_shapes;  // of its first call
    std::vector<std::string> inbound;  // "layer[node][tensor]" of its first call
  };
  std::vector<LayerCall> layer_calls() const;
  // The graph as symbolic tensors (made at the first request, models/keras_tensor.h): the model's
  // inputs and outputs, and the outputs of a layer's first call (ValueError naming the layers there are).
  std::vector<KerasTensor> symbolic_inputs() const;
  std::vector<KerasTensor> symbolic_outputs() const;
  std::vector<KerasTensor> symbolic_layer_outputs(const std::string& layer_name) const;
  // A model built from symbolic tensors keeps their nodes as its graph's (model.input is the Input it
  // was built from): node_of(layer name, k) gives the node of the layer's k-th call in this model.
  using NodeSource = std::function<std::shared_ptr<const SymbolicNode>(const std::string& layer, int k)>;
  void adopt_symbolic(const NodeSource& node_of);

 private:
  friend class InferencePlan;  // reads the graph when it compiles it
  struct Ref {
    int node = -1;
    int index = 0;
  };
  struct Node {
    int layer = -1;  // index into layers_
    std::vector<Ref> inputs;
    // Per input, the mask the call was given (`mask=` or `<argument>_mask=`; Keras 3 records the masks
    // it fills in), when mask_given says one was: node -1 when it was given as null (the call gets none).
    std::vector<Ref> masks;
    std::vector<char> mask_given;
    // Per input, whether Keras 3 fills in its mask: every input of a call with one tensor argument,
    // else those of arguments with a `<name>_mask` parameter. tf_keras passes every input's.
    std::vector<char> auto_mask;
    int tensor_arguments = 0;  // positional and keyword arguments that hold tensors
    Json options = Json::object();  // keyword arguments that are not tensors, for CallContext::options
    int training = -1;  // the call's fixed training= (1 / 0), else -1: the run's mode
    std::vector<Shape> output_shapes;
    bool shaped = false;
  };

  void build_sequential(Json& config);
  void build_functional(Json& config);
  void add_layer(Json& entry);
  void add_layer_entry(Json& entry);
  void add_call(int layer, int node, const Json& call, int k);
  Ref resolve(const Json& history, const std::string& where) const;
  void parse_io(const Json& spec, std::vector<Ref>* refs, std::vector<std::string>* names, bool outputs);
  void infer(int node, std::vector<int>* state);
  void plan();
  void complete_tensor_configs();

  std::string class_name_;
  const CustomObjects* custom_ = nullptr;  // only during construction
  const std::map<std::string, LayerPtr>* existing_ = nullptr;  // only during construction
  BuildBudget* load_budget_ = nullptr;                          // only during construction
  std::vector<LayerPtr> layers_;
  std::vector<bool> in_model_layers_;
  std::vector<layers::Regularizer> activity_;  // per layer: its activity_regularizer (usually none)  // false for Sequential's InputLayer
  std::map<std::string, int> layer_index_;
  std::vector<std::vector<int>> layer_nodes_;  // per layer, its node ids in call order
  std::vector<Node> nodes_;
  std::vector<Ref> inputs_, outputs_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<Shape> input_shapes_, output_shapes_;
  std::vector<int> order_;     // nodes to run, in order
  std::vector<int> last_use_;  // per node: the step after which its outputs are dropped
  // The masks a call gets: Keras 3's (a graph records them as mask=; else the call's one tensor
  // argument's, as Keras 3 fills in `mask`), or tf_keras's (every input's propagated mask). Set from
  // the canonical config's "kerascpp_propagated_masks" (io/config_dialect.cpp), which is then removed.
  bool propagated_masks_ = false;
  // Per node: whether Keras's warning that the layer drops a mask was given (once per node).
  std::unique_ptr<std::atomic<bool>[]> mask_dropped_;
  // Counts the calls that run a layer fixed to training=True at inference (Monte Carlo dropout), so
  // that each draws its own random numbers, as Keras's do.
  mutable std::atomic<uint64_t> forced_training_calls_{0};
  // Per node, its symbolic call (symbolic_inputs() and the rest), made once.
  const std::vector<std::shared_ptr<const SymbolicNode>>& symbolic() const;
  mutable std::once_flag symbolic_once_;
  mutable std::vector<std::shared_ptr<const SymbolicNode>> symbolic_;
  std::unique_ptr<InferencePlan> inference_plan_;
  std::string why_not_planned_;
  // The pages of the big tensors of interpreted inference calls, kept for the next call (call()): as a
  // plan's workspaces, one per caller that ran beside another.
  MappingCachePool pages_;
};

// A layer or a nested model for a canonical {"class_name", "config"} entry. A class of kerascpp's own
// takes `config` (left null); the caller's custom_objects and Lambda ops read it (left as it is).
LayerPtr make_layer_or_model(const std::string& class_name, Json& config,
                             const CustomObjects* custom = nullptr, BuildBudget* budget = nullptr);
bool is_model_class(const std::string& class_name);

// Whether a layer of the graph (nested models included) reads its inputs as integer ids (Embedding,
// IntegerLookup, Hashing, CategoryEncoding), which float32 holds exactly up to 2^24 only.
bool reads_integer_ids(const Layer& graph);
// An input as the model computes it, in float32. With check_ids, an integer input beyond 2^24 is refused
// (ValueError naming the model) rather than rounded to another id.
Tensor float32_input(const Tensor& t, bool check_ids, const std::string& model);

}  // namespace kerascpp::models
