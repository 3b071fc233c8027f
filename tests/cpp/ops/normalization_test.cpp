// batch_normalization, layer_normalization (any set of axes), group_normalization and the
// several-axes l2_normalize on random shapes (sizes 0 and 1 included), against double-precision
// formulas written here index by index; bad arguments rejected with ValueError.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "kerascpp/threading.h"
#include "op_test_util.h"
#include "ops/normalization_grad.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

// Row-major coordinates of flat index i in shape s.
std::vector<int64_t> coords(int64_t i, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    c[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return c;
}

// For each element: (key of the statistics group, position k within the reduced dims in row-major
// order of `reduced`). Group key: the coordinates not in `reduced`.
struct Groups {
  std::vector<int64_t> key, k;
};
Groups group_by(const Shape& s, const std::vector<bool>& reduced) {
  Groups g;
  int64_t n = shape_size(s);
  for (int64_t i = 0; i < n; ++i) {
    auto c = coords(i, s);
    int64_t key = 0, k = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      if (reduced[d]) k = k * s[d] + c[d];
      else key = key * s[d] + c[d];
    }
    g.key.push_back(key);
    g.k.push_back(k);
  }
  return g;
}

// mean and biased variance per group key.
void moments(const Tensor& x, const Groups& g, std::map<int64_t, double>* mean, std::map<int64_t, double>* var) {
  std::map<int64_t, double> count;
  for (size_t i = 0; i < g.key.size(); ++i) {
    (*mean)[g.key[i]] += x.data<float>()[i];
    count[g.key[i]] += 1;
  }
  for (auto& [key, m] : *mean) m /= count[key];
  for (size_t i = 0; i < g.key.size(); ++i) {
    double d = x.data<float>()[i] - (*mean)[g.key[i]];
    (*var)[g.key[i]] += d * d;
  }
  for (auto& [key, v] : *var) v /= count[key];
}

TEST(BatchNormalization, EveryAxisMatchesDouble) {
  std::mt19937 g(500);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 6);
    Tensor x = test::random_tensor(g, s, -3.f, 3.f);
    for (int axis = -rank; axis < rank; ++axis) {
      const int a = axis < 0 ? axis + rank : axis;
      const int64_t c = s[a];
      Tensor mean = test::random_tensor(g, {c}), var = test::random_tensor(g, {c}, 0.1f, 2.f);
      Tensor beta = test::random_tensor(g, {c}), gamma = test::random_tensor(g, {c});
      for (int variant = 0; variant < 2; ++variant) {
        std::vector<double> want(x.size());
        for (int64_t i = 0; i < x.size(); ++i) {
          int64_t ch = coords(i, s)[a];
          double y = (x.data<float>()[i] - mean.data<float>()[ch]) / std::sqrt(double(var.data<float>()[ch]) + 1e-3);
          if (variant == 0) y = y * gamma.data<float>()[ch] + beta.data<float>()[ch];
          want[i] = y;
        }
        Tensor got = variant == 0 ? batch_normalization(x, mean, var, beta, gamma, axis, 1e-3f)
                                  : batch_normalization(x, mean, var, Tensor(), Tensor(), axis, 1e-3f);
        test::expect_close(got, s, want, 1e-5, 1e-5, "batch_normalization axis " + std::to_string(axis));
      }
    }
  }
}

