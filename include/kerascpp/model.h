// Model: a loaded or configured Keras model, with the API of keras.Model.
//
// A Model is a self-contained value: its layers, variables and execution plan belong to it alone.
// Loading the 1,000th model costs what loading the first did; destroying a model frees all it held.
// predict() is const and safe to call from many threads at once on one model.
//
//   kerascpp::Model m = kerascpp::load_model("model.keras");
//   std::vector<kerascpp::Tensor> y = m.predict({x});
//   std::vector<kerascpp::Tensor> w = m.get_weights();
//   std::cout << m.summary();
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kerascpp/callbacks.h"
#include "kerascpp/dataset.h"
#include "kerascpp/distribute.h"
#include "kerascpp/keras_tensor.h"
#include "kerascpp/layer.h"
#include "kerascpp/losses.h"
#include "kerascpp/metrics.h"
#include "kerascpp/optimizers.h"

namespace kerascpp {
// The model's implementation (its graph, its compiled training state), not part of the API.
namespace models {
class Functional;
}
namespace training {
struct Compiled;
}

// model.compile(...): each of optimizer, loss and metrics by Keras identifier (a name or a
// {"class_name", "config"} object) or as an object; objects win over identifiers.
struct CompileOptions {
  Json optimizer = "rmsprop";
  optimizers::OptimizerPtr optimizer_object;
  // One loss for every output, or a list with one per output; null: no loss (predict / evaluate
  // metrics only; fit refuses).
  Json loss;
  std::vector<losses::LossPtr> loss_objects;
  std::vector<double> loss_weights;  // per output; empty: 1 each
  // Metric identifiers: a list applies to every output (Keras 2's rule; load_model reads a Keras 3
  // file's list of one entry per output as per output); per output, a dict by output name (each value
  // an identifier or a list of them) or a list holding lists, one entry per output (a single-output
  // model takes them all). Metric objects apply to every output (the first output uses
  // the object itself, the others copies of it) or, in output_metric_objects, to the output named; a
  // null entry in a list stands for the next object, which so keeps its place among the identifiers
  // (objects left over come last).
  // These metrics are updated without sample weights, as Keras 3's.
  Json metrics = Json::array();
  std::vector<metrics::MetricPtr> metric_objects;
  std::map<std::string, std::vector<metrics::MetricPtr>> output_metric_objects;
  // compile(weighted_metrics=...), in the same forms: updated with the batch's sample_weight (and
  // class_weight), logged after the metrics above; a name taken already becomes "weighted_<name>".
  Json weighted_metrics = Json::array();
  std::vector<metrics::MetricPtr> weighted_metric_objects;
  std::map<std::string, std::vector<metrics::MetricPtr>> output_weighted_metric_objects;
};

// model.fit(...) keyword arguments.
struct FitOptions {
  int64_t batch_size = 32;
  int epochs = 1;
  int verbose = 1;  // 0 silent, 1 progress bar, 2 one line per epoch
  std::vector<callbacks::CallbackPtr> callbacks;
  double validation_split = 0;
  std::vector<Tensor> validation_x, validation_y;  // validation_data; wins over validation_split
  Tensor validation_sample_weight;
  Dataset* validation_dataset = nullptr;  // validation_data as a Dataset; wins over validation_x
  // Batches per epoch: 0 reads a whole pass of the data each epoch; n reads n batches, going on where the
  // previous epoch stopped and starting a new pass when one ends (Keras's steps_per_epoch). A source
  // that runs out first ends training after that epoch with Keras's warning.
  int64_t steps_per_epoch = 0;
  int64_t validation_steps = 0;       // 0: the whole validation data
  int64_t validation_batch_size = 0;  // validation arrays' batch size; 0: batch_size
  // Validate after every validation_freq-th epoch, or with validation_freq = 0 after the epochs listed
  // (1-based) in validation_epochs (Keras's validation_freq=[1, 5]; an empty list: never).
  int validation_freq = 1;
  std::vector<int> validation_epochs;
  bool shuffle = true;
  std::map<int64_t, double> class_weight;
  Tensor sample_weight;
  int initial_epoch = 0;
  uint64_t seed = 0;  // shuffling and dropout; 0: from the random device
  std::ostream* out = nullptr;  // progress bar; nullptr: std::cout
  // The states of the model's stateful RNN layers (Keras keeps them in the layers): each batch starts
  // from the previous one's final states, across epochs too, and fit's validation runs through them,
  // as in Keras. Required when the model is stateful(); the same object can go on to predict.
  RnnStates* states = nullptr;
  // Data-parallel training (kerascpp/distribute.h): every worker calls fit with the same data and options;
  // each computes its rows of every global batch of batch_size, and worker 0 alone keeps the callbacks
  // that write files (ModelCheckpoint, CSVLogger, TensorBoard, BackupAndRestore) and the progress bar.
  DistributedContextPtr distributed;
};

struct EvaluateOptions {
  int64_t batch_size = 32;
  int verbose = 1;
  Tensor sample_weight;
  std::vector<callbacks::CallbackPtr> callbacks;
  std::ostream* out = nullptr;
  RnnStates* states = nullptr;  // as FitOptions::states
  DistributedContextPtr distributed;  // as FitOptions::distributed: each worker evaluates its rows
  int64_t steps = 0;  // batches to read; 0: the whole data
};

// Which Keras reads the saved file back: Keras 3 (default), or Keras 2 (tf.keras / tf-keras, and
// standalone Keras 2.x) for the legacy .h5 forms.
enum class KerasDialect { keras3, keras2 };

// The file forms Keras writes. save() and save_weights() pick one from the file name; save_to_memory()
// takes it; load_model() and load_weights() tell them apart from the bytes.
enum class FileForm {
  keras,            // ".keras": a Keras 3 zip archive (config.json, model.weights.h5, metadata.json)
  h5,               // ".h5": a legacy full-model HDF5 file
  weights_h5,       // ".weights.h5": Keras 3's weights-only layout
  weights_only_h5,  // ".h5" from save_weights: the legacy (Keras 2) weights-only layout
};
// The form save() (weights = false) or save_weights() (weights = true) writes to `path`; ValueError
// with Keras's message for any other extension.
FileForm file_form_for(const std::string& path, bool weights);
// "keras", "h5", "weights.h5", "weights-only.h5": for messages and display names.
const char* file_form_name(FileForm form);
// model.load_weights(..., by_name=True, skip_mismatch=True) for the legacy .h5 forms (transfer learning):
// by_name loads each saved layer into the model's layer of its name and leaves the others as they are;
// skip_mismatch (with by_name) skips a layer whose weight count differs, or a weight whose shape does,
// with Keras's warning, instead of failing.
struct LoadWeightsOptions {
  bool by_name = false;
  bool skip_mismatch = false;
};
struct SaveOptions {
  KerasDialect dialect = KerasDialect::keras3;
};

class Model {
 public:
  // graph: a Sequential or Functional model's graph, as load_model and model_from_json build it
  // (ValueError for any other layer).
  explicit Model(LayerPtr graph, Json training_config = Json());
  // keras.Model(inputs, outputs, name): the graph from Input tensors to outputs built by calling layers
  // on them (kerascpp/keras_tensor.h). The model shares those layers (their weights) with every other
  // model they are in. ValueError "Graph disconnected" when an output needs a tensor the inputs do not
  // lead to. A name is given as Keras gives it (functional, functional_1, ...) when none is.
  Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs, const std::string& name = "",
        const TensorNest& input_nest = {}, const TensorNest& output_nest = {});

