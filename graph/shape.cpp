#include "graph/shape.h"

#include <algorithm>

#include "graph/check.h"

namespace braze {

int64_t numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Strides contiguous_strides(std::span<const int64_t> shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

void check_shape(std::span<const int64_t> shape, int64_t itemsize, std::string_view op) {
  std::optional<int64_t> bytes = itemsize;
  for (int64_t d : shape) {
    BRAZE_CHECK(d >= 0, op, ": negative dimension ", d, " in shape ", to_string(shape));
    if (bytes) bytes = checked_mul(*bytes, std::max<int64_t>(d, 1));
  }
  BRAZE_CHECK(bytes.has_value(), op, ": shape ", to_string(shape), " is too big (its size in bytes, at ", itemsize,
              " per element, exceeds 2^63 - 1)");
}

std::string to_string(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    BRAZE_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", to_string(a), " and ",
                to_string(b), " do not broadcast (axis ", i, " of the result: ", da,
                " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view op) {
  BRAZE_CHECK_AXIS(axis >= -rank && axis < rank, op, ": axis ", axis,
                    " is out of range for a tensor of rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

View View::contiguous(Shape shape) {
  View v;
  v.strides = contiguous_strides(shape);
  v.shape = std::move(shape);
  return v;
}

bool View::is_contiguous() const {
  if (offset != 0 || windowed()) return false;
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != acc) return false;
    acc *= shape[i];
  }
  return true;
}

namespace {

// Note [Windows]: a window that covers every index is no window.
void drop_full_window(View& v) {
  for (size_t d = 0; d < v.window.size(); ++d)
    if (v.window[d] != Window{0, v.shape[d]}) return;
  v.window.clear();
}

// Floor division (C++'s rounds toward zero), for a slice's window bounds.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Note [Windows]: the indices j in [0, length) of a slice (start, step)
// whose source index start + j * step lies in w: a range, whatever the
// step's sign, since the source indices are monotonic in j.
Window sliced_window(Window w, int64_t start, int64_t step, int64_t length) {
  if (length == 0 || w.hi <= w.lo) return {0, 0};
  if (length == 1) return start >= w.lo && start < w.hi ? Window{0, 1} : Window{0, 0};  // any step, even -2^63
  int64_t first, last;  // the j range, inclusive, before clamping
  if (step > 0) {
    first = -floor_div(start - w.lo, step);          // ceil((lo - start) / step)
    last = floor_div(w.hi - 1 - start, step);
  } else {
    first = -floor_div(w.hi - 1 - start, -step);     // ceil((start - (hi - 1)) / -step)
    last = floor_div(start - w.lo, -step);
  }
  first = std::max<int64_t>(first, 0);
  last = std::min<int64_t>(last, length - 1);
  return last < first ? Window{0, 0} : Window{first, last + 1};
}

}  // namespace

View View::permute(std::span<const int64_t> perm) const {
  BRAZE_ASSERT(perm.size() == shape.size(), "permute rank");
  View v;
  v.offset = offset;
  for (int64_t p : perm) {
    v.shape.push_back(shape[p]);
    v.strides.push_back(strides[p]);
    if (windowed()) v.window.push_back(window[p]);
  }
  return v;
}

View View::pad(std::span<const int64_t> lo, std::span<const int64_t> hi) const {
  BRAZE_ASSERT(lo.size() == shape.size() && hi.size() == shape.size(), "pad rank");
  View v = *this;
  v.window.clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    Window w = window_of(d);
    v.shape[d] = shape[d] + lo[d] + hi[d];
    // Index lo[d] reads what index 0 read; checked, as a graph file can carry any attr.
    std::optional<int64_t> shift = checked_mul(lo[d], strides[d]);
    BRAZE_CHECK(shift && !__builtin_sub_overflow(v.offset, *shift, &v.offset), "pad: padding ", lo[d],
                " before axis ", d, " moves the view's offset past int64");
    v.window.push_back({w.lo + lo[d], w.hi + lo[d]});
  }
  drop_full_window(v);
  return v;
}

View View::expand(const Shape& to) const {
  BRAZE_ASSERT(to.size() >= shape.size(), "expand rank");
  View v;
  v.offset = offset;
  v.shape = to;
  v.strides.assign(to.size(), 0);
  size_t lead = to.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    v.strides[lead + i] = shape[i] == to[lead + i] ? strides[i] : 0;
  if (windowed()) {
    v.window.assign(to.size(), Window{});
    for (size_t d = 0; d < to.size(); ++d) v.window[d] = {0, to[d]};
    // A size-1 axis broadcast is all in its window or all outside it.
    for (size_t i = 0; i < shape.size(); ++i)
      if (window[i].hi <= window[i].lo) v.window[lead + i] = {0, 0};
      else if (shape[i] == to[lead + i]) v.window[lead + i] = window[i];
    drop_full_window(v);
  }
  return v;
}

View View::slice(std::span<const int64_t> starts, std::span<const int64_t> steps,
                 std::span<const int64_t> lengths) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (lengths[i] > 0) v.offset += starts[i] * strides[i];
    // An axis of one element is never stepped along, and stride * step
    // could overflow for a step near 2^63 (x[::2**63 - 1]).
    if (lengths[i] > 1) v.strides[i] = strides[i] * steps[i];
    v.shape[i] = lengths[i];
    if (windowed()) v.window[i] = sliced_window(window[i], starts[i], steps[i], lengths[i]);
  }
  if (windowed()) drop_full_window(v);
  return v;
}

