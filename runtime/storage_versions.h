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
// since" only for a storage still alive. Writes behind braze's back (C++
// code writing through Tensor::data()'s pointer) are not seen.
class StorageVersions {
 public:
  uint64_t version(const std::byte* data) {
    std::lock_guard lock(mu_);
    auto it = versions_.find(data);
    return it == versions_.end() ? 0 : it->second;
  }
  void written(const std::byte* data) {
    std::lock_guard lock(mu_);
    ++versions_[data];
  }

 private:
  std::mutex mu_;
  std::unordered_map<const std::byte*, uint64_t> versions_;
};

}  // namespace braze
