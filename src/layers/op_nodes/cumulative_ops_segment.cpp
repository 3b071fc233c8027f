// Segment reductions: keras.ops segment_sum / segment_max / segment_min / segment_prod and tf.math's
// segment_* (sorted ids) and unsorted_segment_* (sum, max, min, prod, mean, sqrt_n). The leading dims of
// data (as many as segment_ids has) are reduced into num_segments rows by their ids.
//
// The number of rows must be known when the graph is built: num_segments, or constant ids (the
// largest id + 1; Keras 3's TensorFlow backend counts the distinct ids for an unsorted segment_sum
// without num_segments). Empty segments hold TensorFlow's values: 0 for a sum, mean, sqrt_n and the
// sorted max / min, 1 for a product, the lowest / highest float32 for the unsorted max / min. An
// unsorted op drops negative ids; a sorted one requires ids that are >= 0 and non-decreasing.
#include <cmath>
#include <limits>
#include <set>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

enum class Kind { sum, mean, sqrt_n, max, min, prod };
constexpr float kMax = std::numeric_limits<float>::max();

bool is_input(const Json& j) { return j.is_object() && j.contains("kerascpp_input"); }
// The values of a constant (a number, nested lists, Keras 3's __numpy__ / __tensor__).
void flatten(const Json& j, std::vector<float>* out) {
  if (j.is_object() && j.contains("config") && j["config"].contains("value")) return flatten(j["config"]["value"], out);
  if (j.is_number()) out->push_back(j.get<float>());
  if (j.is_array())
    for (const Json& e : j) flatten(e, out);
}

// Whether the op's ids are sorted: tf.math.segment_* (tf_sorted) or Keras 3's sorted=True.
template <class T>
bool sorted_ids(const Args<T>& a, bool tf_sorted) {
  return a.keras3() ? a.get("sorted", false) : tf_sorted;
}

// The number of output rows.
template <class T>
int64_t segment_count(const Args<T>& a, Kind kind, bool tf_sorted) {
  const bool sorted = sorted_ids(a, tf_sorted);
  if (a.keras3() && sorted && a.has("num_segments"))
    a.fail("num_segments", "given with sorted=True (Keras's TensorFlow backend refuses both)");
  if (a.has("num_segments")) {
    const int64_t n = a.get("num_segments", int64_t{0});
    a.check(n >= 0, "num_segments", "a non-negative int");
    return n;
  }
  const Json& j = a.json("segment_ids");
  if (is_input(j))
    a.fail("num_segments", "missing while segment_ids is a tensor (the number of segments would depend on its values, and "
                           "kerascpp's graphs have static shapes)");
  std::vector<float> ids;
  flatten(j, &ids);
  if (a.keras3() && !sorted && kind == Kind::sum) return static_cast<int64_t>(std::set<float>(ids.begin(), ids.end()).size());
  int64_t rows = 0;
  for (float v : ids) rows = std::max<int64_t>(rows, static_cast<int64_t>(v) + 1);
  return rows;
}

template <Kind kind, bool tf_sorted>
Shape segment_shape(const Args<Shape>& a) {
  const Shape data = a.value("data"), ids = a.value("segment_ids");
  bool prefix = ids.size() <= data.size();
  for (size_t d = 0; prefix && d < ids.size(); ++d) prefix = ids[d] < 0 || data[d] < 0 || ids[d] == data[d];
  a.check(prefix, "segment_ids", "of the shape of data's leading dims (data: " + shape_str(data) + ", segment_ids: " +
                                      shape_str(ids) + ")");
  if (sorted_ids(a, tf_sorted)) a.check(ids.size() == 1, "segment_ids", "1-D (sorted segment ids)");
  Shape out = {segment_count(a, kind, tf_sorted)};
  out.insert(out.end(), data.begin() + static_cast<int64_t>(ids.size()), data.end());
  return out;
}

