// Which realized storages have been written in place, so that what a
// program derives from an input once (a packed copy of a weight, Note
// [Kept packed weights] in runtime/execute.h) is derived again when the
// input changes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace braze {

// Note [Storage versions]
// A realized tensor's storage is written after its creation only through
// assign() (and so bz.jit's out=) and bz.copyto; each bumps the version of
// the storage it writes. A storage never written in place is at version 0;
// a freed storage's entry is dropped (a new storage at its address starts
// at 0 again), so the table holds live storages only. A storage handed to
// another library (__dlpack__, __cuda_array_interface__: PyTorch or CuPy may write
// it) is marked exported and has a new version every time it is asked, so
// nothing derived from it is ever reused. Writes behind braze's back
// otherwise (C++ code writing through Tensor::data()'s pointer) are not
// seen.
class StorageVersions {
 public:
  using Storage = std::shared_ptr<std::byte[]>;

  uint64_t version(const Storage& data) {
    std::lock_guard lock(mu_);
    auto it = find(data);
    if (it == entries_.end()) return 0;
    if (it->second.version == kExported) return kExported + ++exported_reads_;
    return it->second.version;
  }
  void written(const Storage& data) {
    std::lock_guard lock(mu_);
    uint64_t& v = entry(data).version;
    if (v != kExported) ++v;
  }
  void exported(const Storage& data) {
    std::lock_guard lock(mu_);
    entry(data).version = kExported;
  }
  size_t size() {  // entries held, freed storages' included until a purge (tests)
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  // Far above any count of writes; exported storages' versions count up
  // from here.
  static constexpr uint64_t kExported = uint64_t{1} << 62;
  struct Entry {
    std::weak_ptr<std::byte[]> storage;  // an expired one is a freed storage: its entry goes
    uint64_t version = 0;
  };
  using Map = std::unordered_map<const std::byte*, Entry>;

  // The live entry of `data`'s storage (one of a freed storage at the same
  // address does not count).
  Map::iterator find(const Storage& data) {
    auto it = entries_.find(data.get());
    if (it == entries_.end() || it->second.storage.expired()) return entries_.end();
    return it;
  }
  Entry& entry(const Storage& data) {
    if (entries_.size() >= purge_at_) {  // amortised O(1): forget freed storages
      std::erase_if(entries_, [](const auto& e) { return e.second.storage.expired(); });
      purge_at_ = std::max<size_t>(64, 2 * entries_.size());
    }
    Entry& e = entries_[data.get()];
    if (e.storage.expired()) e = {data, 0};
    return e;
  }

  std::mutex mu_;
  Map entries_;
  size_t purge_at_ = 64;
  uint64_t exported_reads_ = 0;
};

}  // namespace braze
