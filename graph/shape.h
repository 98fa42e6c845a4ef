// Shapes, strides and zero-copy views.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace braze {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, may be negative or 0

int64_t numel(std::span<const int64_t> shape);
Strides contiguous_strides(std::span<const int64_t> shape);

// Note [Sizes fit int64]
// Every size braze computes from a shape (the element count, a contiguous
// stride, a byte size, an arena offset, a kernel's row count) is an int64
// product of the dims, so a shape whose product overflows would wrap: a
// count of 0 for 2^61 x 8, a negative row length, a heap overrun. Such a
// shape is refused where it is recorded, as NumPy refuses one ("array is
// too big"): check_shape throws std::invalid_argument naming the op when a
// dim is negative or when the product of the dims (zero-size dims counted
// as 1, since the strides of the other dims are still formed) times the
// element size exceeds INT64_MAX. Every shape that reaches a node passes it
// (graph/infer.cpp for computed ops, runtime/tensor.cpp for leaves), so the
// layers above may multiply dims without checking.
void check_shape(std::span<const int64_t> shape, int64_t itemsize, std::string_view op);
// a * b, or nullopt where it overflows int64.
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
std::string to_string(std::span<const int64_t> dims);  // "[2, 3]"

// NumPy broadcasting. `op` names the op in the error message.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// Maps a possibly negative axis into [0, rank); throws std::out_of_range naming `op`.
int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view op);

// Note [Views]
// Every node has a View: its shape, and the strides and offset with which it
// reads the storage of its base (the nearest ancestor that is not a view op).
// A node that computes has contiguous strides and offset 0. A view op
// (reshape, permute, expand, slice) composes its input's view, so a chain of
// views over a buffer is one affine map that a kernel bakes in: no copy.
//
// Note [Windows]
// A view may also have a window: per axis, the range [lo, hi) of indices
// that read the base; every index outside it reads zero (false, 0, +0.0).
// That is constant padding (bz.pad, the gradient of a slice, the parts of a
// lazy concatenation) as a view: the strides and offset still map every
// index to an address, but one outside the window is never read, so a
// kernel loads under a mask (Note [Masked loads], fusion/lower_windows.h)
// and nothing is copied. Slicing, permuting and broadcasting a windowed
// view give windowed views; a reshape only where it leaves the windowed
// axes alone (else it is the one copying reshape). The window is empty
// when it covers every index, so a plain view has none and compares equal
// to one that lost its padding to a slice. A library call never reads a
// windowed view (fusion/library_rules.cpp copies it first).
struct Window {
  int64_t lo = 0, hi = 0;
  friend bool operator==(const Window&, const Window&) = default;
};

struct View {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  std::vector<Window> window;  // empty, or one per axis (Note [Windows])

  static View contiguous(Shape shape);
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return braze::numel(shape); }
  bool is_contiguous() const;  // row-major dense with offset 0, no window
  bool windowed() const { return !window.empty(); }
  // Axis d's window ([0, dim) for a view without one).
  Window window_of(size_t d) const { return window.empty() ? Window{0, shape[d]} : window[d]; }
  // Note [Windows]: padded by lo[d] before and hi[d] after each axis d.
  View pad(std::span<const int64_t> lo, std::span<const int64_t> hi) const;

  View permute(std::span<const int64_t> perm) const;
  View expand(const Shape& to) const;  // size-1 dims get stride 0
  // Per axis: start, step (nonzero) and the resulting length, already
  // normalised (see normalize_slice).
  View slice(std::span<const int64_t> starts, std::span<const int64_t> steps,
             std::span<const int64_t> lengths) const;
  // The same elements in row-major order with a new shape, if expressible
  // with strides; nullopt means the reshape needs a copy.
  std::optional<View> reshape(const Shape& to) const;

  friend bool operator==(const View&, const View&) = default;

 private:
  std::optional<View> reshape_windowed(const Shape& to) const;
};

// Python-style slice normalisation of (start, stop, step) over a dimension of
// size `dim`, where absent start/stop are nullopt. Returns {start, length}.
struct SliceBounds {
  int64_t start;
  int64_t length;
};
SliceBounds normalize_slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                            int64_t step, int64_t dim);

}  // namespace braze
