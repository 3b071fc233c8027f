// keras.callbacks.TensorBoard, as keras/src/callbacks/tensorboard.py (Keras 3.15) writes through
// tf.summary; the event files themselves are io/event_file.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "io/event_file.h"
#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int64_t iterations(const Model* m) {
  const auto opt = m ? m->optimizer() : nullptr;
  return opt ? opt->iterations() : 0;
}

}  // namespace

// Made when first written to, as Keras's writers.
struct TensorBoard::Writers {
  Writers(std::string t, std::string v) : train_dir(std::move(t)), val_dir(std::move(v)) {}
  std::string train_dir, val_dir;
  std::optional<io::EventFileWriter> train, val;
  io::EventFileWriter& train_writer() { return train ? *train : train.emplace(train_dir); }
  io::EventFileWriter& val_writer() { return val ? *val : val.emplace(val_dir); }
};

TensorBoard::TensorBoard(const Json& kwargs) {
  const std::string cls = "TensorBoard";
  detail::check_kwargs(cls, kwargs, {"log_dir", "histogram_freq", "write_graph", "write_images", "write_steps_per_second",
                                     "update_freq", "profile_batch", "embeddings_freq", "embeddings_metadata"});
  log_dir_ = detail::str_arg(cls, kwargs, "log_dir", "logs");
  histogram_freq_ = detail::int_arg(cls, kwargs, "histogram_freq", 0);
  write_graph_ = detail::bool_arg(cls, kwargs, "write_graph", true);
  write_steps_per_second_ = detail::bool_arg(cls, kwargs, "write_steps_per_second", false);
  embeddings_freq_ = detail::int_arg(cls, kwargs, "embeddings_freq", 0);
  embeddings_metadata_ = kwargs.value("embeddings_metadata", Json());
  KCPP_CHECK(embeddings_metadata_.is_null() || embeddings_metadata_.is_string() || embeddings_metadata_.is_object(),
             ValueError, "TensorBoard: embeddings_metadata must be a file name or a dict of Embedding layer name to "
             "file name. Received: ", embeddings_metadata_.dump());
  KCPP_CHECK(histogram_freq_ >= 0 && embeddings_freq_ >= 0, ValueError, "TensorBoard: histogram_freq and embeddings_freq "
             "must be non-negative. Received: ", histogram_freq_, ", ", embeddings_freq_);
  const Json freq = kwargs.value("update_freq", Json("epoch"));
  if (freq == "batch") {
    update_freq_ = 1;
  } else if (freq.is_number_integer() && freq.get<int64_t>() > 0 && freq.get<int64_t>() < (1 << 30)) {
    update_freq_ = freq.get<int>();
  } else {
    KCPP_CHECK(freq == "epoch", ValueError, "TensorBoard: update_freq must be 'epoch', 'batch' or a positive integer. "
               "Received: update_freq=", freq.dump());
  }
  KCPP_CHECK(!detail::bool_arg(cls, kwargs, "write_images", false), NotImplementedError,
             "TensorBoard(write_images=True) is not supported by kerascpp: it writes no image summaries");
  const Json profile = kwargs.value("profile_batch", Json(0));
  KCPP_CHECK(profile == 0 || profile == Json::array({0, 0}), NotImplementedError, "TensorBoard(profile_batch=",
             profile.dump(), ") is not supported by kerascpp: profiling traces TensorFlow's ops, which kerascpp does not run");
}

TensorBoard::~TensorBoard() = default;

// Keras's _configure_embeddings: the projector's config naming the Embedding layers' checkpoints.
void TensorBoard::write_projector_config() const {
  Json metadata = embeddings_metadata_;
  std::string pbtxt;
  for (const Layer* layer : model()->layers()) {
    if (layer->class_name() != "Embedding") continue;
    pbtxt += "embeddings {\n  tensor_name: \"layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE\"\n";
    std::string path;
    if (metadata.is_string()) {
      path = metadata.get<std::string>();
    } else if (metadata.is_object() && metadata.contains(layer->name())) {
      const Json& p = metadata[layer->name()];
      path = p.is_string() ? p.get<std::string>() : p.dump();
      metadata.erase(layer->name());
    }
    if (!path.empty()) pbtxt += "  metadata_path: " + Json(path).dump() + "\n";
    pbtxt += "}\n";
  }
  KCPP_CHECK(!metadata.is_object() || metadata.empty(), ValueError, "Unrecognized `Embedding` layer names passed to "
             "`keras.callbacks.TensorBoard` `embeddings_metadata` argument: ", metadata.dump());
  std::filesystem::create_directories(log_dir_);
  const std::string file = (std::filesystem::path(log_dir_) / "projector_config.pbtxt").string();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << pbtxt;
  KCPP_CHECK(out.good(), IOError, "TensorBoard: cannot write \"", file, "\"");
}

