// H5RowFile / H5Rows: datasets that grow by rows, read back through H5File. WeightHistory
// (tests/cpp/training/callbacks/weight_history_test.cpp) covers their use across runs and crashes.
#include "io/hdf5/hdf5_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_file.h"

namespace kerascpp::io {
namespace {

using testing::error_of;
using testing::temp_path;

TEST(H5Rows, AppendReopenTruncateAndReadBack) {
  const std::string path = temp_path("rows.h5");
  std::filesystem::remove(path);
  {
    H5RowFile f = H5RowFile::open_or_create(path);
    EXPECT_TRUE(f.created());
    H5Rows w = f.create_rows("layer/kernel", DType::float32, {2, 3});
    for (int r = 0; r < 3; ++r) {
      std::vector<float> v(6);
      for (int i = 0; i < 6; ++i) v[i] = static_cast<float>(10 * r + i);
      w.append(Tensor::from_vector({2, 3}, v));
    }
    EXPECT_EQ(w.shape(), (Shape{3, 2, 3}));
    f.flush();
  }
  {
    H5RowFile f = H5RowFile::open_or_create(path);
    EXPECT_FALSE(f.created());
    EXPECT_EQ(f.dataset_paths(), (std::vector<std::string>{"layer/kernel"}));
    H5Rows w = f.open_rows("layer/kernel");
    EXPECT_EQ(w.dtype(), DType::float32);
    EXPECT_EQ(w.rows(), 3);
    w.truncate(2);
    EXPECT_EQ(w.rows(), 2);
    EXPECT_NE(error_of<ValueError>([&] { w.append(Tensor::zeros({3, 2})); }).find("must have shape (2, 3)"),
              std::string::npos);
    EXPECT_NE(error_of<ValueError>([&] { f.open_rows("layer/bias"); }).find("no dataset \"layer/bias\""),
              std::string::npos);
    EXPECT_NE(error_of<ValueError>([&] { w.truncate(5); }).find("it has 2"), std::string::npos);
  }
  H5File read = H5File::open(path);
  Tensor t = read.root().dataset("layer/kernel").read();
  ASSERT_EQ(t.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(t.data<float>()[6], 10.f);  // row 1, as appended
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kerascpp::io
