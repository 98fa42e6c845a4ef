// braze._core: the extension module the braze package wraps.
#include <typeinfo>

#include "python/convert.h"

namespace braze::py {
nb::class_<Tensor> bind_tensor(nb::module_& m);
void bind_functions(nb::module_& m, nb::class_<Tensor>& cls);
void bind_autodiff(nb::module_& m, nb::class_<Tensor>& cls);

namespace {

// Note [No std:: text reaches Python] (convert.h): the last word on C++
// exceptions. Registered after nanobind's default translator, so it is
// tried first; braze's own exceptions (BRAZE_CHECK's std::invalid_argument
// and std::out_of_range, std::overflow_error) pass on to nanobind's
// ValueError, IndexError and OverflowError. What is left is C++ library
// text ("std::bad_cast", "std::bad_alloc", "vector::_M_range_check"),
// which says nothing to a Python user: it is given a sentence instead.
// C++ library text in a message, such as std::length_error's
// "vector::_M_default_append", becomes a sentence.
std::string clean(const std::exception& e) {
  std::string what = e.what();
  if (what.find("std::") == std::string::npos && what.find("::_M_") == std::string::npos) return what;
  return "braze internal error: a C++ library call failed (" + std::string(typeid(e).name()) +
         "); this is a bug in braze, please report it";
}

// NumPy's AxisError (numpy.exceptions), a subclass of IndexError and
// ValueError: an axis out of range is what NumPy code catches either way.
PyObject* axis_error = nullptr;

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const AxisError& e) {
    PyErr_SetString(axis_error ? axis_error : PyExc_IndexError, clean(e).c_str());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "braze: out of memory (an allocation failed)");
  } catch (const std::bad_cast&) {  // nb::cast_error: a value braze's conversions did not expect
    PyErr_SetString(PyExc_TypeError, "braze: an argument has a type or value this function cannot take");
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, clean(e).c_str());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, clean(e).c_str());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, clean(e).c_str());
  } catch (const std::exception& e) {  // BRAZE_ASSERT's logic_error says it is a bug in braze
    PyErr_SetString(PyExc_RuntimeError, clean(e).c_str());
  }
}

// Note [The GIL]
// The binding holds the GIL while it reads Python objects and makes
// tensors, and lets go of it while braze computes, so that other Python
// threads run meanwhile and threads realizing different graphs realize
// in parallel (Note [Shared lazy tensors]: braze itself is thread-safe).
// Every realize lets go of it through the runtime's compute hooks (Note
// [Calls that compute]): wherever it starts, from .numpy(), item(), an op
// that cuts a deep lazy graph or bz.realize. Calls that compute without
// realizing (copies between devices, explain's library primitives, graph
// files, the copy-bandwidth probe) let go of it in their bindings. A hook
// runs on a thread that may not hold the GIL (a C++ thread, a binding
// that let go already): it lets go only of a GIL it holds.
void* let_go_of_gil() { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; }
void take_gil_back(void* state) {
  if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state));
}
constexpr ComputeHooks kGilHooks{let_go_of_gil, take_gil_back};

}  // namespace
}  // namespace braze::py

NB_MODULE(_core, m) {
  // Kept for the life of the process, as the module is.
  braze::py::axis_error = nanobind::object(nanobind::module_::import_("numpy.exceptions").attr("AxisError")).release().ptr();
  nanobind::register_exception_translator(&braze::py::translate);

  braze::set_compute_hooks(&braze::py::kGilHooks);
  // Python's references are exact: what a realize finds held, user code
  // holds (Note [Held values are kept]).
  braze::set_keep_held_values(true);
  auto cls = braze::py::bind_tensor(m);
  braze::py::bind_functions(m, cls);
  braze::py::bind_autodiff(m, cls);
}
