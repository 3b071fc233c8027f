// Model::save / save_weights / save_to_memory / to_json: the file layouts Keras writes
// (keras-format.md §1 legacy .h5, §2 .keras and .weights.h5), built in memory and then written
// atomically.
#include <ctime>

#include "io/atomic_file.h"
#include "io/config_writer.h"
#include "io/optimizer_state.h"
#include "io/python_json.h"
#include "io/hdf5/hdf5_writer.h"
#include "io/weights_io.h"
#include "io/zip/zip_writer.h"
#include "kerascpp/model.h"
#include "models/functional.h"

namespace kerascpp {
namespace {

// The Keras version each dialect's files say they were written by: the newest one whose layout we
// write, so that Keras's version checks take the right paths.
const char* keras_version(KerasDialect d) { return d == KerasDialect::keras3 ? "3.15.1" : "2.15.0"; }


std::vector<char> keras3_weights(const Model& m, const std::string& name) {
  io::H5Writer w = io::H5Writer::create_in_memory(name);
  const io::H5WriteGroup root = w.root();
  io::walk_keras3_tree(m.graph(), [&root](const Layer& layer, const std::string& path) {
    const auto& vars = layer.own_variables();
    if (vars.empty()) return;
    io::H5WriteGroup g = root.create_group(io::tree_path(path, "vars"));
    g.write_attr_string("name", layer.name());
    for (size_t i = 0; i < vars.size(); ++i) g.write_dataset(std::to_string(i), vars[i]->value());
  });
  io::write_optimizer_keras3(m, w.root());
  return w.finish();
}

// Legacy layout (keras/src/legacy/saving/legacy_h5_format.py save_weights_to_hdf5_group).
void write_legacy_weights(const Model& m, const io::H5WriteGroup& g, KerasDialect d) {
  std::vector<std::string> names;
  for (const Layer* l : m.layers()) names.push_back(l->name());
  g.write_attr_strings_split("layer_names", names);
  g.write_attr_string("backend", "tensorflow");
  g.write_attr_string("keras_version", keras_version(d));
  const std::string suffix = d == KerasDialect::keras2 ? ":0" : "";
  for (const Layer* l : m.layers()) {
    io::H5WriteGroup lg = g.create_group(l->name());
    std::vector<std::string> weight_names;
    for (const auto& v : l->legacy_weights()) {
      weight_names.push_back(v->path() + suffix);
      lg.write_dataset(weight_names.back(), v->value());
    }
    lg.write_attr_strings_split("weight_names", weight_names);
  }
  g.create_group("top_level_model_weights").write_attr_strings("weight_names", {});
}

std::vector<char> legacy_h5(const Model& m, const std::string& name, KerasDialect d, bool full) {
  io::H5Writer w = io::H5Writer::create_in_memory(name);
  io::H5WriteGroup root = w.root();
  if (!full) {
    write_legacy_weights(m, root, d);
    return w.finish();
  }
  root.write_attr_string("keras_version", keras_version(d));
  root.write_attr_string("backend", "tensorflow");
  Json config = d == KerasDialect::keras3 ? io::keras3_model_config(m) : io::keras2_model_config(m);
  root.write_attr_string("model_config", io::dump_python_json(config), io::H5StringType::vlen_ascii);
  Json training = io::legacy_training_config(m, d);
  if (!training.empty()) root.write_attr_string("training_config", io::dump_python_json(training), io::H5StringType::vlen_ascii);
  write_legacy_weights(m, root.create_group("model_weights"), d);
  io::write_optimizer_legacy(m, root, d);
  return w.finish();
}

std::vector<char> keras_archive(const Model& m, const std::string& name, KerasDialect d) {
  KCPP_CHECK(d == KerasDialect::keras3, ValueError, "A .keras archive is always written in the Keras 3 layout; the Keras 2 "
             "dialect is for .h5 files. Received: ", name);
  Json config = io::keras3_model_config(m);
  Json compile = io::keras3_compile_config(m);
  if (!compile.empty()) config["compile_config"] = compile;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", &tm);
  Json metadata = {{"keras_version", keras_version(d)}, {"date_saved", date}};
  io::ZipWriter zip;
  zip.add("metadata.json", metadata.dump());
  zip.add("config.json", io::dump_python_json(config));
  std::vector<char> weights = keras3_weights(m, name + "/model.weights.h5");
  zip.add("model.weights.h5", weights.data(), weights.size(), 64);  // mappable as views (zip_writer.h)
  return zip.finish();
}

}  // namespace

FileForm file_form_for(const std::string& path, bool weights) {
  if (weights) {
    if (path.ends_with(".weights.h5")) return FileForm::weights_h5;
    if (path.ends_with(".h5") || path.ends_with(".hdf5")) return FileForm::weights_only_h5;
    KCPP_THROW(ValueError, "The filename must end in `.weights.h5` (Keras 3 layout) or `.h5` (legacy weights-only "
               "layout). Received: filepath=", path);
  }
  if (path.ends_with(".keras")) return FileForm::keras;
  if (path.ends_with(".h5") || path.ends_with(".hdf5")) return FileForm::h5;
  KCPP_THROW(ValueError, "Invalid filepath extension for saving. Please add either a `.keras` extension for the native "
             "Keras format (recommended) or a `.h5` extension. Received: filepath=", path);
}

const char* file_form_name(FileForm form) {
  switch (form) {
    case FileForm::keras:
      return "keras";
    case FileForm::h5:
      return "h5";
    case FileForm::weights_h5:
      return "weights.h5";
    case FileForm::weights_only_h5:
      return "weights-only.h5";
  }
  return "unknown";
}

std::vector<char> Model::save_to_memory(FileForm form, const SaveOptions& o) const {
  const std::string name = std::string("<memory>.") + file_form_name(form);
  switch (form) {
    case FileForm::keras:
      return keras_archive(*this, name, o.dialect);
    case FileForm::h5:
      return legacy_h5(*this, name, o.dialect, true);
    case FileForm::weights_only_h5:
      return legacy_h5(*this, name, o.dialect, false);
    case FileForm::weights_h5:
      KCPP_CHECK(o.dialect == KerasDialect::keras3, ValueError, "The .weights.h5 layout is Keras 3's; for Keras 2 save "
                 "weights to a legacy .h5 file");
      return keras3_weights(*this, name);
  }
  KCPP_THROW(ValueError, "Unknown save form ", static_cast<int>(form));
}

void Model::save(const std::string& path, const SaveOptions& o) const {
  std::vector<char> bytes = save_to_memory(file_form_for(path, false), o);
  io::write_file_atomically(path, bytes.data(), bytes.size());
}

void Model::save_weights(const std::string& path, const SaveOptions& o) const {
  std::vector<char> bytes = save_to_memory(file_form_for(path, true), o);
  io::write_file_atomically(path, bytes.data(), bytes.size());
}

std::string Model::to_json(KerasDialect d) const {
  if (d == KerasDialect::keras3) return io::dump_python_json(io::keras3_model_config(*this));
  Json c = io::keras2_model_config(*this);
  c["keras_version"] = keras_version(d);
  c["backend"] = "tensorflow";
  return io::dump_python_json(c);
}

}  // namespace kerascpp