void TensorBoard::open_writers() {
  const std::filesystem::path dir(log_dir_);
  writers_ = std::make_unique<Writers>((dir / "train").string(), (dir / "validation").string());
}

void TensorBoard::on_train_begin(Logs&) {
  global_train_batch_ = 0;
  epoch_start_iterations_ = 0;
  open_writers();
  if (embeddings_freq_ && model()) write_projector_config();
  if (write_graph_ && model()) {  // Keras's keras_model_summary: the config, for the graph plugin
    io::EventFileWriter& w = writers_->train_writer();
    w.string("keras", model()->to_json(), 0, "graph_keras_model", "1");
    w.flush();
  }
}

void TensorBoard::on_train_end(Logs&) {
  if (!writers_) return;
  for (auto* w : {&writers_->train, &writers_->val})
    if (*w) (*w)->flush();
  writers_.reset();  // closes the files, as Keras's _close_writers
}

void TensorBoard::on_epoch_begin(int, Logs&) {
  if (!write_steps_per_second_) return;
  epoch_start_iterations_ = iterations(model());
  epoch_start_ = now();
}

namespace {
// Keras's summary.scalar fails on an array log ("Expected scalar shape"); this names the log.
void check_scalars(const Logs& logs) {
  for (const auto& kv : logs.items()) {
    const std::vector<double>* a = logs.array(kv.first);
    KCPP_CHECK(a == nullptr, ValueError, "TensorBoard writes scalar summaries: the log \"", kv.first,
               "\" is an array of ", a->size(), " values (a metric with several thresholds, or one value per "
               "class). Leave that metric out of a fit with TensorBoard, or give it one threshold / an average.");
  }
}
}  // namespace

void TensorBoard::on_train_batch_begin(int64_t, Logs&) {
  ++global_train_batch_;
  if (write_steps_per_second_) batch_start_ = now();
}

// With an integer update_freq, every update_freq-th batch counted over the whole of fit (from 1).
void TensorBoard::on_train_batch_end(int64_t, Logs& logs) {
  if (!writers_ || update_freq_ == 0 || global_train_batch_ % update_freq_ != 0) return;
  check_scalars(logs);
  io::EventFileWriter& w = writers_->train_writer();
  if (write_steps_per_second_) w.scalar("batch_steps_per_second", 1.0 / std::max(now() - batch_start_, 1e-9), global_train_batch_);
  for (const auto& [name, value] : logs.items()) w.scalar("batch_" + name, value, global_train_batch_);
}

// Inside fit (its validation) and in evaluate(callbacks=[tensorboard]) alike.
void TensorBoard::on_test_end(Logs& logs) {
  if (!model() || !model()->optimizer()) return;
  check_scalars(logs);
  if (!writers_) open_writers();
  io::EventFileWriter& w = writers_->val_writer();
  for (const auto& [name, value] : logs.items())
    w.scalar("evaluation_" + name + "_vs_iterations", value, iterations(model()));
  w.flush();
}

void TensorBoard::on_epoch_end(int epoch, Logs& logs) {
  if (!writers_) return;
  check_scalars(logs);
  if (!logs.items().empty()) {
    Logs train, val;
    for (const auto& [k, v] : logs.items()) {
      if (k.rfind("val_", 0) == 0) {
        val.set(k.substr(4), v);
      } else {
        train.set(k, v);
      }
    }
    if (model() && model()->optimizer()) train.set("learning_rate", model()->optimizer()->learning_rate());
    if (write_steps_per_second_)
      train.set("steps_per_second", static_cast<double>(iterations(model()) - epoch_start_iterations_) /
                                        std::max(now() - epoch_start_, 1e-9));
    io::EventFileWriter& t = writers_->train_writer();
    for (const auto& [k, v] : train.items()) t.scalar("epoch_" + k, v, epoch);
    t.flush();
    if (!val.items().empty()) {
      io::EventFileWriter& w = writers_->val_writer();
      for (const auto& [k, v] : val.items()) w.scalar("epoch_" + k, v, epoch);
      w.flush();
    }
  }
  if (histogram_freq_ && epoch % histogram_freq_ == 0 && model()) {
    io::EventFileWriter& t = writers_->train_writer();
    for (const VariablePtr& v : model()->weights()) {
      std::string name = v->path();
      std::replace(name.begin(), name.end(), ':', '_');
      t.histogram(name + "/histogram", v->value(), epoch);
    }
    t.flush();
  }
  if (embeddings_freq_ && epoch % embeddings_freq_ == 0 && model())
    model()->save_weights((std::filesystem::path(log_dir_) / "train" /
                           ("keras_embedding.ckpt-" + std::to_string(epoch) + ".weights.h5")).string());
}

}  // namespace kerascpp::callbacks
