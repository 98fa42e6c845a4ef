// Module-level functions that take more than tensors: creation, movement,
// reductions, composites, library ops, and the runtime's controls.
#include <nanobind/stl/pair.h>

#include "fusion/schedule.h"
#include "jit_cpu/dnn.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "python/convert.h"
#include "runtime/copy_bandwidth.h"
#include "runtime/cuda_executors.h"
#include "runtime/device_program.h"
#include "runtime/execute.h"
#include "runtime/memory_figures.h"

namespace braze::py {

using namespace nb::literals;

namespace {

// sum, prod, max, min, mean, logsumexp: (x, axis=None, keepdims=False),
// as functions and as methods.
void bind_reductions(nb::module_& m, nb::class_<Tensor>& cls) {
  using Reduce = Tensor (*)(const Tensor&, Axes, bool);
  struct Row {
    const char* name;
    Reduce fn;
  };
  static constexpr Row kRows[] = {{"sum", &sum},   {"prod", &prod}, {"max", &max},
                                  {"min", &min},   {"mean", &mean}, {"logsumexp", &logsumexp}};
  for (const Row& r : kRows) {
    Reduce fn = r.fn;
    const char* name = r.name;
    auto f = [fn, name](nb::handle x, nb::handle axis, bool keepdims) {
      return fn(to_tensor(x), to_axes(axis, name), keepdims);
    };
    m.def(r.name, f, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
    cls.def(r.name, f, "axis"_a = nb::none(), "keepdims"_a = false);
  }
  using Arg = Tensor (*)(const Tensor&, std::optional<int64_t>, bool);
  for (auto [name, fn] : {std::pair<const char*, Arg>{"argmax", &argmax}, {"argmin", &argmin}}) {
    auto f = [fn](nb::handle x, std::optional<int64_t> axis, bool keepdims) { return fn(to_tensor(x), axis, keepdims); };
    m.def(name, f, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
    cls.def(name, f, "axis"_a = nb::none(), "keepdims"_a = false);
  }
  using Stat = Tensor (*)(const Tensor&, Axes, double, bool);
  for (auto [name, fn] : {std::pair<const char*, Stat>{"var", &var}, {"std", &braze::std}}) {
    auto f = [fn, name](nb::handle x, nb::handle axis, double correction, bool keepdims) {
      return fn(to_tensor(x), to_axes(axis, name), correction, keepdims);
    };
    m.def(name, f, "x"_a, "axis"_a = nb::none(), "correction"_a = 0.0, "keepdims"_a = false);
    cls.def(name, f, "axis"_a = nb::none(), "correction"_a = 0.0, "keepdims"_a = false);
  }
}

void bind_creation(nb::module_& m) {
  m.def("_from_bytes", &from_bytes, "raw"_a, "dtype"_a, "shape"_a, "device"_a = nb::none(),
        nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]: a copy, to a device too
  m.def("full", [](const Shape& shape, nb::handle value, std::optional<std::string> dtype,
                   std::optional<std::string> device) {
    return full(shape, to_scalar(value), to_dtype(dtype), to_device(device));
  }, "shape"_a, "fill_value"_a, "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def("_arange", [](nb::handle start, nb::handle stop, nb::handle step, std::optional<std::string> dtype,
                      std::optional<std::string> device) {
    return arange(to_scalar(start), to_scalar(stop), to_scalar(step), to_dtype(dtype), to_device(device));
  });
}

void bind_movement(nb::module_& m) {
  m.def("reshape", [](nb::handle x, const Shape& shape) { return reshape(to_tensor(x), shape); }, "x"_a, "shape"_a);
  m.def("transpose", [](nb::handle x, std::optional<std::vector<int64_t>> axes) {
    return transpose(to_tensor(x), axes);
  }, "x"_a, "axes"_a = nb::none());
  m.def("permute_dims", [](nb::handle x, std::vector<int64_t> axes) { return permute(to_tensor(x), axes); },
        "x"_a, "axes"_a);
  m.def("matrix_transpose", [](nb::handle x) { return matrix_transpose(to_tensor(x)); }, "x"_a);
  m.def("broadcast_to", [](nb::handle x, const Shape& shape) { return broadcast_to(to_tensor(x), shape); },
        "x"_a, "shape"_a);
  // A sequence of tensors (or what asarray takes) as one list: concatenate, stack.
  auto tensor_list = [](nb::handle xs, const char* op) {
    if (nb::isinstance<Tensor>(xs) || !nb::hasattr(xs, "__iter__"))
      throw nb::type_error(detail::concat(op, ": takes a sequence of tensors, not a ", nb::inst_name(xs).c_str()).c_str());
    std::vector<Tensor> ts;
    for (nb::handle h : nb::iter(xs)) ts.push_back(to_tensor(h));
    return ts;
  };
  m.def("_concatenate", [tensor_list](nb::handle xs, int64_t axis) {
    return concatenate(tensor_list(xs, "concatenate"), axis); }, "arrays"_a, "axis"_a);
  m.def("_stack", [tensor_list](nb::handle xs, int64_t axis) {
    return stack(tensor_list(xs, "stack"), axis); }, "arrays"_a, "axis"_a);
  m.def("expand_dims", [](nb::handle x, int64_t axis) { return expand_dims(to_tensor(x), axis); }, "x"_a, "axis"_a);
  // Zeros before and after each axis, as a view (Note [Windows]); bz.pad is NumPy's on top of it.
  m.def("_pad", [](nb::handle x, std::vector<int64_t> before, std::vector<int64_t> after) {
    return pad(to_tensor(x), std::move(before), std::move(after));
  }, "x"_a, "before"_a, "after"_a);
  m.def("squeeze", [](nb::handle x, nb::handle axis) { return squeeze(to_tensor(x), to_axes(axis, "squeeze")); }, "x"_a,
        "axis"_a = nb::none());
  m.def("astype", [](nb::handle x, const std::string& dtype) { return astype(to_tensor(x), parse_dtype(dtype)); },
        "x"_a, "dtype"_a);
}

void bind_composites(nb::module_& m) {
  m.def("softmax", [](nb::handle x, int64_t axis) { return softmax(to_tensor(x), axis); }, "x"_a, "axis"_a = -1);
  m.def("log_softmax", [](nb::handle x, int64_t axis) { return log_softmax(to_tensor(x), axis); }, "x"_a,
        "axis"_a = -1);
  m.def("layer_norm", [](nb::handle x, nb::handle w, nb::handle b, double eps) {
    return layer_norm(to_tensor(x), to_optional_tensor(w), to_optional_tensor(b), eps);
  }, "x"_a, "weight"_a = nb::none(), "bias"_a = nb::none(), "eps"_a = 1e-5);
  m.def("rms_norm", [](nb::handle x, nb::handle w, double eps) {
    return rms_norm(to_tensor(x), to_optional_tensor(w), eps);
  }, "x"_a, "weight"_a = nb::none(), "eps"_a = 1e-6);
  m.def("gelu", [](nb::handle x, const std::string& approximate) { return gelu(to_tensor(x), approximate); }, "x"_a,
        "approximate"_a = "none");
  m.def("silu", [](nb::handle x) { return silu(to_tensor(x)); }, "x"_a);
  m.def("mse_loss", [](nb::handle a, nb::handle b) { return mse_loss(to_tensor(a), to_tensor(b)); }, "prediction"_a,
        "target"_a);
  m.def("cross_entropy", [](nb::handle a, nb::handle b) { return cross_entropy(to_tensor(a), to_tensor(b)); },
        "logits"_a, "labels"_a);
  m.def("matmul", [](nb::handle a, nb::handle b) { return matmul(to_tensor(a), to_tensor(b)); }, "a"_a, "b"_a);
  m.def("conv2d", [](nb::handle x, nb::handle w, nb::handle bias, nb::handle stride, nb::handle padding,
                     nb::handle dilation, int64_t groups) {
    return conv2d(to_tensor(x), to_tensor(w), to_optional_tensor(bias),
                  Conv2dOptions{pair(stride), pair(padding), pair(dilation), groups});
  }, "x"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1, "groups"_a = 1);
}

void bind_runtime(nb::module_& m) {
  m.def("realize", [](const std::vector<Tensor>& ts) { realize(ts); }, "tensors"_a);
  m.def("assign", [](const std::vector<Tensor>& out, const std::vector<Tensor>& values) { assign(out, values); },
        "out"_a, "values"_a);
  m.def("explain", [](const std::vector<Tensor>& ts) {
    // The schedule and plan realize makes on the tensors' device (Note
    // [Device programs]): its library calls' post-ops and workspaces.
    bool on_device = !ts.empty() && !ts[0].device().is_cpu();
    std::shared_ptr<cuda::DeviceExecutor> ex = on_device ? cuda_executor(ts[0].device()) : nullptr;
    // With the values realize would keep (Note [Held values are kept]); Note [One schedule].
    Schedule s = realize_schedule(lower(with_held_values(ts), {.elements_as_inputs = true}).graph, ex.get());
    return explain(s) + memplan::explain_plan(s, on_device ? device_plan_options() : memplan::PlanOptions{});
  }, "tensors"_a, nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]: library primitives are made
  m.def("clear_programs", []() { Runtime::get().programs().clear(); });
  // The figures of the memory plan realize would make (bench/memory_plan.py).
  m.def("_plan", [](const std::vector<Tensor>& ts) {
    Schedule s;
    memplan::Liveness l;
    memplan::MemoryPlan p;
    {
      nb::gil_scoped_release computing;  // Note [The GIL]: library primitives are made
      s = realize_schedule(lower(ts, {.elements_as_inputs = true}).graph);  // Note [One schedule]
      l = memplan::liveness(s);
      p = memplan::plan_memory(l);
      memplan::verify_plan(l, p);
    }
    nb::dict d;
    d["steps"] = s.steps.size();
    d["buffers"] = p.buffers.size();
    d["arena_bytes"] = p.arena_bytes;
    d["lower_bound_bytes"] = memplan::lower_bound(l, p.alignment);
    d["no_reuse_bytes"] = memplan::no_reuse_bytes(l, p.alignment);
    return d;
  }, "tensors"_a);
  m.def("stats", []() { return Runtime::get().stats_snapshot(); });
  // What `braze doctor` says of the CPU library calls (jit_cpu/dnn.h): for tests and benchmarks.
  m.def("_library_calls", []() {
    nb::dict d;
    d["onednn"] = dnn::available();
    d["library"] = dnn::version();
    d["isa"] = dnn::isa();
    d["bfloat16"] = dnn::runs_bfloat16();
    d["int8"] = dnn::sums_int8_exactly();  // Note [Integer matmul]
    d["blas"] = dnn::blas();  // float64 matmul's; "" without one
    return d;
  });
  // The bounded caches against their bounds (Note [Bounded caches]; `braze doctor`): for tests.
  m.def("_memory", []() {
    nb::dict d;
    for (const CacheFigures& c : memory_figures()) {
      nb::dict row;
      row["variable"] = c.variable;
      row["entries"] = c.entries;
      row["bytes"] = c.bytes;
      row["limit"] = c.limit;
      d[c.cache.c_str()] = row;
    }
    return d;
  });
  // The streaming-copy probe (runtime/copy_bandwidth.h): for the benchmarks' roofline ratios.
  m.def("_copy_bandwidth", []() { return copy_bandwidth(); },
        nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]
  m.def("reset_stats", []() { Runtime::get().reset_stats(); });
  m.def("_device_name", [](const std::string& d) { return Device::parse(d).str(); });  // "cuda" -> "cuda:0"
  m.def("_to", [](const Tensor& t, const std::string& d) { return to(t, Device::parse(d)); }, "x"_a, "device"_a,
        nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]: a copy between devices
  m.def("_default_device", []() { return Runtime::default_device().str(); });
  // Why there is no GPU here, or None (cuda_absent()): what a test marked gpu may skip on.
  m.def("_cuda_absent", []() { return cuda_absent(); });
  m.def("_synchronize", [](const std::string& d) { synchronize(Device::parse(d)); }, "device"_a,
        nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]
  m.def("_set_default_device", [](const std::string& d) {
    Device dev = Device::parse(d);
    check_available(dev);
    Runtime::set_default_device(dev);
  });
  m.def("save_graph", [](const std::vector<Tensor>& ts, const std::string& path, bool with_data) {
    Lowered l = lower(ts);
    for (Array& a : l.inputs)
      if (a.data) a = to_host(a);  // a graph file holds host bytes
    save_graph_file(path, l.graph, with_data ? std::span<const Array>(l.inputs) : std::span<const Array>());
  }, "tensors"_a, "path"_a, "with_data"_a = true, nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]
  m.def("load_graph", [](const std::string& path) {
    SavedGraph g = load_graph_file(path);
    return lift(g.graph, g.inputs);
  }, "path"_a, nb::call_guard<nb::gil_scoped_release>());  // Note [The GIL]: a file read
  m.def("ops", []() {
    nb::list out;
    for (const OpInfo& oi : kOpInfo) {
      nb::dict d;
      d["name"] = std::string(oi.name);
      d["api"] = std::string(oi.api);
      d["arity"] = oi.arity;
      d["kind"] = std::string(name(oi.kind));
      d["rule"] = std::string(name(oi.dtype_rule));
      d["commutative"] = (oi.flags & kCommutative) != 0;
      d["numpy"] = std::string(oi.numpy);
      d["auto"] = oi.builder == Builder::Auto;
      out.append(d);
    }
    return out;
  });
}

}  // namespace

void bind_functions(nb::module_& m, nb::class_<Tensor>& cls) {
  bind_reductions(m, cls);
  bind_creation(m);
  bind_movement(m);
  bind_composites(m);
  bind_runtime(m);
}

}  // namespace braze::py
