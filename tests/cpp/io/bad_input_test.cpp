// Damaged and foreign files get clear errors that name the file and the place, never a crash.
// tests/fixtures/damaged is written by scripts/make_damaged_fixtures.py from real Keras files.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>

#include "../test_paths.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {

template <typename E>
std::string error_of(const std::string& path) {
  try {
    load_model(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " threw the wrong error type: " << e.what();
    return "";
  }
  ADD_FAILURE() << path << " loaded without error";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(BadInput, MissingFile) {
  auto msg = error_of<IOError>("/nonexistent/model.h5");
  expect_contains(msg, "/nonexistent/model.h5");
}

TEST(BadInput, Directory) { expect_contains(error_of<IOError>(testing::fixture("damaged")), "directory"); }

TEST(BadInput, NotHdf5OrZip) {
  auto msg = error_of<IOError>(testing::fixture("damaged/not_a_model.h5"));
  expect_contains(msg, "not_a_model.h5");
  expect_contains(msg, "neither a zip archive nor HDF5");
}

TEST(BadInput, EmptyFile) {
  std::string p = testing::temp_path("empty.h5");
  std::ofstream(p).close();
  expect_contains(error_of<IOError>(p), "empty");
}

// Truncated copies of real files at many lengths: always an exception, never a crash.
TEST(BadInput, TruncatedFiles) {
  for (const char* rel : {"seed_mlp_2x10/keras3/model.h5", "seed_mlp_2x10/tf_keras/model.h5",
                          "seed_mlp_2x10/keras3/model.keras", "nested_model/tf_keras/model.keras"}) {
    std::ifstream in(testing::fixture(rel), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (int k = 1; k < 40; ++k) {
      size_t n = bytes.size() * k / 40;
      std::string p = testing::temp_path("truncated" + std::string(rel).substr(std::string(rel).rfind('.')));
      std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(n));
      EXPECT_THROW(load_model(p), Error) << rel << " truncated to " << n << " bytes";
    }
  }
}

TEST(BadInput, MissingWeight) {
  auto msg = error_of<Error>(testing::fixture("damaged/missing_weight.h5"));
  expect_contains(msg, "missing_weight.h5");
  expect_contains(msg, "bias");
}

TEST(BadInput, WrongShape) {
  auto msg = error_of<ValueError>(testing::fixture("damaged/wrong_shape.h5"));
  expect_contains(msg, "wrong_shape.h5");
  expect_contains(msg, "(3, 3)");
  expect_contains(msg, "kernel");
}

TEST(BadInput, UnknownLayer) {
  auto msg = error_of<ValueError>(testing::fixture("damaged/unknown_layer.h5"));
  expect_contains(msg, "FancyDense");
  expect_contains(msg, "unknown_layer.h5");
}

TEST(BadInput, LambdaLayer) {
  auto msg = error_of<NotImplementedError>(testing::fixture("damaged/lambda_layer.h5"));
  expect_contains(msg, "Lambda");
  expect_contains(msg, "never runs code");
}

TEST(BadInput, UnsupportedDtype) {
  auto msg = error_of<NotImplementedError>(testing::fixture("damaged/unsupported_dtype.h5"));
  expect_contains(msg, "complex64");
}

TEST(BadInput, KerasArchiveWithoutWeights) {
  auto msg = error_of<IOError>(testing::fixture("damaged/no_weights.keras"));
  expect_contains(msg, "model.weights.h5");
}

TEST(BadInput, WeightsOnlyFileAsModel) {
  auto msg = error_of<ValueError>(testing::fixture("seed_mlp_2x10/tf_keras/config.h5"));
  expect_contains(msg, "only weights");
}

TEST(BadInput, WeightsThatDoNotFitTheModel) {
  std::ifstream in(testing::fixture("functional_2in_2out/keras3/config.json"));
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Model m = model_from_json(json);
  auto before = m.get_weights();
  EXPECT_THROW(m.load_weights(testing::fixture("seed_mlp_2x10/keras3/config.weights.h5")), Error);
  auto after = m.get_weights();  // nothing was half-loaded
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(0, std::memcmp(before[i].raw_data(), after[i].raw_data(), before[i].nbytes()));
}

TEST(BadInput, InvalidJson) {
  EXPECT_THROW(model_from_json("{\"class_name\": "), ValueError);
  EXPECT_THROW(model_from_json("{\"class_name\": \"MyModel\", \"config\": {}}"), NotImplementedError);
}

}  // namespace
}  // namespace kerascpp
