#include "graph/reference.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/check.h"
#include "graph/infer.h"
#include "graph/scalar_math.h"

namespace braze::reference {

namespace {

// Calls f(index, offsets) for every multi-index of `shape` in row-major
// order, where offsets[k] is the element offset of that index in accessor k.
template <class F>
void for_each_index(const Shape& shape, std::span<const StridedArray> acc, F&& f) {
  int64_t n = numel(shape);
  if (n == 0) return;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0), off(acc.size());
  for (size_t k = 0; k < acc.size(); ++k) off[k] = acc[k].view.offset;
  for (int64_t i = 0; i < n; ++i) {
    f(idx, off);
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < acc.size(); ++k) off[k] += acc[k].view.strides[d];
      if (++idx[d] < shape[d]) break;
      for (size_t k = 0; k < acc.size(); ++k) off[k] -= acc[k].view.strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

void copy_element(const Array& from, int64_t i, Array& to, int64_t j) {
  if (is_float(from.dtype)) store_double(to.dtype, to.data.get(), j, load_double(from.dtype, from.data.get(), i));
  else store_int(to.dtype, to.data.get(), j, load_int(from.dtype, from.data.get(), i));
}

bool in_window(const View& v, const std::vector<int64_t>& idx) {
  for (size_t d = 0; d < v.window.size(); ++d)
    if (idx[d] < v.window[d].lo || idx[d] >= v.window[d].hi) return false;
  return true;
}

// A view's elements as a dense array: zero where a window leaves them out
// (Note [Windows]); the reference reads a windowed input through this.
Array dense(const StridedArray& a, const ArrayAllocator& allocate) {
  Array out = allocate(a.base->dtype, a.view.shape);
  if (out.bytes() > 0) std::memset(out.data.get(), 0, out.bytes());
  int64_t i = 0;
  for_each_index(a.view.shape, {&a, 1}, [&](const std::vector<int64_t>& idx, auto& off) {
    if (in_window(a.view, idx)) copy_element(*a.base, off[0], out, i);
    ++i;
  });
  return out;
}

template <class F, class T>
T call(const T* a, int arity) {
  if constexpr (std::is_invocable_v<F, T>) {
    if (arity == 1) return static_cast<T>(F{}(a[0]));
  }
  if constexpr (std::is_invocable_v<F, T, T>) {
    if (arity == 2) return static_cast<T>(F{}(a[0], a[1]));
  }
  if constexpr (std::is_invocable_v<F, bool, T, T>) {
    if (arity == 3) return static_cast<T>(F{}(a[0] != 0, a[1], a[2]));
  }
  BRAZE_ASSERT(false, "functor arity mismatch");
  return T{};
}

// Dispatch from Op to its functor, generated from the op table: element-wise
// rows get a case, the other kinds expand to nothing.
#define BRAZE_OP_ElemWise(name) case Op::name: return call<fn::name>(args, info(op).arity);
#define BRAZE_OP_Leaf(name)
#define BRAZE_OP_Broadcast(name)
#define BRAZE_OP_View(name)
#define BRAZE_OP_Reduce(name)
#define BRAZE_OP_Opaque(name)
template <class T>
T apply_elementwise(Op op, const T* args) {
  switch (op) {
#define BRAZE_OP(name, api, arity, kind, ...) BRAZE_OP_##kind(name)
#include "graph/ops.def"
    default: break;
  }
  BRAZE_ASSERT(false, info(op).name, " is not element-wise");
  return T{};
}

// Evaluates one computed node from its inputs, each a base array read
// through a view of the node's input shape.
class NodeEvaluator {
 public:
  explicit NodeEvaluator(const ArrayAllocator& allocate) : allocate_(allocate) {}

  Array compute(const Node& n, std::span<const StridedArray> in) {
    switch (info(n.op).kind) {
      case FusionKind::ElemWise: return elementwise(n, in);
      case FusionKind::Reduce: return reduce(n, in[0]);
      case FusionKind::Opaque: return n.op == Op::MatMul ? matmul(n, in[0], in[1]) : conv2d(n, in[0], in[1]);
      case FusionKind::Leaf:
      case FusionKind::Broadcast:
      case FusionKind::View: break;
    }
    BRAZE_ASSERT(false, info(n.op).name, " is not a computed op");
    return {};
  }

