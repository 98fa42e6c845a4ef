#include "jit_cpu/kernel_cache.h"

#include <algorithm>
#include <bit>
#include <chrono>

#include "graph/array.h"
#include "graph/check.h"
#include "graph/env.h"
#include "graph/log.h"
#include "jit_cpu/lanes.h"
#include "jit_cpu/thread_pool.h"

namespace braze::jit {

int64_t kernel_cache_limit_from_env() {
  return megabytes_from_env("BRAZE_KERNEL_CACHE_MB", kDefaultKernelCacheMegabytes);
}

KernelCache& KernelCache::get() {
  static KernelCache cache(kernel_cache_limit_from_env());
  return cache;
}

namespace {

// What an entry costs besides its kernel: the key, the reason of a
// negative answer, the map's and the list's nodes.
constexpr int64_t kEntryBytes = 256;

}  // namespace

Lookup KernelCache::find_or_compile(const KernelSpec& spec, Isa isa) {
  std::string key = kernel_key(spec).hex() + "/" + std::string(name(isa)) + "/v" + std::to_string(kCodegenVersion);
  std::vector<Lookup> dropped;  // destroyed after the lock is released: unmapping code takes a system call
  // Compiling under the lock keeps "one compile per key" simple; a compile
  // takes tens of microseconds.
  std::lock_guard<std::mutex> lock(mu_);
  if (Lookup* found = entries_.find(key)) {
    Lookup hit = *found;
    hit.hit = true;
    BRAZE_LOG(Debug, "kernel ", key, ": memory cache hit");
    return hit;
  }
  Lookup fresh;
  auto start = std::chrono::steady_clock::now();
  fresh.kernel = compile(spec, isa, fresh.why);
  fresh.codegen_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  if (fresh.kernel)
    BRAZE_LOG(Info, "kernel ", key, ": compiled, ", fresh.kernel->code_size(), " bytes in ",
              fresh.codegen_ns / 1000, " us");
  else
    BRAZE_LOG(Info, "kernel ", key, ": runs on the spec interpreter because ", fresh.why);
  int64_t bytes = kEntryBytes + static_cast<int64_t>(key.size() + fresh.why.size()) +
                  (fresh.kernel ? fresh.kernel->memory_bytes() : 0);
  entries_.insert(key, fresh, bytes);
  dropped = entries_.evict(limit_, 1);  // the newest stays, however large: its caller runs it now
  fresh.evicted = static_cast<int64_t>(dropped.size());
  if (!dropped.empty()) BRAZE_LOG(Debug, "kernel cache: ", dropped.size(), " least recently used evicted");
  return fresh;
}

void KernelCache::clear() {
  std::vector<Lookup> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  dropped = entries_.clear();
}

size_t KernelCache::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

int64_t KernelCache::bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.bytes();
}

namespace {

// v wrapped to integer dtype t and sign- or zero-extended back, as the
// reference stores and loads it.
int64_t wrapped(DType t, int64_t v) {
  std::byte value[8];
  store_int(t, value, 0, v);
  return load_int(t, value, 0);
}

// Value j of a scalar or arange argument as the lane it fills (LaunchArgs).
// An arange's start and step wrap to 32 bits: its int32 arithmetic is
// modulo 2^32, like the int64 arithmetic of the reference then wrapped.
uint32_t lane_bits(DType t, const KernelArg& arg, int j) {
  switch (lanes_of(t).value_or(Lanes::Float)) {
    case Lanes::Float: return std::bit_cast<uint32_t>(static_cast<float>(arg.real[j]));
    case Lanes::Mask: return arg.integer[j] != 0 ? 0xffffffffu : 0;
    case Lanes::Int:
    case Lanes::Double:
    case Lanes::Long: break;
  }
  return static_cast<uint32_t>(wrapped(t, arg.integer[j]));
}

// The same as a 64-bit lane of a wide kernel (Note [Wide kernels]): an
// integer wrapped to its dtype, as in 32-bit lanes, then sign- or
// zero-extended; an arange's int64 arithmetic is modulo 2^64. A float
// scalar is its value in its dtype, a float arange's start and step are
// float64, as the reference computes start + i * step (the kernel rounds).
uint64_t wide_lane_bits(const KernelInput& in, const KernelArg& arg, int j) {
  const DType t = in.dtype;
  if (t == DType::Bool) return arg.integer[j] != 0 ? ~uint64_t{0} : 0;
  if (is_float(t) && in.kind == KernelInput::Kind::Arange) return std::bit_cast<uint64_t>(arg.real[j]);
  if (is_float(t)) {
    std::byte value[8];
    store_double(t, value, 0, arg.real[j]);
    return std::bit_cast<uint64_t>(load_double(t, value, 0));
  }
  return static_cast<uint64_t>(wrapped(t, arg.integer[j]));
}

}  // namespace

