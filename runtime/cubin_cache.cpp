#include "runtime/cubin_cache.h"

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

CubinCache::Lookup CubinCache::get(const KernelSpec& spec, int arch) {
  std::string key = kernel_key(spec).hex() + "/sm_" + std::to_string(arch);
  std::promise<std::shared_ptr<const Cubin>> promise;
  {
    std::lock_guard lock(mutex_);
    if (auto* found = memory_.find(key)) {
      std::shared_future<std::shared_ptr<const Cubin>> f = *found;
      ++memory_hits_;
      return {f.get(), Source::Memory};  // waits for a compile in flight; rethrows its error
    }
    memory_.insert(key, promise.get_future().share(), static_cast<int64_t>(key.size()));
  }
  Source source = Source::Compiled;
  std::shared_ptr<const Cubin> c;
  try {
    c = produce(spec, arch, source);
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    memory_.erase(key);  // the next caller tries again
    throw;
  }
  promise.set_value(c);
  std::vector<std::shared_future<std::shared_ptr<const Cubin>>> dropped;  // released after the lock
  std::lock_guard lock(mutex_);
  // Charged now that its size is known (false: dropped while in flight).
  memory_.resize(key, static_cast<int64_t>(key.size() + c->image.size() + c->kernel.source.size()));
  dropped = memory_.evict(limit_, 1);
  evicted_ += static_cast<int64_t>(dropped.size());
  return {c, source, static_cast<int64_t>(dropped.size())};
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
