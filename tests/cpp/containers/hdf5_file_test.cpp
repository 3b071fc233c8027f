// H5File / H5Group / H5Dataset on files written by h5py and by real Keras
// (tests/fixtures/containers, made by scripts/make_container_fixtures.py).
#include "io/hdf5/hdf5_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_writer.h"

namespace kerascpp::io {
namespace {

using testing::error_of;
using testing::fixture;

template <typename T>
std::vector<T> values(const H5Dataset& d) {
  Tensor t = d.read();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

TEST(H5File, ReadsAKeras3LegacyModel) {
  H5File f = H5File::open(fixture("keras3_mlp.h5"));
  H5Group root = f.root();
  EXPECT_EQ(root.path(), "/");
  EXPECT_EQ(f.name(), fixture("keras3_mlp.h5"));
  EXPECT_EQ(root.attr_string("backend"), "tensorflow");
  EXPECT_EQ(root.attr_string("keras_version").substr(0, 2), "3.");
  EXPECT_EQ(root.attr_string("model_config").rfind("{\"class_name\": \"Sequential\"", 0), 0u);
  H5Group w = root.group("model_weights");
  EXPECT_EQ(w.attr_strings_split("layer_names"), (std::vector<std::string>{"dense", "dense_1", "dense_2"}));
  EXPECT_EQ(w.members(),
            (std::vector<std::string>{"dense", "dense_1", "dense_2", "top_level_model_weights"}));
  EXPECT_TRUE(w.group("top_level_model_weights").attr_strings("weight_names").empty());
  H5Group dense = w.group("dense");
  std::vector<std::string> names = dense.attr_strings("weight_names");
  ASSERT_EQ(names, (std::vector<std::string>{"sequential/dense/kernel", "sequential/dense/bias"}));
  H5Dataset kernel = dense.dataset(names[0]);
  EXPECT_EQ(kernel.path(), "model_weights/dense/sequential/dense/kernel");
  EXPECT_EQ(kernel.shape(), (Shape{2, 10}));
  EXPECT_EQ(kernel.dtype(), DType::float32);
  EXPECT_EQ(kernel.nbytes(), 80u);
  Tensor k = kernel.read();
  std::vector<float> direct(20);
  kernel.read_into(direct.data(), 80);
  EXPECT_EQ(std::memcmp(direct.data(), k.raw_data(), 80), 0);
  EXPECT_NE(direct[0], 0.f);
}

TEST(H5File, EveryDriverReadsTheSame) {
  std::vector<float> want = values<float>(
      H5File::open(fixture("keras3_mlp.h5")).root().dataset("model_weights/dense_1/sequential/dense_1/kernel"));
  for (H5Driver d : {H5Driver::sec2, H5Driver::core, H5Driver::whole_read, H5Driver::mapped, H5Driver::mapped_views}) {
    H5File f = H5File::open(fixture("keras3_mlp.h5"), d);
    H5Dataset kernel = f.root().dataset("model_weights/dense_1/sequential/dense_1/kernel");
    EXPECT_EQ(values<float>(kernel), want);
    EXPECT_EQ(f.root().attr_string("backend"), "tensorflow");
    // Only a writable private mapping hands out views; they hold the same values.
    Tensor view = kernel.view();
    EXPECT_EQ(view.defined(), d == H5Driver::mapped_views);
    if (view.defined())
      EXPECT_EQ(std::vector<float>(view.data<float>(), view.data<float>() + view.size()), want);
  }
}

// A mapped file's large datasets are read with pread (FileMapping::copy), small ones copied from the
// mapping; both give the file's bytes. A file cut short after it was opened is an IOError naming it,
// where touching the lost pages of the mapping would kill the process with SIGBUS.
TEST(H5File, AMappedFilesLargeDatasetsAreReadFromTheFileAndAShrunkFileIsAnError) {
  const std::string path = testing::temp_path("pread.h5");
  Tensor big = Tensor::empty({512, 64});  // 128 KiB: over FileMapping::kPreadBytes
  for (int64_t i = 0; i < big.size(); ++i) big.data<float>()[i] = static_cast<float>(i % 1000) * 0.5f - 7.f;
  const Tensor small = Tensor::from_vector({3}, {1.f, -2.f, 3.5f});
  {
    H5Writer w = H5Writer::create_in_memory();
    H5WriteGroup g = w.root().create_group("w");
    g.write_dataset("small", small);
    g.write_dataset("big", big);
    testing::write_bytes(path, w.finish());
  }
  ASSERT_GT(std::filesystem::file_size(path), FileMapping::kReadLimit / 4);
  for (H5Driver d : {H5Driver::mapped, H5Driver::mapped_views}) {
    H5Group g = H5File::open(path, d).root().group("w");
    const Tensor b = g.dataset("big").read(), s = g.dataset("small").read();
    EXPECT_EQ(std::memcmp(b.raw_data(), big.raw_data(), big.nbytes()), 0);
    EXPECT_EQ(std::memcmp(s.raw_data(), small.raw_data(), small.nbytes()), 0);
  }
  H5File f = H5File::open(path, H5Driver::mapped);
  H5Dataset d = f.root().group("w").dataset("big");
  // Another process saving over it.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4096);
  const std::string e = error_of<IOError>([&] { (void)d.read(); });
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("the file shrank while being read"), std::string::npos) << e;
}

TEST(H5File, StringAttributesInEveryEncoding) {
  H5Group r = H5File::open(fixture("h5py_types.h5")).root();
  EXPECT_EQ(r.attr_string("str_utf8"), "h\xc3\xa9llo");
  EXPECT_EQ(r.attr_string("str_ascii"), "plain bytes");
  EXPECT_EQ(r.attr_string("str_fixed"), "fixed");
  EXPECT_EQ(r.attr_string("str_one_element"), "only");
  EXPECT_EQ(r.attr_strings("str_utf8"), std::vector<std::string>{"h\xc3\xa9llo"});
  EXPECT_EQ(r.attr_strings("list_vlen"), (std::vector<std::string>{"dense", "dense_1", "d\xc3\xa9"}));
  EXPECT_EQ(r.attr_strings("list_fixed"), (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_TRUE(r.attr_strings("list_empty").empty());
  EXPECT_EQ(r.attr_strings_split("split"), (std::vector<std::string>{"l0", "l1", "l2"}));
  EXPECT_EQ(r.attr_strings_split("list_vlen").size(), 3u);
  EXPECT_TRUE(r.has_attr("int_attr"));
  EXPECT_FALSE(r.has_attr("nope"));

  std::string file = fixture("h5py_types.h5");
  std::string msg = error_of<ValueError>([&] { r.attr_string("nope"); });
  EXPECT_NE(msg.find("\"nope\""), std::string::npos) << msg;
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("str_utf8"), std::string::npos) << msg;  // lists what exists
  msg = error_of<ValueError>([&] { r.attr_string("list_vlen"); });
  EXPECT_NE(msg.find("found a list of 3"), std::string::npos) << msg;
  msg = error_of<ValueError>([&] { r.attr_strings("int_attr"); });
  EXPECT_NE(msg.find("8-byte signed integer"), std::string::npos) << msg;
  msg = error_of<ValueError>([&] { r.attr_strings_split("layer_names"); });
  EXPECT_NE(msg.find("layer_names0"), std::string::npos) << msg;
}

TEST(H5File, EveryDtype) {
  H5Group r = H5File::open(fixture("h5py_types.h5")).root();
  EXPECT_EQ(values<float>(r.dataset("f32")), (std::vector<float>{0, .25f, .5f, .75f, 1, 1.25f}));
  EXPECT_EQ(r.dataset("f32").shape(), (Shape{2, 3}));
  EXPECT_EQ(values<double>(r.dataset("f64")), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(r.dataset("i8").dtype(), DType::int8);
  EXPECT_EQ(values<int8_t>(r.dataset("i8")), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(values<uint8_t>(r.dataset("u8")), (std::vector<uint8_t>{0, 200, 255}));
  EXPECT_EQ(values<int32_t>(r.dataset("i32")), (std::vector<int32_t>{-7, 1 << 30}));
  EXPECT_EQ(values<int64_t>(r.dataset("i64")), (std::vector<int64_t>{-(int64_t{1} << 40), 42}));
  EXPECT_EQ(r.dataset("bool").dtype(), DType::bool_);
  EXPECT_EQ(values<uint8_t>(r.dataset("bool")), (std::vector<uint8_t>{1, 0, 1}));
  for (const char* name : {"f16", "f16_be"}) {
    H5Dataset d = r.dataset(name);
    EXPECT_EQ(d.dtype(), DType::float16);
    std::vector<float> got;
    for (uint16_t h : values<uint16_t>(d)) got.push_back(half_to_float(h));
    EXPECT_EQ(got[0], 0.5f);
    EXPECT_EQ(got[1], name == std::string("f16") ? -1.25f : -2.0f);
  }
  H5Dataset bf = r.dataset("bf16");
  EXPECT_EQ(bf.dtype(), DType::bfloat16);
  EXPECT_EQ(values<uint16_t>(bf), (std::vector<uint16_t>{0x3FC0, 0xC010, 0x4040}));
  H5Dataset scalar = r.dataset("scalar");
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(values<float>(scalar), std::vector<float>{2.5f});
  H5Dataset empty = r.dataset("empty");
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(empty.read().size(), 0);
  // Big-endian data arrives in native order.
  EXPECT_EQ(values<float>(r.dataset("f32_be")), (std::vector<float>{1.0f, -3.5f}));
  EXPECT_EQ(values<int32_t>(r.dataset("i32_be")), (std::vector<int32_t>{1, -2, 70000}));
  std::vector<float> gz = values<float>(r.dataset("gzip"));  // chunked + gzip: libhdf5 decodes
  ASSERT_EQ(gz.size(), 100u);
  EXPECT_EQ(gz[99], 99.f);

  std::string msg = error_of<NotImplementedError>([&] { r.dataset("u16").read(); });
  EXPECT_NE(msg.find("2-byte unsigned integer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"u16\""), std::string::npos) << msg;
  msg = error_of<NotImplementedError>([&] { r.dataset("opaque").dtype(); });
  EXPECT_NE(msg.find("bfloat16"), std::string::npos) << msg;
  EXPECT_EQ(r.dataset("u16").shape(), (Shape{2}));  // the shape is still known
}

TEST(H5File, ReadIntoChecksTheSize) {
  H5Dataset d = H5File::open(fixture("h5py_types.h5")).root().dataset("f32");
  std::vector<float> small(5);
  std::string msg = error_of<ValueError>([&] { d.read_into(small.data(), 20); });
  EXPECT_NE(msg.find("20 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("24"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"f32\""), std::string::npos) << msg;
}

TEST(H5File, Navigation) {
  H5Group r = H5File::open(fixture("h5py_types.h5")).root();
  EXPECT_TRUE(r.has("a/b/c"));
  EXPECT_TRUE(r.has("a/b/"));
  EXPECT_TRUE(r.has("model_weights/dense/dense/kernel:0"));
  EXPECT_FALSE(r.has("a/x/y"));      // missing intermediate group: false, no throw
  EXPECT_FALSE(r.has("f32/x"));      // a dataset is not a group
  EXPECT_FALSE(r.has("dangling"));   // soft link to nowhere
  EXPECT_TRUE(r.is_group("a/b"));
  EXPECT_FALSE(r.is_group("f32"));
  EXPECT_TRUE(r.is_dataset("f32"));
  EXPECT_FALSE(r.is_dataset("a/x/y"));
  H5Group c = r.group("a").group("b/c");
  EXPECT_EQ(c.path(), "a/b/c");
  EXPECT_TRUE(c.members().empty());
  std::vector<std::string> m = r.members();
  EXPECT_TRUE(std::is_sorted(m.begin(), m.end()));
  EXPECT_EQ(m.front(), "a");

  std::string file = fixture("h5py_types.h5");
  std::string msg = error_of<ValueError>([&] { r.group("a/b/nope/deeper"); });
  EXPECT_NE(msg.find("\"a/b/nope/deeper\""), std::string::npos) << msg;
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("group \"a/b\" has no member \"nope\"; its members are [c]"), std::string::npos) << msg;
  msg = error_of<ValueError>([&] { r.dataset("a"); });
  EXPECT_NE(msg.find("it is a group, not a dataset"), std::string::npos) << msg;
  msg = error_of<ValueError>([&] { r.group("f32"); });
  EXPECT_NE(msg.find("it is a dataset, not a group"), std::string::npos) << msg;
  msg = error_of<ValueError>([&] { r.dataset("f32/x"); });
  EXPECT_NE(msg.find("\"f32\" is not a group"), std::string::npos) << msg;
}

TEST(H5File, GroupsKeepTheirFileAndImageAlive) {
  std::vector<char> bytes = testing::read_bytes(fixture("keras3_mlp.h5"));
  H5Dataset kernel;
  {
    auto image = std::make_shared<std::vector<char>>(bytes);
    H5File f = H5File::open_image(image->data(), image->size(), "mlp image", image);
    kernel = f.root().group("model_weights").dataset("dense/sequential/dense/kernel");
  }  // the file object and our reference to the image are gone
  EXPECT_EQ(kernel.file_name(), "mlp image");
  EXPECT_EQ(kernel.read().shape(), (Shape{2, 10}));
}

}  // namespace
}  // namespace kerascpp::io
