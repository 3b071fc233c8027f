#include "models/inference_plan.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

#include "layers/plan_parts.h"
#include "models/functional.h"
#include "ops/tape.h"

namespace kerascpp::models {

// The memory of one caller: the planned values of a call of up to `bytes() / 4 / floats_per_row` rows,
// and the pointers of a call's values and of one step's inputs.
// Its memory is a Storage: 64-byte aligned, and from 1 MiB on a mapping of its own that goes back to
// the system when the plan dies (malloc would keep a freed block of up to 32 MiB in the heap).
struct InferencePlan::Workspace {
  std::shared_ptr<Storage> memory;
  std::vector<float*> at;          // per value
  std::vector<const float*> args;  // one step's inputs
  std::vector<float*> states;      // a stateful step's state blocks for the chunk
  // The scratch the steps need for chunks of `chunk` rows and a last one of `rest` (which depends on
  // those sizes only), kept for the next call of the same sizes.
  int64_t chunk = -1, rest = -1, scratch = 0;
  float* data() const { return memory ? static_cast<float*>(memory->data()) : nullptr; }
  size_t bytes() const { return memory ? memory->nbytes() : 0; }
  void reserve(size_t floats) {
    if (floats * sizeof(float) <= bytes()) return;
    memory.reset();  // before the new one: never both at once
    memory = Storage::allocate(floats * sizeof(float));
  }
};

InferencePlan::~InferencePlan() { delete spare_.load(); }

namespace {
// Whether every dim of `shape` but the batch is known.
bool known_dims(const Shape& shape) {
  return shape.size() >= 2 && std::all_of(shape.begin() + 1, shape.end(), [](int64_t d) { return d >= 0; });
}
// A value's floats per row.
int64_t width_of(const Shape& shape) { return shape_size(Shape(shape.begin() + 1, shape.end())); }
}  // namespace

std::unique_ptr<InferencePlan> InferencePlan::compile(const Functional& g, std::string* why) {
  const char* env = std::getenv("KERASCPP_PLAN");
  if (env && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0)) {
    *why = "KERASCPP_PLAN=" + std::string(env);
    return nullptr;
  }
  auto refuse = [&](const std::string& reason) -> std::unique_ptr<InferencePlan> {
    *why = reason;
    return nullptr;
  };
  std::unique_ptr<InferencePlan> plan(new InferencePlan());
  std::map<std::pair<int, int>, int> value_of;  // (node, output) -> value id
  std::vector<int> step_of;                     // value id -> the step writing it (-1: a graph input)
  // How often each node's output is read (by calls, and once more when it is a graph output): a step
  // takes in the layer after it only when that layer is its output's one reader.
  std::map<std::pair<int, int>, int> uses;
  for (int id : g.order_)
    for (const Functional::Ref& r : g.nodes_[id].inputs) ++uses[{r.node, r.index}];
  for (const Functional::Ref& r : g.outputs_) ++uses[{r.node, r.index}];
  // The step writing value v, when v is its own output (not a view) and read by one call only.
  auto sole_producer = [&](int v) -> Step* {
    if (step_of[v] < 0) return nullptr;
    Step& s = plan->steps_[step_of[v]];
    return s.output == v && uses[{s.node, 0}] == 1 ? &s : nullptr;
  };
  // A graph whose inputs fix the batch (Keras's batch_shape, which stateful RNN layers need) has it in
  // every value: its rows are that many samples.
  auto batch_of = [&](const Functional::Ref& r) {
    const Shape& s = g.nodes_[r.node].output_shapes.at(0);
    return s.empty() || s[0] <= 0 ? int64_t{-1} : s[0];
  };
  plan->fixed_batch_ = g.inputs_.empty() ? -1 : batch_of(g.inputs_[0]);
  for (const Functional::Ref& r : g.inputs_)
    if (batch_of(r) != plan->fixed_batch_) plan->fixed_batch_ = -1;
  auto add_value = [&](const Shape& shape, int node) -> int {
    if (shape.size() < 2 || (shape[0] >= 0 && shape[0] != plan->fixed_batch_)) {
      *why = "a tensor of shape " + shape_str(shape) + " has no free batch axis and sample axes (" +
             (shape.empty() ? std::string("a scalar") : "rank " + std::to_string(shape.size())) + ")";
      return -1;
    }
    if (!known_dims(shape)) {
      *why = "a tensor of shape " + shape_str(shape) + " has a dimension known only when called";
      return -1;
    }
    Value v;
    v.shape = shape;
    v.width = width_of(shape);
    v.root = static_cast<int>(plan->values_.size());
    plan->values_.push_back(std::move(v));
    step_of.push_back(-1);
    value_of[{node, 0}] = v.root;
    return v.root;
  };
  for (size_t i = 0; i < g.inputs_.size(); ++i) {
    const Functional::Ref& r = g.inputs_[i];
    if (r.index != 0 || value_of.count({r.node, 0}))
      return refuse("an input of the graph is given twice or is not a layer's first output");
    const int v = add_value(g.nodes_[r.node].output_shapes.at(0), r.node);
    if (v < 0) return nullptr;
    plan->values_[v].where = Where::input;
    plan->values_[v].index = static_cast<int64_t>(i);
    plan->inputs_.push_back(v);
  }
  for (int id : g.order_) {
    const Functional::Node& n = g.nodes_[id];
    if (n.inputs.empty()) {
      if (!value_of.count({id, 0})) return refuse("an input layer of the graph is not one of its inputs");
      continue;
    }
    const Layer& layer = *g.layers_[n.layer];
    const std::string which = "layer '" + layer.name() + "' (" + layer.class_name() + ")";
    if (n.training >= 0) return refuse(which + " is called with a fixed training=");
    if (!n.options.empty()) return refuse(which + " is called with options");
    for (size_t i = 0; i < n.mask_given.size(); ++i)  // a mask given as null (Keras 3 writes mask=None) is none
      if (n.mask_given[i] && n.masks[i].node >= 0) return refuse(which + " is called with a mask");
    if (n.output_shapes.size() != 1) return refuse(which + " has several outputs");
    Step step;
    std::vector<Shape> in_shapes;
    for (const Functional::Ref& r : n.inputs) {
      auto it = value_of.find({r.node, r.index});
      if (it == value_of.end()) return refuse(which + " reads an output the plan does not hold");
      step.inputs.push_back(it->second);
      in_shapes.push_back(plan->values_[it->second].shape);
    }
    if (int fused_into = plan->fuse(layer, n.output_shapes[0], step.inputs, id, step_of, sole_producer); fused_into >= 0) {
      value_of[{id, 0}] = fused_into;
      continue;
    }
    step.kernel = make_plan_step(layer, in_shapes, n.output_shapes[0], why);
    if (!step.kernel) return nullptr;
    step.output = add_value(n.output_shapes[0], id);
    if (step.output < 0) return refuse(which + ": " + *why);
    step.node = id;
    step_of[step.output] = static_cast<int>(plan->steps_.size());
    if (const Layer* owner = step.kernel->state_layer())
      plan->stateful_steps_.push_back({owner, step.kernel->state_widths()});
    plan->steps_.push_back(std::move(step));
  }
  for (const Functional::Ref& r : g.outputs_) {
    auto it = value_of.find({r.node, r.index});
    if (it == value_of.end()) return refuse("an output of the graph is not one the plan holds");
    plan->outputs_.push_back(it->second);
  }
  plan->place();
  const auto weight_bytes = static_cast<size_t>(g.count_params()) * sizeof(float);
  plan->chunk_bytes_ = std::clamp(weight_bytes, kChunkBytes, kMaxChunkBytes);
  return plan;
}

