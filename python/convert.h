// Conversions from Python objects to braze's C++ argument types.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "runtime/braze.h"

namespace braze::py {

namespace nb = nanobind;

// Note [No std:: text reaches Python]
// nanobind turns a failed nb::cast into "RuntimeError: std::bad_cast" and
// std::bad_alloc into "MemoryError: std::bad_alloc". braze converts Python
// values itself, so a value that does not fit (a Python int past int64)
// says what and where: indices are IndexError, other integers
// OverflowError, as NumPy. module.cpp's translator catches whatever still
// arrives: no message with C++ library text reaches a Python user.

// A Python int (or an object with __index__) as int64: nullopt where it is
// outside int64 (a Python error is set for non-integers: TypeError).
inline std::optional<int64_t> index_value(nb::handle h) {
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0) return std::nullopt;
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(v);
}

// A Python int as a weak scalar; one past int64 is Scalar::huge_int (Note
// [Python integers out of range], runtime/tensor.cpp); past float64's range
// it is Python's own OverflowError, as in NumPy.
inline Scalar int_scalar(nb::handle h) {
  if (std::optional<int64_t> v = index_value(h)) return Scalar(*v);
  double d = PyLong_AsDouble(h.ptr());
  if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return Scalar::huge_int(d);
}

// A Python argument of an element-wise op. Python numbers stay weak scalars
// (Note [Type promotion]); anything else goes through braze.asarray.
inline Operand to_operand(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (PyBool_Check(h.ptr())) return Scalar(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) return int_scalar(h);
  if (PyFloat_Check(h.ptr()) && !nb::hasattr(h, "dtype")) return Scalar(nb::cast<double>(h));
  return nb::cast<Tensor>(nb::module_::import_("braze").attr("asarray")(h));
}

inline Tensor to_tensor(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return nb::cast<Tensor>(nb::module_::import_("braze").attr("asarray")(h));
}

// An integer argument of `op` (an axis, a size); past int64 it is an
// OverflowError naming the op.
inline int64_t int_argument(nb::handle h, std::string_view op, std::string_view what) {
  std::optional<int64_t> v = index_value(h);
  if (!v) throw std::overflow_error(detail::concat(op, ": ", what, " ", nb::str(h).c_str(), " is outside int64"));
  return *v;
}

// axis=None | int | tuple of ints; an axis past int64 is out of range (IndexError).
inline Axes to_axes(nb::handle h, std::string_view op) {
  if (h.is_none()) return std::nullopt;
  auto axis = [&](nb::handle a) {
    std::optional<int64_t> v = index_value(a);
    BRAZE_CHECK_AXIS(v.has_value(), op, ": axis ", nb::str(a).c_str(), " is out of range");
    return *v;
  };
  if (!PySequence_Check(h.ptr())) return std::vector<int64_t>{axis(h)};
  std::vector<int64_t> out;
  for (nb::handle a : nb::iter(h)) out.push_back(axis(a));
  return out;
}

inline std::optional<Tensor> to_optional_tensor(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_tensor(h);
}

inline Index to_index(nb::handle h) {
  if (h.is_none()) return NewAxis{};
  if (h.ptr() == Py_Ellipsis) return Ellipsis{};
  if (PySlice_Check(h.ptr())) {
    // Python's own reading of a slice, as NumPy's: bounds and steps past
    // int64 clamp (x[::2**70] is x[::2**63 - 1]), a zero step is a
    // ValueError, and absent bounds become the ends for the step's sign.
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(h.ptr(), &start, &stop, &step) != 0) throw nb::python_error();
    return Slice{start, stop, step};
  }
  // An array with dims (np.array([0, 1])) has __index__ too, but is advanced indexing.
  bool is_array = nb::hasattr(h, "ndim") && nb::cast<int64_t>(h.attr("ndim")) != 0;
  if (nb::hasattr(h, "__index__") && !nb::isinstance<Tensor>(h) && !PyBool_Check(h.ptr()) && !is_array) {
    std::optional<int64_t> i = index_value(h);
    BRAZE_CHECK_INDEX(i.has_value(), "index ", nb::str(h).c_str(), " is out of bounds (outside int64)");
    return *i;
  }
  throw nb::type_error("braze supports basic indexing only (integers, slices, None, ...); "
                       "advanced indexing with arrays is not supported yet");
}

