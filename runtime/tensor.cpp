#include "runtime/tensor.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "graph/infer.h"
#include "runtime/autodiff.h"
#include "runtime/context.h"
#include "runtime/ops.h"
#include "runtime/transfer.h"

namespace braze {

namespace {

Device resolve(std::optional<Device> d) {
  Device dev = d.value_or(Runtime::default_device());
  check_available(dev);
  return dev;
}

Tensor leaf(Op op, DType dtype, Shape shape, Attr attr, Device device) {
  return Tensor(std::make_shared<TensorNode>(TensorNode{op, dtype, std::move(shape), std::move(attr), device, {}, {}, 0}));
}

struct IntRange {
  int64_t lo, hi;
};

IntRange int_range(DType t) {
  switch (t) {
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::UInt16: return {0, 65535};
    case DType::Int16: return {-32768, 32767};
    case DType::UInt32: return {0, UINT32_MAX};
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

// Note [Python integers out of range]
// A Python int that the integer dtype it meets cannot hold is an
// OverflowError, as in NumPy 2 (NEP 50): bz.full((2,), 300, dtype=uint8),
// x_int8 + 300, x_int64 * 2**70 (a C++ Scalar::huge_int). Wrapping it
// would be a silent wrong answer. A comparison is the exception, as in
// NumPy: x_int8 < 300 is true everywhere, decided here without a kernel.
// A float value given for an integer dtype truncates, as NumPy's unsafe
// cast does (out of range: implementation-defined, docs/semantics.md).
int out_of_range(const Scalar& s, DType t) {  // -1 below, 1 above, 0 fits
  if (s.kind != DTypeKind::Int || !is_integral(t)) return 0;
  if (s.beyond_int64) return s.real < 0 ? -1 : 1;  // not even a bool takes it, as in NumPy
  if (t == DType::Bool) return 0;  // any other int is a truth value
  IntRange r = int_range(t);
  return s.integer < r.lo ? -1 : s.integer > r.hi ? 1 : 0;
}

void check_fits(const Scalar& s, DType t, std::string_view op) {
  if (out_of_range(s, t) == 0) return;
  std::ostringstream v;
  if (s.beyond_int64) v << std::fixed << std::setprecision(0) << s.real;
  else v << s.integer;
  throw std::overflow_error(detail::concat(op, ": Python integer ", v.str(), " out of bounds for ", name(t)));
}

// A scalar constant of `dtype`.
Tensor constant(const Scalar& s, DType dtype, Device device) {
  Attr attr;
  if (is_float(dtype)) attr.reals = {s.real};
  else if (dtype == DType::Bool) attr.ints = {s.kind == DTypeKind::Float ? s.real != 0 : s.integer != 0};
  else attr.ints = {s.integer};
  return leaf(Op::Const, dtype, {}, std::move(attr), device);
}

// Note [Python integers out of range]: `t op s` (or `s op t` when the
// scalar comes first) for a scalar beyond t's range is the same everywhere.
std::optional<Tensor> compare_out_of_range(Op op, std::span<const Operand> xs) {
  if (info(op).dtype_rule != DTypeRule::Compare) return std::nullopt;
  const Tensor* t = xs[0].tensor() ? xs[0].tensor() : xs[1].tensor();
  const Scalar* s = xs[0].scalar() ? xs[0].scalar() : xs[1].scalar();
  // A bool tensor takes a Python int as int64; past int64 that is an
  // OverflowError, as in NumPy.
  if (!t || !s || !t->defined() || t->dtype() == DType::Bool) return std::nullopt;
  int side = out_of_range(*s, t->dtype());
  if (side == 0) return std::nullopt;
  if (xs[0].scalar()) side = -side;  // s < t is t > s
  bool truth = false;
  switch (op) {
    case Op::Eq: truth = false; break;
    case Op::Ne: truth = true; break;
    case Op::Lt:
    case Op::Le: truth = side > 0; break;
    case Op::Gt:
    case Op::Ge: truth = side < 0; break;
    default: BRAZE_ASSERT(false, info(op).name, " is not a comparison");
  }
  return full(t->shape(), Scalar(truth), DType::Bool, t->device());
}

// Note [Lazy depth limit]: realizes the inputs that would make the new op
// deeper than the limit.
void cut_deep_inputs(std::span<const Operand> xs) {
  std::vector<Tensor> deep;
  for (const Operand& x : xs)
    if (const Tensor* t = x.tensor(); t && lazy_depth(*t->node()) >= kMaxLazyDepth) deep.push_back(*t);
  if (!deep.empty()) realize(deep);
}

}  // namespace

DType Scalar::default_dtype() const {
  switch (kind) {
    case DTypeKind::Bool: return DType::Bool;
    case DTypeKind::Int: return kDefaultInt;
    case DTypeKind::Float: return kDefaultFloat;
  }
  return kDefaultFloat;
}

std::shared_mutex& tensor_nodes_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

const Array* realized_data(const TensorNode& n) {
  NodeReadLock lock;
  return n.data ? &*n.data : nullptr;
}

uint32_t lazy_depth(const TensorNode& n) {
  NodeReadLock lock;
  return n.data ? 0 : n.depth;
}

const Array& Tensor::data() const {
  if (const Array* a = realized_data(*node_)) return *a;
  realize({*this});
  return *realized_data(*node_);
}

Array Tensor::host_data() const { return to_host(data()); }

double Tensor::item() const {
  BRAZE_CHECK(numel() == 1, "item: only a one-element tensor converts to a scalar, this one has shape ",
              to_string(shape()));
  const Array a = host_data();
  return load_double(a.dtype, a.data.get(), 0);
}

int64_t Tensor::item_int() const {
  BRAZE_CHECK(numel() == 1, "item: only a one-element tensor converts to a scalar, this one has shape ",
              to_string(shape()));
  const Array a = host_data();
  return load_int(a.dtype, a.data.get(), 0);
}

std::string Tensor::repr() const {
  std::ostringstream s;
  s << "Tensor(shape=" << to_string(shape()) << ", dtype=" << name(dtype()) << ", device=" << device().str()
    << ", " << (is_realized() ? "realized" : "lazy") << ")";
  return s.str();
}

Tensor from_array(Array data, std::optional<Device> device) {
  Device dev = resolve(device);
  data = copy_to(data, dev);
  auto node = std::make_shared<TensorNode>(TensorNode{Op::Input, data.dtype, data.shape, {}, dev, {}, {}, 0});
  node->data = std::move(data);
  return Tensor(std::move(node));
}

Tensor full(const Shape& shape, Scalar value, std::optional<DType> dtype, std::optional<Device> device) {
  DType t = dtype.value_or(value.default_dtype());
  check_shape(shape, static_cast<int64_t>(itemsize(t)), "full");
  check_fits(value, t, "full");
  return broadcast_to(constant(value, t, resolve(device)), shape);
}

Tensor zeros(const Shape& shape, DType dtype, std::optional<Device> device) {
  return full(shape, Scalar(int64_t{0}), dtype, device);
}

Tensor ones(const Shape& shape, DType dtype, std::optional<Device> device) {
  return full(shape, Scalar(int64_t{1}), dtype, device);
}

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype) {
  return zeros(x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor ones_like(const Tensor& x, std::optional<DType> dtype) {
  return ones(x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype) {
  return full(x.shape(), value, dtype.value_or(x.dtype()), x.device());
}

// Note [NumPy's arange]
// NumPy's arange(start, stop, step, dtype) has ceil((stop - start) / step)
// elements; it converts the first two values, start and start + step (in
// Python's arithmetic), to the dtype, and continues with their difference
// in the dtype: arange(-0.5, 3, 1, dtype=int8) is [0, 0, 0, 0], since
// int8(-0.5) = int8(0.5) = 0, and a float16 arange steps by the float16
// difference of its first two values. braze records those two values as
// the Arange's start and step, so its elements are NumPy's (a float
// element may differ by its last bit: NumPy adds in the dtype's precision,
// braze in float64 or float32, then rounds). A Python int start or second
// value out of an integer dtype's range is an OverflowError, as in NumPy.
Tensor arange(Scalar start, Scalar stop, Scalar step, std::optional<DType> dtype, std::optional<Device> device) {
  for (const Scalar* s : {&start, &stop, &step})
    BRAZE_CHECK(!s->beyond_int64, "arange: an argument is outside int64's range");
  bool all_int = start.kind != DTypeKind::Float && stop.kind != DTypeKind::Float && step.kind != DTypeKind::Float;
  DType t = dtype.value_or(all_int ? kDefaultInt : kDefaultFloat);
  BRAZE_CHECK(step.real != 0, "arange: step cannot be zero");
  __int128 n = 0;  // 128 bits: stop - start of two int64s can overflow int64
  if (all_int) {
    __int128 span = __int128{stop.integer} - start.integer, by = step.integer;
    n = by > 0 ? (span > 0 ? (span - 1) / by + 1 : 0) : (span < 0 ? (span + 1) / by + 1 : 0);
  } else {
    double length = std::ceil((stop.real - start.real) / step.real);
    BRAZE_CHECK(!std::isnan(length), "arange: cannot compute the length of arange(", start.real, ", ", stop.real,
                ", ", step.real, ")");
    n = length <= 0 ? 0 : length >= 0x1p63 ? __int128{1} << 63 : static_cast<__int128>(length);
  }
  BRAZE_CHECK(n <= INT64_MAX, "arange: the length of arange(", start.real, ", ", stop.real, ", ", step.real,
              ") exceeds 2^63 - 1");
  const auto length = static_cast<int64_t>(n);
  check_shape(std::vector<int64_t>{length}, static_cast<int64_t>(itemsize(t)), "arange");
  // The second value in Python's arithmetic: exact for ints, past int64 too.
  int64_t sum = 0;
  Scalar second = !all_int ? Scalar(start.real + step.real)
                  : __builtin_add_overflow(start.integer, step.integer, &sum)
                      ? Scalar::huge_int(start.real + step.real)
                      : Scalar(sum);
  Attr attr;
  if (is_float(t)) {
    // The first two values in t, and their difference as NumPy's fill
    // takes it: in float32 for 16-bit floats and float32, else in float64.
    std::byte first_bits[8], second_bits[8];
    store_double(t, first_bits, 0, start.real);
    store_double(t, second_bits, 0, second.real);
    double first = load_double(t, first_bits, 0), next = load_double(t, second_bits, 0);
    double delta = t == DType::Float64 ? next - first : static_cast<double>(static_cast<float>(next - first));
    // One element converts no second value, as in NumPy, and has no step:
    // an infinite one (a float16 second value past 65504) made it 0 * inf.
    attr.reals = {first, length > 1 ? delta : 0.0};
  } else {
    // As NumPy's int(x): a float truncates, and the value must fit t.
    auto as_int = [](const Scalar& v) {
      if (v.kind != DTypeKind::Float) return v;
      BRAZE_CHECK(!std::isnan(v.real), "arange: cannot convert NaN to an integer");
      double x = std::trunc(v.real);
      return x >= -0x1p63 && x < 0x1p63 ? Scalar(static_cast<int64_t>(x)) : Scalar::huge_int(x);
    };
    Scalar first_int = as_int(start), second_int = as_int(second);
    if (length > 0) check_fits(first_int, t, "arange");  // an empty arange converts nothing, as in NumPy
    if (length > 1) check_fits(second_int, t, "arange");
    // Modulo 2^64, as the elements are modulo the dtype's width.
    auto diff = static_cast<uint64_t>(second_int.integer) - static_cast<uint64_t>(first_int.integer);
    attr.ints = {first_int.integer, length > 1 ? static_cast<int64_t>(diff) : 0};
  }
  return leaf(Op::Arange, t, {length}, std::move(attr), resolve(device));
}

namespace {

// Note [Integer powers]
// x ** 3 of a float tensor, recorded as a pow with the scalar 3, runs as
// pow(x, y) = exp(y log x) in float64 lanes (vector_math_f64.h): gelu_16M
// written with x ** 3 took 12.7 ms against 2.2 ms with x * x * x. As JAX's
// integer_pow and torch.compile do, a Python int exponent from 2 to
// kMaxIntegerPower records multiplications instead: square(x), square(x) *
// x, square(square(x)). Each rounds once, so x ** 3 and x ** 4 are within
// about 2 ulp of NumPy's pow (within 1 ulp); x ** 2 is x * x, exact for
// float32 and below. A float exponent of those values (x ** 2.0) is the
// same, and x ** 0.5 is sqrt(x), as NumPy makes it (its ** and its float32
// and float64 power loops take sqrt for a scalar 0.5: -0 stays -0 and
// -inf gives NaN, where C's pow gives +0 and inf; `(dx ** 2 + dy ** 2) **
// 0.5` of 4M floats: 3.9 -> 0.8 ms). Other exponents (negative ones, whose
// x ** n would overflow to inf where pow gives a tiny number, 0, 1, other
// floats, tensors) stay pow.
constexpr int64_t kMaxIntegerPower = 4;

std::optional<Tensor> integer_power(std::span<const Operand> xs) {
  const Tensor* x = xs[0].tensor();
  const Scalar* n = xs[1].scalar();
  if (!x || !n || !x->defined() || !is_float(x->dtype())) return std::nullopt;
  if (n->kind == DTypeKind::Float && n->real == 0.5) return record(Op::Sqrt, {*x});
  int64_t k = 0;
  if (n->kind == DTypeKind::Int) k = n->integer;
  else if (n->kind == DTypeKind::Float && (n->real == 2.0 || n->real == 3.0 || n->real == 4.0)) k = static_cast<int64_t>(n->real);
  if (k < 2 || k > kMaxIntegerPower) return std::nullopt;
  Tensor x2 = record(Op::Square, {*x});
  if (k == 2) return x2;
  return k == 3 ? record(Op::Mul, {x2, *x}) : record(Op::Square, {x2});
}

}  // namespace

Tensor record(Op op, std::span<const Operand> xs, Attr attr) {
  const OpInfo& oi = info(op);
  if (op == Op::Pow && xs.size() == 2)
    if (std::optional<Tensor> p = integer_power(xs)) return *p;  // Note [Integer powers]
  BRAZE_CHECK(static_cast<int>(xs.size()) == oi.arity, oi.api, ": takes ", oi.arity, " arguments, got ", xs.size());
  // The tensors decide the device and the dtype that weak scalars take;
  // where's condition does not take part in promotion.
  std::optional<Device> device;
  std::optional<DType> strong;
  size_t first_value = op == Op::Where ? 1 : 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor* t = xs[i].tensor();
    if (!t) continue;
    BRAZE_CHECK(t->defined(), oi.api, ": argument ", i, " is an empty Tensor handle");
    BRAZE_CHECK(!device || *device == t->device(), oi.api, ": inputs are on different devices (",
                device->str(), " and ", t->device().str(), "); move one with .to()");
    device = t->device();
    if (i >= first_value) strong = strong ? promote(*strong, t->dtype()) : t->dtype();
  }
  if (std::optional<Tensor> known = compare_out_of_range(op, xs)) return *known;
  Device dev = device.value_or(Runtime::default_device());
  const bool traced = tracing();  // Note [Traced functions add no depth]
  if (!traced) cut_deep_inputs(xs);
  std::vector<std::shared_ptr<TensorNode>> inputs;
  std::vector<TypeShape> types;
  for (size_t i = 0; i < xs.size(); ++i) {
    Tensor t;
    if (const Tensor* x = xs[i].tensor()) {
      t = *x;
    } else {
      Scalar s = *xs[i].scalar();
      // where's condition is a truth value: 1e-300 is true, not a float32 0.
      if (op == Op::Where && i == 0) s = Scalar(s.beyond_int64 || (s.kind == DTypeKind::Float ? s.real != 0 : s.integer != 0));
      // A logical op reads a Python int only as a truth value, whatever its size.
      // (Past int64, NumPy cannot convert it: an OverflowError below.)
      if (oi.dtype_rule == DTypeRule::Logical && s.kind == DTypeKind::Int && !s.beyond_int64) s = Scalar(s.integer != 0);
      if (oi.dtype_rule == DTypeRule::Logical) check_fits(s, DType::Int64, oi.api);  // whatever the tensor's type
      DType d = strong && i >= first_value ? promote_with_scalar(*strong, s.kind) : s.default_dtype();
      // divide computes in float: an int it cannot hold as the tensor's type joins as a float.
      if (oi.dtype_rule == DTypeRule::PromoteFloat && out_of_range(s, d) != 0) d = kDefaultFloat;
      check_fits(s, d, oi.api);  // Note [Python integers out of range]
      t = constant(s, d, dev);
    }
    if (op == Op::Where && i == 0 && t.dtype() != DType::Bool) t = astype(t, DType::Bool);
    types.push_back({t.dtype(), t.shape()});
    inputs.push_back(t.node());
  }
  TypeShape out = infer(op, types, attr);
  uint32_t depth = 0;
  for (const auto& in : inputs) depth = std::max(depth, lazy_depth(*in));
  const bool grad = carries_gradient(op, out.dtype, inputs);
  return Tensor(std::make_shared<TensorNode>(
      TensorNode{op, out.dtype, std::move(out.shape), std::move(attr), dev, std::move(inputs), {},
                 traced ? depth : depth + 1, grad}));
}

Tensor astype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return record(Op::Cast, {x}, Attr{{static_cast<int64_t>(dtype)}, {}});
}

}  // namespace braze
