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
  // In a list, null stands for the next metric object (CompileOptions::metrics); an output's entry
  // null is no metrics.
  auto add_list = [&](size_t i, const Json& list) {
    for (const Json& id : list) out[i].push_back(id);
  };
  auto add = [&](size_t i, const Json& entry) {
    if (entry.is_array()) add_list(i, entry);
    else if (!entry.is_null()) out[i].push_back(entry);
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
  // A list holding lists is one entry per output (Keras 3's ['accuracy', ['mae', 'mse']] too).
  const bool nested = spec.is_array() && std::any_of(spec.begin(), spec.end(), [](const Json& e) { return e.is_array(); });
  if (nested && outputs.size() > 1) {
    KCPP_CHECK(spec.size() == outputs.size(), ValueError, "For a model with multiple outputs, when providing the `",
               argument, "` argument as a list of lists, it should have as many entries as the model has outputs. "
               "Received: ", argument, "=", spec.dump(), " of length ", spec.size(), " whereas the model has ",
               outputs.size(), " outputs.");
    for (size_t i = 0; i < outputs.size(); ++i) add(i, spec[i]);
    return out;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (nested) {  // a single output takes every list
      for (const Json& entry : spec) add(i, entry);
    } else if (spec.is_array()) {
      add_list(i, spec);
    } else {
      add(i, spec);
    }
  }
  return out;
}

// The metric objects of output i, in order: those for every output (the first output the objects
// themselves, the others copies), then the output's own.
MetricObjects objects_of(size_t i, const std::string& output, const MetricObjects& every, const OutputMetricObjects& by_output,
                         const Shape& shape, const std::string& loss_name) {
  MetricObjects out;
  for (const auto& m : every)
    out.push_back(i == 0 ? m : metrics::get(Json{{"class_name", m->class_name()}, {"config", m->get_config()}}, shape, loss_name));
  if (auto it = by_output.find(output); it != by_output.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

// ids with each null replaced by the next of `objects` (made by `make`), and the objects left appended.
template <typename T, typename FromId, typename FromObject>
std::vector<T> in_order(const std::vector<Json>& ids, const MetricObjects& objects, const char* argument,
                        FromId from_id, FromObject from_object) {
  std::vector<T> out;
  size_t next = 0;
  for (const Json& id : ids) {
    if (!id.is_null()) {
      out.push_back(from_id(id));
      continue;
    }
    KCPP_CHECK(next < objects.size(), ValueError, "compile(", argument, "=...): a null entry stands for a metric "
               "object, and there are more nulls than objects");
    out.push_back(from_object(objects[next++]));
  }
  for (; next < objects.size(); ++next) out.push_back(from_object(objects[next]));
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
    const auto made = in_order<metrics::MetricPtr>(
        per_output[i], objects_of(i, names[i], every, by_output, shape, loss_name), argument,
        [&](const Json& id) { return metrics::get(id, shape, loss_name); }, [](const metrics::MetricPtr& m) { return m; });
    for (const auto& m : made) c.metrics[i].push_back({m, m->name(), weighted});
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

// compile_config's metrics entry: the identifiers as given, each object serialised in its place; per
// output (a dict or a list of lists, or objects for one output), a dict by output name.
Json metrics_config(const Json& ids, const MetricObjects& every, const OutputMetricObjects& by_output,
                    const std::vector<std::string>& outputs, const std::string& model) {
  auto serialized = [](const metrics::MetricPtr& m) { return m->serialize(); };
  auto identity = [](const Json& id) { return id; };
  const bool per_output = (ids.is_object() && !ids.contains("class_name")) || !by_output.empty() ||
                          (ids.is_array() && std::any_of(ids.begin(), ids.end(), [](const Json& e) { return e.is_array(); }));
  if (!per_output) {
    if (!ids.is_array()) return every.empty() ? ids : Json(in_order<Json>({ids}, every, "metrics", identity, serialized));
    if (ids.empty() && every.empty()) return Json();
    return Json(in_order<Json>(std::vector<Json>(ids.begin(), ids.end()), every, "metrics", identity, serialized));
  }
  const auto given = ids_per_output(ids, outputs, model, "metrics");
  Json out = Json::object();
  for (size_t i = 0; i < outputs.size(); ++i) {
    MetricObjects objects = every;
    if (auto it = by_output.find(outputs[i]); it != by_output.end())
      objects.insert(objects.end(), it->second.begin(), it->second.end());
    const std::vector<Json> entry = in_order<Json>(given[i], objects, "metrics", identity, serialized);
    if (!entry.empty()) out[outputs[i]] = entry;
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
    if (l->own_variables().empty()) continue;  // nothing to regularise
    const Json& cfg = l->config();
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
    for (const auto& l : c->losses) loss_cfg.push_back(l->serialize());
    if (o.loss_objects.size() == 1) loss_cfg = loss_cfg[0];
  } else {
    loss_cfg = o.loss;
  }
  const Json metrics_cfg = metrics_config(o.metrics, o.metric_objects, o.output_metric_objects, output_names(), name());
  const Json weighted_cfg = metrics_config(o.weighted_metrics, o.weighted_metric_objects,
                                           o.output_weighted_metric_objects, output_names(), name());
  training_config_ = Json{
      {"optimizer", serialize("keras.optimizers", c->optimizer->class_name(), c->optimizer->get_config())},
      {"loss", loss_cfg},
      {"loss_weights", o.loss_weights.empty() ? Json() : Json(o.loss_weights)},
      {"metrics", metrics_cfg},
      {"weighted_metrics", weighted_cfg},
      {"run_eagerly", false},
      {"steps_per_execution", 1},
      {"jit_compile", false}};
  compiled_ = std::move(c);
  stop_training = false;
}

optimizers::OptimizerPtr Model::optimizer() const { return compiled_ ? compiled_->optimizer : nullptr; }

// compile() sets training_config_ to the compile config it made (kept once, not also in Compiled).
Json Model::compile_config() const { return compiled_ ? training_config_ : Json::object(); }

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
