// Every fixture, in every form it was loaded from, saved in every form (to memory and to files) and
// loaded again: identical weights bit for bit and identical predictions. Real Keras loading these
// files is checked by tests/python (saved_files_load_in_keras).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "../test_paths.h"
#include "support/fixture_check.h"
#include "io/npy/npy.h"
#include "kerascpp/warnings.h"

namespace kerascpp {
namespace {

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// outputs: false where the writer warned that the other Keras computes otherwise (io/config_writer.cpp:
// masked steps, RandomCrop at inference), which the fixtures of both writers check (seq_transformer,
// image_augmentation: each Keras's own numbers).
void expect_same_model(const Model& a, const Model& b, const std::vector<Tensor>& in, const std::string& what,
                       bool outputs = true) {
  auto wa = a.get_weights(), wb = b.get_weights();
  ASSERT_EQ(wa.size(), wb.size()) << what;
  for (size_t i = 0; i < wa.size(); ++i) EXPECT_TRUE(same(wa[i], wb[i])) << what << " weight " << i;
  if (!outputs) return;
  auto ya = a.predict(in), yb = b.predict(in);
  ASSERT_EQ(ya.size(), yb.size()) << what;
  for (size_t i = 0; i < ya.size(); ++i) EXPECT_TRUE(same(ya[i], yb[i])) << what << " output " << i;
  EXPECT_EQ(a.input_names(), b.input_names()) << what;
  EXPECT_EQ(a.output_names(), b.output_names()) << what;
}

// The Keras 2 dialect cannot hold Keras 3's hard_sigmoid, nor Keras 3 Keras 2's.
bool expressible(const Model& m, KerasDialect d) {
  try {
    (void)m.to_json(d);
    return true;
  } catch (const NotImplementedError&) {
    return false;
  }
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, EveryFormSavesAndLoadsBack) {
  std::vector<support::FormResult> failures;
  auto forms = support::load_fixture_forms(GetParam(), &failures);
  ASSERT_TRUE(failures.empty()) << failures[0].error;
  ASSERT_FALSE(forms.empty()) << "no model file in " << GetParam();
  int round_trips = 0;
  std::vector<Tensor> in;
  for (int i = 0; std::filesystem::exists(GetParam() + "/input_" + std::to_string(i) + ".npy"); ++i)
    in.push_back(io::read_npy(GetParam() + "/input_" + std::to_string(i) + ".npy"));
  for (const auto& [form, model] : forms) {
    for (KerasDialect d : {KerasDialect::keras3, KerasDialect::keras2}) {
      if (!expressible(model, d)) continue;
      const std::string dn = d == KerasDialect::keras3 ? " (Keras 3)" : " (Keras 2)";
      SaveOptions o{d};
      std::vector<std::string> warnings;
      WarningSink previous = set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
      (void)model.to_json(d);
      set_warning_sink(previous);
      bool computes_otherwise = false;
      for (const std::string& w : warnings) computes_otherwise = computes_otherwise || w.find("otherwise than the Keras it was read from") != std::string::npos;
      std::vector<FileForm> model_forms = {FileForm::h5};
      if (d == KerasDialect::keras3) model_forms.push_back(FileForm::keras);
      for (FileForm f : model_forms) {
        auto bytes = model.save_to_memory(f, o);
        expect_same_model(model, load_model_from_memory(bytes.data(), bytes.size()), in,
                          form + " -> " + file_form_name(f) + dn, !computes_otherwise);
        ++round_trips;
      }
      std::vector<FileForm> weight_forms = {FileForm::weights_only_h5};
      if (d == KerasDialect::keras3) weight_forms.push_back(FileForm::weights_h5);
      for (FileForm f : weight_forms) {
        Model fresh = model_from_json(model.to_json(d));
        auto bytes = model.save_to_memory(f, o);
        fresh.load_weights_from_memory(bytes.data(), bytes.size());
        expect_same_model(model, fresh, in, form + " -> json + " + file_form_name(f) + dn, !computes_otherwise);
        ++round_trips;
      }
    }
  }
  // Every form of every fixture is expressible in at least one dialect: 2 round trips (Keras 2: .h5 and
  // JSON + weights-only .h5) or 4 (Keras 3: also .keras and .weights.h5).
  EXPECT_GE(round_trips, 2 * static_cast<int>(forms.size()));
}

INSTANTIATE_TEST_SUITE_P(All, RoundTrip, ::testing::ValuesIn(support::find_fixture_dirs(testing::fixture(""))),
                         [](const auto& info) {
                           std::string n = info.param.substr(info.param.find("fixtures/") + 9);
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(RoundTripFiles, SaveAndSaveWeightsByExtension) {
  Model m = load_model(testing::fixture("nested_model/keras3/model.keras"));
  for (const char* name : {"rt.keras", "rt.h5", "rt.hdf5"}) {
    std::string p = testing::temp_path(name);
    m.save(p);
    Model back = load_model(p);
    EXPECT_EQ(back.count_params(), m.count_params()) << name;
  }
  for (const char* name : {"rt.weights.h5", "rt_weights.h5"}) {
    std::string p = testing::temp_path(name);
    m.save_weights(p);
    Model fresh = model_from_json(m.to_json());
    fresh.load_weights(p);
    for (size_t i = 0; i < m.weights().size(); ++i) EXPECT_TRUE(same(m.get_weights()[i], fresh.get_weights()[i])) << name;
  }
  EXPECT_EQ(load_model(testing::temp_path("rt.h5")).training_config(), m.training_config());
}

TEST(RoundTripFiles, FileFormsFromExtensionsAsKeras) {
  EXPECT_EQ(file_form_for("m.keras", false), FileForm::keras);
  EXPECT_EQ(file_form_for("m.h5", false), FileForm::h5);
  EXPECT_EQ(file_form_for("m.hdf5", false), FileForm::h5);
  EXPECT_EQ(file_form_for("m.weights.h5", true), FileForm::weights_h5);
  EXPECT_EQ(file_form_for("m.h5", true), FileForm::weights_only_h5);
  EXPECT_THROW(file_form_for("m.keras", true), ValueError);  // Keras: weights files end in .weights.h5
  try {
    file_form_for("model.pb", false);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Received: filepath=model.pb"), std::string::npos) << e.what();
  }
  EXPECT_STREQ(file_form_name(FileForm::weights_only_h5), "weights-only.h5");
}

TEST(RoundTripFiles, TrainingConfigIsWrittenBack) {
  LoadOptions raw;
  raw.compile = false;  // the file's own training_config, uncompiled
  Model m = load_model(testing::fixture("seed_mlp_2x10/tf_keras/model.h5"), raw);
  ASSERT_FALSE(m.compiled());
  ASSERT_TRUE(m.training_config().contains("optimizer_config"));
  auto h5 = m.save_to_memory(FileForm::h5);
  EXPECT_EQ(load_model_from_memory(h5.data(), h5.size(), "<h5>", raw).training_config(), m.training_config());
  // Compiled on load (the default), the config becomes Keras 3's compile_config.
  Model compiled = load_model(testing::fixture("seed_mlp_2x10/tf_keras/model.h5"));
  ASSERT_TRUE(compiled.compiled());
  EXPECT_EQ(compiled.optimizer()->class_name(), "Adam");
  EXPECT_EQ(compiled.training_config()["loss"], m.training_config()["loss"]);
  auto keras = m.save_to_memory(FileForm::keras);
  Json c = load_model_from_memory(keras.data(), keras.size(), "<keras>", raw).training_config();
  // tf-keras's "Custom>Adam" becomes the Keras 3 optimizer it is, with its arguments.
  const Json& before = m.training_config()["optimizer_config"];
  EXPECT_EQ(c["optimizer"]["class_name"], "Adam");
  EXPECT_EQ(c["optimizer"]["module"], "keras.optimizers");
  EXPECT_EQ(c["optimizer"]["config"]["learning_rate"], before["config"]["learning_rate"]);
  EXPECT_EQ(c["loss"], m.training_config()["loss"]);
}

}  // namespace
}  // namespace kerascpp

namespace kerascpp {
namespace {
TEST(RoundTripFiles, WritingForTheOtherKerasWarnsWhereMaskedValuesDiffer) {
  // seq_transformer: padded tokens reach MultiHeadAttention and Add layers, which tf_keras and Keras 3
  // compute otherwise over masked steps.
  for (const char* writer : {"keras3", "tf_keras"}) {
    Model m = load_model(testing::fixture(std::string("seq_transformer/") + writer + "/model.keras"));
    std::vector<std::string> warnings;
    WarningSink previous = set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    (void)m.to_json(KerasDialect::keras2);
    (void)m.to_json(KerasDialect::keras3);
    set_warning_sink(previous);
    ASSERT_EQ(warnings.size(), 1u) << writer;
    EXPECT_NE(warnings[0].find("'self_attention' (MultiHeadAttention)"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(std::string(writer) == "keras3" ? "written for tf_keras" : "written for Keras 3"),
              std::string::npos)
        << warnings[0];
  }
}
}  // namespace
}  // namespace kerascpp
