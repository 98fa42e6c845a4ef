#include "runtime/arena_pool.h"

#include <bit>
#include <vector>

#include "runtime/context.h"

namespace braze {

int64_t ArenaPool::size_class(int64_t bytes) {
  if (bytes <= 4096) return 4096;
  int64_t step = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(bytes))) / 4;
  return (bytes + step - 1) / step * step;
}

ArenaPool::Lease ArenaPool::lend(const void* where, int64_t bytes, const ArrayAllocator& allocate) {
  std::vector<Array> dropped;  // freed after the lock is released
  {
    std::lock_guard lock(mu_);
    auto it = idle_.lower_bound({where, bytes});
    if (it != idle_.end() && it->first.first == where) {
      Array a = std::move(it->second);
      idle_bytes_ -= it->first.second;
      idle_.erase(it);
      return Lease(this, where, std::move(a));
    }
    // Nothing idle fits: those smaller than `bytes` will not fit the next
    // run of this size either (Note [Arena pool]).
    for (auto i = idle_.lower_bound({where, 0}); i != idle_.end() && i->first.first == where;) {
      idle_bytes_ -= i->first.second;
      dropped.push_back(std::move(i->second));
      i = idle_.erase(i);
    }
  }
  dropped.clear();
  const int64_t obtain = size_class(bytes);
  Array a = allocate(DType::UInt8, {obtain});
  Runtime::get().stats().arena_bytes.fetch_add(obtain, std::memory_order_relaxed);
  return Lease(this, where, std::move(a));
}

void ArenaPool::give_back(const void* where, Array arena) {
  std::vector<Array> dropped;
  std::lock_guard lock(mu_);
  const int64_t bytes = static_cast<int64_t>(arena.bytes());
  idle_.emplace(std::pair{where, bytes}, std::move(arena));
  idle_bytes_ += bytes;
  while (idle_bytes_ > limit_ && idle_.size() > 1) {
    auto smallest = idle_.begin();
    for (auto i = idle_.begin(); i != idle_.end(); ++i)
      if (i->first.second < smallest->first.second) smallest = i;
    idle_bytes_ -= smallest->first.second;
    dropped.push_back(std::move(smallest->second));
    idle_.erase(smallest);
  }
}

ArenaPool::Figures ArenaPool::figures() {
  std::lock_guard lock(mu_);
  return {idle_.size(), idle_bytes_, limit_};
}

void ArenaPool::clear() {
  std::multimap<std::pair<const void*, int64_t>, Array> dropped;
  std::lock_guard lock(mu_);
  dropped.swap(idle_);
  idle_bytes_ = 0;
}

}  // namespace braze
