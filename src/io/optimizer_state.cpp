#include "io/optimizer_state.h"

#include <algorithm>

#include "kerascpp/warnings.h"

#include "io/keras2_optimizer_layout.h"
#include "io/weights_io.h"

namespace kerascpp::io {
namespace {

void warn(const std::string& file, const std::string& what) { kerascpp::warn(file + ": " + what); }

// A training config's metrics as compile() takes them, in their structure (a list, one list per output,
// or a dict by output name): names and objects stay as they are, but a MeanMetricWrapper config that
// kerascpp cannot build (Keras 2 names its function in ways Keras 3 does not) becomes its name, as
// Keras 2 compiled it from.
Json metric_identifiers(const Json& m) {
  if (m.is_array()) {
    Json out = Json::array();
    for (const Json& e : m) out.push_back(metric_identifiers(e));
    return out;
  }
  if (!m.is_object()) return m;
  if (!m.contains("class_name")) {  // per output name
    Json out = Json::object();
    for (const auto& [k, v] : m.items()) out[k] = metric_identifiers(v);
    return out;
  }
  if (m.value("class_name", std::string()) == "MeanMetricWrapper" && m.contains("config") && m["config"].is_object() &&
      m["config"].contains("name")) {
    try {
      metrics::get(m);
      return m;
    } catch (const Error&) {
      return m["config"]["name"];
    }
  }
  return m;
}

// Keras 3's compile_config reads a list with one entry per output as per output (compile_utils.
// _build_metrics_set), where kerascpp's compile() applies a plain list to every output (Keras 2).
Json per_output_if_keras3(const Json& metrics, const Model& model, bool keras3) {
  const size_t outputs = model.output_shapes().size();
  if (!keras3 || outputs < 2 || !metrics.is_array() || metrics.size() != outputs) return metrics;
  Json out = Json::array();
  for (const Json& e : metrics) out.push_back(e.is_array() || e.is_null() ? e : Json::array({e}));
  return out;
}

// The loss entry of a training config as compile() takes it: names as they are, Keras 3
// serialised functions ({"class_name": "function", "config": "mse"}) as their name.
Json loss_identifier(const Json& loss) {
  if (loss.is_object() && loss.value("class_name", std::string()) == "function" && loss.contains("config"))
    return loss["config"];
  if (loss.is_array()) {
    Json out = Json::array();
    for (const Json& l : loss) out.push_back(loss_identifier(l));
    return out;
  }
  return loss;
}

// The losses and metrics of a saved compile config that come from the caller (LoadOptions::custom_loss
// / custom_metric), made for each output they apply to. As Keras looks in custom_objects before its
// own names, the caller is asked first for every entry ("accuracy" aside, which compile resolves).
class CustomEntries {
 public:
  CustomEntries(const Model& model, const LoadOptions& options) : model_(model), options_(options) {}

  // An optimizer whose learning rate is a schedule the caller makes: built with a stand-in rate, then
  // given the schedule, as compile(optimizer=Adam(MySchedule())) does.
  void optimizer(const Json& saved, CompileOptions& o) const {
    if (!options_.custom_schedule || !saved.is_object() || !saved.contains("config") || !saved["config"].is_object())
      return;
    const Json lr = saved["config"].value("learning_rate", Json());
    if (!lr.is_object()) return;
    optimizers::SchedulePtr schedule = options_.custom_schedule(lr);
    if (!schedule) return;
    Json config = saved;
    config["config"]["learning_rate"] = 0.001;  // stands in until the schedule is set
    o.optimizer_object = optimizers::get(config);
    o.optimizer_object->set_schedule(std::move(schedule));
  }

  // `raw`: the config's loss as saved; o.loss: the same as compile() takes it. When the caller makes
  // any entry, the whole loss becomes objects, one per output.
  void losses(const Json& raw, CompileOptions& o) const {
    if (!options_.custom_loss || raw.is_null()) return;
    const std::vector<std::string> names = model_.output_names();
    std::vector<Json> per_output;  // the entry of each output, as saved
    if (raw.is_object() && !raw.contains("class_name")) {
      for (const std::string& n : names) per_output.push_back(raw.value(n, Json()));
    } else if (raw.is_array() && raw.size() == names.size() && names.size() > 1) {
      per_output.assign(raw.begin(), raw.end());
    } else {
      per_output.assign(names.size(), raw.is_array() && raw.size() == 1 ? raw[0] : raw);
    }
    std::vector<losses::LossPtr> objects(per_output.size());
    bool custom = false;
    for (size_t i = 0; i < per_output.size(); ++i) {
      if (per_output[i].is_null()) continue;
      objects[i] = options_.custom_loss(per_output[i], model_.output_shapes()[i]);
      custom = custom || objects[i] != nullptr;
    }
    if (!custom) return;  // compile() reads the config as it is
    for (size_t i = 0; i < per_output.size(); ++i) {
      KCPP_CHECK(!per_output[i].is_null(), NotImplementedError, "output '", names[i], "' has no loss beside a custom one");
      if (!objects[i]) objects[i] = losses::get(loss_identifier(per_output[i]));
    }
    o.loss_objects = std::move(objects);
  }

