// Optimizers and schedules against real Keras 3 numbers (tests/fixtures/training/optimizers.json,
// written by scripts/fixtures/optimizers_reference.py): every case's variable values after each of
// 5 steps, the final optimizer.variables (order, paths, dtypes, values) and get_config(); schedule
// values at steps 0..20; config dialects and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "core/naming.h"
#include "kerascpp/optimizers.h"
#include "kerascpp/threading.h"
#include "../../test_paths.h"

namespace kerascpp::optimizers {
namespace {

const Json& fixture() {
  static const Json doc = [] {
    std::ifstream f(testing::fixture("training/optimizers.json"));
    EXPECT_TRUE(f.good());
    return Json::parse(f);
  }();
  return doc;
}

// 1e-6 relative, with a floor for values that are zero up to float32 rounding.
void expect_close(float got, double want, const std::string& what) {
  const double tol = 1e-6 * std::max(std::fabs(want), 1e-3);
  EXPECT_NEAR(got, want, tol) << what;
}

std::vector<VariablePtr> make_vars(const Json& c) {
  std::vector<VariablePtr> vars;
  const Shape shapes[2] = {{3, 2}, {2}};
  for (int i = 0; i < 2; ++i) {
    const std::string path = c["paths"][i];
    const std::string name = path.substr(path.find('/') + 1);
    vars.push_back(std::make_shared<Variable>(name, path,
                                              Tensor::from_vector(shapes[i], c["initial"][i].get<std::vector<float>>()),
                                              true));
  }
  return vars;
}

std::vector<Tensor> grads_of(const Json& c, int step) {
  return {Tensor::from_vector({3, 2}, c["grads"][step][0].get<std::vector<float>>()),
          Tensor::from_vector({2}, c["grads"][step][1].get<std::vector<float>>())};
}

class KerasCase : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasCase, MatchesKeras) {
  const Json* found = nullptr;
  for (const Json& c : fixture()["cases"])
    if (c["name"] == GetParam()) found = &c;
  ASSERT_NE(found, nullptr);
  const Json& c = *found;
  reset_automatic_names();  // the fixture ran each case after keras.backend.clear_session()
  OptimizerPtr opt = get(Json{{"class_name", c["class_name"]}, {"config", c["config"]}});
  EXPECT_EQ(opt->class_name(), c["class_name"].get<std::string>());
  auto vars = make_vars(c);
  const uint64_t version0 = vars[0]->version();
  for (int s = 0; s < static_cast<int>(c["after_step"].size()); ++s) {
    opt->apply_gradients(grads_of(c, s), vars);
    for (int v = 0; v < 2; ++v) {
      const auto& want = c["after_step"][s][v];
      const float* got = vars[v]->value().data<float>();
      for (size_t k = 0; k < want.size(); ++k)
        expect_close(got[k], want[k].get<double>(), "step " + std::to_string(s + 1) + " var " + std::to_string(v) +
                                                        "[" + std::to_string(k) + "]");
    }
  }
  EXPECT_GT(vars[0]->version(), version0);  // mark_updated was called
  // Keras's iterations counts steps: with gradient_accumulation_steps N, the calls divided by N (the
  // saved "iteration" variable, compared below, counts the calls).
  const int64_t calls = static_cast<int64_t>(c["after_step"].size());
  const int64_t per_step = c["config"].value("gradient_accumulation_steps", Json(1)).get<int64_t>();
  EXPECT_EQ(opt->iterations(), calls / per_step);

