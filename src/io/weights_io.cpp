#include "io/weights_io.h"

#include <map>
#include <iterator>

#include "core/naming.h"
#include "kerascpp/warnings.h"
#include "models/functional.h"

namespace kerascpp::io {

void read_variable(Variable& v, const H5Dataset& ds) {
  KCPP_CHECK(ds.shape() == v.shape(), ValueError, "Shape mismatch in \"", ds.path(), "\" of ", ds.file_name(),
             ": the model's variable '", v.path(), "' has shape ", shape_str(v.shape()), ", but the saved weight has shape ",
             shape_str(ds.shape()));
  if (ds.dtype() == v.dtype()) {
    Tensor t = v.value();
    ds.read_into(t.raw_data(), t.nbytes());
  } else {
    v.assign(ds.read());
  }
}

namespace {

// Fills variables from their datasets: copies, or with share_views makes a variable a view of the
// mapped file where its dataset allows one, never two variables views of overlapping bytes (a file
// may name one dataset twice, or a damaged one give two datasets overlapping addresses).
class VariableReader {
 public:
  VariableReader(Model& model, bool share_views) : model_(model), share_views_(share_views) {}
  VariableReader(const VariableReader&) = delete;
  VariableReader& operator=(const VariableReader&) = delete;
  // After the last read: the plans kept the addresses of the storage the shared variables had.
  void finish() {
    if (shared_.empty()) return;
    if (auto* g = dynamic_cast<models::Functional*>(&model_.graph())) g->rebuild_inference_plans();
  }

  void read(Variable& v, const H5Dataset& ds) {
    if (share_views_ && ds.shape() == v.shape() && ds.dtype() == v.dtype()) {
      Tensor view = ds.view();
      if (view.defined() && view.raw_data() == v.value().raw_data()) return;  // read twice: already this
      if (view.defined() && claim(view)) {
        v.share(std::move(view));
        return;
      }
    }
    read_variable(v, ds);
  }

 private:
  // Records the view's bytes unless they overlap bytes shared before.
  bool claim(const Tensor& view) {
    const auto lo = reinterpret_cast<uintptr_t>(view.raw_data());
    const uintptr_t hi = lo + view.nbytes();
    auto next = shared_.lower_bound(lo);
    if (next != shared_.end() && next->first < hi) return false;
    if (next != shared_.begin() && std::prev(next)->second > lo) return false;
    shared_.emplace(lo, hi);
    return true;
  }