  const std::string& name() const;
  // Runs the model on `inputs` (one tensor per model input, batch on axis 0) in batches of
  // batch_size (Keras's default 32); returns one tensor per output. Inputs of other dtypes are cast to
  // float32. ValueError for a wrong count or shape.
  std::vector<Tensor> predict(const std::vector<Tensor>& inputs, int64_t batch_size = 32) const;
  // The same for a stateful model: the batches run in order on the caller's states (Keras's predict
  // on a stateful model, batch_size its fixed batch).
  std::vector<Tensor> predict(const std::vector<Tensor>& inputs, RnnStates& states, int64_t batch_size = 32) const;
  // Runs the model once on the whole batch (Keras's model(x)).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  // The same with the inputs' masks (Keras's model(x, mask=m)): one per input, an undefined Tensor for
  // none; each covers its input's leading axes ((batch, steps) for (batch, steps, features)), nonzero
  // where a step is kept. They start the graph's masks as Embedding(mask_zero) or Masking would.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks) const;
  // A model with stateful RNN layers runs with the caller's states (one RnnStates per stream): each
  // call continues where the previous one on these states stopped; states.reset_states() starts over.
  //   kerascpp::RnnStates stream;  y1 = m({x1}, stream);  y2 = m({x2}, stream);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, RnnStates& states,
                                 const std::vector<Tensor>& masks = {}) const;
  // The same into the caller's outputs: one float32 tensor per model output, of its shape for this
  // batch, made once and reused call after call (a real-time loop, one sample per call). A model on an
  // inference plan (README, "Inference plans") then allocates nothing once warm; the others compute
  // their outputs and copy them in. `states`: the caller's, for a stateful model. ValueError for a
  // wrong count, dtype or shape of outputs, naming it.
  //   std::vector<kerascpp::Tensor> x{kerascpp::Tensor::empty({1, 1, 1})}, y{kerascpp::Tensor::empty({1, 1})};
  //   for (float sample : audio) { x[0].data<float>()[0] = sample; m.call_into(x, y, &stream); ... }
  void call_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 RnnStates* states = nullptr) const;
  // Keras's model(x, training=True): the layers that act in training only do (Dropout, noise, the image
  // augmentation layers; BatchNormalization normalises with the batch's statistics), their draws from
  // `seed` (the same seed, the same draws). Nothing is updated: moving statistics change in fit() only.
  std::vector<Tensor> call_training(const std::vector<Tensor>& inputs, uint64_t seed) const;
  // The model's graph as symbolic tensors (Keras's model.inputs / model.outputs), and the outputs of a
  // layer's first call (model.get_layer(name).output): new models can be built from them.
  std::vector<KerasTensor> inputs() const;
  std::vector<KerasTensor> outputs() const;
  std::vector<KerasTensor> layer_outputs(const std::string& layer_name) const;
  // The model as a layer, to call on symbolic tensors (a model nested in another) or to freeze:
  // model.as_layer()->set_trainable(false) is Keras's model.trainable = False.
  LayerRef as_layer() const;
  // Whether the model has stateful layers (then it runs only with an RnnStates).
  bool stateful() const { return stateful_; }

  std::vector<Layer*> layers() const;                     // model.layers
  Layer& get_layer(const std::string& name) const;        // ValueError naming what exists
  Layer& get_layer(int index) const;
  std::vector<VariablePtr> weights() const;
  std::vector<VariablePtr> trainable_weights() const;
  std::vector<VariablePtr> non_trainable_weights() const;
  std::vector<Tensor> get_weights() const;                // copies, Keras 3 order
  void set_weights(const std::vector<Tensor>& values);    // count and shapes checked first
  int64_t count_params() const;

  const std::vector<Shape>& input_shapes() const;
  const std::vector<Shape>& output_shapes() const;
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;

  // {"class_name": "Functional" | "Sequential", "config": {...}} in the canonical (Keras 3) dialect.
  Json get_config() const;
  // model.to_json(): the Keras 3 dialect (keras.models.model_from_json reads it), or Keras 2's.
  std::string to_json(KerasDialect dialect = KerasDialect::keras3) const;
  // The training config: compile()'s (Keras 3 compile_config), else the one read from the file ({}
  // when the model was saved uncompiled).
  const Json& training_config() const { return training_config_; }
  // A Keras-like table: layers, output shapes, parameter counts.
  std::string summary() const;

  // Loads weights from a Keras weights file (.weights.h5, legacy .h5 weights-only or full model).
  void load_weights(const std::string& path, const LoadWeightsOptions& options = {});
  // The same from a file's bytes (any weights form, or a .keras / .h5 model's weights).
  void load_weights_from_memory(const void* data, size_t size, const std::string& display_name = "<memory>");

  // Saves by extension: ".keras" (Keras 3 archive) or ".h5" / ".hdf5" (legacy full model). The file
  // is written beside the target, flushed and renamed over it: a crash leaves the old file or the
  // new one, whole. IOError naming the path for an unwritable folder, a full disk, a folder target.
  void save(const std::string& path, const SaveOptions& options = {}) const;
  // ".weights.h5" (Keras 3 layout) or ".h5" (legacy weights-only layout), atomically as save().
  void save_weights(const std::string& path, const SaveOptions& options = {}) const;
  // The bytes of a file of the given form, as save() or save_weights() would write them.
  std::vector<char> save_to_memory(FileForm form, const SaveOptions& options = {}) const;

  // ---- training (src/training). Training runs on one thread at a time; predict() from other
  // threads during fit() sees weights between steps.
  void compile(const CompileOptions& options);
  bool compiled() const { return compiled_ != nullptr; }
  // The compiled optimizer, or nullptr.
  optimizers::OptimizerPtr optimizer() const;
  // x, y: one tensor per model input / output, samples on axis 0. Returns the History.
  std::shared_ptr<callbacks::History> fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                                          const FitOptions& options = {});
  // The same fed by a Dataset (Keras's fit(x=dataset)): its batches, their sample weights; validation_split,
  // shuffle and sample_weight do not apply (class_weight does, to batches without sample weights).
  std::shared_ptr<callbacks::History> fit(Dataset& data, const FitOptions& options = {});
  // The loss and metrics over the data: {"loss": ..., "accuracy": ...}.
  Logs evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const EvaluateOptions& options = {});
  Logs evaluate(Dataset& data, const EvaluateOptions& options = {});
  // The outputs over one pass of the data (or `steps` batches), each batch's x, concatenated.
  std::vector<Tensor> predict(Dataset& data, int64_t steps = 0) const;
  // One gradient step on this batch; the batch's loss and metrics (metrics reset first, as Keras's
  // reset_metrics=True).
  // states: as FitOptions::states.
  Logs train_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                      const Tensor& sample_weight = Tensor(), const std::map<int64_t, double>& class_weight = {},
                      RnnStates* states = nullptr);
  Logs test_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight = Tensor(),
                     RnnStates* states = nullptr);
  std::vector<Tensor> predict_on_batch(const std::vector<Tensor>& x) const { return (*this)(x); }
  // Set by callbacks to end fit() after the current batch / epoch (Keras's model.stop_training).
  bool stop_training = false;
  // Set by a callback's on_train_begin (BackupAndRestore, as Keras's model._initial_epoch) to start
  // fit at that epoch instead of FitOptions::initial_epoch; fit clears it.
  std::optional<int> resume_at_epoch;
  // The names Keras 3 walks to order the results evaluate() returns as a list (Trainer.
  // _flatten_metrics_in_order over model.metrics): "loss", each compiled metric's own name (without the
  // output prefix; a repeated name repeated), then each output's loss. The logs under these keys come
  // first, once per mention, then the other logs sorted by key. Empty before compile.
  std::vector<std::string> metrics_names() const;
  // Keras's compile_config ({} when not compiled), as saved in .keras / .h5.
  Json compile_config() const;

  // The whole model as one layer (Keras's Functional / Sequential): call() runs it, sublayers() are
  // model.layers, saveable_children() its weight tree.
  Layer& graph() const;

 private:
  std::vector<Tensor> call_with(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks,
                                RnnStates* states, const CallContext& base = CallContext()) const;
  std::vector<Tensor> predict_with(const std::vector<Tensor>& inputs, int64_t batch_size, RnnStates* states) const;
  std::shared_ptr<models::Functional> graph_;
  Json training_config_;
  std::shared_ptr<training::Compiled> compiled_;
  bool stateful_ = false;  // found once, at construction
  bool integer_ids_ = false;  // a layer reads integer ids (models::reads_integer_ids), found at construction
};

