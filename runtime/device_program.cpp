#include "runtime/device_program.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "graph/check.h"
#include "runtime/context.h"

namespace braze {

bool cuda_graphs_enabled() {
  const char* v = std::getenv("BRAZE_CUDA_GRAPHS");
  return !v || std::string_view(v) != "0";
}

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

std::vector<uint64_t> kernel_parameters(const cuda::DeviceKernel& kernel, const KernelSpec& spec,
                                        std::span<const KernelArg> args, std::span<std::byte* const> outs) {
  // A double, a long long and a pointer are each 8 bytes: one slot type
  // holds them all.
  std::vector<uint64_t> slots;
  slots.reserve(2 * spec.inputs.size() + outs.size());
  auto push = [&](const auto& v) {
    static_assert(sizeof v == sizeof(uint64_t));
    uint64_t slot = 0;
    std::memcpy(&slot, &v, sizeof slot);
    slots.push_back(slot);
  };
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const KernelInput& in = spec.inputs[i];
    if (in.kind == KernelInput::Kind::Buffer) {
      push(args[i].data);
      continue;
    }
    const int values = in.kind == KernelInput::Kind::Arange ? 2 : 1;
    for (int j = 0; j < values; ++j) {
      if (is_float(in.dtype)) push(args[i].real[j]);
      else push(static_cast<long long>(args[i].integer[j]));
    }
  }
  for (std::byte* o : outs) push(o);
  BRAZE_ASSERT(slots.size() == kernel.source.param_types.size(), kernel.source.name, " takes ",
               kernel.source.param_types.size(), " parameters, ", slots.size(), " bound");
  return slots;
}

std::vector<void*> parameter_pointers(std::vector<uint64_t>& values) {
  std::vector<void*> pointers(values.size());
  for (size_t i = 0; i < values.size(); ++i) pointers[i] = &values[i];
  return pointers;
}

}  // namespace braze
