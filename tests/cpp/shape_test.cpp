// Shapes and views (graph/shape.h, move_view in graph/graph.h): every view
// op is checked by the element offsets it reads, in row-major order.
#include <gtest/gtest.h>

#include <random>

#include "graph/graph.h"
#include "graph/shape.h"
#include "test_util.h"

namespace braze {
namespace {

using testing::contains;
using testing::error_of;

// The storage offset of every element of `v`, in row-major order: what a
// consumer reads through the view.
std::vector<int64_t> offsets(const View& v) {
  std::vector<int64_t> out;
  int64_t n = v.numel();
  std::vector<int64_t> idx(v.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = v.offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * v.strides[d];
    out.push_back(off);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> iota(int64_t n, int64_t start = 0, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + i * step);
  return v;
}

TEST(Shape, NumelStridesAndToString) {
  EXPECT_EQ(numel(Shape{}), 1);
  EXPECT_EQ(numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(numel(Shape{2, 0, 4}), 0);
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{}), (Strides{}));
  // A zero-size dim must not zero the strides of the dims before it.
  EXPECT_EQ(contiguous_strides(Shape{2, 0, 3}), (Strides{3, 3, 1}));
  EXPECT_EQ(to_string(Shape{2, 3}), "[2, 3]");
  EXPECT_EQ(to_string(Shape{}), "[]");
}

TEST(Shape, BroadcastingFollowsNumPy) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1}, {1, 3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({}, {4, 5}, "add"), (Shape{4, 5}));
  EXPECT_EQ(broadcast_shapes({5, 1, 4}, {3, 1}, "add"), (Shape{5, 3, 4}));
  EXPECT_EQ(broadcast_shapes({1}, {0}, "add"), (Shape{0}));   // 1 broadcasts to 0
  EXPECT_EQ(broadcast_shapes({2, 0}, {0}, "add"), (Shape{2, 0}));
  EXPECT_EQ(broadcast_shapes({}, {}, "add"), (Shape{}));
}

TEST(Shape, BroadcastErrorNamesOpShapesAndAxis) {
  std::string msg = error_of<std::invalid_argument>([] { broadcast_shapes({2, 3}, {4}, "add"); });
  EXPECT_EQ(msg, "add: shapes [2, 3] and [4] do not broadcast (axis 1 of the result: 3 vs 4)");
  EXPECT_THROW(broadcast_shapes({2}, {0}, "mul"), std::invalid_argument);
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(0, 3, "sum"), 0);
  EXPECT_EQ(normalize_axis(-1, 3, "sum"), 2);
  EXPECT_EQ(normalize_axis(-3, 3, "sum"), 0);
  std::string msg = error_of<std::out_of_range>([] { normalize_axis(3, 3, "sum"); });
  EXPECT_TRUE(contains(msg, "sum"));
  EXPECT_TRUE(contains(msg, "axis 3"));
  EXPECT_TRUE(contains(msg, "rank 3"));
  EXPECT_THROW(normalize_axis(-4, 3, "sum"), std::out_of_range);
  EXPECT_THROW(normalize_axis(0, 0, "sum"), std::out_of_range);
}

TEST(View, Contiguity) {
  EXPECT_TRUE(View::contiguous({2, 3}).is_contiguous());
  EXPECT_TRUE(View::contiguous({}).is_contiguous());
  EXPECT_FALSE(View::contiguous({2, 3}).permute(std::vector<int64_t>{1, 0}).is_contiguous());
  // A permutation of size-1 axes moves nothing: still contiguous.
  EXPECT_TRUE(View::contiguous({1, 3, 1}).permute(std::vector<int64_t>{2, 1, 0}).is_contiguous());
  EXPECT_FALSE(View::contiguous({3}).expand({2, 3}).is_contiguous());
  View offset = View::contiguous({4});
  offset.offset = 1;
  EXPECT_FALSE(offset.is_contiguous());
}

TEST(View, Permute) {
  View v = View::contiguous({2, 3, 4}).permute(std::vector<int64_t>{2, 0, 1});
  EXPECT_EQ(v.shape, (Shape{4, 2, 3}));
  EXPECT_EQ(v.strides, (Strides{1, 12, 4}));
  EXPECT_EQ(v.offset, 0);
  // Transposing twice is the identity.
  EXPECT_EQ(View::contiguous({2, 3}).permute(std::vector<int64_t>{1, 0}).permute(std::vector<int64_t>{1, 0}),
            View::contiguous({2, 3}));
}

