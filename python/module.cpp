// braze._core: the extension module the braze package wraps.
#include "python/convert.h"

namespace braze::py {
nb::class_<Tensor> bind_tensor(nb::module_& m);
void bind_functions(nb::module_& m, nb::class_<Tensor>& cls);

namespace {

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
  braze::set_compute_hooks(&braze::py::kGilHooks);
  auto cls = braze::py::bind_tensor(m);
  braze::py::bind_functions(m, cls);
}
