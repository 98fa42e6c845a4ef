// braze._core: the extension module the braze package wraps.
#include "python/convert.h"

namespace braze::py {
nb::class_<Tensor> bind_tensor(nb::module_& m);
void bind_functions(nb::module_& m, nb::class_<Tensor>& cls);
}  // namespace braze::py

NB_MODULE(_core, m) {
  auto cls = braze::py::bind_tensor(m);
  braze::py::bind_functions(m, cls);
}