  Array leaf(const Node& n) {
    Array out = allocate_(n.dtype, n.shape());
    bool real = is_float(n.dtype);
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (real) {
        // A constant is stored as it is: -0.0 + 0 * 0 would be +0.0.
        double start = n.attr.reals[0];
        double v = n.op == Op::Arange ? start + static_cast<double>(i) * n.attr.reals[1] : start;
        store_double(n.dtype, out.data.get(), i, v);
      } else {
        // Modulo 2^64 (no signed overflow), as the elements are modulo the dtype's width.
        uint64_t start = static_cast<uint64_t>(n.attr.ints[0]);
        uint64_t step = n.op == Op::Arange ? static_cast<uint64_t>(n.attr.ints[1]) : 0;
        store_int(n.dtype, out.data.get(), i, static_cast<int64_t>(start + static_cast<uint64_t>(i) * step));
      }
    }
    return out;
  }

 private:

  Array elementwise(const Node& n, std::span<const StridedArray> acc) {
    std::vector<DType> in_types;
    for (const StridedArray& a : acc) in_types.push_back(a.base->dtype);
    DType ct = compute_dtype(n.op, in_types, n.dtype);
    return is_float(ct) ? elementwise_as<double>(n, acc) : elementwise_as<int64_t>(n, acc);
  }

  template <class T>
  Array elementwise_as(const Node& n, std::span<const StridedArray> acc) {
    Array out = allocate_(n.dtype, n.shape());
    int64_t i = 0;
    T args[3]{};
    // float16 math is float32 math rounded to float16 (as NumPy's half
    // loops and the kernels compute); only a float64 value cast to float16
    // rounds once, from float64 (Note [Rounding float64 to 16 bits]).
    const bool through_float32 =
        n.dtype == DType::Float16 && !(n.op == Op::Cast && acc[0].base->dtype == DType::Float64);
    for_each_index(n.shape(), acc, [&](auto&, auto& off) {
      for (size_t k = 0; k < acc.size(); ++k) args[k] = load<T>(acc[k].base->dtype, acc[k].base->data.get(), off[k]);
      T v = apply_elementwise<T>(n.op, args);
      if constexpr (std::is_same_v<T, double>)
        if (through_float32) v = static_cast<float>(v);
      store<T>(n.dtype, out.data.get(), i++, v);
    });
    return out;
  }

  Array reduce(const Node& n, const StridedArray& a) {
    return is_float(a.base->dtype) ? reduce_as<double>(n, a) : reduce_as<int64_t>(n, a);
  }

  // One pass over the input; each element folds into the output slot whose
  // index is the input index with the reduced axes zeroed.
  template <class T>
  Array reduce_as(const Node& n, const StridedArray& a) {
    const Shape& src_shape = a.view.shape;
    Array out = allocate_(n.dtype, n.shape());
    int64_t m = out.numel();
    std::vector<T> acc(m);
    std::vector<int64_t> arg(m, 0), seen(m, 0);
    const Strides out_strides = contiguous_strides(n.shape());
    std::vector<int64_t> red_shape;  // the reduced sub-space, for arg positions
    for (int64_t ax : n.attr.ints) red_shape.push_back(src_shape[ax]);
    const Strides red_strides = contiguous_strides(red_shape);
    for_each_index(src_shape, {&a, 1}, [&](const std::vector<int64_t>& idx, auto& off) {
      int64_t o = 0, pos = 0;
      for (size_t d = 0, r = 0; d < idx.size(); ++d) {
        if (r < n.attr.ints.size() && n.attr.ints[r] == static_cast<int64_t>(d)) pos += idx[d] * red_strides[r++];
        else o += idx[d] * out_strides[d];
      }
      T v = load<T>(a.base->dtype, a.base->data.get(), off[0]);
      fold(n.op, acc[o], arg[o], seen[o]++ == 0, v, pos);
    });
    for (int64_t o = 0; o < m; ++o) {
      if (n.op == Op::ArgMax || n.op == Op::ArgMin) store_int(n.dtype, out.data.get(), o, arg[o]);
      else if (seen[o] == 0) store<T>(n.dtype, out.data.get(), o, n.op == Op::Prod ? T(1) : T(0));
      else store<T>(n.dtype, out.data.get(), o, acc[o]);
    }
    return out;
  }

