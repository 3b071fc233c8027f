// A loaded model's layers keep the configs they were made from (moved into them at load: the model's
// own config keeps no second copy of them), and the model's get_config asks its layers: it is the
// file's config in the canonical dialect, without the keys the reader adds for a layer alone
// (kerascpp_*). A value of the wrong JSON type in a layer's config is an error naming the layer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../test_paths.h"
#include "io/config_dialect.h"
#include "io/zip/zip_archive.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
Json read_json(const std::string& path) { return Json::parse(read_text(path)); }

// The config a file holds: a .keras archive's config.json, else the fixture's (tf_keras's
// model.to_json(), what its .h5 keeps as model_config).
Json file_config(const std::string& dir, const std::string& file) {
  if (!file.ends_with(".keras")) return read_json(dir + "/config.json");
  const std::string bytes = read_text(dir + "/" + file);
  const io::ZipArchive zip = io::ZipArchive::from_memory(bytes.data(), bytes.size(), file);
  const io::ZipMember m = zip.member("config.json");
  return Json::parse(std::string(m.data, m.size));
}

// As the model leaves them out of a layer's config: in objects, at any depth (not inside lists).
void strip_reader_keys(Json& j) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end();) {
    if (it.key().starts_with("kerascpp_")) {
      it = j.erase(it);
    } else {
      strip_reader_keys(*it);
      ++it;
    }
  }
}

// Layers in a model's own config and in its nested models': each name with its entry's config.
void entries(const Json& model_config, std::vector<std::pair<std::string, Json>>* out) {
  for (const Json& e : model_config["layers"]) {
    const Json& c = e["config"];
    if (e["class_name"] == "Functional" || e["class_name"] == "Sequential")
      entries(c, out);
    else
      out->emplace_back(c["name"].get<std::string>(), c);
  }
}

// Each layer's config as the model gives it against the canonical form of the file's: Keras 3's and
// tf_keras's (a Keras 2 config, converted: CuDNNLSTM read as LSTM, merges flagged kerascpp_keras2 for
// the layer alone).
TEST(ModelConfig, EachLayersConfigIsTheFilesInTheCanonicalDialect) {
  for (const auto& [dir, file, major] : {std::tuple{"seed_mlp_2x10/keras3", "model.keras", 3},
                                         std::tuple{"shared_layer/keras3", "model.keras", 3},
                                         std::tuple{"nested_model/keras3", "model.keras", 3},
                                         std::tuple{"all_layers_merge/keras3", "model.keras", 3},
                                         std::tuple{"all_layers_merge/tf_keras", "model.h5", 2},
                                         std::tuple{"cudnn_rnn/tf_keras", "model.h5", 2},
                                         std::tuple{"nested_model/tf_keras", "model.h5", 2}}) {
    SCOPED_TRACE(dir);
    const Json expected = io::canonical_model_config(file_config(testing::fixture(dir), file), major);
    LoadOptions o;
    o.compile = false;
    const Model m = load_model(testing::fixture(dir) + "/" + file, o);
    const Json got = m.get_config();
    // Every layer of the file, nested models' included, against the file's.
    std::vector<std::pair<std::string, Json>> have, want;
    entries(got["config"], &have);
    entries(expected["config"], &want);
    for (auto& [name, c] : want) strip_reader_keys(c);
    ASSERT_EQ(have.size(), want.size());
    for (size_t i = 0; i < have.size(); ++i) {
      SCOPED_TRACE(have[i].first);
      EXPECT_EQ(have[i].first, want[i].first);
      EXPECT_EQ(have[i].second, want[i].second);
    }
    // Keras 3's configs hold every tensor's shape already (and no reader's keys): the whole config is
    // the file's.
    if (major == 3) EXPECT_EQ(got["config"], expected["config"]);
    // The model keeps no second copy of its layers' configs: each was moved into its layer.
    for (const Json& e : m.graph().config()["layers"]) EXPECT_TRUE(e["config"].is_null()) << e.dump();
    // A layer frozen since the load says so in the model's config.
    m.graph().sublayers().back()->set_trainable(false);
    EXPECT_EQ(m.get_config()["config"]["layers"].back()["config"]["trainable"], false);
  }
}

// A layer the caller's custom_objects made may keep a config of its own: the model's config keeps
// the file's for it, as Keras writes a custom layer's config from the file it was read from.
TEST(ModelConfig, ALayerFromCustomObjectsKeepsTheFilesConfigInTheModel) {
  const std::string dir = testing::fixture("nested_model/keras3");
  LoadOptions o;
  o.compile = false;
  o.custom_objects["Dense"] = [](const Json& c) {
    Json own = c;
    own["bias_initializer"] = "ones";  // a config of the factory's own, not the file's
    return make_layer("Dense", own);
  };
  const Model m = load_model(dir + "/model.keras", o);
  std::vector<std::pair<std::string, Json>> have, want;
  entries(m.get_config()["config"], &have);
  entries(io::canonical_model_config(file_config(dir, "model.keras"), 3)["config"], &want);
  ASSERT_EQ(have.size(), want.size());
  int dense = 0;
  for (size_t i = 0; i < have.size(); ++i) {
    EXPECT_EQ(have[i].second, want[i].second) << have[i].first;
    dense += have[i].second.contains("units");
  }
  EXPECT_EQ(dense, 6);
  int kept = 0;
  for (const Json& e : m.graph().config()["layers"])
    kept += e["class_name"] == "Dense" && !e["config"].is_null();
  EXPECT_GT(kept, 0);
}

TEST(ModelConfig, AValueOfTheWrongTypeInALayersConfigNamesTheLayer) {
  Json config = read_json(testing::fixture("seed_mlp_2x10/keras3/config.json"));
  config["config"]["layers"][2]["config"]["trainable"] = "yes";
  try {
    (void)model_from_config(config);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Invalid config of layer 'dense_1' in model 'sequential'"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace kerascpp