TEST(View, ExpandGivesBroadcastAxesStrideZero) {
  View v = View::contiguous({3, 1}).expand({2, 3, 4});
  EXPECT_EQ(v.shape, (Shape{2, 3, 4}));
  EXPECT_EQ(v.strides, (Strides{0, 1, 0}));
  EXPECT_EQ(offsets(View::contiguous({3}).expand({2, 3})), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(View, SliceWithPositiveAndNegativeSteps) {
  View base = View::contiguous({10});
  // x[2:9:3] -> 2, 5, 8
  EXPECT_EQ(offsets(base.slice(std::vector<int64_t>{2}, std::vector<int64_t>{3}, std::vector<int64_t>{3})),
            (std::vector<int64_t>{2, 5, 8}));
  // x[::-1]
  View rev = base.slice(std::vector<int64_t>{9}, std::vector<int64_t>{-1}, std::vector<int64_t>{10});
  EXPECT_EQ(offsets(rev), iota(10, 9, -1));
  EXPECT_EQ(rev.strides, (Strides{-1}));
  EXPECT_EQ(rev.offset, 9);
  // x[::-1][::-2] composes to the original order, every other element.
  View back = rev.slice(std::vector<int64_t>{9}, std::vector<int64_t>{-2}, std::vector<int64_t>{5});
  EXPECT_EQ(offsets(back), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  // 2-d: m[1:, ::-2] of a 3x4.
  View m = View::contiguous({3, 4}).slice(std::vector<int64_t>{1, 3}, std::vector<int64_t>{1, -2},
                                          std::vector<int64_t>{2, 2});
  EXPECT_EQ(offsets(m), (std::vector<int64_t>{7, 5, 11, 9}));
  // An empty slice reads nothing, and must not move the offset past the end.
  View empty = base.slice(std::vector<int64_t>{10}, std::vector<int64_t>{1}, std::vector<int64_t>{0});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.offset, 0);
}

TEST(View, ReshapeOfContiguousIsContiguous) {
  std::optional<View> v = View::contiguous({2, 3, 4}).reshape({6, 4});
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, View::contiguous({6, 4}));
  ASSERT_TRUE(View::contiguous({}).reshape({1, 1}));
  EXPECT_EQ(View::contiguous({1}).reshape({})->shape, Shape{});
}

TEST(View, ReshapeIsAViewWhenStridesAllowIt) {
  View t = View::contiguous({2, 3}).permute(std::vector<int64_t>{1, 0});  // 3x2, strides [1, 3]
  // Adding or removing size-1 axes never needs a copy.
  std::optional<View> a = t.reshape({3, 1, 2});
  ASSERT_TRUE(a);
  EXPECT_EQ(offsets(*a), offsets(t));
  // Splitting an axis of a non-contiguous view: x.T.reshape(3, 2, 1) and
  // a slice with a step reshaped along its inner, contiguous axis.
  View s = View::contiguous({4, 6}).slice(std::vector<int64_t>{0, 0}, std::vector<int64_t>{2, 1},
                                          std::vector<int64_t>{2, 6});
  std::optional<View> b = s.reshape({2, 2, 3});
  ASSERT_TRUE(b);
  EXPECT_EQ(offsets(*b), offsets(s));
  // A reversed contiguous array flattens with stride -1.
  View r = View::contiguous({2, 3}).slice(std::vector<int64_t>{1, 2}, std::vector<int64_t>{-1, -1},
                                          std::vector<int64_t>{2, 3});
  std::optional<View> c = r.reshape({6});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->strides, (Strides{-1}));
  EXPECT_EQ(offsets(*c), iota(6, 5, -1));
  // A broadcast axis splits into broadcast axes.
  View e = View::contiguous({1, 4}).expand({3, 4});
  std::optional<View> d = e.reshape({3, 2, 2});
  ASSERT_TRUE(d);
  EXPECT_EQ(offsets(*d), offsets(e));
}

TEST(View, ReshapeNeedsACopyWhenStridesCannotExpressIt) {
  View t = View::contiguous({2, 3}).permute(std::vector<int64_t>{1, 0});
  EXPECT_FALSE(t.reshape({6}));
  View s = View::contiguous({4, 3}).slice(std::vector<int64_t>{0, 0}, std::vector<int64_t>{2, 1},
                                          std::vector<int64_t>{2, 3});
  EXPECT_FALSE(s.reshape({6}));
  EXPECT_FALSE(View::contiguous({3}).expand({2, 3}).reshape({6}));
}