template <Kind kind, bool tf_sorted>
Tensor segment(const Args<Tensor>& a) {
  const Tensor data = a.value("data"), ids_t = a.value("segment_ids");
  const std::vector<Shape> in = {data.shape(), ids_t.shape()};
  Json bound = {{"data", Json{{"kerascpp_input", 0}}}, {"segment_ids", a.json("segment_ids")},
                {"num_segments", a.json("num_segments")}, {"sorted", a.json("sorted")}};
  if (is_input(a.json("segment_ids"))) bound["segment_ids"] = Json{{"kerascpp_input", 1}};
  const Shape out_shape = segment_shape<kind, tf_sorted>(Args<Shape>(bound, in, a.who(), a.keras3()));
  const bool sorted = sorted_ids(a, tf_sorted);
  const int64_t rows = out_shape[0], m = ids_t.size(), row = shape_size(Shape(out_shape.begin() + 1, out_shape.end()));
  std::vector<int64_t> id(m);
  for (int64_t r = 0; r < m; ++r) {
    id[r] = std::lround(ids_t.data<float>()[r]);  // integers, carried as float32
    if (sorted) {
      KCPP_CHECK(id[r] >= 0 && (r == 0 || id[r] >= id[r - 1]), ValueError, a.who(), ": argument 'segment_ids' is not sorted "
                 "and non-negative: segment_ids[", r, "] = ", id[r]);
    }
    KCPP_CHECK(id[r] < rows, ValueError, a.who(), ": argument 'segment_ids' has segment_ids[", r, "] = ", id[r],
               ", which is not in [0, ", rows, ")");
  }
  const bool empty_zero = kind == Kind::sum || kind == Kind::mean || kind == Kind::sqrt_n || sorted;
  const float fill = kind == Kind::prod ? 1.f : empty_zero ? 0.f : kind == Kind::max ? -kMax : kMax;
  Tensor y = Tensor::empty(out_shape);
  float* py = y.data<float>();
  const float* px = data.data<float>();
  std::vector<int64_t> count(rows, 0);
  for (int64_t r = 0; r < m; ++r)
    if (id[r] >= 0) ++count[id[r]];
  for (int64_t s = 0; s < rows; ++s)
    for (int64_t j = 0; j < row; ++j)
      py[s * row + j] = count[s] == 0 ? fill : kind == Kind::prod ? 1.f : kind == Kind::max ? -kMax : kind == Kind::min ? kMax : 0.f;
  for (int64_t r = 0; r < m; ++r) {
    if (id[r] < 0) continue;
    float* o = py + id[r] * row;
    const float* x = px + r * row;
    for (int64_t j = 0; j < row; ++j) {
      switch (kind) {
        case Kind::max: o[j] = std::max(o[j], x[j]); break;
        case Kind::min: o[j] = std::min(o[j], x[j]); break;
        case Kind::prod: o[j] *= x[j]; break;
        default: o[j] += x[j];
      }
    }
  }
  std::vector<float> scale(rows, 1.f);  // of a mean / sqrt_n
  for (int64_t s = 0; s < rows; ++s) {
    if (count[s] == 0) continue;
    if (kind == Kind::mean) scale[s] = 1.f / static_cast<float>(count[s]);
    if (kind == Kind::sqrt_n) scale[s] = 1.f / std::sqrt(static_cast<float>(count[s]));
    for (int64_t j = 0; j < row; ++j) py[s * row + j] *= scale[s];
  }
  if (ops::Recorder* r = ops::tape_for({&data}))
    r->record("segment", {data, ids_t}, y, [data, y, id, scale, rows, row](const Tensor& dy) {
      Tensor dx = Tensor::zeros(data.shape());
      const float *g = dy.data<float>(), *px = data.data<float>(), *py = y.data<float>();
      float* d = dx.data<float>();
      const int64_t m = static_cast<int64_t>(id.size());
      if (kind == Kind::max || kind == Kind::min) {  // shared by the values equal to the extreme
        std::vector<float> ties(rows * row, 0.f);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; id[r] >= 0 && j < row; ++j) ties[id[r] * row + j] += px[r * row + j] == py[id[r] * row + j];
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; id[r] >= 0 && j < row; ++j)
            if (px[r * row + j] == py[id[r] * row + j]) d[r * row + j] = g[id[r] * row + j] / ties[id[r] * row + j];
      } else if (kind == Kind::prod) {  // the product of the others, exact with zeros
        std::vector<float> zeros(rows * row, 0.f), nonzero(rows * row, 1.f);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; id[r] >= 0 && j < row; ++j) {
            const float v = px[r * row + j];
            if (v == 0.f) zeros[id[r] * row + j] += 1.f;
            else nonzero[id[r] * row + j] *= v;
          }
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; id[r] >= 0 && j < row; ++j) {
            const int64_t k = id[r] * row + j;
            const float v = px[r * row + j];
            const float others = zeros[k] == 0.f ? nonzero[k] / v : (zeros[k] == 1.f && v == 0.f ? nonzero[k] : 0.f);
            d[r * row + j] = g[k] * others;
          }
      } else {
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; id[r] >= 0 && j < row; ++j) d[r * row + j] = g[id[r] * row + j] * scale[id[r]];
      }
      return ops::Grads{dx, Tensor()};
    });
  return y;
}

#define KERAS_SEGMENT(cls, kind) \
  OpDef{"ops.math." cls, nullptr, {"data", "segment_ids", "num_segments", "sorted"}, {}, segment_shape<kind, false>, segment<kind, false>}
#define TF_SORTED(fn, kind) OpDef{nullptr, "math." fn, {"data", "segment_ids"}, {}, segment_shape<kind, true>, segment<kind, true>}
#define TF_UNSORTED(fn, kind) \
  OpDef{nullptr, "math." fn, {"data", "segment_ids", "num_segments"}, {}, segment_shape<kind, false>, segment<kind, false>}

}  // namespace

std::vector<OpDef> cumulative_segment_ops() {
  return {
      KERAS_SEGMENT("SegmentSum", Kind::sum),
      KERAS_SEGMENT("SegmentMax", Kind::max),
      KERAS_SEGMENT("SegmentMin", Kind::min),
      KERAS_SEGMENT("SegmentProd", Kind::prod),
      TF_SORTED("segment_sum", Kind::sum),
      TF_SORTED("segment_max", Kind::max),
      TF_SORTED("segment_min", Kind::min),
      TF_SORTED("segment_prod", Kind::prod),
      TF_SORTED("segment_mean", Kind::mean),
      TF_UNSORTED("unsorted_segment_sum", Kind::sum),
      TF_UNSORTED("unsorted_segment_max", Kind::max),
      TF_UNSORTED("unsorted_segment_min", Kind::min),
      TF_UNSORTED("unsorted_segment_prod", Kind::prod),
      TF_UNSORTED("unsorted_segment_mean", Kind::mean),
      TF_UNSORTED("unsorted_segment_sqrt_n", Kind::sqrt_n),
  };
}

}  // namespace kerascpp::layers::op_nodes
