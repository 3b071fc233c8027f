// InferencePlan: a Functional graph compiled, when the model is made, into a flat list of kernels for
// inference (design.md §6, "Plans and workspaces").
//
// Every value of a planned graph is a (rows, width) block of float32: rows is the batch, width the
// product of the value's other dims, all known when the plan is made. Each step is one layer call
// with its shapes resolved and its weights read in place (a Dense step is the matmul with its bias and
// activation applied while the rows are still in cache); views (Flatten, Reshape, Dropout at inference)
// cost nothing, and elementwise steps write over an input that dies there. The memory of the values
// that are neither inputs nor outputs is planned by liveness (first fit over the steps) as offsets per
// row, so a workspace of `rows * floats_per_row` floats holds every value of a call (then the scratch
// a step asks for, such as BatchNormalization's folded statistics).
//
// A call on many rows of big samples runs in chunks of rows whose values fit chunk_bytes() (at least
// one row), so that a workspace never holds more than one chunk: max(chunk_bytes(), one sample's
// values) and the scratch of that many rows. chunk_bytes() is kChunkBytes (8 MB), or as many bytes as
// the model has weights, up to kMaxChunkBytes (64 MB): every chunk reads every weight once, and a
// chunk of one image reads ResNet50's 100 MB of weights from memory again for each image (batch 32
// in chunks of 4 images or more: 7% faster on an Intel Xeon, and no faster beyond), while the values
// of a model with small weights stay in cache.
//
// Workspaces belong to callers: a call takes one from the plan's pool (or makes one, the first time
// per concurrent caller), grows it when a chunk is bigger than any before, and gives it back, so that
// a warm call allocates only its output tensors (none through run_into, Model::call_into). The arithmetic is
// the interpreter's, kernel for kernel (Functional::call_graph), so results are bit-identical to the
// interpreter called on the same rows (for a call run in chunks: on each chunk's rows, as kernels such as
// matmul choose their algorithm by the number of rows), on every thread, except where a step runs
// several layers in one kernel (a BatchNormalization folded into a convolution's weights, a residual Add
// and relu as oneDNN post-ops, a ZeroPadding as the following convolution's or max pooling's own
// padding): then exact() is false and results move by round-off (a max pooling's by the sign of a zero
// or which NaN comes out).
//
// A graph is planned only when every call in it is one the plan takes (plan_steps.cpp lists them) and
// nothing in it depends on the call (fixed training=, masks, options); why one is not is kept. A graph
// whose inputs fix the batch (Keras's batch_shape) is planned for that batch. Stateful recurrent
// layers (plan_recurrent_steps.cpp) keep their states in the caller's RnnStates, as interpreted: the
// plan hands a step its states and they hold the final ones after the call.
//
//   std::string why;
//   auto plan = InferencePlan::compile(graph, &why);  // null: why names the layer not planned
//   if (plan && plan->takes(inputs, ctx)) outputs = plan->run(inputs);
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::models {

class Functional;

// One kernel of a plan: one layer call on (rows, width) float32 blocks.
class PlanStep {
 public:
  virtual ~PlanStep() = default;
  // out: (rows, output width); in: one (rows, width) block per input of the call; scratch:
  // scratch_floats(rows) floats of the caller's workspace, 64-byte aligned.
  virtual void run(const float* const* in, float* out, int64_t rows, float* scratch) const = 0;
  // The scratch run() needs for this many rows (the same for every call of that size).
  virtual int64_t scratch_floats(int64_t /*rows*/) const { return 0; }
  // The output is input 0's memory, reinterpreted: run() is never called.
  virtual bool is_view() const { return false; }
  // run() may write its output over input 0 (out == in[0]).
  virtual bool in_place() const { return false; }
  // Whether run() computes bit for bit what the layers' call()s compute; false once a step folded
  // weights or runs a following layer inside its kernel (results then move by round-off).
  virtual bool exact() const { return true; }

  // Fusion, while the plan is made. absorb: takes in `next`, the only reader of this step's output,
  // which keeps its shape; the step's output is then next's. absorb_add: takes in the sum of a value
  // computed before it and its output times `scale` (an Add, or CustomScaleLayer); the step's inputs
  // are then that value, then its own.
  virtual bool absorb(const Layer& /*next*/) { return false; }
  virtual bool absorb_add(float /*scale*/) { return false; }
  // A step that runs this one and `next` (the only reader of this step's output, whose output has
  // the shape `output`) as one kernel, to replace this one; null when there is none. A ZeroPadding
  // before a convolution or a MaxPooling with padding "valid": that layer pads its input itself, and
  // the padded copy is never made.
  virtual std::unique_ptr<PlanStep> merge_next(const Layer& /*next*/, const Shape& /*output*/) const {
    return nullptr;
  }

  // A stateful recurrent layer's step: the layer whose states the caller's RnnStates keep (else
  // null), their widths per row, and the run that starts from them and leaves the final ones there
  // (states: one (rows, width) block per state). run() then is the same from zeros.
  virtual const Layer* state_layer() const { return nullptr; }
  virtual std::vector<int64_t> state_widths() const { return {}; }
  virtual void run_stateful(const float* const* in, float* out, int64_t rows, float* scratch,
                            float* const* states) const {
    run(in, out, rows, scratch);
  }
};

// The step for one call of `layer` (plan_steps.cpp): input and output shapes with the batch first
// (-1), every other dim known. Null, with `why` set, for a call the plan does not take.
std::unique_ptr<PlanStep> make_plan_step(const Layer& layer, const std::vector<Shape>& inputs, const Shape& output,
                                         std::string* why);

class InferencePlan {
 public:
  // A call whose values pass chunk_bytes() runs in chunks of rows that fit it (at least one row):
  // kChunkBytes, or the model's weight bytes up to kMaxChunkBytes.
  static constexpr size_t kChunkBytes = size_t{8} << 20;
  static constexpr size_t kMaxChunkBytes = size_t{64} << 20;
  // The plan of a graph, or null with the reason in `why` ("layer 'embedding' (Embedding) is not planned").
  static std::unique_ptr<InferencePlan> compile(const Functional& graph, std::string* why);
  ~InferencePlan();

  // Whether this call can run on the plan: inference without masks or options, float32 inputs of the
  // graph's shapes with one batch size >= 1 (the graph's, when its inputs fix it), and for a graph with
  // stateful recurrent layers the caller's RnnStates, empty or holding states of that batch.
  // Otherwise the graph interprets it (and refuses what it refuses).
  bool takes(const std::vector<Tensor>& inputs, const CallContext& ctx) const;
  // Runs a call that takes() accepted; returns the graph's outputs, freshly allocated. `states`: the
  // caller's (ctx.rnn_states) for stateful layers, read and left holding their final states: updated
  // in place when only `states` holds them, else replaced (a tensor the caller took keeps its values).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RnnStates* states = nullptr) const;
  // The same into the caller's float32 tensors of output_shape(j, rows) (views of a bigger output,
  // for predict's batches); they must not overlap the inputs.
  void run_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                RnnStates* states = nullptr) const;
  bool stateful() const { return !stateful_steps_.empty(); }
  // The batch the graph's inputs fix (Keras's batch_shape), or -1: the plan takes only that many rows.
  int64_t fixed_batch() const { return fixed_batch_; }
  Shape output_shape(size_t j, int64_t rows) const;
  // Whether `shape` is output_shape(j, rows), compared without building it.
  bool output_shape_is(size_t j, int64_t rows, const Shape& shape) const;
  // The bytes of values a chunk holds at most (unless one row's pass it): see above.
  size_t chunk_bytes() const { return chunk_bytes_; }
  // How many rows a call of `rows` runs at a time: all of them, unless their values pass chunk_bytes()
  // (ResNet50's are 7 MB per sample). Each row is computed on its own, so a chunked call gives what
  // predict with that batch size gives.
  int64_t chunk_rows(int64_t rows) const;

  size_t steps() const { return steps_.size(); }
  // Layers run inside another layer's step (a BatchNormalization folded into a convolution...).
  size_t fused() const { return fused_; }
  // Whether every step is bit-identical to the interpreter (see PlanStep::exact).
  bool exact() const;
  // Floats per row of the workspace (the liveness-planned activations of one sample).
  int64_t floats_per_row() const { return floats_per_row_; }
  // Workspaces made so far: one per caller that ran at the same time as another.
  size_t workspaces() const;
  // Bytes the idle workspaces hold.
  size_t idle_workspace_bytes() const;

 private:
  // Where a value's memory is: a graph input, a graph output, or the workspace (offset per row).
  enum class Where { input, output, workspace };
  struct Value {
    Shape shape;  // batch first (-1, or the fixed batch)
    int64_t width = 0;
    Where where = Where::workspace;
    int64_t index = 0;  // input / output number, or the offset per row in the workspace
    int root = -1;      // the value whose memory this one is (itself unless a view or in place)
  };
  struct Step {
    std::unique_ptr<PlanStep> kernel;
    std::vector<int> inputs;
    int output = -1;
    int node = -1;  // the graph node whose output `output` is (the last one absorbed)
  };
  struct Workspace;
  struct StatefulStep {
    const Layer* layer;           // its state_layer()
    std::vector<int64_t> widths;  // its state_widths()
  };
  InferencePlan() = default;
  void place();
  template <typename SoleProducer>
  int fuse(const Layer& layer, const Shape& output, const std::vector<int>& inputs, int id,
           const std::vector<int>& step_of, SoleProducer sole_producer);
  int64_t scratch_floats(int64_t rows) const;
  void prepare_states(const StatefulStep& s, int64_t rows, RnnStates& states) const;
  // Puts ws in the spare slot when it is empty (ws is then released); false: the slot was taken.
  bool to_spare(std::unique_ptr<Workspace>& ws) const;

  std::vector<Value> values_;
  std::vector<Step> steps_;
  std::vector<int> inputs_, outputs_;  // value ids of the graph's inputs and outputs
  std::vector<StatefulStep> stateful_steps_;
  int64_t fixed_batch_ = -1;            // the batch every value has when the graph's inputs fix it
  std::vector<char> copy_output_;      // per output: copied at the end (a view or a repeated value)
  int64_t floats_per_row_ = 0;
  size_t chunk_bytes_ = kChunkBytes;
  size_t fused_ = 0;
  mutable std::atomic<Workspace*> spare_{nullptr};  // an idle workspace, owned, taken without the mutex
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> idle_;  // the other idle ones
  mutable size_t made_ = 0;
};

}  // namespace kerascpp::models
