// model.compile(): the optimizer, one loss per output, metrics per output, the weight
// regularisers of every layer, and Keras 3's compile_config (saved with the model).
#include <set>

#include "layers/constraints.h"
#include "layers/regularizers.h"
#include "models/functional.h"
#include "training/compiled.h"

namespace kerascpp {
namespace {

// Every layer reachable from the model, nested models' layers included.
void all_layers(Layer* l, std::vector<Layer*>* out) {
  for (Layer* s : l->sublayers()) {
    out->push_back(s);
    all_layers(s, out);
  }
}

// A loss identifier as Keras 3 serialises it in compile_config: names stay names, objects become
// {"module", "class_name", "config", "registered_name"}.
Json serialize(const std::string& module, const std::string& class_name, const Json& config) {
  return Json{{"module", module}, {"class_name", class_name}, {"config", config}, {"registered_name", nullptr}};
}

}  // namespace

void Model::compile(const CompileOptions& o) {
  auto c = std::make_shared<training::Compiled>();
  c->integer_ids = integer_ids_;
  const size_t outputs = output_shapes().size();
  c->optimizer = o.optimizer_object ? o.optimizer_object : optimizers::get(o.optimizer);
  // Losses: objects, else identifiers; one for all outputs, a list (one per output) or a dict by output name.
  std::vector<Json> loss_ids(outputs);
  if (!o.loss_objects.empty()) {
    KCPP_CHECK(o.loss_objects.size() == 1 || o.loss_objects.size() == outputs, ValueError, "Model '", name(), "' has ",
               outputs, " output(s) but compile() received ", o.loss_objects.size(), " loss objects");
    for (size_t i = 0; i < outputs; ++i) c->losses.push_back(o.loss_objects[o.loss_objects.size() == 1 ? 0 : i]);
  } else {
    if (o.loss.is_array()) {
      KCPP_CHECK(o.loss.size() == outputs, ValueError, "Model '", name(), "' has ", outputs,
                 " output(s) but the loss list has ", o.loss.size(), " entries. Received: loss=", o.loss.dump());
      for (size_t i = 0; i < outputs; ++i) loss_ids[i] = o.loss[i];
    } else if (o.loss.is_object() && !o.loss.contains("class_name")) {
      for (size_t i = 0; i < outputs; ++i) loss_ids[i] = o.loss.value(output_names()[i], Json());
      for (const auto& [k, v] : o.loss.items())
        KCPP_CHECK(std::find(output_names().begin(), output_names().end(), k) != output_names().end(), ValueError,
                   "The loss dict names '", k, "', which is not an output of model '", name(), "'");
    } else {
      for (size_t i = 0; i < outputs; ++i) loss_ids[i] = o.loss;
    }
    for (const Json& id : loss_ids) c->losses.push_back(id.is_null() ? nullptr : losses::get(id));
  }
  c->loss_weights = o.loss_weights.empty() ? std::vector<double>(outputs, 1.0) : o.loss_weights;
  KCPP_CHECK(c->loss_weights.size() == outputs, ValueError, "Model '", name(), "' has ", outputs,
             " output(s) but compile() received ", o.loss_weights.size(), " loss_weights");
  const bool several = outputs > 1;
  if (several)
    for (size_t i = 0; i < outputs; ++i) c->output_loss_trackers.emplace_back(output_names()[i] + "_loss");
  // Metrics: the list applies to every output (Keras's list form), objects too.
  KCPP_CHECK(o.metrics.is_null() || o.metrics.is_array(), NotImplementedError,
             "compile(metrics=...) takes a list of metrics; per-output dicts are not supported yet. Received: ",
             o.metrics.dump());
  c->metrics.resize(outputs);
  c->metric_names.resize(outputs);
  for (size_t i = 0; i < outputs; ++i) {
    const std::string loss_name = c->losses[i] ? c->losses[i]->class_name() : "";
    auto add = [&](const metrics::MetricPtr& m) {
      c->metrics[i].push_back(m);
      c->metric_names[i].push_back(several ? output_names()[i] + "_" + m->name() : m->name());
    };
    if (o.metrics.is_array())
      for (const Json& id : o.metrics) add(metrics::get(id, output_shapes()[i], loss_name));
    if (i == 0 || several)
      for (const auto& m : o.metric_objects) add(i == 0 ? m : metrics::get(Json{{"class_name", m->class_name()}, {"config", m->get_config()}}, output_shapes()[i], loss_name));
  }
  // kernel_regularizer, bias_constraint, ...: the regularizer and constraint of each weight training
  // updates (frozen layers' weights have neither, as in Keras), under Keras's keys in the layer's config.
  std::vector<Layer*> layers;
  all_layers(&graph(), &layers);
  std::set<const Variable*> updated;
  for (const VariablePtr& v : trainable_weights()) updated.insert(v.get());
  for (Layer* l : layers) {
    if (l->own_variables().empty()) continue;  // nothing to regularise; spares a copy of the config
    const Json cfg = l->get_config();
    const std::string who = "Layer '" + l->name() + "' (" + l->class_name() + ")";
    for (const VariablePtr& v : l->own_variables()) {
      if (!cfg.is_object() || !updated.count(v.get())) continue;
      const std::string key = l->weight_config_key(v->name(), "regularizer");
      if (cfg.contains(key) && !cfg[key].is_null()) {
        layers::Regularizer r = layers::regularizer_from_config(cfg[key], who);
        KCPP_CHECK(r.unsupported.empty(), NotImplementedError, r.unsupported);
        if (r.active()) c->weight_regularizers.emplace_back(v, r);
      }
      const layers::Constraint k =
          layers::Constraint::from_config(cfg.value(l->weight_config_key(v->name(), "constraint"), Json()), who);
      if (k.active()) c->weight_constraints.emplace_back(v, k);
    }
  }
  // compile_config as Keras 3 writes it (keras/src/trainers/trainer.py get_compile_config).
  Json loss_cfg;
  if (!o.loss_objects.empty()) {
    loss_cfg = Json::array();
    for (const auto& l : c->losses) loss_cfg.push_back(serialize("keras.losses", l->class_name(), l->get_config()));
    if (o.loss_objects.size() == 1) loss_cfg = loss_cfg[0];
  } else {
    loss_cfg = o.loss;
  }
  Json metrics_cfg = o.metrics.is_array() && !o.metrics.empty() ? o.metrics : Json();
  for (const auto& m : o.metric_objects) {
    if (metrics_cfg.is_null()) metrics_cfg = Json::array();
    metrics_cfg.push_back(serialize("keras.metrics", m->class_name(), m->get_config()));
  }
  c->config = Json{{"optimizer", serialize("keras.optimizers", c->optimizer->class_name(), c->optimizer->get_config())},
                   {"loss", loss_cfg},
                   {"loss_weights", o.loss_weights.empty() ? Json() : Json(o.loss_weights)},
                   {"metrics", metrics_cfg},
                   {"weighted_metrics", nullptr},
                   {"run_eagerly", false},
                   {"steps_per_execution", 1},
                   {"jit_compile", false}};
  training_config_ = c->config;
  compiled_ = std::move(c);
  stop_training = false;
}

optimizers::OptimizerPtr Model::optimizer() const { return compiled_ ? compiled_->optimizer : nullptr; }

Json Model::compile_config() const { return compiled_ ? compiled_->config : Json::object(); }

std::vector<std::string> Model::metrics_names() const {
  if (!compiled_) return {};
  std::vector<std::string> out = {"loss"};
  for (const auto& t : compiled_->output_loss_trackers) out.push_back(t.name());
  for (const auto& names : compiled_->metric_names) out.insert(out.end(), names.begin(), names.end());
  return out;
}

}  // namespace kerascpp