  const auto ov = opt->variables();
  ASSERT_EQ(ov.size(), c["variables"].size());
  for (size_t i = 0; i < ov.size(); ++i) {
    const Json& w = c["variables"][i];
    EXPECT_EQ(ov[i]->path(), w["path"].get<std::string>());
    EXPECT_EQ(dtype_name(ov[i]->dtype()), w["dtype"].get<std::string>());
    EXPECT_EQ(ov[i]->shape(), w["shape"].get<Shape>()) << w["path"];
    EXPECT_FALSE(ov[i]->trainable());
    for (size_t k = 0; k < w["values"].size(); ++k) {
      if (ov[i]->dtype() == DType::int64)
        EXPECT_EQ(ov[i]->value().data<int64_t>()[k], w["values"][k].get<int64_t>());
      else
        expect_close(ov[i]->value().data<float>()[k], w["values"][k].get<double>(), w["path"].get<std::string>());
    }
  }
  EXPECT_EQ(opt->get_config(), c["get_config"]) << opt->get_config().dump() << "\n" << c["get_config"].dump();
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const Json& c : fixture()["cases"]) names.push_back(c["name"]);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Keras, KerasCase, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(Schedules, MatchKeras) {
  for (const auto& [key, s] : fixture()["schedules"].items()) {
    SchedulePtr sched = schedule_from_config(s["spec"]);
    for (size_t i = 0; i < s["values"].size(); ++i)
      expect_close(static_cast<float>((*sched)(static_cast<int64_t>(i))), s["values"][i].get<double>(),
                   key + " step " + std::to_string(i));
    const Json& ser = s["serialized"];
    EXPECT_EQ(sched->class_name(), ser["class_name"].get<std::string>());
    EXPECT_EQ(sched->get_config(), ser["config"]) << key;
    // The serialized (Keras 3 module) form loads too.
    EXPECT_EQ(schedule_from_config(ser)->get_config(), ser["config"]);
  }
}

TEST(Get, DefaultsByNameMatchKeras) {
  for (const auto& [name, cfg] : fixture()["defaults"].items()) {
    reset_automatic_names();
    OptimizerPtr opt = get(name);
    EXPECT_EQ(opt->get_config(), cfg) << name;
    std::string upper = name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
    EXPECT_EQ(get(upper)->get_config()["learning_rate"], cfg["learning_rate"]);  // any case
  }
  std::vector<std::string> fixture_names;
  for (const auto& [name, cfg] : fixture()["defaults"].items()) fixture_names.push_back(name);
  std::vector<std::string> known = known_optimizers();
  // Keras's get() does not know "lamb" (keras.optimizers.Lamb is not in its ALL_OBJECTS_DICT); kerascpp's does.
  known.erase(std::remove(known.begin(), known.end(), "lamb"), known.end());
  std::sort(known.begin(), known.end());
  std::sort(fixture_names.begin(), fixture_names.end());
  EXPECT_EQ(known, fixture_names);  // every optimizer of the list has Keras's defaults checked above
}

TEST(Get, AutomaticNamesCountLikeKeras) {
  reset_automatic_names();
  EXPECT_EQ(get("adam")->name(), "adam");
  EXPECT_EQ(get("adam")->name(), "adam_1");
  EXPECT_EQ(get("rmsprop")->name(), "rm_sprop");
  EXPECT_EQ(get("adamw")->name(), "adam_w");
}

TEST(Get, KerasThreeSerializedForm) {
  reset_automatic_names();
  OptimizerPtr a = get("adam");
  Json ser = {{"module", "keras.optimizers"}, {"class_name", "Adam"}, {"config", a->get_config()},
              {"registered_name", nullptr}};
  EXPECT_EQ(get(ser)->get_config(), a->get_config());
}

TEST(Get, TfKerasConfigs) {
  const Json& t = fixture()["tf_keras"];
  for (const char* key : {"adam", "h5_adam"}) {
    OptimizerPtr a = get(t[key]);
    EXPECT_EQ(a->class_name(), "Adam");
    EXPECT_EQ(a->name(), "Adam");
    EXPECT_EQ(a->get_config()["learning_rate"], t[key]["config"]["learning_rate"]);
    EXPECT_EQ(a->get_config()["beta_1"], 0.85);
    EXPECT_FALSE(a->get_config().contains("jit_compile"));
  }
  OptimizerPtr la = get(t["legacy_adam"]);  // decay 0.0 accepted, amsgrad honoured
  EXPECT_EQ(la->get_config()["amsgrad"], true);
  EXPECT_FLOAT_EQ(static_cast<float>(la->learning_rate()), 0.02f);
  EXPECT_EQ(get(t["legacy_sgd"])->get_config()["momentum"], 0.9);
  EXPECT_EQ(get(t["legacy_rmsprop"])->get_config()["centered"], true);
  OptimizerPtr sch = get(t["adam_schedule"]);
  EXPECT_TRUE(sch->has_schedule());
  EXPECT_FLOAT_EQ(static_cast<float>(sch->learning_rate()), 0.1f);
  // Keras 2 `lr` alias.
  EXPECT_FLOAT_EQ(static_cast<float>(get(Json{{"class_name", "SGD"}, {"config", {{"lr", 0.5}}}})->learning_rate()), 0.5f);
}

template <typename E>
void expect_throw_with(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Errors, UnknownAndUnsupported) {
  expect_throw_with<ValueError>([] { get("adamm"); }, "adamm");
  expect_throw_with<ValueError>([] { get("adamm"); }, "rmsprop");  // lists the known ones
  expect_throw_with<NotImplementedError>([] { get("muon"); }, "muon");
  // The new optimizers' bad options, with Keras's messages.
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "Ftrl"}, {"config", {{"learning_rate_power", 0.5}}}}); },
                                "`learning_rate_power` needs to be negative or zero. Received: learning_rate_power=0.5");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "Ftrl"}, {"config", {{"initial_accumulator_value", -1}}}}); },
                                "`initial_accumulator_value` needs to be positive or zero");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "Adafactor"}, {"config", {{"relative_step", 1}}}}); },
                                "`relative_step` must be a bool");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "Lamb"}, {"config", {{"beta_3", 0.5}}}}); }, "beta_3");
  expect_throw_with<ValueError>(
      [] { get(Json{{"class_name", "Adam"}, {"config", {{"use_ema", true}, {"ema_momentum", 1.5}}}}); },
      "`ema_momentum` must be in the range [0, 1]. Received: ema_momentum=1.5");
  expect_throw_with<ValueError>(
      [] { get(Json{{"class_name", "Adam"}, {"config", {{"use_ema", true}, {"ema_overwrite_frequency", -2}}}}); },
      "`ema_overwrite_frequency` must be an integer >= 1 or None. Received: ema_overwrite_frequency=-2");
  expect_throw_with<NotImplementedError>(
      [] { get(Json{{"class_name", "SGD"}, {"config", {{"decay", 1e-4}}}}); }, "decay");
  expect_throw_with<ValueError>(
      [] { get(Json{{"class_name", "SGD"}, {"config", {{"gradient_accumulation_steps", 1}}}}); },
      "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=1");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "Adam"}, {"config", {{"betta_1", 0.9}}}}); },
                                "betta_1");
  expect_throw_with<ValueError>(
      [] { get(Json{{"class_name", "SGD"}, {"config", {{"clipnorm", 1.0}, {"clipvalue", 1.0}}}}); }, "clipnorm");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "SGD"}, {"config", {{"momentum", 1.5}}}}); },
                                "momentum");
  expect_throw_with<ValueError>([] { get(Json{{"class_name", "AdamW"}, {"config", {{"weight_decay", nullptr}}}}); },
                                "weight_decay");
  expect_throw_with<ValueError>(
      [] { schedule_from_config(Json{{"class_name", "Nope"}, {"config", Json::object()}}); }, "Nope");
}

