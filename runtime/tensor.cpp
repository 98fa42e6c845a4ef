#include "runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "graph/infer.h"
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

// A scalar constant of `dtype`; a float value given for an int dtype
// truncates, as NumPy's full(..., dtype=int) does.
Tensor constant(const Scalar& s, DType dtype, Device device) {
  Attr attr;
  if (is_float(dtype)) attr.reals = {s.kind == DTypeKind::Float ? s.real : static_cast<double>(s.integer)};
  else if (dtype == DType::Bool) attr.ints = {s.kind == DTypeKind::Float ? s.real != 0 : s.integer != 0};
  else attr.ints = {s.kind == DTypeKind::Float ? static_cast<int64_t>(s.real) : s.integer};
  return leaf(Op::Const, dtype, {}, std::move(attr), device);
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
  for (int64_t d : shape) BRAZE_CHECK(d >= 0, "full: negative dimension in shape ", to_string(shape));
  return broadcast_to(constant(value, dtype.value_or(value.default_dtype()), resolve(device)), shape);
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

Tensor arange(Scalar start, Scalar stop, Scalar step, std::optional<DType> dtype, std::optional<Device> device) {
  bool all_int = start.kind != DTypeKind::Float && stop.kind != DTypeKind::Float && step.kind != DTypeKind::Float;
  DType t = dtype.value_or(all_int ? kDefaultInt : kDefaultFloat);
  BRAZE_CHECK(step.real != 0, "arange: step cannot be zero");
  int64_t n = all_int ? (step.integer > 0 ? (stop.integer - start.integer + step.integer - 1) / step.integer
                                          : (start.integer - stop.integer - step.integer - 1) / -step.integer)
                      : static_cast<int64_t>(std::ceil((stop.real - start.real) / step.real));
  n = std::max<int64_t>(n, 0);
  Attr attr;
  if (is_float(t)) attr.reals = {start.real, step.real};
  else attr.ints = {all_int ? start.integer : static_cast<int64_t>(start.real),
                    all_int ? step.integer : static_cast<int64_t>(step.real)};
  return leaf(Op::Arange, t, {n}, std::move(attr), resolve(device));
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
// float32 and below. Other exponents (negative ones, whose x ** n would
// overflow to inf where pow gives a tiny number, 0, 1, floats, tensors)
// stay pow.
constexpr int64_t kMaxIntegerPower = 4;

std::optional<Tensor> integer_power(std::span<const Operand> xs) {
  const Tensor* x = xs[0].tensor();
  const Scalar* n = xs[1].scalar();
  if (!x || !n || !x->defined() || !is_float(x->dtype()) || n->kind != DTypeKind::Int) return std::nullopt;
  if (n->integer < 2 || n->integer > kMaxIntegerPower) return std::nullopt;
  Tensor x2 = record(Op::Square, {*x});
  if (n->integer == 2) return x2;
  return n->integer == 3 ? record(Op::Mul, {x2, *x}) : record(Op::Square, {x2});
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
  Device dev = device.value_or(Runtime::default_device());
  cut_deep_inputs(xs);
  std::vector<std::shared_ptr<TensorNode>> inputs;
  std::vector<TypeShape> types;
  for (size_t i = 0; i < xs.size(); ++i) {
    Tensor t;
    if (const Tensor* x = xs[i].tensor()) {
      t = *x;
    } else {
      const Scalar& s = *xs[i].scalar();
      DType d = strong && i >= first_value ? promote_with_scalar(*strong, s.kind) : s.default_dtype();
      t = constant(s, d, dev);
    }
    if (op == Op::Where && i == 0 && t.dtype() != DType::Bool) t = astype(t, DType::Bool);
    types.push_back({t.dtype(), t.shape()});
    inputs.push_back(t.node());
  }
  TypeShape out = infer(op, types, attr);
  uint32_t depth = 0;
  for (const auto& in : inputs) depth = std::max(depth, lazy_depth(*in));
  return Tensor(std::make_shared<TensorNode>(
      TensorNode{op, out.dtype, std::move(out.shape), std::move(attr), dev, std::move(inputs), {}, depth + 1}));
}

Tensor astype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return record(Op::Cast, {x}, Attr{{static_cast<int64_t>(dtype)}, {}});
}

}  // namespace braze
