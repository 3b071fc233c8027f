// load_model / model_from_json / load_weights: detects the file form from its bytes and hands it to
// the reader of that form.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "io/config_dialect.h"
#include "io/model_builder.h"
#include "io/python_json.h"
#include "io/optimizer_state.h"
#include "io/hdf5/hdf5_file.h"
#include "io/mapping/file_mapping.h"
#include "io/weights_io.h"
#include "io/zip/zip_archive.h"
#include "kerascpp/model.h"
#include "core/naming.h"
#include "models/functional.h"
#include "layers/initializers.h"
#include "layers/build_budget.h"

namespace kerascpp {
namespace {

enum class Form { hdf5, zip, json, unknown };

Form sniff(const unsigned char* b, size_t n) {
  static const unsigned char kHdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && std::memcmp(b, kHdf5, 8) == 0) return Form::hdf5;
  if (n >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) return Form::zip;
  if (n >= 1 && (b[0] == '{' || b[0] == '[')) return Form::json;
  return Form::unknown;
}

// The file at `path`, opened once (plain system calls: a FILE's buffer cost 3 % of a small load): its
// form from the first bytes and, when `read_small` and it is small enough to be read rather than
// mapped (FileMapping::kReadLimit), its bytes, read once. A load of one of many small models then
// opens and reads its file once, not once to tell the form and again to read it.
struct OpenedFile {
  Form form;
  io::FileMapping::Ptr bytes;  // null unless read
};

OpenedFile open_file(const std::string& path, bool read_small) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {  // the errors in the order stat-then-open gave them
    const int err = errno;
    struct stat st;
    KCPP_CHECK(::stat(path.c_str(), &st) == 0, IOError, "No file or directory found at ", path);
    KCPP_CHECK(!S_ISDIR(st.st_mode), IOError, "The path ", path,
               " is a directory. kerascpp loads .keras archives and .h5 files (the unzipped directory form is not supported)");
    KCPP_THROW(IOError, "Unable to open ", path, ": ", std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  KCPP_CHECK(::fstat(fd, &st) == 0, IOError, "Unable to open ", path, ": ", std::strerror(errno));
  KCPP_CHECK(!S_ISDIR(st.st_mode), IOError, "The path ", path,
             " is a directory. kerascpp loads .keras archives and .h5 files (the unzipped directory form is not supported)");
  if (read_small && S_ISREG(st.st_mode) && st.st_size > 0 &&
      static_cast<uint64_t>(st.st_size) <= io::FileMapping::kReadLimit) {
    io::FileMapping::Ptr bytes = io::FileMapping::read(fd, static_cast<size_t>(st.st_size), path);
    return {sniff(reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size()), std::move(bytes)};
  }
  unsigned char b[8] = {0};
  ssize_t n;
  do n = ::pread(fd, b, sizeof b, 0);
  while (n < 0 && errno == EINTR);
  KCPP_CHECK(n >= 0, IOError, "Unable to read ", path, ": ", std::strerror(errno));
  KCPP_CHECK(n > 0, IOError, "The file ", path, " is empty");
  return {sniff(b, static_cast<size_t>(n)), nullptr};
}

[[noreturn]] void unknown_form(const std::string& name) {
  KCPP_THROW(IOError, "File format not supported: filepath=", name,
             ". kerascpp loads .keras archives and legacy .h5 files (the file is neither a zip archive nor HDF5).");
}

Json parse_json(std::string_view text, const std::string& where, const LoadLimits& limits) {
  KCPP_CHECK(text.size() <= limits.max_config_bytes, ValueError, "The ", where, " is ", text.size(),
             " bytes, over the limit of ", limits.max_config_bytes, " (LoadLimits::max_config_bytes)");
  try {
    return io::parse_python_json(text, limits.max_json_depth, "The " + where);
  } catch (const Json::exception& e) {
    KCPP_THROW(ValueError, "Invalid JSON in the ", where, ": ", e.what());
  }
}

// A JSON member of a .keras archive, refused by its declared size before it is inflated.
Json parse_member(const io::ZipArchive& zip, const std::string& member, const LoadLimits& limits) {
  const std::string where = member + " of " + zip.name();
  const uint64_t size = zip.checked_size(member);
  KCPP_CHECK(size <= limits.max_config_bytes, ValueError, "The ", where, " declares ", size,
             " bytes, over the limit of ", limits.max_config_bytes, " (LoadLimits::max_config_bytes)");
  io::ZipMember m = zip.member(member);
  return parse_json(std::string_view(m.data, m.size), where, limits);  // read in place, not copied
}

Model build(Json raw_config, int major, Json training_config, const CustomObjects& custom, BuildBudget* budget = nullptr) {
  return io::build_model(std::move(raw_config), major, std::move(training_config), custom, budget);
}

// Runs f; an error from building the model gets the file's name in front.
template <typename F>
Model with_file_context(const std::string& file, F&& f) {
  const std::string prefix = "While loading " + file + ": ";
  try {
    return f();
  } catch (const ValueError& e) {
    throw ValueError(prefix + e.what());
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(prefix + e.what());
  } catch (const TypeError& e) {
    throw TypeError(prefix + e.what());
  }
}

// Without compile, the optimizer's group of a legacy .h5 file is left unread (by kerascpp's reader:
// see H5File::open), as Keras leaves it: about half of a small compiled model's objects.
std::string_view h5_unread(const LoadOptions& options) { return options.compile ? "" : "optimizer_weights"; }

Model load_h5(const io::H5File& file, const LoadOptions& options) {
  const CustomObjects& custom = options.custom_objects;
  io::H5Group root = file.root();
  KCPP_CHECK(root.has_attr("model_config"), ValueError, "No model config found in the file at ", file.name(),
             (root.has_attr("layer_names") ? ": it holds only weights. Build the model (model_from_json) and call load_weights."
                                           : "."));
  const std::string version = root.has_attr("keras_version") ? root.attr_string("keras_version") : "";
  const LoadLimits& limits = options.limits;
  Json training;
  if (root.has_attr("training_config"))
    training = parse_json(root.attr_string("training_config"), "training_config of " + file.name(), limits);
  Json config = parse_json(root.attr_string("model_config"), "model_config of " + file.name(), limits);
  BuildBudget budget = io::budget_of(limits, file.size(), file.name());
  Model model = with_file_context(file.name(), [&] {
    return build(std::move(config), io::keras_major(version), std::move(training), custom, &budget);
  });
  KCPP_CHECK(root.is_group("model_weights"), IOError, "Missing group \"model_weights\" in ", file.name());
  io::load_legacy_weights(model, root.group("model_weights"), {}, options.mmap_weights);
  if (options.compile) {
    io::compile_from_saved_config(model, file.name(), options);
    io::read_optimizer_legacy(model, root, file.name());
  }
  return model;
}

// Each layer's files under assets/<its path>/ (an adapted IntegerLookup's vocabulary.txt), given to it
// before the model is shared with anyone.
void load_assets(Model& model, const io::ZipArchive& zip) {
  std::vector<std::string> assets;
  for (const std::string& n : zip.names())
    if (n.starts_with("assets/") && !n.ends_with("/")) assets.push_back(n);
  if (assets.empty()) return;
  io::walk_keras3_tree(model.graph(), [&](const Layer& layer, const std::string& path) {
    const std::string dir = "assets/" + path + "/";
    std::map<std::string, std::string> files;
    for (const std::string& n : assets) {
      if (!n.starts_with(dir) || n.find('/', dir.size()) != std::string::npos) continue;
      auto m = zip.member(n, /*verify_crc=*/true);
      files.emplace(n.substr(dir.size()), std::string(m.data, m.size));
    }
    // The loader still owns the model alone: the one place a layer is changed after it was made.
    if (!files.empty()) const_cast<Layer&>(layer).load_assets(files);
  });
}

Model load_keras_archive(io::ZipArchive zip, const std::string& name, const LoadOptions& options) {
  const CustomObjects& custom = options.custom_objects;
  const LoadLimits& limits = options.limits;
  zip.set_limits({limits.max_member_bytes, limits.max_compression_ratio});
  KCPP_CHECK(zip.has("config.json"), IOError, "Invalid .keras archive ", name, ": it has no config.json member");
  Json config = parse_member(zip, "config.json", limits);
  int major = 3;
  if (zip.has("metadata.json")) {
    Json meta = parse_member(zip, "metadata.json", limits);
    const bool named = meta.is_object() && meta.contains("keras_version") && meta["keras_version"].is_string();
    major = io::keras_major(named ? meta["keras_version"].get<std::string>() : std::string("3"));
  }
  if (zip.has("model.weights.npz") && !zip.has("model.weights.h5"))
    KCPP_THROW(NotImplementedError, "The archive ", name, " stores its weights as model.weights.npz, which kerascpp does not read yet");
  KCPP_CHECK(zip.has("model.weights.h5"), IOError, "Invalid .keras archive ", name, ": it has no model.weights.h5 member");
  BuildBudget budget = io::budget_of(limits, zip.checked_size("model.weights.h5"), name + "/model.weights.h5");
  // The compile config is moved out: the model's config no longer needs it (canonical_model_config drops it).
  Json training = Json::object();
  if (auto it = config.is_object() ? config.find("compile_config") : config.end();
      it != config.end() && !it->is_null())
    training = std::move(*it);
  Model model = with_file_context(
      name, [&] { return build(std::move(config), major, std::move(training), custom, &budget); });
  auto wm = zip.member("model.weights.h5");
  // A stored member of a mapped archive is read in place in the mapping (and its datasets copied by
  // FileMapping::copy, or made views of it with mmap_weights). Without compile the optimizer's group
  // is left unread, as Keras leaves it.
  const std::string_view unread = options.compile ? "" : "optimizer";
  io::H5File weights = wm.mapping ? io::H5File::open_mapped(wm.data, wm.size, name + "/model.weights.h5",
                                                            wm.mapping, limits.allow_libhdf5, unread)
                                  : io::H5File::open_image(wm.data, wm.size, name + "/model.weights.h5",
                                                           wm.keepalive, limits.allow_libhdf5, unread);
  io::load_keras3_weights(model, weights.root(), options.mmap_weights);
  load_assets(model, zip);
  if (options.compile) {
    io::compile_from_saved_config(model, name, options);
    io::read_optimizer_keras3(model, weights.root(), name);
  }
  return model;
}

}  // namespace

// What the model a file describes may take: its weights are read from `weight_bytes` bytes of
// `weights`, so they cannot be much more (LoadLimits::max_weight_bytes).
BuildBudget io::budget_of(const LoadLimits& limits, uint64_t weight_bytes, const std::string& weights) {
  BuildBudget b;
  b.max_layers = limits.max_layers;
  b.max_nodes = limits.max_nodes;
  b.max_rank = limits.max_rank;
  b.max_tensor_elements = limits.max_tensor_elements;
  if (limits.max_weight_bytes > 0) {
    b.max_weight_bytes = limits.max_weight_bytes;
  } else {
    constexpr uint64_t kSlack = 16u << 20;
    b.max_weight_bytes = weight_bytes > (UINT64_MAX - kSlack) / 4 ? UINT64_MAX : 4 * weight_bytes + kSlack;
    b.weight_limit = "LoadLimits::max_weight_bytes: four times the " + std::to_string(weight_bytes) + " bytes of " +
                     weights + " plus 16 MiB";
  }
  return b;
}

Model io::build_model(Json raw_config, int major, Json training_config, const CustomObjects& custom, BuildBudget* budget) {
  try {
    Json canon = io::canonical_model_config(std::move(raw_config), major);
    auto graph = std::make_shared<models::Functional>(canon["class_name"].get<std::string>(), std::move(canon["config"]), &custom,
                                                      nullptr, budget);
    return Model(std::move(graph), std::move(training_config));
  } catch (const Json::exception& e) {  // a value of the wrong JSON type outside any layer's config
    KCPP_THROW(ValueError, "Invalid model config: ", e.what());
  }
}

Model load_model(const std::string& path, const LoadOptions& options) {
  OpenedFile file = open_file(path, /*read_small=*/!options.mmap_weights);
  const bool allow_libhdf5 = options.limits.allow_libhdf5;
  switch (file.form) {
    case Form::hdf5: {
      if (file.bytes)
        return load_h5(io::H5File::open(file.bytes, path, allow_libhdf5, h5_unread(options)), options);
      const io::H5Driver driver = options.mmap_weights ? io::H5Driver::mapped_views : io::H5Driver::automatic;
      return load_h5(io::H5File::open(path, driver, allow_libhdf5, h5_unread(options)), options);
    }
    case Form::zip:
      return load_keras_archive(file.bytes ? io::ZipArchive::open(file.bytes, path)
                                           : io::ZipArchive::open(path, options.mmap_weights),
                                path, options);
    case Form::json:
      KCPP_THROW(IOError, "The file ", path, " holds JSON, not a model: read it with model_from_json, then call load_weights");
    case Form::unknown: break;
  }
  unknown_form(path);
}

Model load_model_from_memory(const void* data, size_t size, const std::string& name, const LoadOptions& options) {
  KCPP_CHECK(data != nullptr && size > 0, IOError, "No bytes given for ", name);
  switch (sniff(static_cast<const unsigned char*>(data), size)) {
    case Form::hdf5:
      return load_h5(
          io::H5File::open_image(data, size, name, {}, options.limits.allow_libhdf5, h5_unread(options)),
          options);
    case Form::zip: return load_keras_archive(io::ZipArchive::from_memory(data, size, name, nullptr), name, options);
    default: break;
  }
  unknown_form(name);
}

Model model_from_config(const Json& config, const CustomObjects& custom) {
  Model m = build(config, 0, Json::object(), custom);
  std::mt19937_64 rng(std::random_device{}());
  layers::initialize_weights(m.graph(), rng);  // never zeros: the values Keras would start from
  return m;
}

Model model_from_json(const std::string& json, const CustomObjects& custom) {
  LoadLimits limits;  // text the caller holds: only the nesting is bounded (every walk of a config recurses)
  limits.max_config_bytes = UINT64_MAX;
  return model_from_config(parse_json(json, "model JSON", limits), custom);
}

namespace {
void load_weights_from_zip(Model& m, const io::ZipArchive& zip, const std::string& name) {
  KCPP_CHECK(zip.has("model.weights.h5"), IOError, "Invalid .keras archive ", name, ": it has no model.weights.h5 member");
  auto wm = zip.member("model.weights.h5");
  io::H5File w = wm.mapping
                     ? io::H5File::open_mapped(wm.data, wm.size, name + "/model.weights.h5", wm.mapping)
                     : io::H5File::open_image(wm.data, wm.size, name + "/model.weights.h5", wm.keepalive);
  io::load_keras3_weights(m, w.root());
}
// A weights-only .h5 keeps layer_names at its root, a full model under model_weights; anything else
// is the Keras 3 tree.
void load_weights_from_h5(Model& m, const io::H5File& file, const LoadWeightsOptions& options = {}) {
  io::H5Group root = file.root();
  if (root.has_attr("layer_names")) return io::load_legacy_weights(m, root, options);
  if (root.is_group("model_weights") && root.group("model_weights").has_attr("layer_names"))
    return io::load_legacy_weights(m, root.group("model_weights"), options);
  KCPP_CHECK(!options.by_name && !options.skip_mismatch, NotImplementedError, "load_weights(by_name / skip_mismatch) "
             "reads the legacy .h5 forms; ", file.name(), " holds the Keras 3 weights tree");
  io::load_keras3_weights(m, root);
  io::read_optimizer_keras3(m, root, file.name());  // a compiled model's optimizer state, as Keras 3 restores it
}
}  // namespace

void Model::load_weights_from_memory(const void* data, size_t size, const std::string& name) {
  KCPP_CHECK(data != nullptr && size > 0, IOError, "No bytes given for ", name);
  switch (sniff(static_cast<const unsigned char*>(data), size)) {
    case Form::hdf5: return load_weights_from_h5(*this, io::H5File::open_image(data, size, name));
    case Form::zip: return load_weights_from_zip(*this, io::ZipArchive::from_memory(data, size, name, nullptr), name);
    default: break;
  }
  unknown_form(name);
}

void Model::load_weights(const std::string& path, const LoadWeightsOptions& options) {
  OpenedFile file = open_file(path, /*read_small=*/true);
  const Form form = file.form;
  KCPP_CHECK(form != Form::zip || (!options.by_name && !options.skip_mismatch), NotImplementedError,
             "load_weights(by_name / skip_mismatch) reads the legacy .h5 forms; ", path, " is a .keras archive");
  if (form == Form::zip)
    return load_weights_from_zip(*this, file.bytes ? io::ZipArchive::open(file.bytes, path) : io::ZipArchive::open(path),
                                 path);
  if (form != Form::hdf5) unknown_form(path);
  load_weights_from_h5(*this, file.bytes ? io::H5File::open(file.bytes, path) : io::H5File::open(path), options);
}

void clear_session() { reset_automatic_names(); }

}  // namespace kerascpp