TEST(Errors, SetLearningRate) {
  OptimizerPtr a = get("adam");
  a->set_learning_rate(0.25);
  EXPECT_FLOAT_EQ(static_cast<float>(a->learning_rate()), 0.25f);
  EXPECT_FLOAT_EQ(static_cast<float>(a->get_config()["learning_rate"].get<double>()), 0.25f);
  OptimizerPtr s = get(fixture()["tf_keras"]["adam_schedule"]);
  expect_throw_with<TypeError>([&] { s->set_learning_rate(0.1); }, "not settable");
  EXPECT_EQ(s->variables().size(), 1u);  // iteration only: no learning_rate variable with a schedule
}

TEST(Errors, BadGradientsLeaveEverythingUntouched) {
  auto v0 = std::make_shared<Variable>("kernel", "dense/kernel", Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6}), true);
  auto v1 = std::make_shared<Variable>("bias", "dense/bias", Tensor::from_vector({2}, {1, 2}), true);
  OptimizerPtr opt = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.1}}}});
  const std::vector<VariablePtr> vars{v0, v1};
  const Tensor g0 = Tensor::from_vector({3, 2}, {1, 1, 1, 1, 1, 1}), g1 = Tensor::from_vector({2}, {1, 1});
  opt->apply_gradients({g0, g1}, vars);
  auto snapshot = [&] {
    std::vector<float> s;
    for (const auto& v : opt->variables())
      if (v->dtype() == DType::float32) s.insert(s.end(), v->value().data<float>(), v->value().data<float>() + v->value().size());
    for (const auto& v : vars) s.insert(s.end(), v->value().data<float>(), v->value().data<float>() + v->value().size());
    return s;
  };
  const auto before = snapshot();
  const uint64_t ver = v0->version();
  // Second variable has the wrong shape: the first must not have been updated either.
  expect_throw_with<ValueError>([&] { opt->apply_gradients({g0, Tensor::from_vector({3}, {1, 1, 1})}, vars); },
                                "dense/bias");
  expect_throw_with<ValueError>([&] { opt->apply_gradients({g0}, vars); }, "1 gradients for 2 variables");
  auto other = std::make_shared<Variable>("kernel", "other/kernel", Tensor::zeros({3, 2}), true);
  expect_throw_with<ValueError>([&] { opt->apply_gradients({g0}, {other}); }, "other/kernel");
  expect_throw_with<ValueError>([&] { opt->apply_gradients({Tensor(), Tensor()}, vars); }, "No gradients");
  expect_throw_with<ValueError>([&] { opt->build({other}); }, "already built");
  opt->build({vars[0]});  // a subset of its variables (a layer frozen since): fine, as Keras builds once
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(v0->version(), ver);
  EXPECT_EQ(opt->iterations(), 1);
}

