// H5Writer: files it writes read back through H5File (h5py and Keras reading them back was checked
// by hand; see hdf5_writer.h).
#include "io/hdf5/hdf5_writer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_file.h"

namespace kerascpp::io {
namespace {

using testing::error_of;

H5File reopen(std::vector<char> bytes) {
  auto image = std::make_shared<std::vector<char>>(std::move(bytes));
  return H5File::open_image(image->data(), image->size(), "written", image);
}

template <typename T>
Tensor tensor(Shape shape, DType dtype, std::vector<T> v) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  EXPECT_EQ(t.nbytes(), v.size() * sizeof(T));
  std::memcpy(t.raw_data(), v.data(), t.nbytes());
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

TEST(H5Writer, EveryDtypeRoundTrips) {
  std::vector<std::pair<std::string, Tensor>> cases = {
      {"f32", Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, -6})},
      {"f64", tensor<double>({2}, DType::float64, {1.5, -1e300})},
      {"f16", tensor<uint16_t>({3}, DType::float16, {float_to_half(0.5f), float_to_half(-2.f), 0x7bff})},
      {"bf16", tensor<uint16_t>({2, 1}, DType::bfloat16, {0x3FC0, 0xC010})},
      {"i8", tensor<int8_t>({3}, DType::int8, {-128, 0, 127})},
      {"u8", tensor<uint8_t>({2}, DType::uint8, {0, 255})},
      {"i32", tensor<int32_t>({2}, DType::int32, {-5, 1 << 30})},
      {"i64", tensor<int64_t>({1}, DType::int64, {int64_t{1} << 40})},
      {"bool", tensor<uint8_t>({3}, DType::bool_, {1, 0, 1})},
      {"scalar", Tensor::from_vector({}, {2.5f})},
      {"empty", Tensor::zeros({0, 4})},
  };
  H5Writer w = H5Writer::create_in_memory("types.h5");
  H5WriteGroup g = w.root().create_group("vars");
  for (auto& [name, t] : cases) g.write_dataset(name, t);
  H5Group r = reopen(w.finish()).root().group("vars");
  for (auto& [name, t] : cases) {
    SCOPED_TRACE(name);
    expect_same(r.dataset(name).read(), t);
  }
  EXPECT_EQ(r.dataset("bf16").attr_string("dtype"), "bfloat16");
  EXPECT_EQ(r.dataset("scalar").shape(), Shape{});
}

TEST(H5Writer, StringAttributes) {
  H5Writer w = H5Writer::create_in_memory();
  H5WriteGroup root = w.root();
  root.write_attr_string("utf8", "h\xc3\xa9llo");
  root.write_attr_string("ascii", "{\"class_name\": \"Sequential\"}", H5StringType::vlen_ascii);
  root.write_attr_string("fixed", "abc", H5StringType::fixed_ascii);
  root.write_attr_string("empty", "");
  root.write_attr_strings("vlen", {"dense", "dense_1", ""});
  root.write_attr_strings("fixed_list", {"a", "bcd"}, H5StringType::fixed_ascii);
  root.write_attr_strings("none", {});
  root.write_attr_string("replaced", "old");
  root.write_attr_string("replaced", "new");
  H5Group r = reopen(w.finish()).root();
  EXPECT_EQ(r.attr_string("utf8"), "h\xc3\xa9llo");
  EXPECT_EQ(r.attr_string("ascii"), "{\"class_name\": \"Sequential\"}");
  EXPECT_EQ(r.attr_string("fixed"), "abc");
  EXPECT_EQ(r.attr_string("empty"), "");
  EXPECT_EQ(r.attr_strings("vlen"), (std::vector<std::string>{"dense", "dense_1", ""}));
  EXPECT_EQ(r.attr_strings("fixed_list"), (std::vector<std::string>{"a", "bcd"}));
  EXPECT_TRUE(r.attr_strings("none").empty());
  EXPECT_NE(error_of<ValueError>([&] { r.attr_string("none"); }).find("empty"), std::string::npos);
  EXPECT_EQ(r.attr_string("replaced"), "new");
}