// What a model file may ask of kerascpp, checked before memory is taken (design.md, "Limits before
// allocations"): a file over a limit is refused with a ValueError naming the member or the layer, the
// value and the limit, and nothing is allocated for it. The defaults are far above what real Keras
// models reach and far below what would exhaust a machine (docs/reliability.md gives both); raise one
// for a model that needs it.
struct LoadLimits {
  uint64_t max_config_bytes = 64ull << 20;  // a JSON config: config.json, model_config, training_config
  int max_json_depth = 256;                 // nesting of [ ] and { } in one
  uint64_t max_layers = 100'000;            // layers of the model, nested models' counted
  uint64_t max_nodes = 1'000'000;           // layer calls in its graphs
  // The bytes of all the variables the config makes. 0: four times the bytes of the file's weights
  // (the .h5 file, or the .keras archive's weights member) plus 16 MiB, since every weight is read
  // from the file and a stored value takes at least a quarter of the bytes of its variable.
  uint64_t max_weight_bytes = 0;
  int max_rank = 32;                             // of any tensor in the graph (HDF5's own bound)
  uint64_t max_tensor_elements = 1ull << 32;     // of any layer output (None counted as 1)
  uint64_t max_member_bytes = 64ull << 30;       // a .keras member, inflated
  double max_compression_ratio = 200;            // inflated / stored bytes of a DEFLATE member over 1 MiB
  // HDF5 files outside the subset Keras writes (and .h5 paths over 512 KiB, read on demand) go to
  // libhdf5, which trusts what it reads: fuzzing crashed libhdf5 1.10 on damaged files that kerascpp's
  // own reader refuses. false, for files from untrusted sources: every HDF5 file load_model and
  // load_model_from_memory read is read whole by kerascpp's bounds-checked reader, and one outside its
  // subset is refused with an IOError. (Model::load_weights, into a model the caller built, has no
  // such option yet: it hands files outside the subset to libhdf5.)
  bool allow_libhdf5 = true;
};

