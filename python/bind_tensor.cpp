// The Tensor class: element-wise methods from the op table, operators,
// indexing, and conversion to NumPy.
#include "python/convert.h"
#include "python/device_export.h"

namespace braze::py {

using namespace nb::literals;

namespace {

void bind_elementwise(nb::module_& m, nb::class_<Tensor>& cls) {
  for (size_t i = 0; i < kNumOps; ++i) {
    const OpInfo& oi = kOpInfo[i];
    if (oi.builder != Builder::Auto) continue;
    const auto op = static_cast<Op>(i);
    const char* api = oi.api.data();  // the row's #api: a null-terminated literal
    switch (oi.arity) {
      case 1:
        m.def(api, [op](nb::handle x) { return record(op, {to_operand(x)}); }, "x"_a);
        cls.def(api, [op](const Tensor& x) { return record(op, {Operand(x)}); });
        break;
      case 2:
        m.def(api, [op](nb::handle a, nb::handle b) { return record(op, {to_operand(a), to_operand(b)}); },
              "a"_a, "b"_a);
        break;
      case 3:
        m.def(api, [op](nb::handle a, nb::handle b, nb::handle c) {
          return record(op, {to_operand(a), to_operand(b), to_operand(c)});
        }, "a"_a, "b"_a, "c"_a);
        break;
      default: BRAZE_ASSERT(false, "arity ", oi.arity);
    }
    // Any other call (NumPy's keywords, its positional out: bz.exp(x,
    // out=x), bz.maximum(a, b, c)) is the second overload, tried only when
    // the first does not fit: python/braze/_numpy_names.py answers it as
    // NumPy's ufunc (through braze's __array_ufunc__), or says what is wrong.
    m.def(api, [api](nb::args args, nb::kwargs kwargs) {
      nb::object call = nb::module_::import_("braze._numpy_names").attr("numpy_style_call");
      return call(api, *args, **kwargs);
    });
  }
}

// & | ^ ~ << >> are NumPy's bitwise ops: on integers and bools (bool & bool
// is bool), a TypeError naming the operator and the dtype on floats, as
// NumPy's ("ufunc 'bitwise_and' not supported for the input types") where
// the op's own dtype rule would say ValueError.
Operand bitwise_operand(const char* symbol, Op op, Operand x) {
  const bool real = x.tensor() ? is_float(x.tensor()->dtype()) : x.scalar()->kind == DTypeKind::Float;
  if (real)
    throw nb::type_error(detail::concat(symbol, ": ", info(op).api, " takes integers and bools, not ",
                                        x.tensor() ? std::string(name(x.tensor()->dtype())) : "a Python float")
                             .c_str());
  return x;
}

// NumPy's rule for binary operators (NEP 13): an operand of another array
// type that defines __array_ufunc__ (a Dask array, a CuPy array) gets to
// handle the operation, so `tensor + dask_array` is the Dask array's
// __radd__, a lazy Dask array, rather than the Dask array computed on the
// spot and converted. NumPy's own arrays and scalars are values braze reads.
bool defers_to(nb::handle b) {
  if (nb::isinstance<Tensor>(b)) return false;
  // Held for the life of the process (a static nb::object would be
  // released after the interpreter is gone).
  static const nb::handle ndarray = nb::object(nb::module_::import_("numpy").attr("ndarray")).release();
  static const nb::handle generic = nb::object(nb::module_::import_("numpy").attr("generic")).release();
  if (PyObject_IsInstance(b.ptr(), ndarray.ptr()) == 1 || PyObject_IsInstance(b.ptr(), generic.ptr()) == 1) return false;
  return nb::hasattr(b.type(), "__array_ufunc__");
}

// Binary operators and their reflected forms, as NumPy defines them.
void bind_operators(nb::class_<Tensor>& cls) {
  struct Dunder {
    const char* name;
    const char* reflected;
    Op op;
  };
  static constexpr Dunder kDunders[] = {
      {"__add__", "__radd__", Op::Add},          {"__sub__", "__rsub__", Op::Sub},
      {"__mul__", "__rmul__", Op::Mul},          {"__truediv__", "__rtruediv__", Op::Div},
      {"__pow__", "__rpow__", Op::Pow},          {"__mod__", "__rmod__", Op::Mod},
      {"__and__", "__rand__", Op::BitwiseAnd},   {"__or__", "__ror__", Op::BitwiseOr},
      {"__xor__", "__rxor__", Op::BitwiseXor},   {"__lshift__", "__rlshift__", Op::LeftShift},
      {"__rshift__", "__rrshift__", Op::RightShift},
      {"__lt__", nullptr, Op::Lt},               {"__le__", nullptr, Op::Le},
      {"__gt__", nullptr, Op::Gt},               {"__ge__", nullptr, Op::Ge},
      {"__eq__", nullptr, Op::Eq},               {"__ne__", nullptr, Op::Ne},
  };
  for (const Dunder& d : kDunders) {
    Op op = d.op;
    const char* symbol = op == Op::BitwiseAnd   ? "&"
                         : op == Op::BitwiseOr  ? "|"
                         : op == Op::BitwiseXor ? "^"
                         : op == Op::LeftShift  ? "<<"
                         : op == Op::RightShift ? ">>"
                                                : nullptr;
    auto operand = [symbol, op](Operand x) { return symbol ? bitwise_operand(symbol, op, std::move(x)) : x; };
    cls.def(d.name, [op, operand](const Tensor& a, nb::handle b) -> nb::object {
      if (defers_to(b)) return nb::borrow(Py_NotImplemented);
      return nb::cast(record(op, {operand(Operand(a)), operand(to_operand(b))}));
    }, nb::is_operator());
    if (d.reflected)
      cls.def(d.reflected, [op, operand](const Tensor& a, nb::handle b) -> nb::object {
        if (defers_to(b)) return nb::borrow(Py_NotImplemented);
        return nb::cast(record(op, {operand(to_operand(b)), operand(Operand(a))}));
      }, nb::is_operator());
  }
  cls.def("__neg__", [](const Tensor& x) { return negative(x); });
  cls.def("__abs__", [](const Tensor& x) { return abs(x); });
  cls.def("__invert__", [](const Tensor& x) {
    return bitwise_invert(*bitwise_operand("~", Op::BitwiseInvert, x).tensor());
  });
  cls.def("__matmul__", [](const Tensor& a, nb::handle b) -> nb::object {
    if (defers_to(b)) return nb::borrow(Py_NotImplemented);
    return nb::cast(matmul(a, to_tensor(b)));
  }, nb::is_operator());
  cls.def("__rmatmul__", [](const Tensor& a, nb::handle b) -> nb::object {
    if (defers_to(b)) return nb::borrow(Py_NotImplemented);
    return nb::cast(matmul(to_tensor(b), a));
  }, nb::is_operator());
}

// Note [In-place updates]
// NumPy's in-place forms (x += y, x[k] = v) change an array every holder
// of it sees. A braze tensor is a handle on a node of the lazy graph, and
// other lazy tensors may read that node: writing its storage would change
// values recorded before the write, which NumPy computed already. So an
// in-place update gives the handle a new node (every Python name bound to
// this tensor object sees the new value; what was recorded on the old one
// keeps the old value, as in NumPy), and writes storage in place only when
// nothing else can see it: the handle is the node's only holder and the
// node the storage's only holder. Writing through a view (a[i][j] = v
// changes a in NumPy) is carried to the base explicitly for views made by
// basic indexing (python/braze/_views.py); any other lazy view of stored
// values refuses the write instead of writing a copy.

// The handle is the only holder of its node and the node of its storage.
bool sole_owner(const Tensor& t) {
  NodeReadLock lock;
  const TensorNode& n = *t.node();
  return t.node().use_count() == 1 && n.data && n.data->data.use_count() == 1;
}

}  // namespace

nb::class_<Tensor> bind_tensor(nb::module_& m) {
  // Weak references: a view made by basic indexing is tracked without
  // being kept alive (python/braze/_views.py).
  nb::class_<Tensor> cls(m, "Tensor", nb::is_weak_referenceable());
  cls.def_prop_ro("shape", [](const Tensor& x) { return nb::tuple(nb::cast(x.shape())); })
      .def_prop_ro("_dtype_name", [](const Tensor& x) { return std::string(name(x.dtype())); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("size", &Tensor::numel)
      .def_prop_ro("device", [](const Tensor& x) { return x.device().str(); })
      .def_prop_ro("is_realized", &Tensor::is_realized)
      .def_prop_ro("T", [](const Tensor& x) { return transpose(x); })
      .def_prop_ro("mT", [](const Tensor& x) { return matrix_transpose(x); })
      .def("_raw_bytes", &raw_bytes)
      .def("_sole_owner", &sole_owner)  // Note [In-place updates]
      // Which recorded value the handle names now (x += y rebinds it): bz.optim.compile_step's replay key.
      .def("_node_id", [](const Tensor& x) { return reinterpret_cast<uintptr_t>(x.node().get()); })
      .def("_rebind", [](Tensor& self, const Tensor& value) { self = value; })
      .def("_writable_bytes", &writable_bytes)
      .def("_upload", &upload_bytes, nb::call_guard<nb::gil_scoped_release>())  // Note [The GIL]
      .def("_dlpack_view", &dlpack_view)
      .def("_cuda_pointer", &cuda_pointer)
      .def("realize", [](const Tensor& x) { realize({x}); return x; })
      .def("item", [](const Tensor& x) -> nb::object {
        double real = 0;
        int64_t integer = 0;
        {
          nb::gil_scoped_release computing;  // Note [The GIL]: a copy from a device too
          if (is_float(x.dtype())) real = x.item();
          else integer = x.item_int();
        }
        if (is_float(x.dtype())) return nb::float_(real);
        if (x.dtype() == DType::Bool) return nb::bool_(integer != 0);
        return nb::int_(integer);
      })
      .def("__repr__", &Tensor::repr)
      .def("__len__", [](const Tensor& x) {
        if (x.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
        return x.shape()[0];
      })
      .def("__getitem__", &getitem, nb::arg("key").none())  // x[None] adds an axis
      .def("astype", [](const Tensor& x, const std::string& dtype) { return astype(x, parse_dtype(dtype)); },
           "dtype"_a)
      .def("reshape", [](const Tensor& x, nb::args shape) {
        if (shape.size() == 1 && !PyLong_Check(shape[0].ptr())) return reshape(x, nb::cast<Shape>(shape[0]));
        return reshape(x, nb::cast<Shape>(shape));
      })
      .def("transpose", [](const Tensor& x, nb::args axes) {
        if (axes.size() == 0) return transpose(x);
        if (axes.size() == 1 && !PyLong_Check(axes[0].ptr()))
          return transpose(x, nb::cast<std::vector<int64_t>>(axes[0]));
        return transpose(x, nb::cast<std::vector<int64_t>>(axes));
      })
      .def("flatten", &flatten)
      .def("squeeze", [](const Tensor& x, nb::handle axis) { return squeeze(x, to_axes(axis, "squeeze")); }, "axis"_a = nb::none());
  bind_elementwise(m, cls);
  bind_operators(cls);
  return cls;
}

}  // namespace braze::py
