#include "kerascpp/model.h"

#include <functional>
#include <iomanip>
#include <sstream>

#include "core/naming.h"
#include "layers/initializers.h"
#include "layers/rnn/rnn.h"
#include "models/functional.h"
#include "models/keras_tensor.h"
#include "ops/ops.h"

namespace kerascpp {
Model::Model(LayerPtr graph, Json training_config)
    : graph_(std::dynamic_pointer_cast<models::Functional>(graph)), training_config_(std::move(training_config)) {
  KCPP_CHECK(graph_ != nullptr, ValueError, "A Model is made from a Sequential or Functional graph. Received: ",
             graph ? "a " + graph->class_name() + " layer" : std::string("nothing"));
  if (training_config_.is_null()) training_config_ = Json::object();
  std::function<bool(const Layer&)> any = [&](const Layer& l) {
    const auto* rnn = dynamic_cast<const layers::Rnn*>(&l);
    if (rnn && rnn->stateful()) return true;
    for (const Layer* s : l.sublayers())
      if (any(*s)) return true;
    return false;
  };
  stateful_ = any(*graph_);
  integer_ids_ = models::reads_integer_ids(*graph_);
}

Model::Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs, const std::string& name,
             const TensorNest& input_nest, const TensorNest& output_nest)
    : Model(models::functional_from_tensors(inputs, outputs, name, input_nest, output_nest)) {}

Layer& Model::graph() const { return *graph_; }

LayerRef Model::as_layer() const { return LayerRef(graph_); }

std::vector<KerasTensor> Model::inputs() const { return graph_->symbolic_inputs(); }
std::vector<KerasTensor> Model::outputs() const { return graph_->symbolic_outputs(); }
std::vector<KerasTensor> Model::layer_outputs(const std::string& layer_name) const {
  return graph_->symbolic_layer_outputs(layer_name);
}

Model Sequential(const std::vector<SequentialEntry>& entries, const std::string& name, std::optional<uint64_t> seed) {
  Json config = {{"name", name.empty() ? unique_name("sequential") : name}, {"trainable", true}, {"layers", Json::array()}};
  std::map<std::string, LayerPtr> existing;
  std::vector<Layer*> fresh;  // built here: their weights start from their initializers
  for (size_t i = 0; i < entries.size(); ++i) {
    const LayerPtr& l = entries[i].layer;
    KCPP_CHECK(l != nullptr, ValueError, "Sequential model '", config["name"].get<std::string>(), "': entry ", i, " is empty");
    Json c = l->get_config();
    if (i == 0 && l->class_name() != "InputLayer") {  // Dense(4, input_shape=(8,)) as the first layer
      Json shape = c.value("batch_input_shape", Json());
      if (shape.is_null() && c.contains("input_shape"))
        shape = Json::array({nullptr}), shape.insert(shape.end(), c["input_shape"].begin(), c["input_shape"].end());
      KCPP_CHECK(!shape.is_null(), ValueError, "Sequential model '", config["name"].get<std::string>(),
                 "' has no input: start it with kerascpp::layers::Input(shape), or give its first layer an "
                 "input_shape (kerascpp builds a Sequential model when it is made)");
      LayerPtr input = make_layer("InputLayer", {{"batch_shape", shape}, {"dtype", "float32"}, {"name", unique_name("input_layer")}});
      config["layers"].push_back({{"class_name", "InputLayer"}, {"config", input->get_config()}});
      existing[input->name()] = input;
      c.erase("input_shape");  // Keras keeps it out of the layer's config: the InputLayer holds it
      c.erase("batch_input_shape");
    }
    if (!l->built()) fresh.push_back(l.get());
    config["layers"].push_back({{"class_name", l->class_name()}, {"config", std::move(c)}});
    existing[l->name()] = l;
  }
  KCPP_CHECK(!entries.empty(), ValueError, "A Sequential model needs layers");
  std::mt19937_64 rng(seed ? *seed : std::random_device{}());
  auto initialize_fresh = [&] {  // the layers this call built, even when a later one failed
    for (Layer* l : fresh)
      if (l->built()) layers::initialize_weights(*l, rng);
  };
  try {
    Model m(std::make_shared<models::Functional>("Sequential", config, nullptr, &existing));
    initialize_fresh();
    return m;
  } catch (...) {
    initialize_fresh();
    throw;
  }
}