struct LoadOptions {
  // Compile the model from its saved training config and restore the optimizer state, as Keras
  // does; the training config is kept either way.
  bool compile = true;
  CustomObjects custom_objects;  // Keras's custom_objects: layers by class name, tried first
  // The saved compile config's losses and metrics that kerascpp does not know (a user's Python
  // function or class, recorded by name): made by the caller for the entry as saved and the shape of
  // the output it applies to; nullptr when the caller has none (the model then loads uncompiled,
  // with a warning naming the entry).
  std::function<losses::LossPtr(const Json& entry, const Shape& y_pred_shape)> custom_loss;
  std::function<metrics::MetricPtr(const Json& entry, const Shape& y_pred_shape)> custom_metric;
  // The same for the optimizer's learning-rate schedule (a user's LearningRateSchedule subclass).
  std::function<optimizers::SchedulePtr(const Json& entry)> custom_schedule;
  LoadLimits limits;  // what the file may ask for
  // Map the file and make each weight a view of it where its layout allows (stored contiguous,
  // little-endian, not converted: what Keras writes), instead of a copy. Loading then costs about
  // the parsing alone, and the weights' pages are the page cache's, shared with every process that
  // maps or reads the file, until written: training writes copy the pages they touch, never the
  // file. Off by default because the model then depends on the file for its whole life: a file
  // overwritten in place (Keras's save and ModelCheckpoint, `cp`) changes the weights not yet
  // written, and one truncated kills the process with SIGBUS when they are read. Replacing the file
  // by a rename (kerascpp's own saves, `mv`) or deleting it is safe. For load_model from a path.
  // A layer that a custom_objects factory hands out from elsewhere must not be in use by another
  // model: its weights get new storage.
  bool mmap_weights = false;
};