TEST(View, ReshapeOfZeroSizeAlwaysWorks) {
  View t = View::contiguous({0, 3}).permute(std::vector<int64_t>{1, 0});
  std::optional<View> v = t.reshape({0});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->shape, Shape{0});
}

// Every shape with `n` elements of rank 0..3, dims >= 1.
std::vector<Shape> shapes_with(int64_t n) {
  std::vector<Shape> out;
  if (n == 1) out.push_back({});
  out.push_back({n});
  for (int64_t a = 1; a <= n; ++a) {
    if (n % a) continue;
    out.push_back({a, n / a});
    for (int64_t b2 = 1; b2 <= n / a; ++b2)
      if ((n / a) % b2 == 0) out.push_back({a, b2, n / a / b2});
  }
  return out;
}

bool only_ones_differ(const Shape& a, const Shape& b) {
  Shape x, y;
  for (int64_t d : a)
    if (d != 1) x.push_back(d);
  for (int64_t d : b)
    if (d != 1) y.push_back(d);
  return x == y;
}

// Random chains of permute / slice / expand over a small buffer, reshaped
// into every shape of the same size: a reshape that returns a view must read
// the same elements in the same order, and one that is always possible
// (contiguous input, or only size-1 axes added or removed) must not fail.
TEST(View, ReshapeAgreesWithRowMajorOrderOnRandomViews) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    View v = View::contiguous({4, 3, 2});
    for (int step = 0; step < 3; ++step) {
      switch (pick(0, 2)) {
        case 0: {
          std::vector<int64_t> perm = iota(v.rank());
          std::shuffle(perm.begin(), perm.end(), rng);
          v = v.permute(perm);
          break;
        }
        case 1: {
          std::vector<int64_t> starts, steps, lengths;
          for (int64_t d : v.shape) {
            int64_t st = pick(1, 2) * (pick(0, 1) ? 1 : -1);
            SliceBounds sb = normalize_slice(std::nullopt, std::nullopt, st, d);
            starts.push_back(sb.start);
            steps.push_back(st);
            lengths.push_back(sb.length);
          }
          v = v.slice(starts, steps, lengths);
          break;
        }
        default: {
          Shape to = v.shape;
          for (int64_t& d : to)
            if (d == 1) d = 2;
          v = v.expand(to);
        }
      }
    }
    for (const Shape& to : shapes_with(v.numel())) {
      std::optional<View> r = v.reshape(to);
      if (v.is_contiguous() || only_ones_differ(v.shape, to)) {
        ASSERT_TRUE(r) << to_string(v.shape) << " strides " << to_string(v.strides) << " -> " << to_string(to);
      }
      if (!r) continue;
      ASSERT_EQ(r->shape, to);
      ASSERT_EQ(offsets(*r), offsets(v)) << to_string(v.shape) << " strides " << to_string(v.strides) << " -> "
                                         << to_string(to);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

// Python's slice.indices(), written out as CPython's PySlice_AdjustIndices.
std::vector<int64_t> python_slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step,
                                  int64_t dim) {
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += dim;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= dim) {
      x = step < 0 ? dim - 1 : dim;
    }
    return x;
  };
  int64_t b = adjust(start, step < 0 ? dim - 1 : 0), e = adjust(stop, step < 0 ? -1 : dim);
  std::vector<int64_t> out;
  for (__int128 i = b; step > 0 ? i < e : i > e; i += step) out.push_back(static_cast<int64_t>(i));
  return out;
}

TEST(NormalizeSlice, MatchesPythonForAllSmallCases) {
  std::vector<std::optional<int64_t>> ends = {std::nullopt};
  for (int64_t i = -8; i <= 8; ++i) ends.push_back(i);
  for (int64_t dim = 0; dim <= 6; ++dim)
    for (auto start : ends)
      for (auto stop : ends)
        for (int64_t step : {-3, -2, -1, 1, 2, 3}) {
          std::vector<int64_t> want = python_slice(start, stop, step, dim);
          SliceBounds got = normalize_slice(start, stop, step, dim);
          ASSERT_EQ(got.length, static_cast<int64_t>(want.size()))
              << "dim " << dim << " start " << start.value_or(99) << " stop " << stop.value_or(99) << " step "
              << step;
          if (!want.empty()) {
            ASSERT_EQ(got.start, want[0]);
          }
        }
}

