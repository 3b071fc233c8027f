// broadcast_shape and normalize_axis: numpy rules, Keras None (-1) handling, and the messages.
#include <gtest/gtest.h>

#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

TEST(BroadcastShape, NumpyRules) {
  EXPECT_EQ(broadcast_shape({4, 1, 3}, {2, 3}), (Shape{4, 2, 3}));
  EXPECT_EQ(broadcast_shape({2, 3}, {3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shape({}, {5, 1}), (Shape{5, 1}));
  EXPECT_EQ(broadcast_shape({1}, {0}), (Shape{0}));
  EXPECT_EQ(broadcast_shape({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
}

// Keras None (-1): None with 1 stays None, None with d is d.
TEST(BroadcastShape, UnknownDims) {
  EXPECT_EQ(broadcast_shape({-1, 3}, {1, 3}), (Shape{-1, 3}));
  EXPECT_EQ(broadcast_shape({1, 3}, {-1, 3}), (Shape{-1, 3}));
  EXPECT_EQ(broadcast_shape({-1, 3}, {4, 3}), (Shape{4, 3}));
  EXPECT_EQ(broadcast_shape({-1}, {-1}), (Shape{-1}));
}

TEST(BroadcastShape, IncompatibleShapesNameBoth) {
  std::string msg = test::value_error([] { broadcast_shape({2, 3}, {4}); });
  EXPECT_EQ(msg, "Cannot broadcast shapes (2, 3) and (4,)");
  EXPECT_THROW(broadcast_shape({2, 3}, {3, 3}), ValueError);
  EXPECT_THROW(broadcast_shape({0}, {2}), ValueError);
}

TEST(NormalizeAxis, RangeAndNegativeAxes) {
  EXPECT_EQ(normalize_axis(-1, 3), 2);
  EXPECT_EQ(normalize_axis(0, 3), 0);
  EXPECT_EQ(normalize_axis(-3, 3), 0);
  EXPECT_TRUE(test::contains(test::value_error([] { normalize_axis(3, 3); }), "axis 3 is out of bounds"));
  EXPECT_THROW(normalize_axis(-4, 3), ValueError);
  EXPECT_THROW(normalize_axis(0, 0), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