const std::string& Model::name() const { return graph_->name(); }

std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs) const {
  return (*this)(inputs, std::vector<Tensor>{});
}

std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks) const {
  return call_with(inputs, masks, nullptr);
}

std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs, RnnStates& states,
                                      const std::vector<Tensor>& masks) const {
  return call_with(inputs, masks, &states);
}

void Model::call_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, RnnStates* states) const {
  CallContext ctx;
  ctx.rnn_states = states;
  bool as_given = true;  // float32 inputs are used as they are, without a vector of their own
  for (const Tensor& t : inputs) {
    KCPP_CHECK(t.defined(), ValueError, "Model '", name(), "' received an empty input tensor");
    as_given = as_given && t.dtype() == DType::float32;
  }
  if (as_given) return graph_->call_into(inputs, outputs, ctx);
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) in.push_back(models::float32_input(t, integer_ids_, name()));
  graph_->call_into(in, outputs, ctx);
}

std::vector<Tensor> Model::call_training(const std::vector<Tensor>& inputs, uint64_t seed) const {
  CallContext ctx;
  ctx.training = true;
  ctx.seed = seed;
  return call_with(inputs, {}, nullptr, ctx);
}

std::vector<Tensor> Model::call_with(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks,
                                     RnnStates* states, const CallContext& base) const {
  std::vector<Tensor> in;
  in.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    KCPP_CHECK(t.defined(), ValueError, "Model '", name(), "' received an empty input tensor");
    in.push_back(models::float32_input(t, integer_ids_, name()));
  }
  CallContext ctx = base;
  ctx.rnn_states = states;
  if (masks.empty()) return graph_->call(in, ctx);
  KCPP_CHECK(masks.size() == inputs.size(), ValueError, "Model '", name(), "' expects one mask per input (", inputs.size(),
             "), None for an input without one. Received: ", masks.size(), " masks");
  for (size_t i = 0; i < masks.size(); ++i) {
    if (!masks[i].defined()) continue;
    const Shape &m = masks[i].shape(), &x = inputs[i].shape();
    KCPP_CHECK(m.size() >= 1 && m.size() <= x.size() && std::equal(m.begin(), m.end(), x.begin()), ValueError,
               "The mask of input ", i, " ('", input_names()[i], "') of model '", name(), "' must cover the input's "
               "leading axes: the input has shape ", shape_str(x), ", the mask ", shape_str(m));
  }
  ctx.masks = &masks;
  return graph_->call(in, ctx);
}

std::vector<Tensor> Model::predict(const std::vector<Tensor>& inputs, int64_t batch_size) const {
  return predict_with(inputs, batch_size, nullptr);
}

std::vector<Tensor> Model::predict(const std::vector<Tensor>& inputs, RnnStates& states, int64_t batch_size) const {
  return predict_with(inputs, batch_size, &states);
}

std::vector<Tensor> Model::predict_with(const std::vector<Tensor>& inputs, int64_t batch_size, RnnStates* states) const {
  KCPP_CHECK(batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", batch_size);
  KCPP_CHECK(inputs.size() == input_shapes().size(), ValueError, "Model '", name(), "' expects ", input_shapes().size(),
             " input(s), but it received ", inputs.size(), " input tensors.");
  int64_t n = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KCPP_CHECK(inputs[i].defined() && inputs[i].rank() >= 1, ValueError, "Input ", i, " of model '", name(),
               "' must have a batch axis. Received: shape=", shape_str(inputs[i].defined() ? inputs[i].shape() : Shape{}));
    KCPP_CHECK(n < 0 || inputs[i].dim(0) == n, ValueError, "Data cardinality is ambiguous: all inputs of model '", name(),
               "' must have the same number of samples. Received: ", n, " and ", inputs[i].dim(0));
    n = inputs[i].dim(0);
  }
  if (n <= batch_size) return call_with(inputs, {}, states);
  // A planned model writes each batch's outputs into its rows of one output (no concatenation).
  const models::InferencePlan* plan = states ? nullptr : graph_->inference_plan();
  if (plan && plan->fixed_batch() >= 0) plan = nullptr;  // batches of another size: the graph's error
  if (plan) {
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) in.push_back(models::float32_input(t, integer_ids_, name()));
    if (plan->takes(in, CallContext{})) {
      std::vector<Tensor> out;
      for (size_t j = 0; j < output_shapes().size(); ++j) out.push_back(Tensor::empty(plan->output_shape(j, n)));
      std::vector<Tensor> in_batch(in.size()), out_batch(out.size());
      for (int64_t start = 0; start < n; start += batch_size) {
        const int64_t rows = std::min(batch_size, n - start);
        for (size_t i = 0; i < in.size(); ++i) in_batch[i] = in[i].slice(start, rows);
        for (size_t j = 0; j < out.size(); ++j) out_batch[j] = out[j].slice(start, rows);
        plan->run_into(in_batch, out_batch);
      }
      return out;
    }
  }
  std::vector<std::vector<Tensor>> chunks;
  for (int64_t start = 0; start < n; start += batch_size) {
    std::vector<Tensor> batch;
    for (const Tensor& t : inputs) batch.push_back(t.slice(start, std::min(batch_size, n - start)));
    auto out = call_with(batch, {}, states);
    if (chunks.empty()) chunks.resize(out.size());
    for (size_t o = 0; o < out.size(); ++o) chunks[o].push_back(std::move(out[o]));
  }
  std::vector<Tensor> result;
  for (auto& c : chunks) result.push_back(ops::concatenate(c, 0));
  return result;
}