TEST(ApplyGradients, UndefinedGradientSkipsItsVariable) {
  auto v0 = std::make_shared<Variable>("kernel", "dense/kernel", Tensor::from_vector({2}, {1, 2}), true);
  auto v1 = std::make_shared<Variable>("bias", "dense/bias", Tensor::from_vector({1}, {3}), true);
  OptimizerPtr opt = get(Json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.5}}}});
  opt->apply_gradients({Tensor(), Tensor::from_vector({1}, {2})}, {v0, v1});
  EXPECT_EQ(v0->value().data<float>()[0], 1.f);
  EXPECT_EQ(v1->value().data<float>()[0], 2.f);
  EXPECT_EQ(opt->iterations(), 1);
  // A subset of the built variables, in another order, is fine (Keras looks them up by identity).
  opt->apply_gradients({Tensor::from_vector({1}, {2})}, {v1});
  EXPECT_EQ(v1->value().data<float>()[0], 1.f);
}

// Keras's Adam on one element, op by op in float32 (volatile: no fused multiply-adds whatever the
// build's flags), for the fused pass below.
float adam_reference(float x, float& m, float& v, float g, float one_minus_b1, float one_minus_b2, float alpha,
                     float eps) {
  volatile float t = g - m;
  t = t * one_minus_b1;
  m = m + t;
  volatile float u = g * g;
  u = u - v;
  u = u * one_minus_b2;
  v = v + u;
  volatile float num = m * alpha, den = std::sqrt(v);
  den = den + eps;
  num = num / den;
  return x - num;
}

