// compile(): a KernelSpec to x86-64 code, by the row-kernel generator
// (row_kernel_gen.h) for the ISA asked for.
#include <xbyak/xbyak.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "fusion/loop_order.h"
#include "fusion/lower_windows.h"
#include "jit_cpu/kernel.h"
#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit {

namespace {

// Note [Bounded caches] (runtime/program.h): what a kernel keeps on the
// heap beside its code and its own object: the generator's labels, jump
// records and analysis, and the row plan. Measured with mallinfo2 over 60
// element-wise kernels: 12 KB of heap each, the object included
// (tests/cpp/program_cache_test.cpp checks the estimate against it).
constexpr int64_t kKernelStateBytes = 12 << 10;

template <class Vmm>
class GeneratedKernel final : public CompiledKernel {
 public:
  GeneratedKernel(const KernelSpec& spec, bool constants_in_memory)
      : CompiledKernel(plan_rows(spec)), spec_(spec), gen_(spec_, plan_, constants_in_memory) {
    gen_.generate();
    streaming_stores_ = gen_.streams();
    scratch_floats_ = gen_.stash_floats();
    partial_bytes_ = gen_.partial_bytes();
    row_grain_ = gen_.row_grain();
  }
  KernelFn fn() const override { return gen_.template getCode<KernelFn>(); }
  const uint8_t* code() const override { return gen_.getCode(); }
  size_t code_size() const override { return gen_.getSize(); }
  size_t text_size() const override { return gen_.text_size(); }
  int64_t memory_bytes() const override {
    // xbyak's AutoGrow buffer starts at a page and doubles: the smallest
    // such size that holds the code is what is mapped.
    size_t mapped = 4096;
    while (mapped < gen_.getSize()) mapped *= 2;
    return static_cast<int64_t>(mapped + sizeof(*this)) + kKernelStateBytes;
  }

 private:
  KernelSpec spec_;  // the generator reads it (in loop order: Note [Loops in memory order])
  detail::RowKernelGen<Vmm> gen_;
};

// Note [Constants in memory] (row_kernel_gen.h): a second try when the
// registers run out.
template <class Vmm>
std::unique_ptr<CompiledKernel> generate(const KernelSpec& given) {
  KernelSpec spec = lower_windows(given);  // Note [Masked loads]
  order_loops(spec, Combine::AnyOrder);    // Note [Loops in memory order]
  try {
    return std::make_unique<GeneratedKernel<Vmm>>(spec, false);
  } catch (const detail::OutOfRegisters&) {
    return std::make_unique<GeneratedKernel<Vmm>>(spec, true);
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