TEST(H5Writer, KerasSplitRule) {
  std::vector<std::string> many;
  for (int i = 0; i < 3000; ++i) many.push_back("layer_with_a_long_name_number_" + std::to_string(i));
  H5Writer w = H5Writer::create_in_memory();
  w.root().write_attr_strings_split("layer_names", many);         // 3000 x 34 bytes: split
  w.root().write_attr_strings_split("weight_names", {"a", "b"});  // small: one attribute
  w.root().write_attr_strings_split("empty", {});
  std::string too_long(70000, 'x');
  error_of<ValueError>([&] { w.root().write_attr_strings_split("bad", {too_long}); });
  H5Group r = reopen(w.finish()).root();
  EXPECT_FALSE(r.has_attr("layer_names"));
  EXPECT_TRUE(r.has_attr("layer_names0"));
  EXPECT_TRUE(r.has_attr("layer_names1"));
  EXPECT_FALSE(r.has_attr("layer_names2"));  // 3000 * 34 = 102000 bytes: two pieces
  EXPECT_EQ(r.attr_strings_split("layer_names"), many);
  EXPECT_EQ(r.attr_strings("weight_names"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.attr_strings_split("empty").empty());
}

TEST(H5Writer, GroupsAndPaths) {
  H5Writer w = H5Writer::create_in_memory();
  H5WriteGroup ab = w.root().create_group("a/b");
  EXPECT_EQ(ab.path(), "a/b");
  EXPECT_EQ(w.root().create_group("a").create_group("b").path(), "a/b");  // reused
  H5WriteObject d = ab.write_dataset("dense/kernel:0", Tensor::zeros({2, 2}));
  EXPECT_EQ(d.path(), "a/b/dense/kernel:0");
  d.write_attr_string("note", "on a dataset");
  ab.write_attr_string("name", "b");
  std::string msg = error_of<ValueError>([&] { w.root().create_group("a/b/dense/kernel:0"); });
  EXPECT_NE(msg.find("a/b/dense/kernel:0"), std::string::npos) << msg;
  error_of<IOError>([&] { ab.write_dataset("dense/kernel:0", Tensor::zeros({1})); });  // exists
  H5Group r = reopen(w.finish()).root();
  EXPECT_EQ(r.group("a/b").members(), std::vector<std::string>{"dense"});
  EXPECT_EQ(r.dataset("a/b/dense/kernel:0").attr_string("note"), "on a dataset");
  EXPECT_EQ(r.group("a/b").attr_string("name"), "b");
}

TEST(H5Writer, FileOnDiskIsSuperblockV0) {
  std::string path = testing::temp_path("written.h5");
  H5Writer w = H5Writer::create(path);
  w.root().write_attr_string("keras_version", "3.15.1");
  w.root().write_dataset("model_weights/dense/kernel", Tensor::from_vector({1, 2}, {3, 4}));
  EXPECT_TRUE(w.finish().empty());
  std::vector<char> bytes = testing::read_bytes(path);
  ASSERT_GT(bytes.size(), 9u);
  EXPECT_EQ(std::string(bytes.data() + 1, 3), "HDF");
  EXPECT_EQ(bytes[8], 0);  // superblock version 0, as h5py writes by default
  H5File f = H5File::open(path);
  EXPECT_EQ(f.root().attr_string("keras_version"), "3.15.1");
  EXPECT_EQ(f.root().dataset("model_weights/dense/kernel").read().data<float>()[1], 4.f);
  error_of<IOError>([] { H5Writer::create("/nonexistent-dir/x.h5"); });
}

TEST(H5Writer, FinishedWritersRefuseWork) {
  H5Writer w = H5Writer::create_in_memory("done.h5");
  H5WriteGroup root = w.root();
  std::vector<char> bytes = w.finish();
  EXPECT_GT(bytes.size(), 0u);
  std::string msg = error_of<ValueError>([&] { root.create_group("late"); });
  EXPECT_NE(msg.find("done.h5"), std::string::npos) << msg;
  error_of<ValueError>([&] { w.finish(); });
  H5Writer a = H5Writer::create_in_memory(), b = H5Writer::create_in_memory();
  a.root().write_attr_string("who", "a");  // two in-memory files at once stay apart
  b.root().write_attr_string("who", "b");
  EXPECT_EQ(reopen(b.finish()).root().attr_string("who"), "b");
  EXPECT_EQ(reopen(a.finish()).root().attr_string("who"), "a");
}

}  // namespace
}  // namespace kerascpp::io
