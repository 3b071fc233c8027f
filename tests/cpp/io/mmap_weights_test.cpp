// LoadOptions::mmap_weights: weights as views of the mapped file (io/mapping/file_mapping.h,
// H5Dataset::view). A mapped load computes exactly what a copying load computes; its weights lie in
// the file's mapping where the layout allows (checked in /proc/self/maps), fall back to copies where
// it does not (a .keras member at an odd offset), and writes to them never reach the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "../test_paths.h"
#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/hdf5_writer.h"
#include "io/npy/npy.h"
#include "io/zip/zip_archive.h"
#include "io/zip/zip_writer.h"
#include "kerascpp/kerascpp.h"
#include "models/functional.h"

namespace kerascpp {
namespace {

namespace fs = std::filesystem;

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Whether p (or with p null, anything) lies in a mapping of the file at `path`: /proc/self/maps names
// mapped files, with " (deleted)" after a file removed since.
bool in_mapping_of(const void* p, const std::string& path) {
  const std::string want = fs::weakly_canonical(path).string();
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, name;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, name);
    if (name != want && name != want + " (deleted)") continue;
    const uintptr_t lo = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uintptr_t hi = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (!p || (addr >= lo && addr < hi)) return true;
  }
  return false;
}

// How many of the model's weights are views of the file at `path`.
size_t mapped_weights(const Model& m, const std::string& path) {
  size_t n = 0;
  for (const VariablePtr& v : m.weights()) n += in_mapping_of(v->value().raw_data(), path);
  return n;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

void expect_same_model(const Model& mapped, const Model& copied, const std::vector<Tensor>& in) {
  ASSERT_EQ(mapped.weights().size(), copied.weights().size());
  for (size_t i = 0; i < mapped.weights().size(); ++i)
    EXPECT_TRUE(same_bytes(mapped.weights()[i]->value(), copied.weights()[i]->value())) << mapped.weights()[i]->path();
  const auto& g = dynamic_cast<const models::Functional&>(mapped.graph());
  const auto& want_g = dynamic_cast<const models::Functional&>(copied.graph());
  EXPECT_EQ(g.inference_plan() != nullptr, want_g.inference_plan() != nullptr) << g.why_not_planned();
  std::vector<Tensor> got = mapped.predict(in), want = copied.predict(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bytes(got[i], want[i])) << "output " << i;
}

std::vector<Tensor> fixture_inputs(const std::string& dir) {
  std::vector<Tensor> in;
  for (int i = 0; fs::exists(dir + "/input_" + std::to_string(i) + ".npy"); ++i)
    in.push_back(io::read_npy(dir + "/input_" + std::to_string(i) + ".npy"));
  return in;
}

// A convolution with the BatchNormalization and relu that its plan step folds in, and a Dense:
// the plan keeps weight addresses, so a mapped load must rebuild it.
Model conv_model() {
  auto x = layers::Input({8, 8, 3}, {{"name", "x"}});
  auto h = layers::Conv2D({{"filters", 4}, {"kernel_size", 3}, {"name", "conv"}})(x);
  h = layers::BatchNormalization({{"name", "bn"}})(h);
  h = layers::Activation({{"activation", "relu"}, {"name", "relu"}})(h);
  h = layers::GlobalAveragePooling2D({{"name", "gap"}})(h);
  Model m({x}, {layers::Dense({{"units", 5}, {"name", "head"}})(h)});
  int k = 0;
  for (const VariablePtr& v : m.weights()) {
    Tensor t = v->numpy();
    for (int64_t j = 0; j < t.size(); ++j) t.data<float>()[j] = 0.1f + static_cast<float>((j * 7 + k) % 13) / 10.f;
    v->assign(t);
    ++k;
  }
  return m;
}

Tensor ramp(const Shape& s) {
  Tensor t = Tensor::empty(s);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i % 23) / 11.f - 1.f;
  return t;
}

TEST(MmapWeights, KerasFilesGiveWhatCopiesGive) {
  for (const char* rel : {"seed_mlp_2x10/keras3", "seed_mlp_2x10/tf_keras", "nested_model/keras3",
                          "all_layers_conv2d/keras3"}) {
    const std::string dir = testing::fixture(rel);
    const std::vector<Tensor> in = fixture_inputs(dir);
    for (const char* file : {"model.h5", "model.keras"}) {
      const std::string path = dir + "/" + file;
      if (!fs::exists(path)) continue;
      SCOPED_TRACE(path);
      Model mapped = load_model(path, {.mmap_weights = true});
      expect_same_model(mapped, load_model(path), in);
      if (std::string(file) == "model.h5") EXPECT_EQ(mapped_weights(mapped, path), mapped.weights().size());
    }
  }
}

