// Layer: the base of every Keras layer class in kerascpp (and of models, which are layers too).
//
// A layer is made from its canonical config (see src/io/config_dialect.h: every Keras dialect is
// normalised before a layer sees it), built once for its input shapes (creating its variables),
// and then called any number of times, from any number of threads: call() is const.
//
//   auto dense = make_layer("Dense", {{"name", "d"}, {"units", 4}});
//   dense->build({{-1, 3}});
//   std::vector<Tensor> y = dense->call({x}, {});
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kerascpp/tensor.h"
#include "kerascpp/variable.h"

namespace kerascpp {

using Json = nlohmann::json;

class Layer;
struct BuildBudget;  // layers/build_budget.h

// The states of a model's stateful RNN layers for one stream of calls (Keras's layer.states), owned by
// the caller, never by the shared model: each stream keeps its own, and predict stays const. A call
// with them starts each stateful layer from its stored states (zeros at first) and stores the final
// ones. Not for two threads at once.
class RnnStates {
 public:
  void reset_states() { by_layer_.clear(); }  // back to zeros, as Keras's model.reset_states()
  bool empty() const { return by_layer_.empty(); }
  // The stored states of a layer, empty before its first call.
  const std::vector<Tensor>& of(const Layer* layer) const {
    static const std::vector<Tensor> none;
    auto it = by_layer_.find(layer);
    return it == by_layer_.end() ? none : it->second;
  }
  void store(const Layer* layer, std::vector<Tensor> states) { by_layer_[layer] = std::move(states); }
  // The stored states of a layer, to update in place (empty before its first call).
  std::vector<Tensor>& slot(const Layer* layer) { return by_layer_[layer]; }

 private:
  std::map<const Layer*, std::vector<Tensor>> by_layer_;
};

// What one call knows besides its inputs. Inference passes training=false and nothing else.
struct CallContext {
  bool training = false;
  // Set by the train step (training only). Layers push the state updates they ask for
  // (BatchNormalization's moving statistics), applied after the gradient step, and the losses they
  // add (activity regularisation), added to the step's loss.
  std::vector<std::pair<VariablePtr, Tensor>>* updates = nullptr;
  std::vector<Tensor>* losses = nullptr;
  // Seed of this step's random numbers (dropout, noise); each layer draws its own stream from it.
  uint64_t seed = 0;
  // The masks of the call's inputs (Keras's _keras_mask), one per input: float32 1 where a step is
  // kept, 0 where it is masked, an undefined Tensor for an input without one. Null when no input has a
  // mask. Set by the graph for layers that support masking.
  const std::vector<Tensor>* masks = nullptr;
  // The states of stateful RNN layers for this stream of calls; null: none (a stateful layer refuses).
  RnnStates* rnn_states = nullptr;
  // The call's keyword arguments that are not tensors (MultiHeadAttention's use_causal_mask), as the
  // graph recorded them; null for none. Only the keys the layer's call_options() lists reach it.
  const Json* options = nullptr;
  // The mask of input i, or an undefined Tensor.
  Tensor mask(size_t i) const { return masks && i < masks->size() ? (*masks)[i] : Tensor(); }
  // Option `key` of the call, or `fallback` when the call did not give it.
  template <typename T>
  T option(const char* key, T fallback) const {
    return options && options->contains(key) && !(*options)[key].is_null() ? (*options)[key].get<T>() : fallback;
  }
};

// A tensor argument of a layer's call, by Keras's name. One that is left out takes the tensors of the
// argument named by `defaults_to` (MultiHeadAttention's key defaults to its value), or, when that is
// empty, is left out of the inputs (then no later argument may be given). has_mask: the call also
// takes `<name>_mask`, which Keras 3 fills in from the argument's mask when the call has several
// tensor arguments (MultiHeadAttention's query_mask, value_mask, key_mask). positional: false where
// the two Kerases' positional orders differ there (MultiHeadAttention's attention_mask is fourth in
// tf_keras, seventh in Keras 3): then only a keyword gives it.
struct TensorArgument {
  std::string name;
  std::string defaults_to = {};
  bool has_mask = false;
  bool positional = true;
};

class Layer : public std::enable_shared_from_this<Layer> {
 public:
  // Reads the keys every Keras layer has: name, trainable, dtype.
  explicit Layer(Json config);  // kept as config_ (moved in where the caller can)
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual std::string class_name() const = 0;
  const std::string& name() const { return name_; }
  bool trainable() const { return trainable_; }
  bool built() const { return built_; }

