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
  GeneratedKernel(RowPlan plan, const KernelSpec& spec, bool constants_in_memory)
      : CompiledKernel(std::move(plan)), gen_(spec, plan_, constants_in_memory) {
    gen_.generate();
    streaming_stores_ = gen_.streams();
    scratch_floats_ = gen_.stash_floats();
    partial_bytes_ = gen_.partial_bytes();
  }
  KernelFn fn() const override { return gen_.template getCode<KernelFn>(); }
  const uint8_t* code() const override { return gen_.getCode(); }
  size_t code_size() const override { return gen_.getSize(); }
  size_t text_size() const override { return gen_.text_size(); }

 private:
  detail::RowKernelGen<Vmm> gen_;
};

// Note [Constants in memory] (row_kernel_gen.h): a second try when the
// registers run out.
template <class Vmm>
std::unique_ptr<CompiledKernel> generate(const KernelSpec& spec) {
  try {
    return std::make_unique<GeneratedKernel<Vmm>>(plan_rows(spec), spec, false);
  } catch (const detail::OutOfRegisters&) {
    return std::make_unique<GeneratedKernel<Vmm>>(plan_rows(spec), spec, true);
  }
}

}  // namespace

std::unique_ptr<CompiledKernel> compile(const KernelSpec& spec, Isa isa, std::string& why) {
  try {
    if (isa == Isa::Avx512) return generate<Xbyak::Zmm>(spec);
    return generate<Xbyak::Ymm>(spec);
  } catch (const detail::Unsupported& e) {
    why = std::string("the CPU code generator does not emit ") + e.what() + " yet";
    return nullptr;
  } catch (const Xbyak::Error& e) {
    why = std::string("xbyak: ") + e.what();
    return nullptr;
  }
}

}  // namespace braze::jit

