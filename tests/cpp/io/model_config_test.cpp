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

void strip_reader_keys(Json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it.key().starts_with("kerascpp_")) {
        it = j.erase(it);
      } else {
        strip_reader_keys(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (Json& e : j) strip_reader_keys(e);
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
    Json expected = io::canonical_model_config(file_config(testing::fixture(dir), file), major);
    strip_reader_keys(expected);
    LoadOptions o;
    o.compile = false;
    const Model m = load_model(testing::fixture(dir) + "/" + file, o);
    const Json got = m.get_config();
    const Json& layers = got["config"]["layers"];
    ASSERT_EQ(layers.size(), expected["config"]["layers"].size());
    for (size_t i = 0; i < layers.size(); ++i) {
      SCOPED_TRACE(layers[i]["config"].value("name", std::string("?")));
      EXPECT_EQ(layers[i]["class_name"], expected["config"]["layers"][i]["class_name"]);
      if (layers[i]["class_name"] == "Functional" || layers[i]["class_name"] == "Sequential") continue;
      EXPECT_FALSE(layers[i]["config"].is_null());
      EXPECT_EQ(layers[i]["config"], expected["config"]["layers"][i]["config"]);
    }
    // Keras 3's configs hold every tensor's shape already: the whole config is the file's.
    if (major == 3) EXPECT_EQ(got["config"], expected["config"]);
    // A layer set to frozen says so in the model's config (Layer::set_trainable).
    m.graph().sublayers().back()->set_trainable(false);
    EXPECT_EQ(m.get_config()["config"]["layers"].back()["config"]["trainable"], false);
  }
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