// Adam and SGD update every variable in one pass split between the threads by elements
// (Optimizer::update_ranges): variables of uneven sizes (one empty) whose elements, 90,008 in all,
// take two threads where the machine has them, with chunk bounds inside variables. Each element must
// be Keras's scalar arithmetic, bit for bit.
TEST(ApplyGradients, OnePassOverEveryVariableGivesEachElementsScalarBits) {
  const std::vector<int64_t> sizes = {50001, 7, 0, 40000};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<VariablePtr> vars;
  std::vector<Tensor> grads;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> x(sizes[i]), g(sizes[i]);
    for (auto& e : x) e = dist(rng);
    for (auto& e : g) e = dist(rng);
    vars.push_back(std::make_shared<Variable>("v", "d" + std::to_string(i) + "/v", Tensor::from_vector({sizes[i]}, x), true));
    grads.push_back(Tensor::from_vector({sizes[i]}, g));
  }
  auto values = [](const VariablePtr& v) { return std::vector<float>(v->data<float>(), v->data<float>() + v->value().size()); };
  std::vector<std::vector<float>> x0;
  for (const auto& v : vars) x0.push_back(values(v));

  set_num_threads(2);  // the engine's threads share the pass where OpenMP and the BLAS allow it
  OptimizerPtr adam = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.01}}}});
  std::vector<std::vector<float>> m(sizes.size()), vel(sizes.size()), want = x0;
  for (size_t i = 0; i < sizes.size(); ++i) m[i] = vel[i] = std::vector<float>(sizes[i], 0.f);
  for (int step = 1; step <= 2; ++step) {
    adam->apply_gradients(grads, vars);
    const float b1p = std::pow(0.9f, float(step)), b2p = std::pow(0.999f, float(step));
    const float alpha = 0.01f * std::sqrt(1.f - b2p) / (1.f - b1p);
    for (size_t i = 0; i < sizes.size(); ++i)
      for (int64_t k = 0; k < sizes[i]; ++k)
        want[i][k] = adam_reference(want[i][k], m[i][k], vel[i][k], grads[i].data<float>()[k], float(1.0 - 0.9),
                                    float(1.0 - 0.999), alpha, 1e-7f);
    for (size_t i = 0; i < sizes.size(); ++i) ASSERT_EQ(values(vars[i]), want[i]) << "Adam step " << step << " var " << i;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    vars[i]->value().copy_from(Tensor::from_vector({sizes[i]}, x0[i]));
    want[i] = x0[i];
    m[i] = std::vector<float>(sizes[i], 0.f);
  }
  OptimizerPtr sgd = get(Json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.1}, {"momentum", 0.9}, {"nesterov", true}}}});
  for (int step = 1; step <= 2; ++step) {
    sgd->apply_gradients(grads, vars);
    for (size_t i = 0; i < sizes.size(); ++i)
      for (int64_t k = 0; k < sizes[i]; ++k) {
        const float g = grads[i].data<float>()[k];
        volatile float a = m[i][k] * 0.9f, b = g * 0.1f;
        m[i][k] = a - b;
        volatile float c = m[i][k] * 0.9f;
        c = c - b;
        want[i][k] = want[i][k] + c;
      }
    for (size_t i = 0; i < sizes.size(); ++i) ASSERT_EQ(values(vars[i]), want[i]) << "SGD step " << step << " var " << i;
  }
  // Plain SGD, and Adam with amsgrad (velocity_hat = max(velocity_hat, velocity), read in v's place).
  for (size_t i = 0; i < sizes.size(); ++i) {
    vars[i]->value().copy_from(Tensor::from_vector({sizes[i]}, x0[i]));
    want[i] = x0[i];
  }
  get(Json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.1}}}})->apply_gradients(grads, vars);
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (int64_t k = 0; k < sizes[i]; ++k) {
      volatile float d = grads[i].data<float>()[k] * 0.1f;
      want[i][k] = want[i][k] - d;
    }
    ASSERT_EQ(values(vars[i]), want[i]) << "plain SGD var " << i;
  }
  OptimizerPtr ams = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.01}, {"amsgrad", true}}}});
  for (size_t i = 0; i < sizes.size(); ++i) m[i] = vel[i] = std::vector<float>(sizes[i], 0.f);
  std::vector<std::vector<float>> vhat = m;
  for (int step = 1; step <= 2; ++step) {
    // The second step's gradients are smaller, so that velocity_hat keeps the first step's.
    std::vector<Tensor> gs;
    for (const Tensor& t : grads) {
      Tensor c = t.copy();
      for (int64_t k = 0; k < c.size(); ++k) c.data<float>()[k] *= step == 1 ? 1.f : 0.25f;
      gs.push_back(c);
    }
    ams->apply_gradients(gs, vars);
    const float b1p = std::pow(0.9f, float(step)), b2p = std::pow(0.999f, float(step));
    const float alpha = 0.01f * std::sqrt(1.f - b2p) / (1.f - b1p);
    for (size_t i = 0; i < sizes.size(); ++i)
      for (int64_t k = 0; k < sizes[i]; ++k) {
        float v_after = vel[i][k];
        float x_unused = 0.f;
        (void)adam_reference(x_unused, m[i][k], v_after, gs[i].data<float>()[k], float(1.0 - 0.9), float(1.0 - 0.999),
                             alpha, 1e-7f);  // moves m and v as Adam does
        m[i][k] = m[i][k];
        vel[i][k] = v_after;
        vhat[i][k] = std::max(vhat[i][k], vel[i][k]);
        volatile float num = m[i][k] * alpha, den = std::sqrt(vhat[i][k]);
        den = den + 1e-7f;
        num = num / den;
        want[i][k] = want[i][k] - num;
      }
    for (size_t i = 0; i < sizes.size(); ++i) ASSERT_EQ(values(vars[i]), want[i]) << "amsgrad step " << step << " var " << i;
  }
  set_num_threads(0);
}