// Takes the call of `layer` (node id) on `inputs` into the step that writes its input, when that step
// can run it inside its kernel: a layer after a step that absorbs it or merges with it (then a step of
// another kind takes its place), or an Add (or CustomScaleLayer) of a step's output and a value
// computed before that step. The value the call's output now is, or -1.
template <typename SoleProducer>
int InferencePlan::fuse(const Layer& layer, const Shape& output, const std::vector<int>& inputs, int id,
                        const std::vector<int>& step_of, SoleProducer sole_producer) {
  if (inputs.size() == 1) {
    Step* s = sole_producer(inputs[0]);
    if (!s) return -1;
    Value& v = values_[s->output];
    if (v.shape == output && s->kernel->absorb(layer)) {
      // the step's output is the call's
    } else if (std::unique_ptr<PlanStep> merged =
                   known_dims(output) ? s->kernel->merge_next(layer, output) : nullptr) {
      s->kernel = std::move(merged);  // its value, read by this call alone, now holds the call's output
      v.shape = output;
      v.width = width_of(output);
    } else {
      return -1;
    }
    s->node = id, ++fused_;
    return s->output;
  }
  if (inputs.size() != 2 || inputs[0] == inputs[1]) return -1;
  layers::MergeParts merge;
  float scale = 1.f;
  int later;  // the input whose step takes the sum in
  if (layers::merge_parts(layer, &merge) && merge.op == kernels::Binary::add && !merge.average)
    later = step_of[inputs[0]] > step_of[inputs[1]] ? 0 : 1;  // the input written last
  else if (layers::custom_scale_parts(layer, &scale))
    later = 1;  // shortcut + residual * scale: the residual's step
  else
    return -1;
  const int other = inputs[1 - later];
  Step* s = sole_producer(inputs[later]);
  if (!s || values_[s->output].shape != output || values_[other].shape != output ||
      step_of[other] >= step_of[inputs[later]] || !s->kernel->absorb_add(scale))
    return -1;
  s->inputs.insert(s->inputs.begin(), other);
  s->node = id, ++fused_;
  return s->output;
}