// Loads a full model from a Keras file: legacy .h5 (Keras 2 standalone, tf.keras, Keras 3) or a
// .keras archive (Keras 3, and the Keras 2.12-2.15 layout). The form is detected from the bytes,
// not the extension. IOError / ValueError / NotImplementedError name the file and the place in it.
Model load_model(const std::string& path, const LoadOptions& options = {});
// The same from the bytes of a file.
Model load_model_from_memory(const void* data, size_t size, const std::string& display_name = "<memory>",
                             const LoadOptions& options = {});
// A model from a JSON config written by model.to_json() (any Keras dialect); weights stay zero until
// load_weights().
Model model_from_json(const std::string& json, const CustomObjects& custom_objects = {});
Model model_from_config(const Json& config, const CustomObjects& custom_objects = {});

// keras.Sequential(layers, name): the layers chained in order from an input, which is the first entry
// (layers::Input(...) or an InputLayer) or the layers' first takes from an "input_shape" argument.
// ValueError when there is neither (kerascpp builds a Sequential model when it is made).
struct SequentialEntry {
  SequentialEntry(LayerRef l) : layer(std::move(l)) {}                 // NOLINT
  SequentialEntry(LayerPtr l) : layer(std::move(l)) {}                 // NOLINT
  SequentialEntry(const KerasTensor& input) : layer(input.layer()) {}  // NOLINT: keras.Input(...)
  SequentialEntry(const Model& m) : layer(m.as_layer()) {}              // NOLINT: a nested model
  LayerPtr layer;
};
// seed: for the weights of the layers it builds (else the random device).
Model Sequential(const std::vector<SequentialEntry>& layers, const std::string& name = "",
                 std::optional<uint64_t> seed = std::nullopt);

// Resets automatic naming only (Keras compatibility); never touches a live model.
void clear_session();

}  // namespace kerascpp