  // Metrics (identifiers after metric_identifiers / per_output_if_keras3): when the caller makes any
  // entry, the metrics become one list per output, each made entry a null placeholder for its object.
  void metrics(Json& ids, std::map<std::string, std::vector<metrics::MetricPtr>>& by_output) const {
    if (!options_.custom_metric || ids.is_null() || (ids.is_array() && ids.empty())) return;
    const std::vector<std::string> names = model_.output_names();
    Json per = ids;  // the same, one entry (a list, or null) per output: a dict by name or a list of lists
    if (!per.is_object() || per.contains("class_name")) {
      const bool per_output = per.is_array() && std::any_of(per.begin(), per.end(), [](const Json& e) { return e.is_array(); });
      if (!per_output) per = Json(std::vector<Json>(names.size(), per.is_array() ? per : Json::array({per})));
    }
    std::map<std::string, std::vector<metrics::MetricPtr>> made;
    auto convert = [&](Json& list, size_t output) {
      if (list.is_null()) return;  // an output without metrics
      if (!list.is_array()) list = Json::array({list});
      for (Json& e : list) {
        if (e.is_null() || (e.is_string() && (e == "accuracy" || e == "acc"))) continue;
        if (metrics::MetricPtr m = options_.custom_metric(e, model_.output_shapes()[output])) {
          made[names[output]].push_back(std::move(m));
          e = nullptr;
        }
      }
    };
    for (size_t i = 0; i < names.size(); ++i) {
      if (per.is_object()) {
        if (per.contains(names[i])) convert(per[names[i]], i);
      } else if (i < per.size()) {
        convert(per[i], i);
      }
    }
    if (made.empty()) return;  // compile() reads the config as it is
    ids = std::move(per);
    for (auto& [name, objects] : made) by_output[name] = std::move(objects);
  }

 private:
  const Model& model_;
  const LoadOptions& options_;
};

void assign_all(Model& model, const std::vector<Tensor>& values, const std::string& file, bool keras2) {
  optimizers::OptimizerPtr opt = model.optimizer();
  if (!opt || values.empty()) return;
  // A model compiled but never trained saves only iteration and learning_rate: no slots to build.
  std::vector<VariablePtr> vars = opt->variables();
  const size_t unbuilt = vars.size() - (keras2 && !opt->has_schedule() ? 1 : 0);
  if (opt->built() || values.size() != unbuilt) {
    opt->build(model.trainable_weights());
    vars = opt->variables();
  }
  // tf-keras does not save the learning rate: its list is the Keras 3 list without entry 1. Its
  // .keras archives use the same optimizer/vars group as Keras 3, so there the sign is entry 1 not
  // being the scalar learning rate.
  const bool no_lr = keras2 || (values.size() > 1 && !values[1].shape().empty());
  if (no_lr && !opt->has_schedule() && vars.size() == values.size() + 1) vars.erase(vars.begin() + 1);
  if (vars.size() != values.size()) {
    warn(file, "Skipping loading optimizer state: the optimizer has " + std::to_string(vars.size()) +
                   " variables, the file " + std::to_string(values.size()) + ". Training restarts the optimizer.");
    return;
  }
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i]->shape() != values[i].shape() && vars[i]->value().size() != values[i].size()) {
      warn(file, "Skipping loading optimizer state: variable " + std::to_string(i) + " (" + vars[i]->path() +
                     ") has shape " + shape_str(vars[i]->shape()) + ", the file " + shape_str(values[i].shape()));
      return;
    }
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->assign(values[i].reshape(vars[i]->shape()));
}

// tf.keras 2.0-2.10 and Keras 2.0-2.3 files (keras2_optimizer_layout.h): paired by name and block, all
// or nothing.
void assign_slot_major(Model& model, const std::vector<std::string>& names, const std::vector<Tensor>& values,
                       const std::string& file) {
  optimizers::OptimizerPtr opt = model.optimizer();
  if (!opt || values.empty()) return;
  const std::vector<VariablePtr> trainable = model.trainable_weights();
  if (values.size() > 1 || !values[0].shape().empty()) opt->build(trainable);  // more than an iteration count
  auto paired = pair_keras2_slot_major(*opt, trainable, names, values);
  if (const std::string* why = std::get_if<std::string>(&paired)) {
    warn(file, "Skipping loading optimizer state: " + *why + ". Training restarts the optimizer.");
    return;
  }
  for (auto& [variable, value] : std::get<OptimizerAssignment>(paired).values) variable->assign(value);
}

}  // namespace