  // Creates the variables for these input shapes (batch dimension -1). Called once, before call().
  void build(const std::vector<Shape>& input_shapes);
  // Output shapes for these input shapes; ValueError naming the layer when they do not fit.
  virtual std::vector<Shape> compute_output_shape(const std::vector<Shape>& input_shapes) const = 0;
  // inputs: the flattened tensors of the call's arguments (one for most layers, a list for merges).
  virtual std::vector<Tensor> call(const std::vector<Tensor>& inputs, const CallContext& ctx) const = 0;

  // The canonical config (Keras 3 keys), enough to rebuild the layer.
  virtual Json get_config() const { return config_; }
  // The config the layer was made from, as kept (no copy): what get_config() starts from. Its keys
  // for weights (kernel_regularizer, bias_constraint, ...) are what the layer reads. A model's keeps
  // its graph's structure only: each layer entry's config is null where the layer keeps it.
  const Json& config() const { return config_; }

  // Variables created by this layer itself, in creation order (the `.keras` `vars/` order).
  const std::vector<VariablePtr>& own_variables() const { return variables_; }
  // Layers inside this one (a nested model's layers); empty for plain layers.
  virtual std::vector<Layer*> sublayers() const { return {}; }

  // Masks, by Keras 3's rules (keras/src/layers/layer.py). A layer that supports masking receives its
  // inputs' masks in CallContext::masks and gives its outputs compute_mask()'s; one that does not
  // drops the masks it is given, with a warning, as Keras does.
  virtual bool supports_masking() const { return false; }
  // Keras 3's MultiHeadAttention takes the masks off its input tensors when it runs: later layers of
  // the graph that read those tensors see none (keras/src/layers/attention/multi_head_attention.py).
  virtual bool clears_input_masks() const { return false; }
  // Whether the layer's activity_regularizer (config) applies to its outputs, as the graph applies it.
  // Keras 3's MultiHeadAttention hands it to its projections only (it never sets the layer's own).
  virtual bool regularizes_own_outputs() const { return true; }
  // Read from a tf_keras file, for the layers whose numbers differ between the two Kerases (masked
  // softmax rows, merged masks; io/config_dialect.cpp sets "kerascpp_keras2" for them): compute as
  // tf_keras does. Not part of the config.
  bool keras2_semantics() const { return keras2_; }
  // The arguments of the call that carry tensors, in Keras's positional order; the layer's inputs are
  // their tensors, flattened, in this order (an RNN: sequences, then its initial_state). A call may give
  // them by position or by keyword; `<name>_mask` keywords give their masks (`mask` the first's).
  // Tensors in other keywords are refused by name. Default: one argument, `inputs`, whose positional
  // followers (an op node's operands) all become inputs.
  virtual std::vector<TensorArgument> tensor_arguments() const { return {{"inputs"}}; }
  // An op node (a keras.ops call, tf_keras's TFOpLambda): every tensor of its call, in its positional
  // and keyword arguments, is an input in order; its other arguments belong to the node itself
  // (layers/op_nodes/op_node.h). It neither takes nor gives masks, and drops them without a warning.
  virtual bool is_operation() const { return false; }
  // The keyword arguments of a call that are not tensors and that the layer reads (through
  // CallContext::options), with Keras's defaults; a graph that gives others is refused by name.
  // `training` and masks are always accepted.
  virtual Json call_options() const { return Json::object(); }
  // The output shapes of a call with these options (return_attention_scores adds an output); the
  // default ignores them.
  virtual std::vector<Shape> call_output_shapes(const std::vector<Shape>& input_shapes, const Json& options) const {
    return compute_output_shape(input_shapes);
  }
  // The outputs' masks (one per output, undefined for none) from the inputs and their masks. Default:
  // every output keeps the first input's mask.
  virtual std::vector<Tensor> compute_mask(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks) const;

  // How Keras 3 saves this layer's children: by the attribute that holds them. A single layer sits
  // under the attribute's name (an RNN's "cell": ".../lstm/cell/vars"); each layer of a list sits
  // under <attribute>/<snake_case(class)>[_N] (a model's "layers"). The default is sublayers() as the
  // list "layers"; layers that hold others by attribute override it. io::walk_keras3_tree reads it.
  struct SaveableChildren {
    std::string attribute;
    std::vector<const Layer*> layers;
    bool is_list = true;
  };
  virtual std::vector<SaveableChildren> saveable_children() const;
  // Keras's load_assets: the files a Keras 3 archive holds for this layer (assets/<its path>/<file>),
  // by file name, given once after the layer is made and before it is called. Default: ignores them.
  virtual void load_assets(const std::map<std::string, std::string>& files) {}
  // The config keys that hold what load_assets read, saved with the layer's config from then on (an
  // IntegerLookup's vocabulary, which any Keras reads from its config). Default: none.
  virtual Json config_from_assets() const { return Json::object(); }

