#include "runtime/device_program.h"

#include <cstring>

#include "graph/check.h"
#include "runtime/context.h"

namespace braze {

memplan::PlanOptions device_plan_options() {
  memplan::PlanOptions o;
  o.alignment = 256;  // cuMemAlloc's alignment: vector loads and coalesced rows
  o.in_place = false;  // __restrict__ on every kernel pointer (jit_cuda/README.md)
  return o;
}

void load_device_kernels(const Schedule& s, Prepared& p) {
  std::vector<const KernelSpec*> specs;
  std::vector<size_t> steps;
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& step = s.steps[k];
    if (step.group.kind == FusedGroup::Kind::Library) continue;  // prepare_device_library
    specs.push_back(&step.spec);
    steps.push_back(k);
  }
  std::vector<cuda::LoadedKernel> loaded = p.device->load(specs);
  p.device_kernels.assign(s.steps.size(), nullptr);
  Stats& stats = Runtime::get().stats();
  for (size_t i = 0; i < loaded.size(); ++i) {
    p.device_kernels[steps[i]] = loaded[i].kernel;
    stats.kernels_evicted.fetch_add(loaded[i].evicted, std::memory_order_relaxed);
    // New to this process: its CUDA texts, as a CPU kernel's files are
    // written when the kernel cache compiles it (Note [Dump files]).
    if (loaded[i].origin != cuda::KernelOrigin::Memory && Runtime::get().dumper().enabled())
      Runtime::get().dumper().device_kernel(s.steps[steps[i]]);
    switch (loaded[i].origin) {
      case cuda::KernelOrigin::Memory: stats.cache_hits_memory.fetch_add(1, std::memory_order_relaxed); break;
      case cuda::KernelOrigin::Disk: stats.cache_hits_disk.fetch_add(1, std::memory_order_relaxed); break;
      case cuda::KernelOrigin::Compiled: stats.kernels_compiled.fetch_add(1, std::memory_order_relaxed); break;
    }
  }
}

cuda::PreparedLibraryCall prepare_device_library(cuda::DeviceExecutor& ex, const Graph& g, const FusedGroup& group) {
  return ex.prepare_library(g, group, cuda::LibraryOptions{.allow_tf32 = cuda::allow_tf32()});
}

void read_scalar(const Array& a, KernelArg& arg) {
  alignas(8) std::byte value[8] = {};
  const std::byte* host = a.data.get();
  if (!a.device.is_cpu()) {  // a user's 0-d device tensor; parameters are host memory
    cuda::DeviceExecutor* ex = cuda::executor_of(a.data);
    BRAZE_ASSERT(ex && a.bytes() <= sizeof value, "a 0-d ", a.device.str(), " array without its executor");
    ex->copy_to_host(value, a.data.get(), a.bytes());
    host = value;
  }
  arg.real[0] = load_double(a.dtype, host, 0);
  arg.integer[0] = load_int(a.dtype, host, 0);
}

void launch_device_kernel(cuda::DeviceExecutor& ex, const cuda::DeviceKernel& kernel, const KernelSpec& spec,
                          std::span<const KernelArg> args, std::span<std::byte* const> outs) {
  // Parameter values, then a pointer to each (cuLaunchKernel's form), in
  // the order of CudaKernelSource: per input a pointer, a value, or start
  // and step; then the outputs. A double, a long long and a pointer are
  // each 8 bytes: one slot type holds them all.
  union Slot {
    const void* pointer;
    double real;
    long long integer;
  };
  std::vector<Slot> slots;
  slots.reserve(2 * spec.inputs.size() + outs.size());
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const KernelInput& in = spec.inputs[i];
    bool real = is_float(in.dtype);
    int values = in.kind == KernelInput::Kind::Arange ? 2 : 1;
    if (in.kind == KernelInput::Kind::Buffer) {
      slots.push_back({.pointer = args[i].data});
      continue;
    }
    for (int j = 0; j < values; ++j) {
      Slot v;
      if (real) v.real = args[i].real[j];
      else v.integer = args[i].integer[j];
      slots.push_back(v);
    }
  }
  for (std::byte* o : outs) slots.push_back({.pointer = o});
  BRAZE_ASSERT(slots.size() == kernel.source.param_types.size(), kernel.source.name, " takes ",
               kernel.source.param_types.size(), " parameters, ", slots.size(), " bound");
  std::vector<void*> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) params[i] = &slots[i];
  ex.launch(kernel, params.data());
}

}  // namespace braze
