// WeightHistory: one extendable dataset per weight plus "epoch", one row per snapshot; the file
// grows by the weights' bytes per snapshot (constant cost); reopening appends; a file of another
// model is a ValueError naming the file and the weight.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;
namespace fs = std::filesystem;

// (rows, *shape) and the float contents of one dataset, read with libhdf5.
struct Read {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};
Read read_dataset(const std::string& file, const std::string& path) {
  Read r;
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << path;
  hid_t s = H5Dget_space(d);
  r.dims.resize(H5Sget_simple_extent_ndims(s));
  H5Sget_simple_extent_dims(s, r.dims.data(), nullptr);
  hsize_t n = 1;
  for (auto x : r.dims) n *= x;
  r.values.resize(n);
  if (n) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.values.data());
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return r;
}

void run_epochs(WeightHistory& wh, Model& m, int first, int count, std::vector<uintmax_t>* sizes = nullptr,
                const std::string& path = "") {
  Logs l;
  wh.on_train_begin(l);
  for (int e = first; e < first + count; ++e) {
    fill_weights(m, static_cast<float>(e));
    wh.on_epoch_end(e, l);
    if (sizes) sizes->push_back(fs::file_size(path));
  }
  wh.on_train_end(l);
}

TEST(WeightHistory, AppendsOneRowPerSnapshotAtConstantCost) {
  std::string path = temp_path("weight_history.h5");
  fs::remove(path);
  Model m = small_model();
  size_t bytes = 0;
  for (const auto& v : m.weights()) bytes += v->value().nbytes();
  WeightHistory wh(path);
  wh.set_model(&m);
  std::vector<uintmax_t> sizes;
  const int n = 200;
  run_epochs(wh, m, 0, n, &sizes, path);
  // A snapshot writes one chunk per dataset: the weights' bytes and the epoch's 8. Now and then
  // libhdf5 allocates the next block of the chunk index (an extensible array, blocks doubling) and
  // a small-data block ahead of use, so single steps vary; most are exactly the snapshot's bytes,
  // and the extra (the index's 8-byte chunk addresses and block headers) stays a small constant
  // per snapshot in the later half as in the earlier one.
  const uintmax_t row = bytes + 8;
  int exact = 0;
  for (int i = 1; i < n; ++i) {
    EXPECT_LE(sizes[i] - sizes[i - 1], row + 8192) << i;
    exact += sizes[i] - sizes[i - 1] == row;
  }
  EXPECT_GE(exact, n * 8 / 10);
  uintmax_t first = sizes[n / 2] - sizes[0], second = sizes[n - 1] - sizes[n / 2];
  EXPECT_GE(first, (n / 2) * row);
  EXPECT_GE(second, (n / 2 - 1) * row);
  EXPECT_LE(first - (n / 2) * row, (n / 2) * 128u);
  EXPECT_LE(second - (n / 2 - 1) * row, (n / 2 - 1) * 128u);
  EXPECT_LE(sizes.back() - sizes.front(), (n - 1) * (row + 128));
  auto epoch = read_dataset(path, "epoch");
  ASSERT_EQ(epoch.dims, (std::vector<hsize_t>{n}));
  EXPECT_EQ(epoch.values[n - 1], n - 1);
  for (const auto& v : m.weights()) {
    auto r = read_dataset(path, v->path());
    std::vector<hsize_t> want{n};
    for (auto d : v->shape()) want.push_back(static_cast<hsize_t>(d));
    EXPECT_EQ(r.dims, want) << v->path();
    size_t per = r.values.size() / n;
    EXPECT_EQ(r.values[0], 0);
    EXPECT_EQ(r.values[per * (n - 1)], n - 1);
  }
}

TEST(WeightHistory, ReopensAndAppendsEveryN) {
  std::string path = temp_path("weight_history_every.h5");
  fs::remove(path);
  Model m = small_model();
  {
    WeightHistory wh(path, 2);
    wh.set_model(&m);
    run_epochs(wh, m, 0, 6);  // snapshots after epochs 1, 3, 5 (0-based)
  }
  WeightHistory again(path, 2);
  again.set_model(&m);
  run_epochs(again, m, 6, 2);
  auto epoch = read_dataset(path, "epoch");
  EXPECT_EQ(epoch.values, (std::vector<double>{1, 3, 5, 7}));
  auto w = read_dataset(path, m.weights()[0]->path());
  EXPECT_EQ(w.dims[0], 4u);
  EXPECT_EQ(w.values.back(), 7);
}

TEST(WeightHistory, FileOfAnotherModelIsAValueError) {
  std::string path = temp_path("weight_history_other.h5");
  fs::remove(path);
  Model m = small_model();
  {
    WeightHistory wh(path);
    wh.set_model(&m);
    run_epochs(wh, m, 0, 1);
  }
  Model other = load_model(fixture("functional_2in_2out/keras3/model.keras"));
  WeightHistory wh(path);
  wh.set_model(&other);
  Logs l;
  try {
    wh.on_train_begin(l);
    FAIL();
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("another model"), std::string::npos) << msg;
  }
  // Not a weight history at all.
  std::string plain = temp_path("weight_history_plain.h5");
  fs::remove(plain);
  m.save_weights(plain + ".weights.h5");
  WeightHistory wrong(plain + ".weights.h5");
  wrong.set_model(&m);
  EXPECT_THROW(wrong.on_train_begin(l), ValueError);
  EXPECT_THROW(WeightHistory(path, 0), ValueError);
}

}  // namespace
}  // namespace kerascpp::callbacks