// A gradient is read, never written: clipping works on a copy, and a gradient that is the storage of
// a variable the step writes (apply_gradients([(v.value, v)]), weight decay by hand) is read as it
// was before the step, as Keras's tensors are.
TEST(ApplyGradients, GradientsAreNeverChangedAndMayBeAVariablesOwnValue) {
  auto v = std::make_shared<Variable>("kernel", "dense/kernel", Tensor::from_vector({3}, {1, -2, 4}), true);
  const Tensor g = Tensor::from_vector({3}, {3, 4, 12});
  get(Json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.5}, {"clipnorm", 1.0}}}})->apply_gradients({g}, {v});
  EXPECT_EQ(std::vector<float>(g.data<float>(), g.data<float>() + 3), (std::vector<float>{3, 4, 12}));
  EXPECT_FLOAT_EQ(v->data<float>()[2], 4.f - 0.5f * 12.f / 13.f);

  // Each variable's gradient is the other one's storage: the second update must read the first
  // variable as it was before the step, not as the first update left it.
  auto vars_of = [] {
    return std::vector<VariablePtr>{
        std::make_shared<Variable>("kernel", "a/kernel", Tensor::from_vector({4}, {1, -2, 3, -4}), true),
        std::make_shared<Variable>("kernel", "b/kernel", Tensor::from_vector({4}, {0.5f, 2, -1, 8}), true)};
  };
  const std::vector<VariablePtr> crossed = vars_of(), copied = vars_of();
  OptimizerPtr o1 = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.1}}}});
  OptimizerPtr o2 = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.1}}}});
  for (int step = 0; step < 3; ++step) {
    o1->apply_gradients({crossed[1]->value(), crossed[0]->value()}, crossed);
    o2->apply_gradients({copied[1]->value().copy(), copied[0]->value().copy()}, copied);
    for (int v = 0; v < 2; ++v)
      for (int k = 0; k < 4; ++k)
        ASSERT_EQ(crossed[v]->data<float>()[k], copied[v]->data<float>()[k]) << "step " << step << " var " << v << " [" << k << "]";
  }
  // The gradient is an optimizer slot (its momentum): read as before the step too.
  const std::vector<VariablePtr> s1 = vars_of(), s2 = vars_of();
  OptimizerPtr p1 = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.1}}}});
  OptimizerPtr p2 = get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 0.1}}}});
  p1->apply_gradients({s1[0]->value(), s1[1]->value().copy()}, s1);
  p2->apply_gradients({s2[0]->value().copy(), s2[1]->value().copy()}, s2);
  for (int step = 0; step < 2; ++step) {
    p1->apply_gradients({p1->slot(*s1[0], "momentum")->value(), Tensor()}, s1);
    p2->apply_gradients({p2->slot(*s2[0], "momentum")->value().copy(), Tensor()}, s2);
    for (int k = 0; k < 4; ++k) ASSERT_EQ(s1[0]->data<float>()[k], s2[0]->data<float>()[k]) << "step " << step << " [" << k << "]";
  }
}

// A variable listed twice is updated twice, one after the other in the given order, never by two
// threads at once (40,000 elements each: a pass the threads would split). Each entry has the slot the
// optimizer built for it (Keras would look both up by the variable and share one: a corner where
// kerascpp keeps its behaviour from before the one-pass update).
TEST(ApplyGradients, AVariableListedTwiceIsUpdatedTwiceInOrder) {
  std::vector<float> x(40000), g1(40000), g2(40000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * float(i % 997), g1[i] = 1.f, g2[i] = -0.5f;
  auto twice = std::make_shared<Variable>("kernel", "t/kernel", Tensor::from_vector({40000}, x), true);
  set_num_threads(2);
  get(Json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.1}, {"momentum", 0.9}}}})
      ->apply_gradients({Tensor::from_vector({40000}, g1), Tensor::from_vector({40000}, g2)}, {twice, twice});
  set_num_threads(0);
  // By hand, each entry with its own momentum starting at 0: x += -0.1 g1, then x += -0.1 g2.
  for (size_t i = 0; i < x.size(); ++i) {
    volatile float m1 = 0.f * 0.9f, m2 = 0.f * 0.9f, d1 = g1[i] * 0.1f, d2 = g2[i] * 0.1f;
    m1 = m1 - d1;
    m2 = m2 - d2;
    volatile float want = x[i] + m1;
    want = want + m2;
    ASSERT_EQ(twice->data<float>()[i], want) << i;
  }
}

}  // namespace
}  // namespace kerascpp::optimizers