void launch(const CompiledKernel& kernel, const KernelSpec& spec, std::span<const KernelArg> inputs,
            std::span<std::byte* const> outputs) {
  const RowPlan& plan = kernel.plan();
  std::vector<const std::byte*> in(inputs.size());
  std::vector<uint64_t> values(4 * inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    in[k] = inputs[k].data;
    for (int j = 0; j < 2; ++j) {
      values[4 * k + j] = lane_bits(spec.inputs[k].dtype, inputs[k], j);
      values[4 * k + 2 + j] = wide_lane_bits(spec.inputs[k], inputs[k], j);
    }
  }
  LaunchArgs args{in.data(), outputs.data(), values.data(), nullptr, nullptr};
  if (plan.column_parts > 1) {  // Note [Split columns]: partials, then one count per unit
    const size_t units = static_cast<size_t>(plan.units());
    const size_t partial_bytes = units * plan.column_parts * kernel.partial_bytes();
    // The launching thread's, kept between launches: grown, never shrunk.
    thread_local std::vector<uint64_t> partials;
    partials.resize(std::max(partials.size(), (partial_bytes + 63) / 8 + units));
    std::byte* base = reinterpret_cast<std::byte*>(partials.data());
    args.partials = base + (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;  // vector rows, aligned
    args.part_counts = reinterpret_cast<int64_t*>(args.partials + partial_bytes);
    std::fill_n(args.part_counts, units, 0);
  }
  if (kernel.streaming_stores())
    for (std::byte* o : outputs)
      BRAZE_CHECK(reinterpret_cast<uintptr_t>(o) % 64 == 0, "launch: an output buffer is not 64-byte aligned");
  const int64_t rows = plan.rows();
  if (rows == 0) return;
  ThreadPool& pool = ThreadPool::get();
  // Chunks of whole tile groups: 256 transposed rows cut into 8 chunks of
  // 32 read by gathers, 4x the time of one thread's 4 groups.
  const int64_t grain = kernel.row_grain(), grains = (rows + grain - 1) / grain;
  int64_t chunks = 1;
  if (plan.elements() >= kParallelThreshold)
    chunks = std::min<int64_t>(grains, 4 * pool.size());
  KernelFn fn = kernel.fn();
  pool.run(chunks, [&](int64_t c) {
    const int64_t begin = std::min(rows, grain * (grains * c / chunks));
    const int64_t end = std::min(rows, grain * (grains * (c + 1) / chunks));
    std::vector<int64_t> index(plan.outer.size());
    for (int64_t d = static_cast<int64_t>(plan.outer.size()) - 1, r = begin; d >= 0; --d) {
      index[d] = r % plan.outer[d];
      r /= plan.outer[d];
    }
    // Per-thread scratch, kept between launches: grown, never shrunk.
    thread_local std::vector<float> scratch;
    size_t need = static_cast<size_t>(kernel.scratch_floats()) + 16;
    if (scratch.size() < need) scratch.resize(need);
    float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
    fn(&args, begin, end, index.data(), aligned);
  });
}

}  // namespace braze::jit