  // Keras 3 order: for this layer and then each sublayer, trainable then non-trainable.
  std::vector<VariablePtr> weights() const;
  // A frozen layer (trainable=false) makes all of its weights non-trainable.
  std::vector<VariablePtr> trainable_weights() const;
  std::vector<VariablePtr> non_trainable_weights() const;
  // Keras's legacy (.h5) order: trainable_weights() followed by non_trainable_weights().
  std::vector<VariablePtr> legacy_weights() const;
  // The values a Keras 2 file holds for legacy_weights(), in this layer's layout: themselves, except
  // where the file's layer stored them otherwise (Keras 2's CuDNNLSTM / CuDNNGRU, read as LSTM / GRU).
  virtual std::vector<Tensor> from_legacy_layout(std::vector<Tensor> saved) const { return saved; }
  std::vector<Tensor> get_weights() const;                  // copies
  void set_weights(const std::vector<Tensor>& values);      // count and shapes checked
  int64_t count_params() const;

  // Initialisation (layers/initializers.h), for a model built from a config without weights: each of
  // this layer's own variables filled by its Keras initializer (the config's initializer for it, or
  // Keras's default for that weight: kernels GlorotUniform, recurrent kernels Orthogonal, biases and
  // betas Zeros, gammas and scales Ones, embeddings RandomUniform(-0.05, 0.05)). Sublayers are
  // initialised by the caller, each on its own (io/load_model.cpp, model_from_config).
  virtual void initialize(std::mt19937_64& rng);
  // The initializer config of one of this layer's variables; null: keep its value (a counter).
  virtual Json initializer_for(const std::string& variable) const;
  // The config key of a weight's "initializer", "regularizer" or "constraint" as Keras names it:
  // "<weight>_<what>" ("kernel_initializer"), but "recurrent_<what>" for the recurrent kernel and
  // "depthwise_<what>" / "pointwise_<what>" for the depthwise and pointwise ones.
  virtual std::string weight_config_key(const std::string& weight, const std::string& what) const;

  // Keras's layer.trainable = value: this layer and every layer inside it (a frozen model freezes all of
  // its layers). Training takes the trainable state at its first step after compile and keeps it until
  // the next compile, as Keras 3 does; a frozen BatchNormalization normalises with its moving statistics.
  void set_trainable(bool value);
  // The index of a new call of this layer on symbolic tensors (models/keras_tensor.cpp): orders a
  // shared layer's calls.
  int count_call() { return calls_++; }
  // Loaders (io/load_model.cpp): the budget that this layer's and its sublayers' weights are drawn
  // from while they are built (layers/build_budget.h); nullptr: none. Not owned.
  void set_build_budget(BuildBudget* budget);

 protected:
  // Layers call this from do_build(); the variable starts zeroed.
  VariablePtr add_weight(const std::string& name, const Shape& shape, bool trainable = true,
                         DType dtype = DType::float32);
  virtual void do_build(const std::vector<Shape>& input_shapes) {}
  // The budget a sublayer made in do_build() is given (set_build_budget) before it is built.
  BuildBudget* build_budget() const { return budget_; }
  // Throws ValueError "Layer 'name' (Class) expects N input(s). Received: M" when counts differ.
  void expect_inputs(const std::vector<Shape>& shapes, size_t n) const;

  Json config_;

 private:
  void collect(std::vector<VariablePtr>* out, int which, bool parent_trainable) const;
  std::string name_;
  bool trainable_ = true;
  bool built_ = false;
  bool keras2_ = false;
  std::atomic<int> calls_{0};
  std::vector<VariablePtr> variables_;
  BuildBudget* budget_ = nullptr;
};

using LayerPtr = std::shared_ptr<Layer>;

// Layers the caller supplies by Keras class name (Keras's custom_objects): consulted before the
// built-in layers, so they can also stand in for a Lambda layer whose function the caller provides.
using LayerFactory = std::function<LayerPtr(const Json& config)>;
using CustomObjects = std::map<std::string, LayerFactory, std::less<>>;

// The layer for a Keras class name (canonical config). ValueError for an unknown class naming it;
// NotImplementedError for Lambda and other layers that carry code. The config is taken by value:
// a layer keeps it, moved along where the caller moves it in (op nodes keep a copy).
LayerPtr make_layer(const std::string& class_name, Json config);
// Every class name make_layer knows, for docs and error messages.
std::vector<std::string> known_layer_classes();

}  // namespace kerascpp