TEST(MmapWeights, OwnSavesMapEveryWeightAndPlansAreRebuilt) {
  Model m = conv_model();
  const Tensor x = ramp({3, 8, 8, 3});
  for (const char* ext : {".keras", ".h5"}) {
    SCOPED_TRACE(ext);
    const std::string path = testing::temp_path(std::string("mmap_conv") + ext);
    m.save(path);
    {
      Model mapped = load_model(path, {.mmap_weights = true});
      EXPECT_EQ(mapped_weights(mapped, path), mapped.weights().size());
      const auto& g = dynamic_cast<const models::Functional&>(mapped.graph());
      ASSERT_NE(g.inference_plan(), nullptr) << g.why_not_planned();
      EXPECT_GT(g.inference_plan()->fused(), 0u);  // the BatchNormalization folded into the convolution
      expect_same_model(mapped, load_model(path), {x});
      // The file may go: the mapping keeps its pages.
      fs::remove(path);
      EXPECT_TRUE(same_bytes(mapped.predict({x})[0], m.predict({x})[0]));
      EXPECT_TRUE(in_mapping_of(nullptr, path));
    }
    EXPECT_FALSE(in_mapping_of(nullptr, path));  // released with the last weight
  }
}

// kerascpp's saves place every dataset at a multiple of 64 bytes, so every weight of a file it wrote
// maps, whatever the dtypes of the weights before it (int64 lookup tables, float32 statistics).
TEST(MmapWeights, EveryWeightOfOwnSavesMaps) {
  for (const char* rel : {"numeric_preprocessing/keras3", "adapted_integer_lookup/keras3", "seq_embedding_lstm_gru/keras3",
                          "all_layers_normalization/keras3"}) {
    const std::string dir = testing::fixture(rel);
    Model m = load_model(dir + "/model.keras");
    for (const char* ext : {".keras", ".h5"}) {
      SCOPED_TRACE(std::string(rel) + ext);
      const std::string path = testing::temp_path(std::string("mmap_own") + ext);
      m.save(path);
      Model mapped = load_model(path, {.mmap_weights = true});
      EXPECT_EQ(mapped_weights(mapped, path), mapped.weights().size());
      expect_same_model(mapped, m, fixture_inputs(dir));
    }
  }
}

// The writer behind kerascpp's saves: a float32 dataset after a 3-byte one still starts at a
// multiple of 64 bytes, so it maps.
TEST(MmapWeights, WriterAlignsEveryDataset) {
  io::H5Writer w = io::H5Writer::create_in_memory("aligned.h5");
  Tensor odd = Tensor::zeros({3}, DType::uint8);
  w.root().write_dataset("a", odd);
  w.root().write_dataset("b", ramp({5, 7}));
  w.root().write_dataset("c", Tensor::zeros({1}, DType::uint8));
  w.root().write_dataset("d", ramp({3}));
  const std::string path = testing::temp_path("mmap_aligned.h5");
  write_bytes(path, w.finish());
  io::H5File f = io::H5File::open(path, io::H5Driver::mapped_views);
  for (const char* name : {"b", "d"}) {
    Tensor view = f.root().dataset(name).view();
    ASSERT_TRUE(view.defined()) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.raw_data()) % 64, 0u) << name;
    EXPECT_TRUE(same_bytes(view, f.root().dataset(name).read())) << name;
  }
}

TEST(MmapWeights, WritesStayInTheProcess) {
  const std::string path = testing::temp_path("mmap_writes.h5");
  conv_model().save(path);
  const std::vector<char> before = read_bytes(path);
  Model mapped = load_model(path, {.mmap_weights = true});
  VariablePtr kernel = mapped.get_layer("head").weights()[0];
  ASSERT_TRUE(in_mapping_of(kernel->value().raw_data(), path));
  Tensor ones = Tensor::zeros(kernel->shape());
  for (int64_t i = 0; i < ones.size(); ++i) ones.data<float>()[i] = 1.f;
  kernel->assign(ones);
  EXPECT_TRUE(same_bytes(kernel->value(), ones));
  // Training writes every trainable weight in place.
  mapped.compile({.optimizer = "sgd", .loss = "mse"});
  mapped.fit({ramp({4, 8, 8, 3})}, {ramp({4, 5})}, {.batch_size = 4, .epochs = 1, .verbose = 0});
  EXPECT_EQ(read_bytes(path), before);  // the file never changes
  Model reloaded = load_model(path, {.mmap_weights = true});
  EXPECT_FALSE(same_bytes(reloaded.get_layer("head").weights()[0]->value(), kernel->value()));
  expect_same_model(reloaded, load_model(path), {ramp({2, 8, 8, 3})});
}