  // NaN wins max/min and argmax/argmin (its first occurrence), as in NumPy.
  template <class T>
  static void fold(Op op, T& acc, int64_t& arg, bool first, T v, int64_t pos) {
    if (first) {
      acc = v;
      arg = pos;
      return;
    }
    switch (op) {
      case Op::Sum: acc = fn::wrap_add(acc, v); return;
      case Op::Prod: acc = fn::wrap_mul(acc, v); return;
      case Op::Max: acc = fn::Maximum{}(acc, v); return;
      case Op::Min: acc = fn::Minimum{}(acc, v); return;
      case Op::ArgMax:
      case Op::ArgMin: {
        if (fn::is_nan(acc)) return;
        bool better = fn::is_nan(v) || (op == Op::ArgMax ? v > acc : v < acc);
        if (better) {
          acc = v;
          arg = pos;
        }
        return;
      }
      default: break;
    }
    BRAZE_ASSERT(false, info(op).name, " is not a reduction");
  }

  Array matmul(const Node& n, const StridedArray& a, const StridedArray& b) {
    return is_float(n.dtype) ? matmul_as<double>(n, a, b) : matmul_as<int64_t>(n, a, b);
  }

  template <class T>
  Array matmul_as(const Node& n, const StridedArray& a, const StridedArray& b) {
    const Shape& as = a.view.shape;
    const Shape& bs = b.view.shape;
    Array out = allocate_(n.dtype, n.shape());
    const size_t rank = n.shape().size();
    int64_t M = n.shape()[rank - 2], N = n.shape()[rank - 1], K = as.back();
    Shape batch(n.shape().begin(), n.shape().end() - 2);
    int64_t i = 0;
    // The batch offset of an operand: its own trailing batch dims, size-1 dims broadcast.
    auto batch_offset = [&](const View& v, const std::vector<int64_t>& idx) {
      int64_t off = v.offset;
      size_t lead = batch.size() - (v.shape.size() - 2);
      for (size_t d = 0; d + 2 < v.shape.size(); ++d)
        if (v.shape[d] != 1) off += idx[lead + d] * v.strides[d];
      return off;
    };
    View batch_view = View::contiguous(batch);
    StridedArray none{nullptr, batch_view};
    for_each_index(batch, {&none, 1}, [&](const std::vector<int64_t>& idx, auto&) {
      int64_t ao = batch_offset(a.view, idx), bo = batch_offset(b.view, idx);
      int64_t ar = a.view.strides[as.size() - 2], ac = a.view.strides[as.size() - 1];
      int64_t br = b.view.strides[bs.size() - 2], bc = b.view.strides[bs.size() - 1];
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          T s = 0;
          for (int64_t k = 0; k < K; ++k)
            s = fn::wrap_add(s, fn::wrap_mul(load<T>(a.base->dtype, a.base->data.get(), ao + r * ar + k * ac),
                                     load<T>(b.base->dtype, b.base->data.get(), bo + k * br + c * bc)));
          store<T>(n.dtype, out.data.get(), i++, s);
        }
    });
    return out;
  }

  // Integers sum in int64, wrapping (scalar_math.h), and wrap into the
  // result's type as they are stored, as NumPy's integer matmul wraps (Note
  // [Integer matmul]).
  Array conv2d(const Node& n, const StridedArray& x, const StridedArray& w) {
    return is_float(n.dtype) ? conv2d_as<double>(n, x, w) : conv2d_as<int64_t>(n, x, w);
  }

