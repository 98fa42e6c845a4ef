// Compiled CUDA kernels through memory, disk and NVRTC: one compile per key
// when threads race, a disk hit in a fresh cache, a damaged disk entry is a
// recompile. Needs NVRTC, no GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include <unistd.h>

#include "fusion/schedule.h"
#include "jit_cuda/cuda_error.h"
#include "jit_cuda/nvrtc_api.h"
#include "runtime/braze.h"
#include "runtime/cubin_cache.h"
#include "runtime/lower.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

namespace fs = std::filesystem;


KernelSpec softmax_spec() {
  Schedule s = make_schedule(lower(std::vector<Tensor>{softmax(testing::random_tensor({64, 1000}, 1))}).graph);
  return s.steps.at(0).spec;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class CubinCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
    dir_ = fs::path(::testing::TempDir()) / ("braze_cubin_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CubinCacheTest, RacingThreadsCompileOnce) {
  CubinCache cache;
  KernelSpec spec = softmax_spec();
  std::vector<std::shared_ptr<const Cubin>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { got[t] = cache.get(spec, 90).cubin; });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cache.compiled(), 1);
  EXPECT_EQ(cache.memory_hits(), 7);
  for (const auto& c : got) EXPECT_EQ(c, got[0]);
  EXPECT_GT(got[0]->image.size(), 1000u);
  EXPECT_EQ(cache.get(spec, 80).source, CubinCache::Source::Compiled) << "another architecture, another key";
}

TEST_F(CubinCacheTest, AFreshCacheHitsTheDiskAndADamagedEntryRecompiles) {
  KernelSpec spec = softmax_spec();
  auto t0 = std::chrono::steady_clock::now();
  CubinCache first{DiskCache(dir_)};
  CubinCache::Lookup compiled = first.get(spec, 90);
  double compile_ms = ms_since(t0);
  ASSERT_EQ(compiled.source, CubinCache::Source::Compiled);

  t0 = std::chrono::steady_clock::now();
  CubinCache second{DiskCache(dir_)};  // as in a new process
  CubinCache::Lookup hit = second.get(spec, 90);
  double disk_ms = ms_since(t0);
  EXPECT_EQ(hit.source, CubinCache::Source::Disk);
  EXPECT_EQ(hit.cubin->image, compiled.cubin->image);
  EXPECT_EQ(second.compiled(), 0);
  std::cout << "softmax kernel: NVRTC compile " << compile_ms << " ms, disk hit " << disk_ms << " ms\n";

  // Damage every entry in the directory: the next fresh cache compiles again.
  for (const auto& e : fs::directory_iterator(dir_)) {
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(e.path()) / 2));
    f.put('\x55');
  }
  CubinCache third{DiskCache(dir_)};
  CubinCache::Lookup again = third.get(spec, 90);
  EXPECT_EQ(again.source, CubinCache::Source::Compiled);
  EXPECT_EQ(again.cubin->image, compiled.cubin->image) << "NVRTC is deterministic";
  EXPECT_EQ(CubinCache{DiskCache(dir_)}.get(spec, 90).source, CubinCache::Source::Disk) << "rewritten";
}

TEST_F(CubinCacheTest, DiskKeyCoversSourceArchAndVersions) {
  cuda::CudaKernelSource k = cuda::render_cuda(softmax_spec());
  std::string key = cubin_disk_key(k, 90);
  EXPECT_NE(key.find(k.source), std::string::npos);
  EXPECT_NE(key.find("nvrtc " + cuda::nvrtc().version()), std::string::npos);
  EXPECT_NE(key.find("codegen " + std::to_string(cuda::kCudaCodegenVersion)), std::string::npos);
  EXPECT_NE(key.find("--gpu-architecture=sm_90"), std::string::npos);
  EXPECT_NE(key, cubin_disk_key(k, 80));
}

// Note [Bounded caches]: the memory level keeps its bound in bytes; a cubin
// it dropped comes back from the disk, and one a caller holds stays valid.
TEST(CubinCacheBound, DropsTheLeastRecentlyUsedFromMemoryNotFromDisk) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  fs::path dir = fs::path(::testing::TempDir()) / ("braze_cubin_bound_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  KernelSpec a = softmax_spec();
  KernelSpec b = make_schedule(lower(std::vector<Tensor>{exp(testing::random_tensor({8, 8}, 2))}).graph).steps.at(0).spec;
  CubinCache cache(DiskCache(dir), /*limit_bytes=*/1);  // room for the newest only
  CubinCache::Lookup first = cache.get(a, 90);
  EXPECT_EQ(first.evicted, 0);
  CubinCache::Lookup second = cache.get(b, 90);
  EXPECT_EQ(second.evicted, 1);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.get(b, 90).source, CubinCache::Source::Memory);
  CubinCache::Lookup again = cache.get(a, 90);
  EXPECT_EQ(again.source, CubinCache::Source::Disk);
  EXPECT_EQ(again.cubin->image, first.cubin->image);
  EXPECT_GT(first.cubin->image.size(), 1000u) << "held by the caller after its eviction";
  EXPECT_EQ(cache.evicted(), 2);
  CubinCache roomy(std::nullopt, int64_t{1} << 30);
  roomy.get(a, 90);
  roomy.get(b, 90);
  EXPECT_EQ(roomy.size(), 2u);
  EXPECT_GT(roomy.bytes(), static_cast<int64_t>(first.cubin->image.size()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace braze
