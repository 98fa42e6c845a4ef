// compile(): a KernelSpec to x86-64 code, by the row-kernel generator
// (row_kernel_gen.h) for the ISA asked for.
#include <xbyak/xbyak.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
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
    wide_ = gen_.wide();
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

// Note [Float64 scalars cast to float32]
// An optimizer's learning rate is a float64 0-d tensor, cast to each
// parameter's dtype where it is used (python/braze/optim.py): the scalar
// input of the update kernel is float64, which made the kernel wide (Note
// [Wide kernels]), all its float32 math in 64-bit lanes rounded after
// every op. The Adam update of a [784, 512] float32 weight took 0.8 ms,
// 14% of bench/training.py's mlp_large step. A float64 scalar that only
// casts to float32 is a float32 scalar here: launch fills its lanes with
// static_cast<float> of its value (lane_bits), which is the reference's
// cast, rounded to nearest; the cast that remains copies.
void narrow_scalar_casts(KernelSpec& spec) {
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    KernelInput& in = spec.inputs[k];
    if (in.kind != KernelInput::Kind::Scalar || in.dtype != DType::Float64) continue;
    std::vector<int32_t> loads;
    for (size_t v = 0; v < spec.body.size(); ++v)
      if (spec.body[v].op == Op::Input && spec.body[v].input == static_cast<int32_t>(k))
        loads.push_back(static_cast<int32_t>(v));
    auto only_cast = [&](int32_t load) {
      for (const KernelOutput& o : spec.outputs)
        if (o.value == load) return false;
      for (const KernelOp& op : spec.body)
        if (std::find(op.args.begin(), op.args.end(), load) != op.args.end() &&
            (op.op != Op::Cast || op.dtype != DType::Float32))
          return false;
      return true;
    };
    if (!std::all_of(loads.begin(), loads.end(), only_cast)) continue;
    in.dtype = DType::Float32;
    for (int32_t load : loads) spec.body[load].dtype = DType::Float32;
  }
}

// Note [Constants in memory] (row_kernel_gen.h): a second try when the
// registers run out.
template <class Vmm>
std::unique_ptr<CompiledKernel> generate(const KernelSpec& given) {
  KernelSpec spec = lower_windows(given);  // Note [Masked loads]
  narrow_scalar_casts(spec);               // Note [Float64 scalars cast to float32]
  order_loops(spec, Combine::AnyOrder);    // Note [Loops in memory order]
  try {
    return std::make_unique<GeneratedKernel<Vmm>>(spec, false);
  } catch (const detail::OutOfRegisters&) {
    return std::make_unique<GeneratedKernel<Vmm>>(spec, true);
  }
}

// Note [Perf map]
// With BRAZE_PERF_MAP=1 each generated kernel is named in
// /tmp/perf-<pid>.map, the file `perf report` reads for code it cannot
// find in a binary: "start size braze_<kernel key>", the key bz.explain
// prints. oneDNN appends its own JIT kernels to the same file with
// DNNL_JIT_PROFILE=2, so a profile of a training step splits into its
// library calls and braze's kernels by name.
void name_for_perf(const CompiledKernel& k, const KernelSpec& spec) {
  static const bool on = [] {
    const char* env = std::getenv("BRAZE_PERF_MAP");
    return env && std::string(env) == "1";
  }();
  if (!on) return;
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%lx %zx braze_%s\n", reinterpret_cast<unsigned long>(k.code()), k.code_size(),
                 kernel_key(spec).hex().c_str());
    std::fclose(f);
  }
}

}  // namespace

std::unique_ptr<CompiledKernel> compile(const KernelSpec& spec, Isa isa, std::string& why) {
  try {
    std::unique_ptr<CompiledKernel> k = isa == Isa::Avx512 ? generate<Xbyak::Zmm>(spec) : generate<Xbyak::Ymm>(spec);
    name_for_perf(*k, spec);
    return k;
  } catch (const detail::Unsupported& e) {
    why = std::string("the CPU code generator does not emit ") + e.what() + " yet";
    return nullptr;
  } catch (const Xbyak::Error& e) {
    why = std::string("xbyak: ") + e.what();
    return nullptr;
  }
}

}  // namespace braze::jit

