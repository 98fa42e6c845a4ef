// LruMap and the kernel cache bounded in bytes (Note [Bounded caches] in
// runtime/program.h): the cache holds at most its bound, least recently
// used dropped first, always the newest; a kernel a caller holds outlives
// its eviction and still runs; a kernel's estimate is not below the heap
// and code it takes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fusion/schedule.h"
#include "graph/lru.h"
#include "jit_cpu/kernel_cache.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/lower.h"
#include "tests/cpp/heap_bytes.h"

namespace braze {
namespace {

TEST(LruMap, DropsTheLeastRecentlyUsedPastItsBytes) {
  LruMap<int> m;
  m.insert("a", 1, 10);
  m.insert("b", 2, 10);
  m.insert("c", 3, 10);
  EXPECT_EQ(m.bytes(), 30);
  ASSERT_NE(m.find("a"), nullptr);  // now the most recent: b is the oldest
  EXPECT_EQ(m.evict(20), std::vector<int>{2});
  EXPECT_EQ(m.find("b"), nullptr);
  EXPECT_TRUE(m.resize("c", 25));
  EXPECT_FALSE(m.resize("b", 1));
  EXPECT_EQ(m.bytes(), 35);
  EXPECT_EQ(m.evict(0, 1), std::vector<int>{3});  // the most recent stays
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.bytes(), 10);
  EXPECT_TRUE(m.erase("a"));
  EXPECT_EQ(m.bytes(), 0);
}

// A kernel per n: exp(x) * 2.5 + 1.5 over [n, 7], x all ones.
struct OneKernel {
  Schedule schedule;
  std::vector<Array> inputs;
  const KernelSpec& spec() const { return schedule.steps.at(0).spec; }
};
OneKernel one_kernel(int64_t n) {
  Tensor x = full({n, 7}, 1.0f);
  x.data();  // realized: an input, not a constant
  Lowered l = lower(std::vector<Tensor>{exp(x) * 2.5 + 1.5});
  return {make_schedule(l.graph), l.inputs};
}
KernelSpec spec_of(int64_t n) { return one_kernel(n).spec(); }

// Runs `kernel` on the step it was compiled for, as the executor binds it.
std::vector<float> run_kernel(const jit::CompiledKernel& kernel, const OneKernel& k) {
  const Graph& g = k.schedule.graph;
  const Step& step = k.schedule.steps.at(0);
  std::vector<KernelArg> args(step.reads.size());
  for (size_t i = 0; i < step.reads.size(); ++i) {
    const Node& n = g[step.reads[i]];
    if (n.op == Op::Input) args[i].data = k.inputs[n.attr.ints[0]].data.get();
    for (size_t j = 0; j < n.attr.reals.size(); ++j) args[i].real[j] = n.attr.reals[j];
  }
  std::vector<float> out(static_cast<size_t>(numel(g[step.group.outputs[0]].shape())));
  std::byte* o = reinterpret_cast<std::byte*>(out.data());
  jit::launch(kernel, step.spec, args, std::span(&o, 1));
  return out;
}

TEST(KernelCacheBound, KeepsItsBoundAndWhatACallerHoldsStillRuns) {
  jit::KernelCache cache(64 << 10);
  const jit::Isa isa = Runtime::get().cpu_isa();
  OneKernel k1 = one_kernel(1);
  jit::Lookup first = cache.find_or_compile(k1.spec(), isa);
  ASSERT_TRUE(first.kernel) << first.why;
  int64_t evicted = 0;
  for (int64_t n = 2; n <= 40; ++n) {
    jit::Lookup l = cache.find_or_compile(spec_of(n), isa);
    ASSERT_FALSE(l.hit);
    evicted += l.evicted;
    EXPECT_LE(cache.bytes(), cache.limit()) << n;
  }
  EXPECT_EQ(evicted, 40 - static_cast<int64_t>(cache.size()));
  EXPECT_GT(evicted, 20) << "64 KB holds a few kernels of ~10 KB";
  EXPECT_FALSE(cache.find_or_compile(k1.spec(), isa).hit) << "the first was the least recently used";
  // The first lookup's kernel was dropped by the cache, not by its holder.
  for (float v : run_kernel(*first.kernel, k1)) EXPECT_FLOAT_EQ(v, std::exp(1.0f) * 2.5f + 1.5f);
}

TEST(KernelCacheBound, TheNewestStaysHoweverLarge) {
  jit::KernelCache cache(0);
  const jit::Isa isa = Runtime::get().cpu_isa();
  for (int64_t n = 1; n <= 5; ++n) {
    jit::Lookup l = cache.find_or_compile(spec_of(n), isa);
    EXPECT_EQ(l.evicted, n == 1 ? 0 : 1);
    EXPECT_EQ(cache.size(), 1u);
  }
  EXPECT_TRUE(cache.find_or_compile(spec_of(5), isa).hit);
}

TEST(KernelCacheBound, AKernelsEstimateIsNotBelowWhatItTakes) {
  const jit::Isa isa = Runtime::get().cpu_isa();
  std::vector<KernelSpec> specs;
  for (int64_t n = 100; n < 160; ++n) specs.push_back(spec_of(n));
  jit::KernelCache cache(int64_t{1} << 30);
  int64_t before = testing::heap_bytes();
  for (const KernelSpec& s : specs) cache.find_or_compile(s, isa);
  int64_t heap = testing::heap_bytes() - before;
  // The code is mapped apart from the heap (xbyak's mmap): a page each here.
  int64_t taken = heap + static_cast<int64_t>(specs.size()) * 4096;
  EXPECT_GE(cache.bytes(), taken) << "heap " << heap << " for " << specs.size() << " kernels";
  EXPECT_LE(cache.bytes(), 4 * taken) << "an estimate, not a multiple";
}

}  // namespace
}  // namespace braze
