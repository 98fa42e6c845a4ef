// braze::Tensor: a value-semantic handle to a lazily recorded computation.
#pragma once

#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "graph/array.h"
#include "graph/check.h"
#include "graph/node.h"
#include "runtime/device.h"

namespace braze {

struct CheckpointOutput;  // runtime/autodiff.h

// Note [Lazy tensors]
// A tensor is a node of a DAG that user code grows op by op: recording an op
// validates it (shape and dtype errors are thrown here, naming the op) and
// allocates nothing. realize() lowers the DAG under the requested tensors to
// a Graph (inputs by id, identical nodes interned), evaluates it, and stores
// each result in its node, which drops its inputs and becomes a leaf. So a
// loop that carries a realized tensor from one iteration to the next records
// the same small graph each time instead of an ever longer one; a loop
// that never realizes is cut by Note [Lazy depth limit].
struct TensorNode {
  Op op;
  DType dtype;
  Shape shape;
  Attr attr;
  Device device;
  std::vector<std::shared_ptr<TensorNode>> inputs;
  std::optional<Array> data;  // set once realized
  uint32_t depth;             // the longest path of ops down to a leaf or a realized tensor
  // Note [Reverse mode] (runtime/autodiff.h): whether a gradient can flow
  // from this node to a variable. Such a node keeps its inputs when it is
  // realized, so the backward walk still finds them. Set when the node is
  // made (or by requires_grad()), before other threads see it.
  bool requires_grad = false;
  std::shared_ptr<TensorNode> grad{};  // what backward() accumulated for a variable; under the node lock
  // Set on an output of checkpoint() (Note [Checkpoints], runtime/autodiff.h):
  // its gradient comes from running the function again, not from its inputs.
  std::shared_ptr<const CheckpointOutput> checkpoint{};
  // Set on a checkpoint's copy of a node its policy keeps: the value is
  // that node's (lowering reads it in this one's place); the gradient is
  // this node's own op's rule, on its (recomputed) inputs.
  std::shared_ptr<TensorNode> value_of{};
};

// Note [Lazy depth limit]
// `acc = acc + x` in a loop that never realizes acc records a chain one op
// longer every iteration: the graph, the memory it holds and the time to
// lower it grow without bound, and every iteration is a structure the
// program cache has not seen. So an op whose result would be deeper than
// kMaxLazyDepth first realizes its deepest lazy inputs (record() in
// tensor.cpp): they become leaves (realized tensors are inputs of later
// graphs), the new op sits just above them, and the loop's graph repeats
// the same structure every kMaxLazyDepth iterations: one program compiled
// for the cycle, replayed after. Depth, not node count: it is what a
// loop-carried value grows, it is known per node in O(1) (1 + the inputs'
// largest), and a wide graph is bounded by what the user holds. 256 is
// deep enough that no model written as one expression (a transformer
// block is about 60 deep) is cut, and shallow enough that one cycle's
// program compiles in milliseconds. A function being differentiated adds
// no depth (Note [Traced functions add no depth], runtime/autodiff.h).
inline constexpr uint32_t kMaxLazyDepth = 256;
uint32_t lazy_depth(const TensorNode& n);

// Note [Shared lazy tensors]
// Threads may share tensors, lazy ones too: record ops on them, realize
// them, realize graphs that read them, all at once. A node's op, dtype,
// shape, attr and device never change after it is made; its data, inputs
// and depth change once, when it is realized (the result stored, the
// inputs dropped: Note [Lazy tensors]), possibly while another thread
// walks a DAG through it. So those three are read under a shared lock of
// one process-wide mutex (NodeReadLock, or the functions below that take
// it) and written under its exclusive lock (realize.cpp). Data once set is
// never replaced: of two threads realizing the same tensor at once, the
// first to finish stores its result and the other's is dropped, so a
// reference to a node's data stays valid without the lock. A walk
// (lower.h) holds strong references to the nodes it visits and keeps what
// it saw of them, so lowering its DAG later reads no node again and a
// realize meanwhile changes nothing it depends on.
std::shared_mutex& tensor_nodes_mutex();
class NodeReadLock {
 public:
  NodeReadLock() : lock_(tensor_nodes_mutex()) {}

 private:
  std::shared_lock<std::shared_mutex> lock_;
};
// The node's data, or null while it is lazy.
const Array* realized_data(const TensorNode& n);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorNode> node) : node_(std::move(node)) {}

  DType dtype() const { return node_->dtype; }
  const Shape& shape() const { return node_->shape; }
  int64_t ndim() const { return static_cast<int64_t>(node_->shape.size()); }
  int64_t numel() const { return braze::numel(node_->shape); }
  Device device() const { return node_->device; }
  bool is_realized() const { return realized_data(*node_) != nullptr; }
  bool defined() const { return node_ != nullptr; }

  // Realizes if needed and returns the dense row-major result, on the
  // tensor's device (Note [Device arrays] in runtime/transfer.h).
  const Array& data() const;
  // data() in host memory: copied from a device (what .numpy() returns).
  Array host_data() const;
  // The value of a one-element tensor, converted.
  double item() const;
  int64_t item_int() const;
  template <class T>
  std::vector<T> to_vector() const;
  // "Tensor(shape=[2, 3], dtype=float32, device=cpu, lazy)"; never realizes.
  std::string repr() const;

  const std::shared_ptr<TensorNode>& node() const { return node_; }

 private:
  std::shared_ptr<TensorNode> node_;
};

