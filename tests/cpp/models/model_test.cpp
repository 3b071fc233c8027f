// The Model API: weights in Keras order, set_weights checks, predict batching, clear_session that
// breaks nothing, and predict from many threads at once.
#include "kerascpp/model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <atomic>
#include <filesystem>
#include <thread>

#include "../test_paths.h"
#include "support/fixture_check.h"
#include "io/npy/npy.h"

namespace kerascpp {
namespace {

std::vector<Tensor> inputs_of(const std::string& dir) {
  std::vector<Tensor> in;
  for (int i = 0; std::filesystem::exists(dir + "/input_" + std::to_string(i) + ".npy"); ++i)
    in.push_back(io::read_npy(dir + "/input_" + std::to_string(i) + ".npy"));
  return in;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(Model, IsMadeFromAModelGraphOnly) {
  try {
    Model m(make_layer("Dense", Json{{"name", "d"}, {"units", 2}}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Received: a Dense layer"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Model(nullptr), ValueError);
}

TEST(Model, WeightsInKerasOrderWithKerasNames) {
  Model m = load_model(testing::fixture("seed_mlp_2x10/keras3/model.keras"));
  auto w = m.weights();
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[0]->name(), "kernel");
  EXPECT_EQ(w[1]->name(), "bias");
  EXPECT_EQ(w[0]->shape(), (Shape{8, 10}));
  EXPECT_EQ(m.count_params(), 8 * 10 + 10 + 10 * 10 + 10 + 10 + 1);
  EXPECT_EQ(m.trainable_weights().size(), 6u);
  EXPECT_TRUE(m.non_trainable_weights().empty());
  EXPECT_EQ(m.layers().size(), 3u);  // Sequential lists no InputLayer
  EXPECT_FALSE(m.training_config().empty());
}

TEST(Model, FrozenLayersComeAfterTrainableOnes) {
  Model m = load_model(testing::fixture("nested_model/keras3/model.keras"));
  auto trainable = m.trainable_weights(), frozen = m.non_trainable_weights();
  EXPECT_EQ(frozen.size(), 2u);
  EXPECT_EQ(trainable.size() + frozen.size(), m.weights().size());
}

TEST(Model, GetValueIsACopyAndValueIsAView) {
  Model m = load_model(testing::fixture("seed_mlp_2x10/keras3/model.h5"));
  VariablePtr k = m.weights()[0];
  Tensor copy = get_value(*k);
  Tensor view = k->value();
  EXPECT_FALSE(copy.shares_storage(view));
  EXPECT_TRUE(same(copy, view));
  auto batch = batch_get_value(m.weights());
  EXPECT_EQ(batch.size(), 6u);
  set_value(*k, Tensor::zeros(k->shape()));
  EXPECT_EQ(view.data<float>()[0], 0.f);  // the view sees the new value
  EXPECT_NE(copy.data<float>()[0], 0.f);  // the copy does not
  EXPECT_THROW(set_value(*k, Tensor::zeros({2, 2})), ValueError);
}

TEST(Model, SetWeightsChecksEverythingFirst) {
  Model m = load_model(testing::fixture("seed_mlp_2x10/keras3/model.h5"));
  auto w = m.get_weights();
  auto bad = w;
  bad.back() = Tensor::zeros({7});
  EXPECT_THROW(m.set_weights(bad), ValueError);
  EXPECT_TRUE(same(m.get_weights()[0], w[0]));  // nothing assigned
  bad.pop_back();
  EXPECT_THROW(m.set_weights(bad), ValueError);
  for (auto& t : w) std::memset(t.raw_data(), 0, t.nbytes());
  m.set_weights(w);
  EXPECT_EQ(m.get_weights()[0].data<float>()[3], 0.f);
}

TEST(Model, PredictInBatchesEqualsOneCall) {
  const std::string dir = testing::fixture("functional_2in_2out/keras3");
  Model m = load_model(dir + "/model.keras");
  auto in = inputs_of(dir);
  auto whole = m(in);
  auto batched = m.predict(in, 3);  // 4 samples: batches of 3 and 1
  ASSERT_EQ(whole.size(), batched.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_TRUE(same(whole[i], batched[i]));
  EXPECT_THROW(m.predict({in[0]}), ValueError);                     // one input missing
  EXPECT_THROW(m.predict({in[1], in[0]}), ValueError);              // swapped shapes
  EXPECT_THROW(m.predict({in[0], in[1].slice(0, 2)}), ValueError);  // different sample counts
}

TEST(Model, GetLayerAndSummary) {
  Model m = load_model(testing::fixture("nested_model/tf_keras/model.h5"));
  EXPECT_EQ(m.get_layer("top").class_name(), "Dense");
  EXPECT_THROW(m.get_layer("nope"), ValueError);
  std::string s = m.summary();
  EXPECT_NE(s.find("inner_seq (Sequential)"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: " + std::to_string(m.count_params())), std::string::npos) << s;
}

// clear_session resets naming only: ten different models loaded before it predict exactly as before.
TEST(Model, ClearSessionBreaksNoLoadedModel) {
  auto dirs = support::find_fixture_dirs(testing::fixture(""));
  std::vector<std::tuple<Model, std::vector<Tensor>, std::vector<Tensor>>> loaded;
  for (const auto& d : dirs) {
    if (loaded.size() == 10) break;
    std::vector<support::FormResult> failures;
    auto forms = support::load_fixture_forms(d, &failures);
    ASSERT_FALSE(forms.empty()) << d;
    auto in = inputs_of(d);
    auto out = forms[0].second.predict(in);
    loaded.emplace_back(forms[0].second, in, out);
  }
  ASSERT_EQ(loaded.size(), 10u);
  clear_session();
  for (auto& [m, in, out] : loaded) {
    auto again = m.predict(in);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(same(out[i], again[i])) << m.name();
  }
}

// Eight threads predict on one model at once and get exactly the single-threaded results.
TEST(Model, PredictIsSafeFromManyThreads) {
  for (const char* rel : {"nested_model/keras3", "all_layers_merge/tf_keras"}) {
    const std::string dir = testing::fixture(rel);
    Model m = load_model(dir + "/model.keras");
    auto in = inputs_of(dir);
    auto expected = m.predict(in);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (int r = 0; r < 200; ++r) {
          auto got = m.predict(in);
          for (size_t i = 0; i < got.size(); ++i)
            if (!same(got[i], expected[i])) ++mismatches;
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0) << rel;
  }
}

}  // namespace
}  // namespace kerascpp
