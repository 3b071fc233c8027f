// model.compile(): the optimizer, one loss per output, metrics and weighted metrics per output, the weight
// regularisers of every layer, and Keras 3's compile_config (saved with the model).
#include <algorithm>
#include <map>
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

using MetricObjects = std::vector<metrics::MetricPtr>;
using OutputMetricObjects = std::map<std::string, MetricObjects>;

// compile(metrics=...)'s identifiers as one list per output (CompileOptions::metrics).
std::vector<std::vector<Json>> ids_per_output(const Json& spec, const std::vector<std::string>& outputs,
                                              const std::string& model, const char* argument) {
  std::vector<std::vector<Json>> out(outputs.size());
  auto add = [&](size_t i, const Json& entry) {
    if (entry.is_array()) {
      for (const Json& id : entry)
        if (!id.is_null()) out[i].push_back(id);
    } else if (!entry.is_null()) {
      out[i].push_back(entry);
    }
  };
  if (spec.is_null()) return out;
  if (spec.is_object() && !spec.contains("class_name")) {
    for (const auto& [name, entry] : spec.items()) {
      auto it = std::find(outputs.begin(), outputs.end(), name);
      KCPP_CHECK(it != outputs.end(), ValueError, "The ", argument, " dict names '", name,
                 "', which is not an output of model '", model, "'. Its outputs: ", Json(outputs).dump());
      add(static_cast<size_t>(it - outputs.begin()), entry);
    }
    return out;
  }
  const bool nested = spec.is_array() && !spec.empty() &&
                      std::all_of(spec.begin(), spec.end(), [](const Json& e) { return e.is_array() || e.is_null(); });
  if (nested && outputs.size() > 1) {
    KCPP_CHECK(spec.size() == outputs.size(), ValueError, "For a model with multiple outputs, when providing the `",
               argument, "` argument as a list of lists, it should have as many entries as the model has outputs. "
               "Received: ", argument, "=", spec.dump(), " of length ", spec.size(), " whereas the model has ",
               outputs.size(), " outputs.");
    for (size_t i = 0; i < outputs.size(); ++i) add(i, spec[i]);
    return out;
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (spec.is_array())
      for (const Json& entry : spec) add(i, entry);
    else
      add(i, spec);
  return out;
}

// Adds compile's metrics (or weighted_metrics) to each output: identifiers, then objects for every
// output (the first output the object itself, the others a copy), then the output's own objects.
void add_metrics(training::Compiled& c, const Model& model, const Json& ids, const MetricObjects& every,
                 const OutputMetricObjects& by_output, bool weighted) {
  const std::vector<std::string>& names = model.output_names();
  const char* argument = weighted ? "weighted_metrics" : "metrics";
  const auto per_output = ids_per_output(ids, names, model.name(), argument);
  for (const auto& [name, objects] : by_output)
    KCPP_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ValueError, "The ", argument,
               " dict names '", name, "', which is not an output of model '", model.name(), "'");
  for (size_t i = 0; i < names.size(); ++i) {
    const Shape& shape = model.output_shapes()[i];
    const std::string loss_name = c.losses[i] ? c.losses[i]->class_name() : "";
    auto add = [&](const metrics::MetricPtr& m) { c.metrics[i].push_back({m, m->name(), weighted}); };
    for (const Json& id : per_output[i]) add(metrics::get(id, shape, loss_name));
    for (const auto& m : every)
      add(i == 0 ? m : metrics::get(Json{{"class_name", m->class_name()}, {"config", m->get_config()}}, shape, loss_name));
    if (auto it = by_output.find(names[i]); it != by_output.end())
      for (const auto& m : it->second) add(m);
  }
}

// The log keys, as Keras's CompileMetrics.result(): "<output>_<name>" when the model has several
// outputs; a metric whose key is taken gets "_1", "_2"...; a weighted one "weighted_<name>" first.
void name_metrics(training::Compiled& c, const std::vector<std::string>& outputs) {
  std::map<std::string, int> taken;
  const bool several = outputs.size() > 1;
  for (bool weighted : {false, true})
    for (size_t i = 0; i < c.metrics.size(); ++i)
      for (auto& m : c.metrics[i]) {
        if (m.weighted != weighted) continue;
        const std::string prefix = several ? outputs[i] + "_" : "";
        std::string name = prefix + m.metric->name();
        if (taken.count(name) && weighted) name = prefix + "weighted_" + m.metric->name();
        if (taken.count(name)) name += "_" + std::to_string(taken[name]++);
        else taken[name] = 1;
        m.log_name = name;
      }
}

// compile_config's metrics entry: the identifiers as given, objects serialised after them; per output
// (a dict of identifiers, or objects for one output), a dict by output name.
Json metrics_config(const Json& ids, const MetricObjects& every, const OutputMetricObjects& by_output,
                    const std::vector<std::string>& outputs) {
  auto serialized = [](const metrics::MetricPtr& m) { return serialize("keras.metrics", m->class_name(), m->get_config()); };
  if (!(ids.is_object() && !ids.contains("class_name")) && by_output.empty()) {
    Json out = ids.is_array() && ids.empty() ? Json() : ids;
    if (!every.empty() && !out.is_array()) out = out.is_null() ? Json::array() : Json::array({out});
    for (const auto& m : every) out.push_back(serialized(m));
    return out;
  }
  Json out = Json::object();
  for (const std::string& name : outputs) {
    Json entry = Json::array();
    if (ids.is_object() && ids.contains(name)) entry = ids[name].is_array() ? ids[name] : Json::array({ids[name]});
    for (const auto& m : every) entry.push_back(serialized(m));
    if (auto it = by_output.find(name); it != by_output.end())
      for (const auto& m : it->second) entry.push_back(serialized(m));
    if (!entry.empty()) out[name] = entry;
  }
  return out;
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
  c->metrics.resize(outputs);
  add_metrics(*c, *this, o.metrics, o.metric_objects, o.output_metric_objects, false);
  add_metrics(*c, *this, o.weighted_metrics, o.weighted_metric_objects, o.output_weighted_metric_objects, true);
  name_metrics(*c, output_names());
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
  const Json metrics_cfg = metrics_config(o.metrics, o.metric_objects, o.output_metric_objects, output_names());
  const Json weighted_cfg =
      metrics_config(o.weighted_metrics, o.weighted_metric_objects, o.output_weighted_metric_objects, output_names());
  c->config = Json{{"optimizer", serialize("keras.optimizers", c->optimizer->class_name(), c->optimizer->get_config())},
                   {"loss", loss_cfg},
                   {"loss_weights", o.loss_weights.empty() ? Json() : Json(o.loss_weights)},
                   {"metrics", metrics_cfg},
                   {"weighted_metrics", weighted_cfg},
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
  for (bool weighted : {false, true})
    for (const auto& per_output : compiled_->metrics)
      for (const auto& m : per_output)
        if (m.weighted == weighted) out.push_back(m.metric->name());
  for (const auto& t : compiled_->output_loss_trackers) out.push_back(t.name());
  return out;
}

}  // namespace kerascpp