// Keras's .keras archives put model.weights.h5 wherever its name and the members before it end: at an
// offset that is not a multiple of 4, floats cannot be views (they would be misaligned) and are copied.
TEST(MmapWeights, MisalignedArchiveMemberIsCopied) {
  const std::string src = testing::fixture("seed_mlp_2x10/keras3/model.keras");
  std::vector<char> bytes = read_bytes(src);
  io::ZipArchive zip = io::ZipArchive::from_memory(bytes.data(), bytes.size(), src);
  int mapped_offsets = 0;
  for (size_t pad = 0; pad < 8; ++pad) {  // eight consecutive offsets: every remainder modulo 8
    io::ZipWriter out;
    out.add("padding.bin", std::string(pad + 1, 'x'));
    for (const std::string& name : zip.names()) {
      io::ZipMember member = zip.member(name);
      out.add(name, member.data, member.size);
    }
    const std::vector<char> archive = out.finish();
    io::ZipArchive check = io::ZipArchive::from_memory(archive.data(), archive.size(), "check");
    const size_t offset = static_cast<size_t>(check.member("model.weights.h5").data - archive.data());
    const std::string path = testing::temp_path("mmap_misaligned_" + std::to_string(pad) + ".keras");
    write_bytes(path, archive);
    SCOPED_TRACE("model.weights.h5 at offset " + std::to_string(offset));
    Model mapped = load_model(path, {.mmap_weights = true});
    expect_same_model(mapped, load_model(src), fixture_inputs(testing::fixture("seed_mlp_2x10/keras3")));
    if (offset % 4 != 0) EXPECT_EQ(mapped_weights(mapped, path), 0u);
    if (offset % 8 == 0) {
      EXPECT_EQ(mapped_weights(mapped, path), mapped.weights().size());
      ++mapped_offsets;
    }
  }
  EXPECT_EQ(mapped_offsets, 1);
}

// What mmap_weights cannot map it copies, and bad files fail as without it.
TEST(MmapWeights, OtherFilesAndBadOnes) {
  const std::string path = testing::temp_path("mmap_other.h5");
  conv_model().save(path);
  LoadOptions own_reader_only{.mmap_weights = true};
  own_reader_only.limits.allow_libhdf5 = false;
  Model m = load_model(path, own_reader_only);
  EXPECT_EQ(mapped_weights(m, path), m.weights().size());
  expect_same_model(m, load_model(path), {ramp({2, 8, 8, 3})});
  std::vector<char> bytes = read_bytes(path);
  bytes.resize(bytes.size() * 2 / 3);
  const std::string cut = testing::temp_path("mmap_truncated.h5");
  write_bytes(cut, bytes);
  EXPECT_THROW(load_model(cut, {.mmap_weights = true}), IOError);
  EXPECT_THROW(load_model(testing::temp_path("mmap_missing.h5"), {.mmap_weights = true}), IOError);
}

TEST(MmapWeights, ZipWriterAlignsAMember) {
  io::ZipWriter out;
  out.add("a.txt", "abc");
  out.add("w.bin", "0123456789", 10, 64);
  out.add("b.txt", "defg", 4, 4096);
  const std::vector<char> archive = out.finish();
  io::ZipArchive zip = io::ZipArchive::from_memory(archive.data(), archive.size(), "aligned.zip");
  const io::ZipMember w = zip.member("w.bin", /*verify_crc=*/true);
  EXPECT_EQ(static_cast<size_t>(w.data - archive.data()) % 64, 0u);
  EXPECT_EQ(std::string(w.data, w.size), "0123456789");
  const io::ZipMember b = zip.member("b.txt", true);
  EXPECT_EQ(static_cast<size_t>(b.data - archive.data()) % 4096, 0u);
  EXPECT_EQ(std::string(b.data, b.size), "defg");
  EXPECT_EQ(std::string(zip.member("a.txt", true).data, 3), "abc");
  io::ZipWriter bad;
  EXPECT_THROW(bad.add("c", "x", 1, 8192), ValueError);
  EXPECT_THROW(bad.add("c", "x", 1, 0), ValueError);
}

// The pieces mmap_weights builds on refuse what does not fit, naming it.
TEST(MmapWeights, SharingRefusesWhatDoesNotFit) {
  auto owner = std::make_shared<std::vector<float>>(16, 1.f);
  EXPECT_THROW(Storage::wrap(owner->data(), 64, nullptr), ValueError);
  auto storage = Storage::wrap(owner->data(), 64, owner);
  EXPECT_THROW(Tensor::from_storage(storage, {17}, DType::float32), ValueError);  // 68 bytes in 64
  auto odd = Storage::wrap(reinterpret_cast<char*>(owner->data()) + 1, 60, owner);
  try {
    (void)Tensor::from_storage(odd, {2}, DType::float32);
    ADD_FAILURE() << "a misaligned float32 tensor was made";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 4"), std::string::npos) << e.what();
  }
  Variable v("kernel", "dense/kernel", Tensor::zeros({4, 4}), true);
  try {
    v.share(Tensor::from_storage(storage, {2, 8}, DType::float32));
    ADD_FAILURE() << "a (2, 8) value was shared as a (4, 4) variable";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'dense/kernel'"), std::string::npos) << e.what();
  }
  const uint64_t before = v.version();
  v.share(Tensor::from_storage(storage, {4, 4}, DType::float32));
  EXPECT_EQ(v.value().raw_data(), owner->data());  // the bytes themselves, not a copy
  EXPECT_GT(v.version(), before);                  // kernels keyed on the version rebuild
}

TEST(MmapWeights, FromMemoryIgnoresTheOption) {
  const std::string path = testing::fixture("seed_mlp_2x10/keras3/model.h5");
  const std::vector<char> bytes = read_bytes(path);
  Model m = load_model_from_memory(bytes.data(), bytes.size(), "seed.h5", {.mmap_weights = true});
  expect_same_model(m, load_model(path), fixture_inputs(testing::fixture("seed_mlp_2x10/keras3")));
}

}  // namespace
}  // namespace kerascpp