// Where every value lives. Views share their input's memory; a step's output that is a graph output
// (its first mention, not a view) is written straight into the output tensor; an elementwise step
// writes over an input held by the workspace that dies there; the rest of the workspace is assigned by
// liveness, first fit, in floats per row (each value rounded to 16 floats, so that every value starts
// 64-byte aligned for any number of rows).
void InferencePlan::place() {
  const int nv = static_cast<int>(values_.size()), ns = static_cast<int>(steps_.size());
  std::vector<int> defined_at(nv, -1), last_use(nv, -1);
  for (int s = 0; s < ns; ++s) {
    defined_at[steps_[s].output] = s;
    for (int v : steps_[s].inputs) last_use[v] = s;
  }
  for (int v : outputs_) last_use[v] = INT_MAX;
  copy_output_.assign(outputs_.size(), 1);
  for (size_t j = 0; j < outputs_.size(); ++j) {
    Value& v = values_[outputs_[j]];
    const int s = defined_at[outputs_[j]];
    if (s < 0 || steps_[s].kernel->is_view() || v.where != Where::workspace) continue;
    v.where = Where::output, v.index = static_cast<int64_t>(j);
    copy_output_[j] = 0;
  }
  // Roots: views and in-place outputs share their input's memory, which then lives until the last use
  // of any value sharing it.
  std::vector<int> end(nv);
  for (int v = 0; v < nv; ++v) end[v] = last_use[v];
  for (int s = 0; s < ns; ++s) {
    const Step& step = steps_[s];
    Value& out = values_[step.output];
    const int r = values_[step.inputs[0]].root;
    const bool view = step.kernel->is_view();
    bool in_place = step.kernel->in_place() && out.where == Where::workspace &&
                    values_[r].where == Where::workspace && end[r] == s;
    for (size_t i = 1; in_place && i < step.inputs.size(); ++i)  // Add()([x, y, x]): x is read after out is written
      in_place = values_[step.inputs[i]].root != r;
    if (!view && !in_place) continue;
    out.root = r;
    if (view && values_[r].where != Where::workspace) out.where = values_[r].where, out.index = values_[r].index;
    end[r] = std::max(end[r], last_use[step.output]);
  }
  struct Block {
    int64_t offset, size;
    int end;
  };
  std::vector<Block> live;
  for (int s = 0; s < ns; ++s) {
    const int v = steps_[s].output;
    if (values_[v].root != v || values_[v].where != Where::workspace) continue;
    std::erase_if(live, [&](const Block& b) { return b.end < s; });
    std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
    const int64_t size = (values_[v].width + 15) / 16 * 16;
    int64_t offset = 0;
    for (const Block& b : live) {
      if (b.offset - offset >= size) break;
      offset = std::max(offset, b.offset + b.size);
    }
    live.push_back({offset, size, end[v]});
    values_[v].index = offset;
    floats_per_row_ = std::max(floats_per_row_, offset + size);
  }
}

