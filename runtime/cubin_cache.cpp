#include "runtime/cubin_cache.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "graph/check.h"
#include "jit_cuda/embedded_headers.h"
#include "jit_cuda/nvrtc_api.h"
#include "jit_cuda/nvrtc_compile.h"

namespace braze {

std::string cubin_disk_key(const cuda::CudaKernelSource& kernel, int arch) {
  std::string key = "braze cubin\nnvrtc " + cuda::nvrtc().version() + "\narch sm_" + std::to_string(arch) +
                    "\ncodegen " + std::to_string(cuda::kCudaCodegenVersion) + "\nheaders " +
                    cuda::device_headers_hash() + "\noptions";
  for (const std::string& o : cuda::nvrtc_options(arch, cuda::CudaImage::Cubin)) key += " " + o;
  return key + "\nsource\n" + kernel.source;
}

int compile_threads() {
  if (const char* v = std::getenv("BRAZE_COMPILE_THREADS"); v && *v) {
    int n = std::atoi(v);
    BRAZE_CHECK(n >= 1 && n <= 256, "BRAZE_COMPILE_THREADS='", v, "' is not a number of threads from 1 to 256");
    return n;
  }
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

CubinCache::Lookup CubinCache::get(const KernelSpec& spec, int arch) {
  const KernelSpec* one[] = {&spec};
  return get_many(one, arch, 1)[0];
}

std::vector<CubinCache::Lookup> CubinCache::get_many(std::span<const KernelSpec* const> specs, int arch, int threads) {
  using Future = std::shared_future<std::shared_ptr<const Cubin>>;
  const size_t n = specs.size();
  std::vector<Lookup> out(n);
  std::vector<Future> hits(n);
  std::vector<std::string> keys(n);
  std::vector<size_t> mine;  // the misses this call produces, each with its promise
  std::vector<std::promise<std::shared_ptr<const Cubin>>> promises;
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = kernel_key(*specs[i]).hex() + "/sm_" + std::to_string(arch);
      if (auto* found = memory_.find(keys[i])) {  // (a spec twice in `specs`: the second waits for the first)
        hits[i] = *found;
        ++memory_hits_;
        out[i].source = Source::Memory;
        continue;
      }
      out[i].source = Source::Compiled;  // produce() says Disk where the disk had it
      promises.emplace_back();
      memory_.insert(keys[i], promises.back().get_future().share(), static_cast<int64_t>(keys[i].size()));
      mine.push_back(i);
    }
  }
  std::vector<std::exception_ptr> errors(mine.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t j; (j = next.fetch_add(1)) < mine.size();) {
      size_t i = mine[j];
      try {
        out[i].cubin = produce(*specs[i], arch, out[i].source);
        promises[j].set_value(out[i].cubin);
      } catch (...) {
        errors[j] = std::current_exception();
        promises[j].set_exception(errors[j]);
        std::lock_guard lock(mutex_);
        memory_.erase(keys[i]);  // the next caller tries again
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (int t = 1; t < std::min<int>(threads, static_cast<int>(mine.size())); ++t) helpers.emplace_back(work);
    work();
  }  // (the helpers joined)
  std::vector<Future> dropped;  // released after the lock
  {
    std::lock_guard lock(mutex_);
    for (size_t j = 0; j < mine.size(); ++j) {
      if (errors[j]) continue;
      size_t i = mine[j];
      const Cubin& c = *out[i].cubin;
      // Charged now that its size is known (false: dropped while in flight).
      memory_.resize(keys[i], static_cast<int64_t>(keys[i].size() + c.image.size() + c.kernel.source.size()));
      std::vector<Future> gone = memory_.evict(limit_, 1);
      out[i].evicted = static_cast<int64_t>(gone.size());
      evicted_ += out[i].evicted;
      for (Future& f : gone) dropped.push_back(std::move(f));
    }
  }
  for (std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (size_t i = 0; i < n; ++i)
    if (hits[i].valid()) out[i].cubin = hits[i].get();  // waits for a compile in flight; rethrows its error
  return out;
}

size_t CubinCache::size() {
  std::lock_guard lock(mutex_);
  return memory_.size();
}

int64_t CubinCache::bytes() {
  std::lock_guard lock(mutex_);
  return memory_.bytes();
}

std::shared_ptr<const Cubin> CubinCache::produce(const KernelSpec& spec, int arch, Source& source) {
  auto c = std::make_shared<Cubin>();
  c->kernel = cuda::render_cuda(spec);
  std::string disk_key;
  if (disk_) {
    disk_key = cubin_disk_key(c->kernel, arch);
    if (std::optional<std::vector<std::byte>> hit = disk_->load(disk_key)) {
      c->image = std::move(*hit);
      source = Source::Disk;
      ++disk_hits_;
      return c;
    }
  }
  c->image = cuda::compile_cuda(c->kernel.source, c->kernel.name, arch, cuda::CudaImage::Cubin).image;
  ++compiled_;
  if (disk_) disk_->store(disk_key, c->image);  // false: caching is off, compiling goes on
  return c;
}

}  // namespace braze