TEST(LayerNormalization, AnyAxesMatchDouble) {
  std::mt19937 g(501);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 5);
    Tensor x = test::random_tensor(g, s, 2.f, 4.f);
    std::vector<int> axes;
    std::vector<bool> reduced(rank, false);
    for (int d = 0; d < rank; ++d)
      if (std::uniform_int_distribution<int>(0, 1)(g) || (d == rank - 1 && axes.empty())) {
        axes.push_back(d - (trial % 2 ? rank : 0));  // negative axes on odd trials
        reduced[d] = true;
      }
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= reduced[d] ? s[d] : 1;
    Tensor gamma = test::random_tensor(g, {n}), beta = test::random_tensor(g, {n});
    Groups grp = group_by(s, reduced);
    std::map<int64_t, double> mean, var;
    moments(x, grp, &mean, &var);
    for (bool rms : {false, true}) {
      std::vector<double> want(x.size());
      for (int64_t i = 0; i < x.size(); ++i) {
        double inv = 1.0 / std::sqrt(var[grp.key[i]] + 1e-3), gm = gamma.data<float>()[grp.k[i]];
        want[i] = rms ? x.data<float>()[i] * inv * gm
                      : (x.data<float>()[i] - mean[grp.key[i]]) * inv * gm + beta.data<float>()[grp.k[i]];
      }
      test::expect_close(layer_normalization(x, gamma, beta, axes, 1e-3f, rms), s, want, 1e-5, 1e-4,
                         "layer_normalization trial " + std::to_string(trial));
    }
  }
}

TEST(GroupNormalization, EveryChannelAxisMatchesDouble) {
  std::mt19937 g(502);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 2 + trial % 3;
    Shape s = test::random_shape(g, rank, 5);
    const int a = 1 + trial % (rank - 1);
    const int64_t groups = std::uniform_int_distribution<int64_t>(1, 3)(g);
    s[a] = groups * std::uniform_int_distribution<int64_t>(1, 3)(g);
    Tensor x = test::random_tensor(g, s, -1.f, 3.f);
    Tensor gamma = test::random_tensor(g, {s[a]}), beta = test::random_tensor(g, {s[a]});
    // The group key: (batch, group); everything else is reduced.
    const int64_t size = x.size(), cg = s[a] / groups;
    std::map<int64_t, double> mean, var, count;
    std::vector<int64_t> key(size), ch(size);
    for (int64_t i = 0; i < size; ++i) {
      auto c = coords(i, s);
      ch[i] = c[a];
      key[i] = c[0] * groups + c[a] / cg;
      mean[key[i]] += x.data<float>()[i];
      count[key[i]] += 1;
    }
    for (auto& [k, m] : mean) m /= count[k];
    for (int64_t i = 0; i < size; ++i) var[key[i]] += std::pow(x.data<float>()[i] - mean[key[i]], 2);
    std::vector<double> want(size);
    for (int64_t i = 0; i < size; ++i)
      want[i] = (x.data<float>()[i] - mean[key[i]]) / std::sqrt(var[key[i]] / count[key[i]] + 1e-3) *
                    gamma.data<float>()[ch[i]] + beta.data<float>()[ch[i]];
    test::expect_close(group_normalization(x, gamma, beta, groups, a - (trial % 2 ? rank : 0), 1e-3f), s, want,
                       1e-5, 1e-4, "group_normalization trial " + std::to_string(trial));
  }
}

TEST(L2Normalize, SeveralAxesMatchDouble) {
  std::mt19937 g(503);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 5);
    Tensor x = test::random_tensor(g, s);
    std::vector<int> axes;
    std::vector<bool> reduced(rank, false);
    for (int d = 0; d < rank; ++d)
      if (std::uniform_int_distribution<int>(0, 1)(g) || (d == 0 && rank == 1)) {
        axes.push_back(d);
        reduced[d] = true;
      }
    if (axes.empty()) {
      axes.push_back(rank - 1);
      reduced[rank - 1] = true;
    }
    Groups grp = group_by(s, reduced);
    std::map<int64_t, double> sq;
    for (int64_t i = 0; i < x.size(); ++i) sq[grp.key[i]] += std::pow(double(x.data<float>()[i]), 2);
    std::vector<double> want(x.size());
    for (int64_t i = 0; i < x.size(); ++i) want[i] = x.data<float>()[i] / std::sqrt(std::max(sq[grp.key[i]], 1e-12));
    test::expect_close(l2_normalize(x, axes, 1e-12f), s, want, 1e-6, 1e-5, "l2_normalize trial " + std::to_string(trial));
  }
}