bool InferencePlan::takes(const std::vector<Tensor>& inputs, const CallContext& ctx) const {
  if (ctx.training || ctx.updates || ctx.losses || ctx.options || inputs.size() != inputs_.size()) return false;
  if (ops::active_recorder() != nullptr) return false;  // a GradientTape records the interpreter's ops
  if (ctx.masks)
    for (const Tensor& m : *ctx.masks)
      if (m.defined()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const Shape& want = values_[inputs_[i]].shape;
    if (!t.defined() || t.dtype() != DType::float32 || t.rank() != static_cast<int>(want.size())) return false;
    if (t.dim(0) < 1 || t.dim(0) != inputs[0].dim(0)) return false;
    if (!std::equal(want.begin() + 1, want.end(), t.shape().begin() + 1)) return false;
  }
  if (fixed_batch_ >= 0 && inputs[0].dim(0) != fixed_batch_) return false;
  if (stateful_steps_.empty()) return true;
  if (!ctx.rnn_states) return false;
  for (const StatefulStep& s : stateful_steps_) {  // states kept from a call of another batch: the layer's error
    const std::vector<Tensor>& kept = ctx.rnn_states->of(s.layer);
    if (kept.empty()) continue;
    if (kept.size() != s.widths.size()) return false;
    for (size_t i = 0; i < kept.size(); ++i)
      if (kept[i].dtype() != DType::float32 || kept[i].rank() != 2 || kept[i].dim(0) != inputs[0].dim(0) ||
          kept[i].dim(1) != s.widths[i])
        return false;
  }
  return true;
}

bool InferencePlan::output_shape_is(size_t j, int64_t rows, const Shape& shape) const {
  const Shape& want = values_[outputs_.at(j)].shape;
  return shape.size() == want.size() && shape[0] == rows && std::equal(want.begin() + 1, want.end(), shape.begin() + 1);
}

Shape InferencePlan::output_shape(size_t j, int64_t rows) const {
  Shape shape = values_[outputs_.at(j)].shape;
  shape[0] = rows;
  return shape;
}

std::vector<Tensor> InferencePlan::run(const std::vector<Tensor>& inputs, RnnStates* states) const {
  std::vector<Tensor> outputs(outputs_.size());
  for (size_t j = 0; j < outputs_.size(); ++j) outputs[j] = Tensor::empty(output_shape(j, inputs[0].dim(0)));
  run_into(inputs, outputs, states);
  return outputs;
}

// The states of a stateful step for a call of `rows`, in `states`: those kept (zeros at first), made
// the caller's own copies unless only `states` holds them, so that the step can update them in place.
void InferencePlan::prepare_states(const StatefulStep& s, int64_t rows, RnnStates& states) const {
  std::vector<Tensor>& kept = states.slot(s.layer);
  if (kept.empty())
    for (int64_t w : s.widths) kept.push_back(Tensor::zeros({rows, w}));
  for (Tensor& t : kept)  // only bytes of their own that no one else holds are updated in place
    if (t.storage().use_count() != 1 || t.raw_data() != t.storage()->data() || !t.storage()->owns_bytes())
      t = t.copy();
}