std::optional<View> View::reshape(const Shape& to) const {
  BRAZE_ASSERT(braze::numel(to) == numel(), "reshape numel");
  if (windowed() && numel() > 0) return reshape_windowed(to);
  if (numel() == 0 || is_contiguous()) {
    View v = View::contiguous(to);
    v.offset = offset;
    return v;
  }
  // Drop size-1 dims (their stride is meaningless), then match groups of old
  // dims that are mutually contiguous against groups of new dims, as NumPy's
  // _attempt_nocopy_reshape does.
  Shape old_shape;
  Strides old_strides;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) {
      old_shape.push_back(shape[i]);
      old_strides.push_back(strides[i]);
    }
  View v;
  v.shape = to;
  v.strides.assign(to.size(), 0);
  v.offset = offset;
  size_t oi = 0, ni = 0;
  while (oi < old_shape.size() && ni < to.size()) {
    if (to[ni] == 1) {
      v.strides[ni++] = 0;
      continue;
    }
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = old_shape[oi], np = to[ni];
    while (op != np) {
      if (np < op) np *= to[nj++];
      else op *= old_shape[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (old_strides[k] != old_strides[k + 1] * old_shape[k + 1]) return std::nullopt;
    v.strides[nj - 1] = old_strides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) v.strides[k - 1] = v.strides[k] * to[k];
    oi = oj;
    ni = nj;
  }
  for (; ni < to.size(); ++ni) v.strides[ni] = 0;  // trailing size-1 dims
  return v;
}

// Note [Windows]: a reshape that keeps each windowed axis as an axis of its
// own, at the same place in row-major order (the product of the dims before
// it unchanged), so that axis's index is the same for every element.
std::optional<View> View::reshape_windowed(const Shape& to) const {
  View plain = *this;
  plain.window.clear();
  std::optional<View> v = plain.reshape(to);
  if (!v) return std::nullopt;
  v->window.assign(to.size(), Window{});
  for (size_t e = 0; e < to.size(); ++e) v->window[e] = {0, to[e]};
  int64_t before = 1;
  for (size_t d = 0; d < shape.size(); before *= shape[d], ++d) {
    if (window[d] == Window{0, shape[d]}) continue;
    if (window[d].hi <= window[d].lo) return std::nullopt;  // all zeros: a copy says so simply
    int64_t at = 1;
    size_t e = 0;
    while (e < to.size() && (at < before || (at == before && to[e] != shape[d]))) at *= to[e++];
    if (e == to.size() || at != before || to[e] != shape[d]) return std::nullopt;
    v->window[e] = window[d];
  }
  drop_full_window(*v);
  return v;
}

SliceBounds normalize_slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                            int64_t step, int64_t dim) {
  // The rules of Python's slice.indices().
  BRAZE_CHECK(step != 0, "slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + dim : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, dim);
    return std::clamp<int64_t>(x, -1, dim - 1);
  };
  int64_t b = clamp(start, step > 0 ? 0 : dim - 1);
  int64_t e = clamp(stop, step > 0 ? dim : -1);
  // ceil((e - b) / step) without forming e - b + step - 1 or -step, which
  // overflow for a step near +-2^63 (b and e lie in [-1, dim]).
  if (step > 0) return {b, e > b ? (e - b - 1) / step + 1 : 0};
  return {b, b > e ? (e - b + 1) / step + 1 : 0};
}

}  // namespace braze
