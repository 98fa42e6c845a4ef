// compile(): a KernelSpec to x86-64 code, by the row-kernel generator
// (row_kernel_gen.h) for the ISA asked for.
#include <xbyak/xbyak.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "jit_cpu/kernel.h"
#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit {

namespace {

template <class Vmm>
class GeneratedKernel final : public CompiledKernel {
 public:
  GeneratedKernel(RowPlan plan, const KernelSpec& spec) : CompiledKernel(std::move(plan)), gen_(spec, plan_) {
    gen_.generate();
    streaming_stores_ = gen_.streams();
    scratch_floats_ = gen_.stash_floats();
  }
  KernelFn fn() const override { return gen_.template getCode<KernelFn>(); }
  const uint8_t* code() const override { return gen_.getCode(); }
  size_t code_size() const override { return gen_.getSize(); }
  size_t text_size() const override { return gen_.text_size(); }

 private:
  detail::RowKernelGen<Vmm> gen_;
};

}  // namespace

std::unique_ptr<CompiledKernel> compile(const KernelSpec& spec, Isa isa, std::string& why) {
  try {
    if (isa == Isa::Avx512) return std::make_unique<GeneratedKernel<Xbyak::Zmm>>(plan_rows(spec), spec);
    return std::make_unique<GeneratedKernel<Xbyak::Ymm>>(plan_rows(spec), spec);
  } catch (const detail::Unsupported& e) {
    why = std::string("the CPU code generator does not emit ") + e.what() + " yet";
    return nullptr;
  } catch (const Xbyak::Error& e) {
    why = std::string("xbyak: ") + e.what();
    return nullptr;
  }
}

}  // namespace braze::jit