TEST(Normalization, BadArgumentsAreRejected) {
  Tensor x = Tensor::zeros({2, 3, 4});
  Tensor c3 = Tensor::zeros({3}), c4 = Tensor::zeros({4});
  EXPECT_TRUE(test::contains(test::value_error([&] { batch_normalization(x, c3, c3, Tensor(), Tensor(), -1, 1e-3f); }),
                             "`mean` must have shape (4,)"));
  EXPECT_TRUE(test::contains(test::value_error([&] { batch_normalization(x, c4, c4, Tensor(), Tensor(), 3, 1e-3f); }),
                             "out of bounds"));
  EXPECT_TRUE(test::contains(test::value_error([&] { batch_normalization(x, c4, c4, c3, Tensor(), -1, 1e-3f); }),
                             "`offset`"));
  EXPECT_TRUE(test::contains(test::value_error([&] { layer_normalization(x, c3, Tensor(), {-1}, 1e-3f); }), "`gamma`"));
  EXPECT_TRUE(test::contains(test::value_error([&] { layer_normalization(x, Tensor(), Tensor(), {}, 1e-3f); }), "axes=[]"));
  EXPECT_TRUE(test::contains(test::value_error([&] { group_normalization(x, Tensor(), Tensor(), 3, -1, 1e-3f); }),
                             "Received: groups=3"));
  EXPECT_TRUE(test::contains(test::value_error([&] { group_normalization(x, Tensor(), Tensor(), 1, 0, 1e-3f); }),
                             "batch axis"));
  EXPECT_TRUE(test::contains(test::value_error([&] { l2_normalize(x, std::vector<int>{-4}, 1e-12f); }), "out of bounds"));
  Tensor ints = Tensor::zeros({2, 4}, DType::int32);
  EXPECT_TRUE(test::contains(test::value_error([&] { layer_normalization(ints, Tensor(), Tensor(), {-1}, 1e-3f); }),
                             "float32"));
}

}  // namespace
}  // namespace kerascpp::ops

namespace kerascpp::ops {
namespace {

// The batch-normalization gradient sums each channel by blocks of rows split between the threads:
// the same bits on 1, 2 and 3 threads, and close to the sums taken in one pass in double.
TEST(BatchNormalizationGrad, TheSameBitsOnAnyNumberOfThreadsAndTheSumsOfDouble) {
  std::mt19937 g(11);
  for (const Shape& s : {Shape{64, 56, 56, 64}, Shape{3, 5, 7}, Shape{4096, 2}}) {
    const int axis = static_cast<int>(s.size()) - 1;
    const int64_t c = s.back(), n = shape_size(s);
    Tensor x = Tensor::empty(s), dy = Tensor::empty(s), mean = Tensor::empty({c}), var = Tensor::empty({c}),
           beta = Tensor::empty({c}), gamma = Tensor::empty({c});
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (Tensor* t : {&x, &dy, &mean, &beta, &gamma})
      for (int64_t i = 0; i < t->size(); ++i) t->data<float>()[i] = u(g);
    for (int64_t k = 0; k < c; ++k) var.data<float>()[k] = 0.5f + std::fabs(u(g));
    std::vector<Grads> by_threads;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      by_threads.push_back(detail::batch_normalization_grad(x, mean, var, beta, gamma, axis, 1e-3f, dy));
    }
    set_num_threads(0);
    for (size_t t = 1; t < by_threads.size(); ++t)
      for (size_t k = 0; k < by_threads[0].size(); ++k)
        ASSERT_EQ(std::memcmp(by_threads[t][k].raw_data(), by_threads[0][k].raw_data(), by_threads[0][k].nbytes()), 0)
            << shape_str(s) << " threads " << t + 1 << " grad " << k;
    // d offset = sum of dy per channel (in one pass of double here).
    for (int64_t k = 0; k < c; ++k) {
      double sum = 0;
      for (int64_t i = k; i < n; i += c) sum += dy.data<float>()[i];
      EXPECT_NEAR(by_threads[0][3].data<float>()[k], sum, 1e-6 * std::max(1.0, std::fabs(sum))) << k;
    }
  }
}

}  // namespace
}  // namespace kerascpp::ops
