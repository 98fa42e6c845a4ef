// Movement ops and indexing: each records a view node (Note [Views]).
#include <algorithm>

#include "runtime/ops.h"

namespace braze {

namespace {

Tensor movement(Op op, const Tensor& x, std::vector<int64_t> ints) {
  return record(op, {x}, Attr{std::move(ints), {}});
}

std::vector<int64_t> normalize_axes(std::vector<int64_t> axes, int64_t rank, std::string_view op) {
  for (int64_t& a : axes) a = normalize_axis(a, rank, op);
  return axes;
}

}  // namespace

Tensor reshape(const Tensor& x, Shape shape) {
  auto unknown = std::find(shape.begin(), shape.end(), -1);
  if (unknown != shape.end()) {
    BRAZE_CHECK(std::count(shape.begin(), shape.end(), -1) == 1, "reshape: only one dimension can be -1 in ",
                to_string(shape));
    std::optional<int64_t> known = 1;
    for (int64_t d : shape) {
      if (d == -1) continue;
      BRAZE_CHECK(d >= 0, "reshape: negative dimension ", d, " in shape ", to_string(shape));
      if (known) known = checked_mul(*known, d);  // a product past int64 divides no count
    }
    BRAZE_CHECK(known && *known != 0 && x.numel() % *known == 0, "reshape: cannot reshape ", to_string(x.shape()),
                " (", x.numel(), " elements) into ", to_string(shape));
    *unknown = x.numel() / *known;
  }
  if (shape == x.shape()) return x;
  return movement(Op::Reshape, x, std::move(shape));
}

Tensor permute(const Tensor& x, std::vector<int64_t> axes) {
  BRAZE_CHECK(static_cast<int64_t>(axes.size()) == x.ndim(), "permute: ", to_string(axes),
              " does not give one position per axis of ", to_string(x.shape()));
  axes = normalize_axes(std::move(axes), x.ndim(), "permute");
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i) identity &= axes[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return movement(Op::Permute, x, std::move(axes));
}

Tensor pad(const Tensor& x, std::vector<int64_t> before, std::vector<int64_t> after) {
  BRAZE_CHECK(static_cast<int64_t>(before.size()) == x.ndim() && static_cast<int64_t>(after.size()) == x.ndim(),
              "pad: needs the padding before and after each axis of ", to_string(x.shape()), ", got ",
              to_string(before), " and ", to_string(after));
  if (std::all_of(before.begin(), before.end(), [](int64_t p) { return p == 0; }) &&
      std::all_of(after.begin(), after.end(), [](int64_t p) { return p == 0; }))
    return x;
  std::vector<int64_t> ints = std::move(before);
  ints.insert(ints.end(), after.begin(), after.end());
  return movement(Op::Pad, x, std::move(ints));
}

Tensor spread(const Tensor& x, int64_t axis, int64_t step) {
  axis = normalize_axis(axis, x.ndim(), "spread");
  BRAZE_CHECK(step >= 1, "spread: step ", step, " is not positive");
  const int64_t n = x.shape()[axis];
  if (step == 1 || n <= 1) return x;
  // [.., n, ..] -> [.., n, 1, ..] padded to [.., n, step, ..]: each element
  // then step - 1 zeros; merged ([.., n * step, ..], the one copying reshape
  // of Note [Windows]) and cut after the last element.
  Shape split = x.shape();
  split.insert(split.begin() + axis + 1, 1);
  std::vector<int64_t> before(split.size(), 0), after(split.size(), 0);
  after[axis + 1] = step - 1;
  Tensor padded = pad(reshape(x, split), before, after);
  Shape merged = x.shape();
  std::optional<int64_t> spread_length = checked_mul(n, step);
  BRAZE_CHECK(spread_length, "spread: ", n, " elements ", step, " apart is too long");
  merged[axis] = *spread_length;
  std::vector<Index> items(static_cast<size_t>(x.ndim()), Slice{});
  items[axis] = Slice{0, (n - 1) * step + 1, 1};
  return index(reshape(padded, merged), items);
}

Tensor transpose(const Tensor& x, std::optional<std::vector<int64_t>> axes) {
  if (axes) return permute(x, *axes);
  std::vector<int64_t> rev(x.ndim());
  for (int64_t i = 0; i < x.ndim(); ++i) rev[i] = x.ndim() - 1 - i;
  return permute(x, rev);
}

Tensor matrix_transpose(const Tensor& x) {
  BRAZE_CHECK(x.ndim() >= 2, "matrix_transpose: needs at least 2 dims, got shape ", to_string(x.shape()));
  std::vector<int64_t> p(x.ndim());
  for (int64_t i = 0; i < x.ndim(); ++i) p[i] = i;
  std::swap(p[x.ndim() - 1], p[x.ndim() - 2]);
  return permute(x, p);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  // Before the padding reshape, which would take a negative size as its own.
  check_shape(shape, static_cast<int64_t>(itemsize(x.dtype())), "broadcast_to");
  Tensor y = x;
  if (x.ndim() < static_cast<int64_t>(shape.size())) {
    // Checked here, before the padding reshape, so the error names the user's shapes.
    Shape padded(shape.size() - x.shape().size(), 1);
    padded.insert(padded.end(), x.shape().begin(), x.shape().end());
    bool ok = true;
    for (size_t i = 0; i < shape.size(); ++i) ok &= padded[i] == shape[i] || padded[i] == 1;
    BRAZE_CHECK(ok, "broadcast_to: cannot broadcast ", to_string(x.shape()), " to ", to_string(shape));
    y = reshape(x, padded);
  }
  return movement(Op::Expand, y, shape);
}

Tensor expand_dims(const Tensor& x, int64_t axis) {
  axis = normalize_axis(axis, x.ndim() + 1, "expand_dims");
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(x, s);
}

Tensor squeeze(const Tensor& x, std::optional<std::vector<int64_t>> axes) {
  Shape s;
  if (!axes) {
    for (int64_t d : x.shape())
      if (d != 1) s.push_back(d);
    return reshape(x, s);
  }
  std::vector<int64_t> ax = normalize_axes(*axes, x.ndim(), "squeeze");
  std::vector<int64_t> sorted = ax;
  std::sort(sorted.begin(), sorted.end());
  BRAZE_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "squeeze: repeated axis in ",
              to_string(*axes));
  for (int64_t a : ax)
    BRAZE_CHECK(x.shape()[a] == 1, "squeeze: cannot select axis ", a, " of size ", x.shape()[a], " in shape ",
                to_string(x.shape()), " (only size-1 axes can be squeezed)");
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) s.push_back(x.shape()[i]);
  return reshape(x, s);
}