// A Python-style number in an expression: "weak", it takes its dtype from
// the tensor it meets (Note [Type promotion]).
struct Scalar {
  DTypeKind kind = DTypeKind::Float;
  double real = 0;
  int64_t integer = 0;
  // A Python int outside int64: only `real` holds it (rounded). It fits no
  // integer dtype (an OverflowError, as in NumPy 2), but a float one.
  bool beyond_int64 = false;

  Scalar() = default;
  Scalar(bool v) : kind(DTypeKind::Bool), real(v), integer(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind(DTypeKind::Int), real(static_cast<double>(v)), integer(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind(DTypeKind::Float), real(static_cast<double>(v)), integer(float_to_int64(static_cast<double>(v))) {}
  static Scalar huge_int(double v) {  // beyond_int64
    Scalar s(int64_t{0});
    s.real = v;
    s.beyond_int64 = true;
    return s;
  }

  DType default_dtype() const;  // bool, int64 or float32
};

// An argument of an element-wise op: a tensor or a scalar.
class Operand {
 public:
  Operand(const Tensor& t) : value_(t) {}
  Operand(Scalar s) : value_(s) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T v) : value_(Scalar(v)) {}

  const Tensor* tensor() const { return std::get_if<Tensor>(&value_); }
  const Scalar* scalar() const { return std::get_if<Scalar>(&value_); }

 private:
  std::variant<Tensor, Scalar> value_;
};

// Realizes several tensors as one graph (shared work is done once), by
// replaying a cached program when one of the same structure ran before
// (Note [Programs] in runtime/program.h).
void realize(std::span<const Tensor> tensors);
inline void realize(std::initializer_list<Tensor> ts) { realize(std::span<const Tensor>(ts.begin(), ts.size())); }

// Evaluates values[i] into the storage of out[i], a realized tensor of the
// same dtype and shape, as one program: with a replayed program, nothing is
// allocated. values may read out (w = w - lr * g): they see the old values.
// What was recorded on out (lazy views of it) sees the new ones.
void assign(std::span<const Tensor> out, std::span<const Tensor> values);
inline void assign(std::initializer_list<Tensor> out, std::initializer_list<Tensor> values) {
  assign(std::span<const Tensor>(out.begin(), out.size()), std::span<const Tensor>(values.begin(), values.size()));
}

// Creation. `data` is copied to `device` when it lives elsewhere.
Tensor from_array(Array data, std::optional<Device> device = std::nullopt);
template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, std::optional<DType> dtype = std::nullopt);
Tensor full(const Shape& shape, Scalar value, std::optional<DType> dtype = std::nullopt,
            std::optional<Device> device = std::nullopt);
Tensor zeros(const Shape& shape, DType dtype = kDefaultFloat, std::optional<Device> device = std::nullopt);
Tensor ones(const Shape& shape, DType dtype = kDefaultFloat, std::optional<Device> device = std::nullopt);
Tensor arange(Scalar start, Scalar stop, Scalar step = Scalar(int64_t{1}), std::optional<DType> dtype = std::nullopt,
              std::optional<Device> device = std::nullopt);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype = std::nullopt);

// Records `op` on operands (scalars become constants of the weak dtype).
// Every function of runtime/ops.h ends here.
Tensor record(Op op, std::span<const Operand> operands, Attr attr = {});

// --- templates -------------------------------------------------------------

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::UInt16;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::Int16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::UInt32;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else return DType::Float64;
}

template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, std::optional<DType> dtype) {
  Array a = allocate_array(dtype.value_or(dtype_of<T>()), std::move(shape));
  BRAZE_CHECK(static_cast<int64_t>(values.size()) == a.numel(), "tensor: ", values.size(),
              " values for shape ", to_string(a.shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) store_double(a.dtype, a.data.get(), i, values[i]);
    else store_int(a.dtype, a.data.get(), i, static_cast<int64_t>(values[i]));
  }
  return from_array(std::move(a));
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  const Array a = host_data();
  std::vector<T> out(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if constexpr (std::is_floating_point_v<T>) out[i] = static_cast<T>(load_double(a.dtype, a.data.get(), i));
    else out[i] = static_cast<T>(load_int(a.dtype, a.data.get(), i));
  }
  return out;
}

}  // namespace braze