void InferencePlan::run_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                             RnnStates* states) const {
  KCPP_ASSERT(stateful_steps_.empty() || states != nullptr);
  KCPP_ASSERT(fixed_batch_ < 0 || inputs[0].dim(0) == fixed_batch_);
  const int64_t rows = inputs[0].dim(0);
  KCPP_ASSERT(outputs.size() == outputs_.size());
  for (size_t j = 0; j < outputs.size(); ++j)
    KCPP_ASSERT(outputs[j].dtype() == DType::float32 && output_shape_is(j, rows, outputs[j].shape()));
  // The spare slot first (one atomic exchange: a caller alone on the plan never takes the mutex), then
  // the pool, else a new workspace.
  std::unique_ptr<Workspace> ws(spare_.exchange(nullptr, std::memory_order_acquire));
  if (!ws) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!idle_.empty()) {
      ws = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ws = std::make_unique<Workspace>();
      idle_.reserve(++made_);  // so that giving it back (in a destructor) never allocates
    }
  }
  struct GiveBack {  // also when a kernel throws (bad_alloc)
    const InferencePlan* plan;
    std::unique_ptr<Workspace>& ws;
    ~GiveBack() {
      if (plan->to_spare(ws)) return;
      std::lock_guard<std::mutex> lock(plan->pool_mutex_);
      plan->idle_.push_back(std::move(ws));
    }
  } give_back{this, ws};
  if (states)
    for (const StatefulStep& s : stateful_steps_) prepare_states(s, rows, *states);
  // Rows in chunks whose values fit chunk_bytes() (every step computes each row on its own), so that a
  // large batch of big samples runs in cache and in a small workspace.
  const int64_t chunk = chunk_rows(rows), rest = rows % chunk;
  if (ws->chunk != chunk || ws->rest != rest) {
    ws->scratch = std::max(scratch_floats(chunk), rest ? scratch_floats(rest) : 0);
    ws->chunk = chunk, ws->rest = rest;
  }
  ws->reserve(static_cast<size_t>(chunk * floats_per_row_ + ws->scratch));
  float* const data = ws->data();
  float* scratch = data + chunk * floats_per_row_;  // 64-byte aligned: floats_per_row_ is a multiple of 16
  ws->at.resize(values_.size());
  for (int64_t start = 0; start < rows; start += chunk) {
    const int64_t n = std::min(chunk, rows - start);
    for (size_t v = 0; v < values_.size(); ++v) {
      const Value& root = values_[values_[v].root];
      const Value& at = root.where == Where::workspace ? root : values_[v];
      const int64_t skip = start * values_[v].width;  // a view has its root's floats per row
      switch (at.where) {
        case Where::input: ws->at[v] = inputs[at.index].data<float>() + skip; break;
        case Where::output: ws->at[v] = outputs[at.index].data<float>() + skip; break;
        case Where::workspace: ws->at[v] = data + at.index * n; break;
      }
    }
    for (const Step& step : steps_) {
      if (step.kernel->is_view()) continue;
      ws->args.clear();
      for (int v : step.inputs) ws->args.push_back(ws->at[v]);
      if (const Layer* layer = states ? step.kernel->state_layer() : nullptr) {
        ws->states.clear();
        for (Tensor& t : states->slot(layer)) ws->states.push_back(t.data<float>() + start * t.dim(1));
        step.kernel->run_stateful(ws->args.data(), ws->at[step.output], n, scratch, ws->states.data());
        continue;
      }
      step.kernel->run(ws->args.data(), ws->at[step.output], n, scratch);
    }
    for (size_t j = 0; j < outputs_.size(); ++j)
      if (copy_output_[j])
        std::memcpy(outputs[j].data<float>() + start * values_[outputs_[j]].width, ws->at[outputs_[j]],
                    static_cast<size_t>(n * values_[outputs_[j]].width) * sizeof(float));
  }
}

int64_t InferencePlan::chunk_rows(int64_t rows) const {
  const int64_t row_bytes = floats_per_row_ * static_cast<int64_t>(sizeof(float));
  const auto budget = static_cast<int64_t>(chunk_bytes_);
  if (row_bytes == 0 || rows * row_bytes <= budget) return std::max<int64_t>(rows, 1);
  return std::max<int64_t>(budget / row_bytes, 1);
}

// The most scratch any step needs for this many rows, after the rows' values in the workspace.
int64_t InferencePlan::scratch_floats(int64_t rows) const {
  int64_t most = 0;
  for (const Step& step : steps_) most = std::max(most, (step.kernel->scratch_floats(rows) + 15) / 16 * 16);
  return most;
}

bool InferencePlan::exact() const {
  for (const Step& step : steps_)
    if (!step.kernel->exact()) return false;
  return true;
}

size_t InferencePlan::workspaces() const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  return made_;
}

bool InferencePlan::to_spare(std::unique_ptr<Workspace>& ws) const {
  Workspace* empty = nullptr;
  if (!spare_.compare_exchange_strong(empty, ws.get(), std::memory_order_release)) return false;
  (void)ws.release();
  return true;
}

size_t InferencePlan::idle_workspace_bytes() const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  size_t bytes = 0;
  for (const auto& ws : idle_) bytes += ws->bytes();
  // The spare is counted while this call owns it (a caller could be growing it otherwise); given back
  // to the slot, or to the pool if a call filled the slot meanwhile.
  if (std::unique_ptr<Workspace> spare{spare_.exchange(nullptr, std::memory_order_acquire)}) {
    bytes += spare->bytes();
    if (!to_spare(spare)) idle_.push_back(std::move(spare));  // reserved: made_ covers every workspace
  }
  return bytes;
}

}  // namespace kerascpp::models