Tensor flatten(const Tensor& x) { return reshape(x, {x.numel()}); }

Tensor index(const Tensor& x, std::span<const Index> items) {
  // Count the axes the items consume, to expand the ellipsis.
  int64_t consumed = 0, ellipses = 0;
  for (const Index& it : items) {
    if (std::holds_alternative<Ellipsis>(it)) ++ellipses;
    else if (!std::holds_alternative<NewAxis>(it)) ++consumed;
  }
  BRAZE_CHECK(ellipses <= 1, "index: an index can only have a single ellipsis ('...')");
  BRAZE_CHECK_INDEX(consumed <= x.ndim(), "index: too many indices for a tensor of rank ", x.ndim(), " (got ",
                    consumed, ")");
  const int64_t rank = x.ndim();
  std::vector<int64_t> starts(rank, 0), steps(rank, 1), lengths = x.shape();
  Shape out;  // the result's shape: kept axes and new axes, in order
  int64_t axis = 0;
  auto keep_axis = [&]() { out.push_back(lengths[axis++]); };
  for (const Index& it : items) {
    if (std::holds_alternative<Ellipsis>(it)) {
      for (int64_t k = 0; k < rank - consumed; ++k) keep_axis();
    } else if (std::holds_alternative<NewAxis>(it)) {
      out.push_back(1);
    } else if (const int64_t* i = std::get_if<int64_t>(&it)) {
      int64_t dim = x.shape()[axis];
      BRAZE_CHECK_INDEX(*i >= -dim && *i < dim, "index ", *i, " is out of bounds for axis ", axis, " with size ",
                        dim);
      starts[axis] = *i < 0 ? *i + dim : *i;
      lengths[axis++] = 1;
    } else {
      const Slice& s = std::get<Slice>(it);
      SliceBounds b = normalize_slice(s.start, s.stop, s.step, x.shape()[axis]);
      starts[axis] = b.start;
      steps[axis] = s.step;
      lengths[axis] = b.length;
      keep_axis();
    }
  }
  while (axis < rank) keep_axis();
  Tensor y = x;
  bool whole = true;
  for (int64_t a = 0; a < rank; ++a) whole &= starts[a] == 0 && steps[a] == 1 && lengths[a] == x.shape()[a];
  if (!whole) {
    std::vector<int64_t> ints = starts;
    ints.insert(ints.end(), steps.begin(), steps.end());
    ints.insert(ints.end(), lengths.begin(), lengths.end());
    y = movement(Op::Slice, x, std::move(ints));
  }
  return reshape(y, out);
}

}  // namespace braze
