// LoadLimits: a file that asks for more than its bytes can hold, or more than the limits allow, is
// refused before the memory is taken, naming the member or the layer, the value and the limit.
// Each case is a real Keras file with one value changed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "../test_errors.h"
#include "../test_paths.h"
#include "io/zip/zip_archive.h"
#include "io/zip/zip_writer.h"
#include "kerascpp/model.h"
#include "kerascpp/warnings.h"

namespace kerascpp {
namespace {

using testing::error_of;

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The .keras fixture with its config.json replaced by edit(config) (or by `raw` text when given).
std::vector<char> edited_archive(const std::string& rel, const std::function<void(Json&)>& edit,
                                 const std::string& raw = "") {
  std::vector<char> bytes = read_bytes(testing::fixture(rel));
  io::ZipArchive zip = io::ZipArchive::from_memory(bytes.data(), bytes.size(), rel);
  io::ZipWriter out;
  for (const std::string& name : zip.names()) {
    io::ZipMember m = zip.member(name);
    if (name != "config.json") {
      out.add(name, m.data, m.size);
      continue;
    }
    Json config = Json::parse(std::string(m.data, m.size));
    edit(config);
    out.add(name, raw.empty() ? config.dump() : raw);
  }
  return out.finish();
}

std::string load_error(const std::vector<char>& bytes, const LoadLimits& limits = {}) {
  LoadOptions options;
  options.limits = limits;
  return error_of([&] { load_model_from_memory(bytes.data(), bytes.size(), "edited.keras", options); });
}

void expect_parts(const std::string& message, std::initializer_list<const char*> parts) {
  EXPECT_FALSE(message.empty()) << "loaded without an error";
  if (std::getenv("KCPP_SHOW_ERRORS")) std::printf("%s\n", message.c_str());
  for (const char* p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

const char* kMlp = "seed_mlp_2x10/keras3/model.keras";

// The Dense layer named `name` in a Keras 3 Sequential config.
Json& layer_config(Json& config, const std::string& name) {
  for (Json& l : config["config"]["layers"])
    if (l["config"].value("name", "") == name) return l["config"];
  ADD_FAILURE() << "no layer " << name;
  return config;
}

std::string first_dense(const std::vector<char>& bytes) {
  io::ZipArchive zip = io::ZipArchive::from_memory(bytes.data(), bytes.size(), "x");
  io::ZipMember m = zip.member("config.json");
  const Json config = Json::parse(std::string(m.data, m.size));
  for (const Json& l : config["config"]["layers"])
    if (l["class_name"] == "Dense") return l["config"]["name"];
  return "";
}

TEST(LoadLimits, UnitsOfTwoToTheFortyAreRefusedByName) {
  const std::string dense = first_dense(read_bytes(testing::fixture(kMlp)));
  auto bytes = edited_archive(kMlp, [&](Json& c) { layer_config(c, dense)["units"] = int64_t{1} << 40; });
  std::string msg = load_error(bytes);
  expect_parts(msg, {"edited.keras", ("Layer '" + dense + "' (Dense)").c_str(), "kernel", "1099511627776",
                     "LoadLimits::max_weight_bytes", "model.weights.h5"});
}

// A million units is 40 MB of kernel: a real size, but more than a file of a few KB can hold.
TEST(LoadLimits, WeightsBeyondWhatTheFileHoldsAreRefused) {
  const std::string dense = first_dense(read_bytes(testing::fixture(kMlp)));
  auto bytes = edited_archive(kMlp, [&](Json& c) { layer_config(c, dense)["units"] = 1'000'000; });
  expect_parts(load_error(bytes), {dense.c_str(), "kernel", "four times the"});
  // With the limit raised the same file builds, then fails on the weights it lacks.
  LoadLimits raised;
  raised.max_weight_bytes = uint64_t{1} << 30;
  std::string msg = load_error(bytes, raised);
  EXPECT_EQ(msg.find("LoadLimits"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dense), std::string::npos) << msg;
}

// Every variable is drawn from the budget: the exact sum of the weights' bytes loads, one byte less
// does not (nested models, wrappers, recurrent cells and attention's inner projections included).
TEST(LoadLimits, EveryVariableIsCounted) {
  for (const char* rel : {"seed_mlp_2x10/keras3/model.keras", "nested_model/keras3/model.keras",
                          "seq_bidirectional/keras3/model.keras", "seq_transformer/keras3/model.keras",
                          "seq_stacked_cells/keras3/model.keras", "seq_time_distributed/keras3/model.keras"}) {
    SCOPED_TRACE(rel);
    Model m = load_model(testing::fixture(rel));
    uint64_t total = 0;
    for (const VariablePtr& v : m.weights()) total += v->value().nbytes();
    LoadOptions options;
    options.limits.max_weight_bytes = total;
    EXPECT_NO_THROW(load_model(testing::fixture(rel), options));
    options.limits.max_weight_bytes = total - 1;
    expect_parts(error_of([&] { load_model(testing::fixture(rel), options); }),
                 {"over the limit of", "LoadLimits::max_weight_bytes"});
  }
}

TEST(LoadLimits, LayersAndNodes) {
  LoadLimits limits;
  limits.max_layers = 2;
  expect_parts(load_error(read_bytes(testing::fixture(kMlp)), limits), {"Model '", "layers to", "LoadLimits::max_layers"});
  limits = {};
  limits.max_nodes = 2;
  expect_parts(error_of([&] {
                 LoadOptions o;
                 o.limits = limits;
                 load_model(testing::fixture("nested_model/keras3/model.keras"), o);
               }),
               {"layer calls to", "LoadLimits::max_nodes"});
}

TEST(LoadLimits, ConfigBytesAndDepth) {
  LoadLimits small;
  small.max_config_bytes = 100;
  expect_parts(load_error(read_bytes(testing::fixture(kMlp)), small),
               {"config.json of edited.keras", "declares", "LoadLimits::max_config_bytes"});
  // 100,000 nested lists: refused before parsing, which would recurse once per level.
  std::string deep = R"({"class_name": "Sequential", "config": {"x": )" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}";
  expect_parts(load_error(edited_archive(kMlp, [](Json&) {}, deep)),
               {"config.json of edited.keras", "deeper than the limit of 256", "LoadLimits::max_json_depth"});
  // Brackets inside strings are text, not nesting.
  std::string quoted = R"({"class_name": "Nothing", "config": {"x": ")" + std::string(1000, '[') + R"("}})";
  EXPECT_EQ(load_error(edited_archive(kMlp, [](Json&) {}, quoted)).find("max_json_depth"), std::string::npos);
}

TEST(LoadLimits, RanksAndElements) {
  auto input = [](Json& c) -> Json& { return c["config"]["layers"][0]["config"]; };
  auto deep = edited_archive(kMlp, [&](Json& c) {
    Json shape = Json::array({nullptr});
    for (int i = 0; i < 40; ++i) shape.push_back(1);
    input(c)["batch_shape"] = shape;
  });
  expect_parts(load_error(deep), {"gives an output of rank 41", "LoadLimits::max_rank"});
  auto wide = edited_archive(kMlp, [&](Json& c) {
    input(c)["batch_shape"] = Json::array({nullptr, 1 << 20, 1 << 20, 10});
  });
  expect_parts(load_error(wide), {"(None, 1048576, 1048576, 10)", "10995116277760 elements", "LoadLimits::max_tensor_elements"});
  auto overflowing = edited_archive(kMlp, [&](Json& c) {
    input(c)["batch_shape"] = Json::array({nullptr, int64_t{1} << 40, int64_t{1} << 40, 10});
  });
  expect_parts(load_error(overflowing), {"more elements than can be counted"});
}

TEST(LoadLimits, MemberSizes) {
  LoadLimits limits;
  limits.max_member_bytes = 1000;
  expect_parts(load_error(read_bytes(testing::fixture(kMlp)), limits),
               {"config.json", "of zip archive \"edited.keras\" declares 3578 bytes", "LoadLimits::max_member_bytes"});
}

// A directory that declares a stored weights member larger than the archive would raise the weight
// budget with it: every declared size is held to the bytes the archive has before it counts.
TEST(LoadLimits, DeclaredSizesAreHeldToTheFile) {
  std::vector<char> bytes = read_bytes(testing::fixture(kMlp));
  const std::string name = "model.weights.h5";
  bool patched = false;
  for (size_t at = 0; at + 46 + name.size() <= bytes.size(); ++at) {
    if (std::memcmp(&bytes[at], "PK\x01\x02", 4) != 0 || std::memcmp(&bytes[at + 46], name.data(), name.size()) != 0)
      continue;
    for (size_t field : {20u, 24u})  // compressed and uncompressed size: 4 GiB - 16
      for (int i = 0; i < 4; ++i) bytes[at + field + i] = static_cast<char>(i == 0 ? 0xf0 : 0xff);
    patched = true;
  }
  ASSERT_TRUE(patched);
  expect_parts(load_error(bytes), {"model.weights.h5", "lies outside the file"});
}

// Values of the wrong JSON type outside the layers: a non-string keras_version in metadata.json is read
// as Keras 3's (Keras writes a string), and loss_weights holding a non-number leaves the model
// uncompiled with a warning naming it; neither lets a JSON library exception out of load_model.
TEST(LoadLimits, WrongJsonTypesOutsideTheLayers) {
  std::vector<char> bytes = read_bytes(testing::fixture(kMlp));
  io::ZipArchive zip = io::ZipArchive::from_memory(bytes.data(), bytes.size(), "x");
  io::ZipWriter out;
  for (const std::string& name : zip.names()) {
    io::ZipMember m = zip.member(name);
    Json j = name.ends_with(".json") ? Json::parse(std::string(m.data, m.size)) : Json();
    if (name == "metadata.json") j["keras_version"] = 3;
    if (name == "config.json") j["compile_config"]["loss_weights"] = Json::array({"heavy"});
    if (j.is_null())
      out.add(name, m.data, m.size);
    else
      out.add(name, j.dump());
  }
  const std::vector<char> edited = out.finish();
  std::vector<std::string> warnings;
  WarningSink previous = set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  std::string error = error_of([&] {
    Model m = load_model_from_memory(edited.data(), edited.size(), "edited.keras");
    EXPECT_FALSE(m.compiled());
  });
  set_warning_sink(previous);
  EXPECT_EQ(error, "");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("loss_weights holds \"heavy\", not a number"), std::string::npos) << warnings[0];
}

// A chain of 60,000 layers builds: the graph is walked without recursion, so no stack is exhausted
// below the default limit of 100,000 layers.
TEST(LoadLimits, LongChainsBuildWithoutRecursion) {
  Json layers = Json::array();
  layers.push_back({{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_shape", {nullptr, 1}}}}});
  for (int i = 0; i < 60000; ++i)
    layers.push_back({{"class_name", "Activation"}, {"config", {{"name", "a" + std::to_string(i)}, {"activation", "relu"}}}});
  Json config = {{"class_name", "Sequential"}, {"config", {{"name", "chain"}, {"layers", layers}}}};
  Model m = model_from_config(config);
  EXPECT_EQ(m.graph().sublayers().size(), 60000u);
  EXPECT_EQ(m.predict({Tensor::from_vector({2, 1}, {-1.0f, 2.0f})})[0].shape(), (Shape{2, 1}));
}

}  // namespace
}  // namespace kerascpp
