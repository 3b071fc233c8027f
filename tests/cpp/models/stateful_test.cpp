// Stateful RNNs (tests/fixtures/stateful_rnn, scripts/make_stateful_fixture.py): the states belong to
// the caller's RnnStates, so two streams on one shared model do not mix, predict stays const, and the
// three calls Keras made in a row come out the same.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "../test_errors.h"
#include "../test_paths.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {
using testing::error_of;

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Each output's largest difference over its scale (the fixtures' float32 round-off bound: 1e-5).
double worst(const Tensor& got, const Tensor& want) {
  double scale = 1e-6, diff = 0;
  for (int64_t i = 0; i < want.size(); ++i) scale = std::max(scale, double(std::fabs(want.data<float>()[i])));
  for (int64_t i = 0; i < want.size(); ++i)
    diff = std::max(diff, double(std::fabs(got.data<float>()[i] - want.data<float>()[i])));
  return diff / scale;
}

TEST(Stateful, ThreeCallsInARowMatchKerasInEveryForm) {
  for (const char* writer : {"keras3", "tf_keras"}) {
    const std::string dir = testing::fixture(std::string("stateful_rnn/") + writer);
    const Tensor x1 = io::read_npy(dir + "/x1.npy"), x2 = io::read_npy(dir + "/x2.npy");
    const Tensor y1 = io::read_npy(dir + "/y1.npy"), y2 = io::read_npy(dir + "/y2.npy"), y3 = io::read_npy(dir + "/y3.npy");
    std::vector<Model> models;
    models.push_back(load_model(dir + (std::string(writer) == "keras3" ? "/model.keras" : "/model.h5")));
    Model from_json = model_from_json(read_text(dir + "/config.json"));
    from_json.load_weights(dir + (std::string(writer) == "keras3" ? "/config.weights.h5" : "/config.h5"));
    models.push_back(std::move(from_json));
    for (const Model& m : models) {
      EXPECT_TRUE(m.stateful());
      RnnStates stream;
      EXPECT_LE(worst(m.predict({x1}, stream, 2)[0], y1), 1e-5) << writer;
      EXPECT_LE(worst(m.predict({x2}, stream, 2)[0], y2), 1e-5) << writer;
      stream.reset_states();
      EXPECT_LE(worst(m({x2}, stream)[0], y3), 1e-5) << writer;
    }
  }
}

TEST(Stateful, StreamsOnOneSharedModelKeepTheirOwnStates) {
  const std::string dir = testing::fixture("stateful_rnn/keras3");
  const Model m = load_model(dir + "/model.keras");
  const Tensor x1 = io::read_npy(dir + "/x1.npy"), x2 = io::read_npy(dir + "/x2.npy");
  const Tensor y2 = io::read_npy(dir + "/y2.npy"), y3 = io::read_npy(dir + "/y3.npy");
  Tensor a, b;
  std::thread t1([&] {
    RnnStates s;
    (void)m({x1}, s);
    a = m({x2}, s)[0];
  });
  std::thread t2([&] {
    RnnStates s;
    b = m({x2}, s)[0];
  });
  t1.join();
  t2.join();
  EXPECT_LE(worst(a, y2), 1e-5);
  EXPECT_LE(worst(b, y3), 1e-5);
}

TEST(Stateful, ErrorsNameTheLayerAndWhatToDo) {
  const std::string dir = testing::fixture("stateful_rnn/keras3");
  const Model m = load_model(dir + "/model.keras");
  const Tensor x1 = io::read_npy(dir + "/x1.npy");
  EXPECT_NE(error_of([&] { m.predict({x1}); }).find("Layer 'lstm' (LSTM) is stateful: call the model with the caller's states"),
            std::string::npos);
  RnnStates s;
  (void)m({x1}, s);
  const Tensor one = Tensor::zeros({1, 5, 3});
  EXPECT_NE(error_of([&] { m({one}, s); }).find("Input 0 of model"), std::string::npos);  // the fixed batch of 2
  // A stateful layer needs a fixed batch size.
  Json c = {{"class_name", "Sequential"},
            {"config",
             {{"name", "s"},
              {"layers",
               {{{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_shape", {nullptr, 5, 3}}}}},
                {{"class_name", "LSTM"}, {"config", {{"name", "l"}, {"units", 2}, {"stateful", true}}}}}}}}};
  EXPECT_NE(error_of([&] { model_from_json(c.dump()); }).find("Layer 'l' (LSTM) is stateful, which needs a fixed batch size"),
            std::string::npos);
}

TEST(Stateful, TrainingNeedsTheStatesAndWholeBatches) {
  // Training itself is checked against Keras by FitParity (tests/fixtures/training/seq_stateful).
  const std::string dir = testing::fixture("training/seq_stateful");
  Model m = load_model(dir + "/model.keras");
  const Tensor x = io::read_npy(dir + "/x.npy"), y = io::read_npy(dir + "/y.npy");
  FitOptions o;
  o.batch_size = 8, o.verbose = 0, o.shuffle = false;
  EXPECT_NE(error_of([&] { m.fit({x}, {y}, o); }).find("has stateful RNN layers: fit needs the states they carry from "
                                                       "batch to batch (C++: FitOptions::states = &states"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.evaluate({x}, {y}, {}); }).find("EvaluateOptions::states"), std::string::npos);
  RnnStates states;
  o.states = &states;
  EXPECT_NE(error_of([&] { m.fit({x.slice(0, 12)}, {y.slice(0, 12)}, o); }).find("keep one state per row of its fixed "
                                                                                 "batch of 8: fit needs batch_size=8 and "
                                                                                 "whole batches of it. Received: "
                                                                                 "batch_size=8 and 12 samples"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.train_on_batch({x.slice(0, 4)}, {y.slice(0, 4)}, Tensor(), {}, &states); })
                .find("train_on_batch needs batch_size=8"),
            std::string::npos);
  EXPECT_TRUE(states.empty()) << "a refused fit leaves the states alone";
  const Logs logs = m.train_on_batch({x.slice(0, 8)}, {y.slice(0, 8)}, Tensor(), {}, &states);
  EXPECT_TRUE(std::isfinite(logs.at("loss")));
  EXPECT_FALSE(states.empty()) << "train_on_batch stores the final states";
}

}  // namespace
}  // namespace kerascpp
