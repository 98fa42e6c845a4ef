// Windowed views (Note [Windows] in graph/shape.h): every chain of pads,
// slices (any step), permutes, broadcasts and reshapes is checked against
// a model that moves a dense array of element offsets, -1 for padding.
#include <gtest/gtest.h>

#include <random>

#include "graph/graph.h"
#include "graph/shape.h"

namespace braze {
namespace {

// What a view reads, element by element in row-major order: the storage
// offset, or -1 where its window leaves the element out.
std::vector<int64_t> reads(const View& v) {
  std::vector<int64_t> out;
  std::vector<int64_t> idx(v.shape.size(), 0);
  for (int64_t i = 0, n = v.numel(); i < n; ++i) {
    int64_t off = v.offset;
    bool in = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      off += idx[d] * v.strides[d];
      Window w = v.window_of(d);
      in = in && idx[d] >= w.lo && idx[d] < w.hi;
    }
    out.push_back(in ? off : -1);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The model: a dense array of what each element reads.
struct Dense {
  Shape shape;
  std::vector<int64_t> at;

  int64_t flat(const std::vector<int64_t>& idx) const {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  }
  // out[i] = f(i) for every multi-index of `to`.
  template <class F>
  static Dense make(const Shape& to, F f) {
    Dense out{to, {}};
    std::vector<int64_t> idx(to.size(), 0);
    for (int64_t i = 0, n = numel(to); i < n; ++i) {
      out.at.push_back(f(idx));
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < to[d]) break;
        idx[d] = 0;
      }
    }
    return out;
  }
};

Dense apply(const Dense& x, Op op, const std::vector<int64_t>& a) {
  const size_t r = x.shape.size();
  switch (op) {
    case Op::Pad: {
      Shape to = x.shape;
      for (size_t d = 0; d < r; ++d) to[d] += a[d] + a[r + d];
      return Dense::make(to, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j(r);
        for (size_t d = 0; d < r; ++d) {
          j[d] = i[d] - a[d];
          if (j[d] < 0 || j[d] >= x.shape[d]) return int64_t{-1};
        }
        return x.at[x.flat(j)];
      });
    }
    case Op::Slice: {
      Shape to(a.begin() + 2 * r, a.end());
      return Dense::make(to, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j(r);
        for (size_t d = 0; d < r; ++d) j[d] = a[d] + i[d] * a[r + d];
        return x.at[x.flat(j)];
      });
    }
    case Op::Permute: {
      Shape to;
      for (int64_t p : a) to.push_back(x.shape[p]);
      return Dense::make(to, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j(r);
        for (size_t d = 0; d < r; ++d) j[a[d]] = i[d];
        return x.at[x.flat(j)];
      });
    }
    case Op::Expand: {
      const size_t lead = a.size() - r;
      return Dense::make(a, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j(r);
        for (size_t d = 0; d < r; ++d) j[d] = x.shape[d] == 1 ? 0 : i[lead + d];
        return x.at[x.flat(j)];
      });
    }
    case Op::Reshape: return Dense{a, x.at};
    default: break;
  }
  ADD_FAILURE() << "not a movement op";
  return x;
}

TEST(Windows, PadReadsZerosAroundTheInput) {
  View v = View::contiguous({2, 3}).pad(std::vector<int64_t>{1, 0}, std::vector<int64_t>{0, 2});
  EXPECT_EQ(v.shape, (Shape{3, 5}));
  EXPECT_EQ(reads(v), (std::vector<int64_t>{-1, -1, -1, -1, -1, 0, 1, 2, -1, -1, 3, 4, 5, -1, -1}));
  EXPECT_FALSE(v.is_contiguous());
}

TEST(Windows, ASliceInsideTheWindowIsAPlainView) {
  View v = View::contiguous({4}).pad(std::vector<int64_t>{2}, std::vector<int64_t>{3});
  std::optional<View> s = move_view(v, Op::Slice, {2, 1, 4});
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->windowed());
  EXPECT_EQ(*s, View::contiguous({4}));
}

TEST(Windows, AReshapeThatMergesAPaddedAxisNeedsACopy) {
  View v = View::contiguous({2, 3}).pad(std::vector<int64_t>{0, 1}, std::vector<int64_t>{0, 0});
  EXPECT_FALSE(v.reshape({8}));
  std::optional<View> kept = v.reshape({1, 2, 1, 4});  // size-1 axes around the padded one
  ASSERT_TRUE(kept);
  EXPECT_EQ(reads(*kept), reads(v));
}

// Random chains of movement ops over a padded view against the model.
TEST(Windows, ChainsOfMovementOpsMatchTheModel) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Shape s;
    for (int64_t d = 0, r = pick(1, 3); d < r; ++d) s.push_back(pick(0, 4) == 0 ? 1 : pick(1, 5));
    View v = View::contiguous(s);
    Dense m = Dense::make(s, [&, i = int64_t{0}](const std::vector<int64_t>&) mutable { return i++; });
    for (int step = 0; step < 5; ++step) {
      const size_t r = v.shape.size();
      std::vector<int64_t> a;
      Op op;
      switch (pick(0, 4)) {
        case 0:
          op = Op::Pad;
          for (size_t d = 0; d < 2 * r; ++d) a.push_back(pick(0, 3));
          break;
        case 1: {
          op = Op::Slice;
          std::vector<int64_t> starts, steps, lengths;
          for (size_t d = 0; d < r; ++d) {
            int64_t n = v.shape[d], step_ = pick(1, 3) * (pick(0, 1) ? 1 : -1);
            SliceBounds b = normalize_slice(pick(-n, n), std::nullopt, step_, n);
            starts.push_back(b.start), steps.push_back(step_), lengths.push_back(b.length);
          }
          a = starts;
          a.insert(a.end(), steps.begin(), steps.end());
          a.insert(a.end(), lengths.begin(), lengths.end());
          break;
        }
        case 2:
          op = Op::Permute;
          for (size_t d = 0; d < r; ++d) a.push_back(static_cast<int64_t>(r - 1 - d));
          break;
        case 3:
          op = Op::Expand;
          a.push_back(pick(1, 3));
          for (int64_t d : v.shape) a.push_back(d == 1 ? pick(1, 3) : d);
          break;
        default: {
          op = Op::Reshape;
          a = v.shape;  // squeeze the size-1 axes and put one in front
          a.erase(std::remove(a.begin(), a.end(), 1), a.end());
          a.insert(a.begin(), 1);
          break;
        }
      }
      std::optional<View> next = move_view(v, op, a);
      if (!next) continue;  // a reshape that needs a copy
      v = *next;
      m = apply(m, op, a);
      ASSERT_EQ(v.shape, m.shape) << "trial " << trial;
      ASSERT_EQ(reads(v), m.at) << "trial " << trial << " after " << info(op).name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace braze
