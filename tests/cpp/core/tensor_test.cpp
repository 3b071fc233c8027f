#include "kerascpp/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace kerascpp {

TEST(Tensor, StorageIs64ByteAligned) {
  for (int n : {0, 1, 3, 100}) {
    Tensor t = Tensor::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  }
}

TEST(Tensor, ReshapeAndSliceShareStorage) {
  Tensor t = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor r = t.reshape({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_TRUE(r.shares_storage(t));
  Tensor s = t.slice(1, 1);
  EXPECT_EQ(s.shape(), (Shape{1, 3}));
  EXPECT_EQ(s.data<float>()[0], 3.f);
  s.data<float>()[0] = 7.f;
  EXPECT_EQ(t.data<float>()[3], 7.f);
  Tensor c = t.copy();
  EXPECT_FALSE(c.shares_storage(t));
}

TEST(Tensor, BadShapesAreRejected) {
  Tensor t = Tensor::zeros({2, 3});
  EXPECT_THROW(t.reshape({4, 2}), ValueError);
  EXPECT_THROW(t.reshape({-1, -1}), ValueError);
  EXPECT_THROW(t.slice(1, 2), ValueError);
  EXPECT_THROW(Tensor::empty({-2}), ValueError);
  EXPECT_THROW(t.copy_from(Tensor::zeros({3, 2})), ValueError);
}

TEST(Tensor, ViewKeepsStorageAlive) {
  Tensor v;
  {
    Tensor t = Tensor::from_vector({4}, {1, 2, 3, 4});
    v = t.slice(2, 2);
  }
  EXPECT_EQ(v.data<float>()[1], 4.f);
}

TEST(DType, HalfAndBfloat16RoundTrip) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(1e6f))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.5f)), 1.5f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.00390625f)), 1.0f);  // ties to even
  Tensor h = Tensor::empty({2}, DType::float16);
  h.data<uint16_t>()[0] = 0x3c00;  // 1.0
  h.data<uint16_t>()[1] = 0xc000;  // -2.0
  Tensor f = h.astype(DType::float32);
  EXPECT_EQ(f.data<float>()[0], 1.f);
  EXPECT_EQ(f.data<float>()[1], -2.f);
}

TEST(DType, Names) {
  EXPECT_EQ(dtype_from_name("int64"), DType::int64);
  EXPECT_EQ(dtype_name(DType::bool_), "bool");
  EXPECT_THROW(dtype_from_name("complex128"), ValueError);
}

}  // namespace kerascpp
