// concatenate and stack (Note [Concatenation realizes]).
#include <cstring>
#include <numeric>

#include "runtime/autodiff.h"
#include "runtime/ops.h"
#include "runtime/transfer.h"

namespace braze {

namespace {

// Note [Lazy concatenation].
Tensor concatenate_lazily(std::span<const Tensor> xs, int64_t axis, DType dtype, const Shape& shape) {
  const int64_t total = shape[axis];
  const Device device = xs[0].device();
  Shape along(shape.size(), 1);
  along[axis] = total;
  const DType index_type = total < (int64_t{1} << 31) ? DType::Int32 : DType::Int64;
  const Tensor index = reshape(arange(Scalar(int64_t{0}), Scalar(total), Scalar(int64_t{1}), index_type, device), along);
  Tensor result;
  int64_t at = 0;
  for (const Tensor& x : xs) {
    const int64_t n = x.shape()[axis];
    if (n == 0) continue;
    std::vector<int64_t> before(shape.size(), 0), after(shape.size(), 0);
    before[axis] = at;
    after[axis] = total - at - n;
    Tensor placed = pad(x.dtype() == dtype ? x : astype(x, dtype), before, after);
    result = result.defined() ? where(less(index, Scalar(at)), result, placed) : placed;
    at += n;
  }
  return result.defined() ? result : full(shape, Scalar(int64_t{0}), dtype, device);
}

}  // namespace

// Note [Lazy concatenation]
// A concatenation of a few tensors is a view of each, padded with zeros to
// the whole result (Note [Windows], graph/shape.h), chosen by index:
// where(i < n0, pad(x0), where(i < n0 + n1, pad(x1), ...)). It records no
// new op and copies nothing: one kernel reads each part through its
// window (Note [Masked loads]), fused with what computed the parts (a pad
// sinks through element-wise work under a mask, Note [Padding sinks under
// a mask]) and with what reads the result; a gradient flows back as
// slices. Each element selects among every part, so past kLazyParts parts
// (np.concatenate of a list of rows) that costs more than one copy:
// Note [Concatenation realizes].
constexpr size_t kLazyParts = 8;

// Note [Concatenation realizes]
// Past kLazyParts parts, concatenate evaluates its inputs (all in one
// program, each fused with whatever produced it), then copies each into
// its part of a new tensor, which comes back realized: recording stops
// there. On a device, a part is copied only as one contiguous block: a
// concatenation along an inner axis moves that axis to the front,
// concatenates there and returns the view that moves it back (later
// kernels read it with strides).
Tensor concatenate(std::span<const Tensor> xs, int64_t axis) {
  BRAZE_CHECK(!xs.empty(), "concatenate: needs at least one tensor");
  for (size_t i = 0; i < xs.size(); ++i) BRAZE_CHECK(xs[i].defined(), "concatenate: an empty Tensor handle");
  const int64_t rank = xs[0].ndim();
  BRAZE_CHECK(rank > 0, "concatenate: zero-dimensional tensors cannot be concatenated");
  axis = normalize_axis(axis, rank, "concatenate");
  DType dtype = xs[0].dtype();
  Shape shape = xs[0].shape();
  shape[axis] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    BRAZE_CHECK(x.ndim() == rank, "concatenate: tensor 0 has ", rank, " dimension(s) but tensor ", i, " has ",
                x.ndim(), " (shapes ", to_string(xs[0].shape()), " and ", to_string(x.shape()), ")");
    BRAZE_CHECK(x.device() == xs[0].device(), "concatenate: tensor 0 is on ", xs[0].device().str(), " but tensor ",
                i, " is on ", x.device().str(), "; move one with .to()");
    for (int64_t d = 0; d < rank; ++d)
      BRAZE_CHECK(d == axis || x.shape()[d] == xs[0].shape()[d], "concatenate: shapes ", to_string(xs[0].shape()),
                  " and ", to_string(x.shape()), " differ in axis ", d, ", not only in the axis ", axis,
                  " they are joined along");
    dtype = promote(dtype, x.dtype());
    shape[axis] += x.shape()[axis];  // each below 2^63 bytes; their sum is checked next
    BRAZE_CHECK(shape[axis] >= 0, "concatenate: the joined axis is too long");
  }
  check_shape(shape, static_cast<int64_t>(itemsize(dtype)), "concatenate");
  if (xs.size() <= kLazyParts) return concatenate_lazily(xs, axis, dtype, shape);
  for (size_t i = 0; i < xs.size(); ++i)
    // The result is realized, a leaf: a gradient would stop there, silently.
    BRAZE_CHECK(!grad_enabled() || !xs[i].node()->requires_grad, "concatenate: tensor ", i,
                " requires a gradient, which cannot flow through a concatenation of more than ", kLazyParts,
                " tensors yet (it realizes its inputs: Note [Concatenation realizes]); detach it, or record under "
                "bz.no_grad()");
  const int64_t outer = std::accumulate(shape.begin(), shape.begin() + axis, int64_t{1}, std::multiplies<>());
  const Device device = xs[0].device();
  if (!device.is_cpu() && outer > 1 && numel(shape) > 0) {
    std::vector<int64_t> front(rank), back(rank);
    std::iota(front.begin(), front.end(), 0);
    front.erase(front.begin() + axis);
    front.insert(front.begin(), axis);  // axis first, the others in order
    for (int64_t d = 0; d < rank; ++d) back[front[d]] = d;
    std::vector<Tensor> moved;
    for (const Tensor& x : xs) moved.push_back(permute(x, front));
    return permute(concatenate(moved, 0), back);
  }
  std::vector<Tensor> parts;
  for (const Tensor& x : xs) parts.push_back(x.dtype() == dtype ? x : astype(x, dtype));
  realize(parts);
  Array out = allocate_on(device, dtype, shape);
  // Each part is `outer` runs of part_row bytes, which land out_row bytes apart.
  const int64_t item = static_cast<int64_t>(itemsize(dtype));
  const int64_t inner = std::accumulate(shape.begin() + axis + 1, shape.end(), int64_t{1}, std::multiplies<>());
  const int64_t out_row = shape[axis] * inner * item;
  int64_t at = 0;  // the part's first byte within a row of the result
  for (const Tensor& part : parts) {
    const Array& a = part.data();
    const int64_t part_row = part.shape()[axis] * inner * item;
    if (part_row > 0 && outer > 0) {
      if (device.is_cpu()) {
        for (int64_t r = 0; r < outer; ++r)
          std::memcpy(out.data.get() + r * out_row + at, a.data.get() + r * part_row, static_cast<size_t>(part_row));
      } else {  // outer == 1 here: one block
        Array block = a;
        block.data = std::shared_ptr<std::byte[]>(out.data, out.data.get() + at);
        copy_array(block, a);
      }
    }
    at += part_row;
  }
  return from_array(std::move(out), device);
}

Tensor stack(std::span<const Tensor> xs, int64_t axis) {
  BRAZE_CHECK(!xs.empty(), "stack: needs at least one tensor");
  for (const Tensor& x : xs) BRAZE_CHECK(x.defined(), "stack: an empty Tensor handle");
  axis = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    BRAZE_CHECK(xs[i].shape() == xs[0].shape(), "stack: all tensors need the same shape; tensor 0 is ",
                to_string(xs[0].shape()), " but tensor ", i, " is ", to_string(xs[i].shape()));
    parts.push_back(expand_dims(xs[i], axis));
  }
  return concatenate(parts, axis);
}

}  // namespace braze
