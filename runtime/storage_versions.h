// Which realized storages have been written in place, so that what a
// program derives from an input once (a packed copy of a weight, Note
// [Kept packed weights] in runtime/execute.h) is derived again when the
// input changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace braze {

// Note [Storage versions]
// A realized tensor's storage is written after its creation only through
// assign() (and so bz.jit's out=) and bz.copyto; each bumps the version of
// the storage it writes, keyed by its first byte. A storage never written
// in place is at version 0. Pointer reuse after a free is the caller's to
// rule out (hold a weak_ptr to the storage): a version says "unchanged
// since" only for a storage still alive. A storage handed to another
// library (__dlpack__, __cuda_array_interface__: PyTorch or CuPy may write
// it) is marked exported and has a new version every time it is asked, so
// nothing derived from it is ever reused. Writes behind braze's back
// otherwise (C++ code writing through Tensor::data()'s pointer) are not
// seen.
class StorageVersions {
 public:
  uint64_t version(const std::byte* data) {
    std::lock_guard lock(mu_);
    auto it = versions_.find(data);
    if (it == versions_.end()) return 0;
    if (it->second == kExported) return kExported + ++exported_reads_;
    return it->second;
  }
  void written(const std::byte* data) {
    std::lock_guard lock(mu_);
    uint64_t& v = versions_[data];
    if (v != kExported) ++v;
  }
  void exported(const std::byte* data) {
    std::lock_guard lock(mu_);
    versions_[data] = kExported;
  }

 private:
  // Far above any count of writes; exported storages' versions count up
  // from here.
  static constexpr uint64_t kExported = uint64_t{1} << 62;
  std::mutex mu_;
  std::unordered_map<const std::byte*, uint64_t> versions_;
  uint64_t exported_reads_ = 0;
};

}  // namespace braze
