// Reverse mode's bindings (Note [Reverse mode], runtime/autodiff.h): the
// PyTorch-style methods on Tensor and the primitives python/braze/autodiff.py
// builds bz.grad, bz.value_and_grad, bz.vjp and bz.checkpoint from.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/convert.h"
#include "runtime/autodiff.h"

namespace braze::py {

using namespace nb::literals;

void bind_autodiff(nb::module_& m, nb::class_<Tensor>& cls) {
  cls.def_prop_ro("requires_grad", [](const Tensor& x) { return x.node()->requires_grad; })
      .def("requires_grad_", [](const Tensor& x, bool on) { return requires_grad(x, on); }, "requires_grad"_a = true)
      .def_prop_rw(
          "grad", [](const Tensor& x) -> std::optional<Tensor> {
            Tensor g = grad(x);
            return g.defined() ? std::optional<Tensor>(g) : std::nullopt;
          },
          [](const Tensor& x, std::optional<Tensor> g) { set_grad(x, g.value_or(Tensor())); }, nb::arg("grad").none())
      .def("backward", [](const Tensor& x, nb::handle gradient, bool create_graph) {
        backward(x, gradient.is_none() ? std::nullopt : std::optional<Tensor>(to_tensor(gradient)), create_graph);
      }, "gradient"_a = nb::none(), "create_graph"_a = false)
      .def("detach", [](const Tensor& x) { return detach(x); });
  m.def("is_grad_enabled", &grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled, "on"_a);
  m.def("_variable", &variable, "x"_a);
  // Note [Traced functions add no depth]: around bz.grad's and bz.vjp's recording.
  m.def("_enter_trace", &enter_trace);
  m.def("_exit_trace", &exit_trace);
  m.def("_vjp", [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& cotangents,
                   const std::vector<Tensor>& wrt) { return vjp(outputs, cotangents, wrt); },
        "outputs"_a, "cotangents"_a, "wrt"_a);
  // Note [Checkpoints]: f takes and returns lists of tensors (autodiff.py
  // flattens the user's trees); it is called once, here, with the GIL held.
  m.def("_checkpoint", [](nb::callable f, std::vector<Tensor> args, const std::string& policy) {
    CheckpointPolicy p = CheckpointPolicy::NothingSaveable;
    if (policy == "dots_saveable") p = CheckpointPolicy::DotsSaveable;
    else if (policy == "dots_and_reductions_saveable") p = CheckpointPolicy::DotsAndReductionsSaveable;
    else BRAZE_CHECK(policy == "nothing_saveable", "checkpoint: unknown policy '", policy,
                     "'; expected 'nothing_saveable', 'dots_saveable' or 'dots_and_reductions_saveable'");
    return checkpoint([&f](std::vector<Tensor> in) { return nb::cast<std::vector<Tensor>>(f(in)); }, std::move(args),
                      p);
  }, "f"_a, "args"_a, "policy"_a);
}

}  // namespace braze::py