  Model& model_;
  bool share_views_;
  std::map<uintptr_t, uintptr_t> shared_;  // start -> end of the bytes shared so far
};

// One model layer's share of a legacy file: its variables, the datasets (or the values converted from
// another layout, CuDNNLSTM) that go into them.
struct Planned {
  std::vector<VariablePtr> vars;
  std::vector<H5Dataset> ds;
  std::vector<Tensor> converted;
};

// Plans layer #k from the saved layer group; with skip_mismatch, a mismatch warns as Keras does and
// the layer (count) or the weight (shape) is left as it is.
Planned plan_layer(Layer& layer, size_t k, const std::string& saved_name, const H5Group& lg,
                   const std::vector<std::string>& names, bool skip_mismatch) {
  const std::string& file = lg.file_name();
  Planned p;
  p.vars = layer.legacy_weights();
  if (names.size() != p.vars.size() && skip_mismatch) {
    warn(kerascpp::detail::concat("Skipping loading of weights for layer #", k, " (named ", layer.name(),
                        ") due to mismatch in number of weights. Layer expects ", p.vars.size(),
                        " weight(s). Received ", names.size(), " saved weight(s)"));
    return {};
  }
  KCPP_CHECK(names.size() == p.vars.size(), ValueError, "Weight count mismatch for layer #", k, " (named '",
             layer.name(), "' in the current model, '", saved_name, "' in the save file ", file, "). Layer expects ",
             p.vars.size(), " weight(s). Received ", names.size(), " saved weight(s)");
  for (size_t i = 0; i < names.size(); ++i) p.ds.push_back(lg.dataset(names[i]));
  bool same_layout = true;
  for (size_t i = 0; i < names.size() && same_layout; ++i) same_layout = p.ds[i].shape() == p.vars[i]->shape();
  if (!same_layout && !skip_mismatch) {  // a layer stored in another layout (CuDNNLSTM) is read and converted now
    std::vector<Tensor> saved;
    for (const H5Dataset& d : p.ds) saved.push_back(d.read());
    p.converted = layer.from_legacy_layout(std::move(saved));
    KCPP_CHECK(p.converted.size() == names.size(), ValueError, "Layer '", layer.name(), "' cannot read the ",
               names.size(), " weights of '", saved_name, "' in ", file);
  }
  if (same_layout) return p;  // every weight as the model has it (the common case)
  Planned kept;
  for (size_t i = 0; i < names.size(); ++i) {
    const Shape got = p.converted.empty() ? p.ds[i].shape() : p.converted[i].shape();
    if (got != p.vars[i]->shape() && skip_mismatch) {
      warn(kerascpp::detail::concat("Skipping loading weights for layer #", k, " (named ", layer.name(),
                          ") due to mismatch in shape for weight ", p.vars[i]->path(), ". Weight expects shape ",
                          shape_str(p.vars[i]->shape()), ". Received saved weight with shape ", shape_str(got)));
      continue;
    }
    KCPP_CHECK(got == p.vars[i]->shape(), ValueError, "Shape mismatch in layer #", k, " (named '", layer.name(),
               "') for weight '", p.vars[i]->path(), "': the model expects ", shape_str(p.vars[i]->shape()), ", but \"",
               p.ds[i].path(), "\" in ", file, " has shape ", shape_str(p.ds[i].shape()));
    kept.vars.push_back(p.vars[i]);
    kept.ds.push_back(p.ds[i]);
    if (!p.converted.empty()) kept.converted.push_back(p.converted[i]);
  }
  return kept;
}
}  // namespace

void load_legacy_weights(Model& model, const H5Group& g, const LoadWeightsOptions& options, bool share_views) {
  const std::string& file = g.file_name();
  KCPP_CHECK(options.by_name || !options.skip_mismatch, ValueError,
             "When calling model.load_weights, skip_mismatch can only be set to True when by_name is True.");
  struct Saved {
    std::string name;
    H5Group group;
    std::vector<std::string> weight_names;  // read here unless by_name: then only for a layer the model has
  };
  std::vector<Saved> saved;
  for (std::string& name : g.attr_strings_split("layer_names")) {
    H5Group lg = g.group(name);  // ValueError naming the file and path when missing
    if (options.by_name) {
      saved.push_back({std::move(name), lg, {}});
      continue;
    }
    std::vector<std::string> weight_names = lg.attr_strings_split("weight_names");
    if (!weight_names.empty()) saved.push_back({std::move(name), lg, std::move(weight_names)});
  }
  // Check every layer before reading any, so that a bad file changes nothing.
  std::vector<Planned> plan;
  if (options.by_name) {  // each saved layer into the model's layer of its name; others are left alone
    std::map<std::string, std::pair<size_t, Layer*>> by_name;
    const std::vector<Layer*> layers = model.layers();
    for (size_t k = 0; k < layers.size(); ++k) by_name[layers[k]->name()] = {k, layers[k]};
    for (const Saved& sl : saved) {
      auto it = by_name.find(sl.name);
      if (it != by_name.end())
        plan.push_back(plan_layer(*it->second.second, it->second.first, sl.name, sl.group,
                                  sl.group.attr_strings_split("weight_names"), options.skip_mismatch));
    }
  } else {  // layers with weights on both sides, paired in order, as Keras's load_weights does
    std::vector<Layer*> layers;
    for (Layer* l : model.layers())
      if (!l->legacy_weights().empty()) layers.push_back(l);
    KCPP_CHECK(layers.size() == saved.size(), ValueError, "Layer count mismatch when loading weights from file ", file,
               ". Model expected ", layers.size(), " layers with weights, found ", saved.size(), " saved layers.");
    for (size_t k = 0; k < layers.size(); ++k)
      plan.push_back(plan_layer(*layers[k], k, saved[k].name, saved[k].group, saved[k].weight_names, false));
  }
  VariableReader reader(model, share_views);
  for (auto& p : plan)
    for (size_t i = 0; i < p.vars.size(); ++i) {
      if (p.converted.empty())
        reader.read(*p.vars[i], p.ds[i]);
      else
        p.vars[i]->assign(p.converted[i]);
    }
  reader.finish();
}

namespace {

struct Pending {
  VariablePtr var;
  H5Dataset ds;
};

// Checks one layer's saved variables against the model's and queues them (nothing is read yet).
void collect(const Layer& layer, const H5Group& root, const std::string& path, std::vector<Pending>* out) {
  const auto& vars = layer.own_variables();
  if (vars.empty()) return;
  const std::string vpath = tree_path(path, "vars");
  KCPP_CHECK(root.is_group(vpath), IOError, "Missing weights of layer '", layer.name(), "' (", layer.class_name(),
             "): expected group \"", vpath, "\" in ", root.file_name());
  H5Group g = root.group(vpath);
  size_t saved = 0;
  while (g.has(std::to_string(saved))) ++saved;
  KCPP_CHECK(saved == vars.size(), ValueError, "Layer '", layer.name(), "' expected ", vars.size(),
             " variables, but received ", saved, " variables during loading from \"", vpath, "\" in ", root.file_name());
  for (size_t i = 0; i < vars.size(); ++i) {
    H5Dataset ds = g.dataset(std::to_string(i));
    KCPP_CHECK(ds.shape() == vars[i]->shape(), ValueError, "Shape mismatch for variable '", vars[i]->path(), "' of layer '",
               layer.name(), "': the model expects ", shape_str(vars[i]->shape()), ", but \"", ds.path(), "\" in ",
               root.file_name(), " has shape ", shape_str(ds.shape()));
    out->push_back(Pending{vars[i], ds});
  }
}

// Keras names a list entry after the Python class, which the config may export under another name.
std::string python_class_name(const std::string& cls) {
  return cls == "GroupQueryAttention" ? "GroupedQueryAttention" : cls;
}

void walk(const Layer& layer, const std::string& path, const TreeVisitor& visit, const AttributeLocator& locate) {
  visit(layer, path);
  for (const Layer::SaveableChildren& group : layer.saveable_children()) {
    const std::string base = locate ? locate(path, group.attribute) : tree_path(path, group.attribute);
    if (!group.is_list) {
      KCPP_CHECK(group.layers.size() == 1, ValueError, "Layer '", layer.name(), "' holds ", group.layers.size(),
                 " layers in its attribute '", group.attribute, "', which is not a list");
      walk(*group.layers[0], base, visit, locate);
      continue;
    }
    std::map<std::string, int> used;  // saving_lib._save_container_state's names
    for (const Layer* child : group.layers) {
      std::string name = to_snake_case(python_class_name(child->class_name()));
      auto it = used.find(name);
      if (it != used.end())
        name += "_" + std::to_string(++it->second);
      else
        used[name] = 0;
      walk(*child, tree_path(base, name), visit, locate);
    }
  }
}

}  // namespace

std::string tree_path(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "/" + child;
}

void walk_keras3_tree(const Layer& root, const TreeVisitor& visit, const AttributeLocator& locate) {
  walk(root, "", visit, locate);
}

void load_keras3_weights(Model& model, const H5Group& root, bool share_views) {
  std::vector<Pending> plan;
  // Keras 2.12-2.14 .keras archives name a model's layer list "_layer_checkpoint_dependencies", and
  // tf_keras's name attributes as the object holds them ("_query_dense" where Keras 3 has "query_dense").
  auto locate = [&root](const std::string& parent, const std::string& attribute) {
    const std::string path = tree_path(parent, attribute);
    if (root.has(path)) return path;
    const std::string legacy = tree_path(parent, attribute == "layers" ? "_layer_checkpoint_dependencies" : "_" + attribute);
    return root.has(legacy) ? legacy : path;
  };
  walk_keras3_tree(model.graph(), [&](const Layer& l, const std::string& path) { collect(l, root, path, &plan); },
                   locate);
  VariableReader reader(model, share_views);
  for (auto& p : plan) reader.read(*p.var, p.ds);  // everything was checked before anything is read
  reader.finish();
}

}  // namespace kerascpp::io