std::vector<Layer*> Model::layers() const { return graph_->sublayers(); }

Layer& Model::get_layer(const std::string& name) const {
  std::string known;
  for (Layer* l : layers()) {
    if (l->name() == name) return *l;
    known += (known.empty() ? "" : ", ") + l->name();
  }
  KCPP_THROW(ValueError, "No such layer: ", name, ". Existing layers are: [", known, "].");
}

Layer& Model::get_layer(int index) const {
  auto ls = layers();
  KCPP_CHECK(index >= 0 && index < static_cast<int>(ls.size()), ValueError, "Was asked to retrieve layer at index ", index,
             " but model only has ", ls.size(), " layers.");
  return *ls[index];
}

std::vector<VariablePtr> Model::weights() const { return graph_->weights(); }
std::vector<VariablePtr> Model::trainable_weights() const { return graph_->trainable_weights(); }
std::vector<VariablePtr> Model::non_trainable_weights() const { return graph_->non_trainable_weights(); }
std::vector<Tensor> Model::get_weights() const { return graph_->get_weights(); }
void Model::set_weights(const std::vector<Tensor>& values) { graph_->set_weights(values); }
int64_t Model::count_params() const { return graph_->count_params(); }
const std::vector<Shape>& Model::input_shapes() const { return graph_->input_shapes(); }
const std::vector<Shape>& Model::output_shapes() const { return graph_->output_shapes(); }
const std::vector<std::string>& Model::input_names() const { return graph_->input_names(); }
const std::vector<std::string>& Model::output_names() const { return graph_->output_names(); }

Json Model::get_config() const { return Json{{"class_name", graph_->class_name()}, {"config", graph_->get_config()}}; }

std::string Model::summary() const {
  std::ostringstream os;
  const bool functional = graph_->class_name() != "Sequential";
  const std::string rule(functional ? 110 : 72, '_'), double_rule(rule.size(), '=');
  auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    os << ' ' << std::left << std::setw(32) << a << ' ' << std::setw(24) << b << ' ' << std::setw(12) << c;
    if (functional) os << ' ' << d;
    os << '\n';
  };
  os << "Model: \"" << name() << "\"\n" << rule << '\n';
  row("Layer (type)", "Output Shape", "Param #", "Connected to");
  os << double_rule << '\n';
  for (const auto& c : graph_->layer_calls()) {
    std::string shape;
    for (const Shape& s : c.output_shapes) shape += (shape.empty() ? "" : ", ") + shape_str(s);
    row(c.layer->name() + " (" + c.layer->class_name() + ")", shape, std::to_string(c.layer->count_params()),
        c.inbound.empty() ? "" : c.inbound[0]);
    for (size_t i = 1; i < c.inbound.size(); ++i) row("", "", "", c.inbound[i]);
  }
  int64_t trainable = 0, total = count_params();
  for (const auto& v : trainable_weights()) trainable += shape_size(v->shape());
  os << double_rule << "\nTotal params: " << total << "\nTrainable params: " << trainable
     << "\nNon-trainable params: " << total - trainable << '\n' << rule << '\n';
  return os.str();
}

}  // namespace kerascpp