  template <class T>
  Array conv2d_as(const Node& n, const StridedArray& x, const StridedArray& w) {
    const Shape& xs = x.view.shape;
    const Shape& ws = w.view.shape;
    const std::vector<int64_t>& p = n.attr.ints;  // stride, padding, dilation (h, w), groups
    Array out = allocate_(n.dtype, n.shape());
    const Shape& os = n.shape();
    int64_t cin_per_group = ws[1], cout_per_group = ws[0] / p[6];
    auto xat = [&](int64_t b, int64_t c, int64_t h, int64_t v) {
      const Strides& s = x.view.strides;
      return load<T>(x.base->dtype, x.base->data.get(), x.view.offset + b * s[0] + c * s[1] + h * s[2] + v * s[3]);
    };
    auto wat = [&](int64_t o, int64_t c, int64_t h, int64_t v) {
      const Strides& s = w.view.strides;
      return load<T>(w.base->dtype, w.base->data.get(), w.view.offset + o * s[0] + c * s[1] + h * s[2] + v * s[3]);
    };
    int64_t i = 0;
    for (int64_t b = 0; b < os[0]; ++b)
      for (int64_t o = 0; o < os[1]; ++o)
        for (int64_t oh = 0; oh < os[2]; ++oh)
          for (int64_t ow = 0; ow < os[3]; ++ow) {
            T s = 0;
            int64_t g = o / cout_per_group;
            for (int64_t c = 0; c < cin_per_group; ++c)
              for (int64_t kh = 0; kh < ws[2]; ++kh)
                for (int64_t kw = 0; kw < ws[3]; ++kw) {
                  int64_t ih = oh * p[0] - p[2] + kh * p[4], iw = ow * p[1] - p[3] + kw * p[5];
                  if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
                  s = fn::wrap_add(s, fn::wrap_mul(xat(b, g * cin_per_group + c, ih, iw), wat(o, c, kh, kw)));
                }
            store<T>(n.dtype, out.data.get(), i++, s);
          }
    return out;
  }

  const ArrayAllocator& allocate_;
};

class Interpreter {
 public:
  Interpreter(const Graph& g, const ArrayAllocator& allocate)
      : g_(g), allocate_(allocate), nodes_(allocate), values_(g.size()) {}

  void run(std::span<const Array> inputs) {
    BRAZE_CHECK(inputs.size() == g_.inputs().size(), "realize: the graph has ", g_.inputs().size(),
                " inputs, got ", inputs.size());
    for (NodeId id = 0; id < g_.size(); ++id) {
      const Node& n = g_[id];
      if (is_movement(n.op)) continue;  // read through its view by consumers
      if (n.op == Op::Input) {
        values_[id] = bind_input(n, inputs);
      } else if (info(n.op).kind == FusionKind::Leaf) {
        values_[id] = nodes_.leaf(n);
      } else {
        std::vector<StridedArray> in;
        for (NodeId i : n.inputs) in.push_back(accessor(i));
        values_[id] = evaluate_node(n, in, allocate_);
      }
    }
  }

  Array output(NodeId id) {
    const Node& n = g_[id];
    if (!is_movement(n.op)) return values_[id];
    return dense(accessor(id), allocate_);
  }

 private:
  StridedArray accessor(NodeId id) const { return {&values_[g_.base(id)], g_[id].view}; }

  static Array bind_input(const Node& n, std::span<const Array> inputs) {
    const Array& a = inputs[n.attr.ints[0]];
    BRAZE_CHECK(a.dtype == n.dtype && a.shape == n.shape(), "realize: input ", n.attr.ints[0], " is ",
                name(a.dtype), to_string(a.shape), " but the graph expects ", name(n.dtype), to_string(n.shape()));
    return a;
  }


  const Graph& g_;
  const ArrayAllocator& allocate_;
  NodeEvaluator nodes_;
  std::vector<Array> values_;
};

}  // namespace

Array evaluate_node(const Node& node, std::span<const StridedArray> inputs, const ArrayAllocator& allocate) {
  NodeEvaluator e(allocate);
  if (info(node.op).kind == FusionKind::Leaf) return e.leaf(node);
  // Windowed inputs read as the dense arrays they mean (Note [Windows]).
  std::vector<Array> held;
  held.reserve(inputs.size());
  std::vector<StridedArray> in(inputs.begin(), inputs.end());
  for (StridedArray& a : in)
    if (a.view.windowed()) {
      held.push_back(dense(a, allocate));
      a = {&held.back(), View::contiguous(a.view.shape)};
    }
  return e.compute(node, in);
}

std::vector<Array> evaluate(const Graph& graph, std::span<const Array> inputs, std::span<const NodeId> outputs,
                            const ArrayAllocator& allocate) {
  Interpreter interp(graph, allocate);
  interp.run(inputs);
  std::vector<Array> result;
  for (NodeId id : outputs) result.push_back(interp.output(id));
  return result;
}

}  // namespace braze::reference