// Steps near +-2^63 once overflowed (e - b + step - 1) and came back empty.
TEST(NormalizeSlice, StepsNearInt64Limits) {
  const int64_t max = INT64_MAX, min = INT64_MIN;
  for (int64_t dim : {0, 1, 5})
    for (int64_t step : {max, max - 1, -max, min, min + 2})
      for (std::optional<int64_t> start : {std::optional<int64_t>(), std::optional<int64_t>(0),
                                           std::optional<int64_t>(-1), std::optional<int64_t>(max),
                                           std::optional<int64_t>(min)}) {
        std::vector<int64_t> want = python_slice(start, std::nullopt, step, dim);
        SliceBounds got = normalize_slice(start, std::nullopt, step, dim);
        ASSERT_EQ(got.length, static_cast<int64_t>(want.size())) << "dim " << dim << " step " << step;
        if (!want.empty()) {
          EXPECT_EQ(got.start, want[0]);
        }
      }
  // An axis of one element keeps a stride that step * stride would overflow.
  View v = View::contiguous({5, 6}).slice(std::vector<int64_t>{0, 2}, std::vector<int64_t>{max, min + 1},
                                           std::vector<int64_t>{1, 1});
  EXPECT_EQ(v.shape, (Shape{1, 1}));
  EXPECT_EQ(v.offset, 2);
}

// Note [Sizes fit int64]: the element count, strides or bytes of these
// shapes would wrap (2^61 x 8 int8 had 0 elements).
TEST(Shape, SizesPastInt64AreRefusedNamingTheOp) {
  check_shape(Shape{1 << 20, 1 << 20, 1 << 20}, 4, "ok");  // 2^62 bytes: fits
  EXPECT_EQ(error_of<std::invalid_argument>([] { check_shape(Shape{int64_t{1} << 61, 8}, 1, "sum"); }),
            "sum: shape [2305843009213693952, 8] is too big (its size in bytes, at 1 per element, exceeds 2^63 - 1)");
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { check_shape(Shape{int64_t{1} << 60}, 8, "x"); }),
                       "too big"));
  // A zero-size dim does not hide the others: their strides are still formed.
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { check_shape(Shape{0, INT64_MAX, 2}, 1, "x"); }),
                       "too big"));
  EXPECT_EQ(error_of<std::invalid_argument>([] { check_shape(Shape{1, -1}, 4, "broadcast_to"); }),
            "broadcast_to: negative dimension -1 in shape [1, -1]");
  EXPECT_EQ(checked_mul(INT64_MAX, 2), std::nullopt);
  EXPECT_EQ(checked_mul(INT64_MIN, -1), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
}

TEST(NormalizeSlice, Examples) {
  SliceBounds r = normalize_slice(std::nullopt, std::nullopt, -1, 5);  // [::-1]
  EXPECT_EQ(r.start, 4);
  EXPECT_EQ(r.length, 5);
  r = normalize_slice(-2, std::nullopt, 1, 5);  // [-2:]
  EXPECT_EQ(r.start, 3);
  EXPECT_EQ(r.length, 2);
  r = normalize_slice(1, -1, 2, 6);  // [1:-1:2] -> 1, 3
  EXPECT_EQ(r.start, 1);
  EXPECT_EQ(r.length, 2);
  r = normalize_slice(100, 200, 1, 5);
  EXPECT_EQ(r.length, 0);
  EXPECT_TRUE(contains(error_of<std::invalid_argument>([] { normalize_slice(0, 1, 0, 5); }), "step"));
}

TEST(MoveView, AppliesEachMovementOpByItsAttr) {
  View in = View::contiguous({2, 3});
  EXPECT_EQ(move_view(in, Op::Permute, {1, 0}), in.permute(std::vector<int64_t>{1, 0}));
  EXPECT_EQ(move_view(in, Op::Expand, {4, 2, 3}), in.expand({4, 2, 3}));
  EXPECT_EQ(move_view(in, Op::Reshape, {3, 2}), View::contiguous({3, 2}));
  // Slice attrs are starts, then steps, then lengths: x[1:, ::-1].
  std::optional<View> s = move_view(in, Op::Slice, {1, 2, 1, -1, 1, 3});
  ASSERT_TRUE(s);
  EXPECT_EQ(offsets(*s), (std::vector<int64_t>{5, 4, 3}));
  EXPECT_FALSE(move_view(in.permute(std::vector<int64_t>{1, 0}), Op::Reshape, {6}));
}

TEST(MoveView, NonMovementOpIsAnInternalError) {
  std::string msg = error_of<std::logic_error>([] { move_view(View::contiguous({2}), Op::Exp, {}); });
  EXPECT_TRUE(contains(msg, "Exp is not a movement op"));
  EXPECT_TRUE(contains(msg, "bug in braze"));
}

}  // namespace
}  // namespace braze
