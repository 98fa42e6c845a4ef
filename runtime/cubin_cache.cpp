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
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      std::shared_future<std::shared_ptr<const Cubin>> f = it->second;
      ++memory_hits_;
      return {f.get(), Source::Memory};  // waits for a compile in flight; rethrows its error
    }
    memory_.emplace(key, promise.get_future().share());
  }
  Source source = Source::Compiled;
  try {
    std::shared_ptr<const Cubin> c = produce(spec, arch, source);
    promise.set_value(c);
    return {c, source};
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    memory_.erase(key);  // the next caller tries again
    throw;
  }
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