inline Tensor getitem(const Tensor& x, nb::handle key) {
  std::vector<Index> items;
  if (PyTuple_Check(key.ptr()))
    for (nb::handle k : nb::borrow<nb::tuple>(key)) items.push_back(to_index(k));
  else
    items.push_back(to_index(key));
  return index(x, items);
}

// The realized bytes as a read-only uint8 array that keeps the storage alive;
// the Python layer views it with the right dtype and shape. A device
// tensor's bytes are copied to the host (Note [Device arrays]).
inline nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>> raw_bytes(const Tensor& t) {
  Array a;
  {
    nb::gil_scoped_release computing;  // Note [The GIL]: a copy from a device too
    a = t.host_data();
  }
  auto* keep = new std::shared_ptr<std::byte[]>(a.data);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<std::byte[]>*>(p); });
  return nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(a.data.get(), {a.bytes()}, owner);
}

// The realized bytes as a writable uint8 array over the tensor's own
// storage: what bz.copyto writes through (NumPy does the strided copy), so
// refreshing an input allocates nothing. Host memory only.
inline nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> writable_bytes(const Tensor& t) {
  BRAZE_CHECK(t.is_realized(), "copyto: dst is lazy; only a realized tensor has storage to write into "
              "(realize it first, or use bz.jit(out=...) to write a result)");
  BRAZE_CHECK(t.device().str() == "cpu", "copyto: dst is on ", t.device().str(),
              "; copyto writes host memory only");
  const Array& a = *t.node()->data;
  // copyto writes through the view at once: the storage is new from now on.
  Runtime::get().storage_versions().written(a.data);
  auto* keep = new std::shared_ptr<std::byte[]>(a.data);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<std::byte[]>*>(p); });
  return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(a.data.get(), {a.bytes()}, owner);
}

// bz.copyto into a device tensor: `raw` (dst's dtype and shape, C order)
// goes straight into dst's device storage, with no temporary tensor.
inline void upload_bytes(const Tensor& t, nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> raw) {
  BRAZE_CHECK(t.is_realized(), "copyto: dst is lazy; only a realized tensor has storage to write into "
              "(realize it first, or use bz.jit(out=...) to write a result)");
  const Array& a = *t.node()->data;
  BRAZE_CHECK(raw.size() == a.bytes(), "copyto: ", raw.size(), " bytes of data for ", a.bytes());
  Runtime::get().storage_versions().written(a.data);
  copy_from_host(a, raw.data(), raw.size());
}

inline Tensor from_bytes(nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> raw,
                  const std::string& dtype, const Shape& shape, std::optional<std::string> device) {
  Array a = allocate_array(parse_dtype(dtype), shape);
  BRAZE_CHECK(raw.size() == a.bytes(), "tensor: ", raw.size(), " bytes of data for ", dtype, to_string(shape));
  std::memcpy(a.data.get(), raw.data(), a.bytes());
  Runtime::get().stats().allocations.fetch_add(1);
  Runtime::get().stats().bytes_allocated.fetch_add(static_cast<int64_t>(a.bytes()));
  return from_array(std::move(a), device ? std::optional(Device::parse(*device)) : std::nullopt);
}

inline Scalar to_scalar(nb::handle h) {
  if (PyBool_Check(h.ptr())) return Scalar(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr()) || (nb::hasattr(h, "__index__") && !nb::hasattr(h, "__float__"))) return int_scalar(h);
  return Scalar(nb::cast<double>(nb::module_::import_("builtins").attr("float")(h)));
}

inline std::optional<DType> to_dtype(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return parse_dtype(*s);
}

inline std::optional<Device> to_device(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return Device::parse(*s);
}

inline std::array<int64_t, 2> pair(nb::handle h) {
  if (PyLong_Check(h.ptr())) {
    int64_t v = int_argument(h, "conv2d", "value");
    return {v, v};
  }
  std::vector<int64_t> v;
  for (nb::handle x : nb::iter(h)) v.push_back(int_argument(x, "conv2d", "value"));
  BRAZE_CHECK(v.size() == 2, "conv2d: expected an int or a pair, got ", v.size(), " values");
  return {v[0], v[1]};
}

}  // namespace braze::py