void compile_from_saved_config(Model& model, const std::string& file, const LoadOptions& options) {
  const Json& t = model.training_config();  // read in place; compile() below replaces what it holds
  if (!t.is_object() || t.empty()) return;
  static const Json kNone;
  auto member = [&t](const char* key) -> const Json& {
    auto it = t.find(key);
    return it == t.end() ? kNone : *it;
  };
  const bool keras3 = t.contains("optimizer");  // Keras 3's compile_config; Keras 2 has optimizer_config
  const Json& optimizer = member(keras3 ? "optimizer" : "optimizer_config");
  if (optimizer.is_null()) return;
  try {
    CompileOptions o;
    o.optimizer = optimizer;
    const Json& loss = member("loss");
    o.loss = loss_identifier(loss);
    o.metrics = per_output_if_keras3(metric_identifiers(member("metrics")), model, keras3);
    o.weighted_metrics = per_output_if_keras3(metric_identifiers(member("weighted_metrics")), model, keras3);
    if (t.contains("loss_weights") && t["loss_weights"].is_array())
      for (const Json& w : t["loss_weights"]) {
        KCPP_CHECK(w.is_number(), ValueError, "loss_weights holds ", w.dump().substr(0, 80), ", not a number");
        o.loss_weights.push_back(w.get<double>());
      }
    const CustomEntries custom(model, options);
    custom.optimizer(optimizer, o);
    custom.losses(loss, o);
    custom.metrics(o.metrics, o.output_metric_objects);
    custom.metrics(o.weighted_metrics, o.output_weighted_metric_objects);
    model.compile(o);
  } catch (const Error& e) {
    warn(file, std::string("The model's training configuration could not be compiled, so it is loaded uncompiled (") +
                   e.what() + "). Call compile() to train it.");
  }
}

void write_optimizer_keras3(const Model& model, const H5WriteGroup& root) {
  optimizers::OptimizerPtr opt = model.optimizer();
  if (!opt || !opt->built()) return;
  H5WriteGroup g = root.create_group("optimizer/vars");
  g.write_attr_string("name", opt->name());
  const auto vars = opt->variables();
  for (size_t i = 0; i < vars.size(); ++i) g.write_dataset(std::to_string(i), vars[i]->value());
}

void write_optimizer_legacy(const Model& model, const H5WriteGroup& root, KerasDialect dialect) {
  optimizers::OptimizerPtr opt = model.optimizer();
  if (!opt || !opt->built()) return;
  H5WriteGroup g = root.create_group("optimizer_weights");
  std::vector<std::string> names;
  const auto vars = opt->variables();
  for (size_t i = 0; i < vars.size(); ++i) {
    std::string path = vars[i]->path();
    if (dialect == KerasDialect::keras2) {
      if (i == 1 && !opt->has_schedule()) continue;  // tf-keras keeps no learning-rate variable
      path = i == 0 ? "iteration:0" : path + ":0";
    }
    names.push_back(path);
    g.write_dataset(path, vars[i]->value());
  }
  g.write_attr_strings_split("weight_names", names);
}

void read_optimizer_keras3(Model& model, const H5Group& root, const std::string& file) {
  if (!model.optimizer() || !root.is_group("optimizer/vars")) return;
  H5Group g = root.group("optimizer/vars");
  std::vector<Tensor> values;
  for (size_t i = 0; g.is_dataset(std::to_string(i)); ++i) values.push_back(g.dataset(std::to_string(i)).read());
  assign_all(model, values, file, false);
}

void read_optimizer_legacy(Model& model, const H5Group& root, const std::string& file) {
  if (!model.optimizer() || !root.is_group("optimizer_weights")) return;
  H5Group g = root.group("optimizer_weights");
  std::vector<Tensor> values;
  bool keras2 = false;
  const std::vector<std::string> names = g.attr_strings_split("weight_names");
  for (const std::string& name : names) {
    KCPP_CHECK(g.is_dataset(name), IOError, "Missing optimizer weight \"", name, "\" in ", file);
    keras2 = keras2 || name.ends_with(":0");
    values.push_back(g.dataset(name).read());
  }
  if (keras2 && is_keras2_slot_major(names))
    assign_slot_major(model, names, values, file);
  else
    assign_all(model, values, file, keras2);
}

}  // namespace kerascpp::io
