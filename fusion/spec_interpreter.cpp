#include "fusion/spec_interpreter.h"

#include <cstring>

#include "graph/array.h"
#include "graph/check.h"
#include "graph/reference.h"

namespace braze {

namespace {

// Storage index of each element of `v`, in row-major order.
template <class F>
void for_each_offset(const View& v, F&& f) {
  const int64_t rank = v.rank();
  if (v.numel() == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = v.offset;
  for (int64_t i = 0, n = v.numel(); i < n; ++i) {
    f(off);
    for (int64_t d = rank - 1; d >= 0; --d) {
      off += v.strides[d];
      if (++idx[d] < v.shape[d]) break;
      off -= v.strides[d] * v.shape[d];
      idx[d] = 0;
    }
  }
}

class SpecInterpreter {
 public:
  SpecInterpreter(const KernelSpec& spec, std::span<const KernelArg> args) : spec_(spec), args_(args) {}

  void run(std::span<std::byte* const> outputs) {
    // A lowered spec's Window inputs come last and take no argument (Note [Masked loads]).
    size_t passed = spec_.inputs.size();
    while (passed > 0 && spec_.inputs[passed - 1].kind == KernelInput::Kind::Window) --passed;
    BRAZE_CHECK(args_.size() == passed, "kernel: expected ", passed, " inputs, got ", args_.size());
    values_.reserve(spec_.body.size());
    for (const KernelOp& op : spec_.body) values_.push_back(op.op == Op::Input ? load(op) : compute(op));
    for (size_t k = 0; k < spec_.outputs.size(); ++k) {
      const Array& a = values_[spec_.outputs[k].value];
      if (a.bytes() != 0) std::memcpy(outputs[k], a.data.get(), a.bytes());
    }
  }

 private:
  Array load(const KernelOp& op) {
    if (op.args.empty()) return load_all(op);
    // A masked load (Note [Masked loads]): the buffer's element where the
    // mask is true, zero elsewhere, where the address may lie outside it.
    const KernelInput& in = spec_.inputs[op.input];
    BRAZE_ASSERT(in.kind == KernelInput::Kind::Buffer, "a masked load of input ", op.input, ", not a buffer");
    const Array& mask = values_[op.args[0]];
    Array out = allocate_array(in.dtype, spec_.shape_of(in.space));
    const size_t item = itemsize(in.dtype);
    const std::byte* base = args_[op.input].data;
    int64_t i = 0;
    for_each_offset(in.view, [&](int64_t k) {
      std::byte* to = out.data.get() + i * item;
      if (load_int(DType::Bool, mask.data.get(), i++) != 0) std::memcpy(to, base + k * static_cast<int64_t>(item), item);
      else std::memset(to, 0, item);
    });
    return out;
  }

  Array load_all(const KernelOp& op) {
    const KernelInput& in = spec_.inputs[op.input];
    const KernelArg arg = op.input < static_cast<int32_t>(args_.size()) ? args_[op.input] : KernelArg{};
    Shape shape = spec_.shape_of(in.space);
    Array out = allocate_array(in.dtype, shape);
    bool real = is_float(in.dtype);
    switch (in.kind) {
      case KernelInput::Kind::Buffer: {
        // A non-owning view of the caller's buffer, copied through the
        // input's strides by the reference Copy.
        Array base{in.dtype, {}, std::shared_ptr<std::byte[]>(const_cast<std::byte*>(arg.data), [](std::byte*) {})};
        reference::StridedArray s{&base, in.view};
        Node copy{Op::Copy, in.dtype, View::contiguous(shape), {}, {}};
        return reference::evaluate_node(copy, {&s, 1});
      }
      case KernelInput::Kind::Scalar:
        for (int64_t i = 0; i < out.numel(); ++i) {
          if (real) store_double(in.dtype, out.data.get(), i, arg.real[0]);
          else store_int(in.dtype, out.data.get(), i, arg.integer[0]);
        }
        return out;
      case KernelInput::Kind::Arange: {
        int64_t i = 0;
        for_each_offset(in.view, [&](int64_t k) {
          if (real) store_double(in.dtype, out.data.get(), i++, arg.real[0] + static_cast<double>(k) * arg.real[1]);
          else store_int(in.dtype, out.data.get(), i++,  // modulo 2^64, as the kernels compute
                         static_cast<int64_t>(static_cast<uint64_t>(arg.integer[0]) +
                                              static_cast<uint64_t>(k) * static_cast<uint64_t>(arg.integer[1])));
        });
        return out;
      }
      case KernelInput::Kind::Window: {
        int64_t i = 0;
        for_each_offset(in.view, [&](int64_t k) {
          store_int(DType::Bool, out.data.get(), i++, k >= in.bounds.lo && k < in.bounds.hi);
        });
        return out;
      }
    }
    return out;
  }

  Array compute(const KernelOp& op) {
    bool reduces = is_reduce(op.op) && !op.attr.ints.empty();
    Space reads = reduces ? Space::Full : op.space;
    std::vector<reference::StridedArray> in;
    for (int32_t a : op.args) {
      const Array& v = values_[a];
      View view = View::contiguous(spec_.shape_of(spec_.body[a].space));
      if (spec_.body[a].space != reads) view = broadcast_back(view);
      in.push_back({&v, view});
    }
    Node n{op.op, op.dtype, View::contiguous(spec_.shape_of(op.space)), {}, op.attr};
    return reference::evaluate_node(n, in);
  }

  // A Reduced value seen from the Full space: each index reads its row.
  View broadcast_back(View v) const {
    for (int64_t a : spec_.reduce_axes) v.strides[a] = 0;
    v.shape = spec_.domain;
    return v;
  }

  const KernelSpec& spec_;
  std::span<const KernelArg> args_;
  std::vector<Array> values_;
};

}  // namespace

void interpret_spec(const KernelSpec& spec, std::span<const KernelArg> inputs, std::span<std::byte* const> outputs) {
  SpecInterpreter(spec, inputs).run(outputs);
}

}  // namespace braze
