// LruMap: a map whose entries carry a size in bytes and are kept in order
// of use, so that a cache bounded in bytes can drop its least recently
// used entries (the program cache, the kernel caches: Note [Bounded
// caches] in runtime/program.h).
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/check.h"

namespace braze {

// Not thread-safe: each cache that owns one locks around it.
template <class Value>
class LruMap {
 public:
  // The value under `key`, made the most recently used; null if absent.
  Value* find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->value;
  }

  // Adds `key`, which must be absent, as the most recently used.
  Value& insert(const std::string& key, Value value, int64_t bytes) {
    BRAZE_ASSERT(!index_.contains(key), "LruMap: ", key, " is already in");
    order_.push_front(Item{key, std::move(value), bytes});
    index_.emplace(key, order_.begin());
    bytes_ += bytes;
    return order_.front().value;
  }

  // Sets the size of `key`'s entry (a value that grew after it was
  // added); false if there is none.
  bool resize(const std::string& key, int64_t bytes) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    bytes_ += bytes - it->second->bytes;
    it->second->bytes = bytes;
    return true;
  }

  // Removes and returns the least recently used value (the map must not be
  // empty); the caller destroys it, outside its lock where that matters.
  Value pop_oldest() {
    BRAZE_ASSERT(!order_.empty(), "LruMap: pop_oldest of an empty map");
    Item& last = order_.back();
    Value v = std::move(last.value);
    bytes_ -= last.bytes;
    index_.erase(last.key);
    order_.pop_back();
    return v;
  }

  // Removes the least recently used values while the entries take more than
  // `limit` bytes, but never the `keep` most recent ones; returns them.
  std::vector<Value> evict(int64_t limit, size_t keep = 0) {
    std::vector<Value> out;
    while (bytes_ > limit && order_.size() > keep) out.push_back(pop_oldest());
    return out;
  }

  // Removes `key`'s entry if present and returns whether it was.
  bool erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    bytes_ -= it->second->bytes;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }

  // Removes every entry and returns the values.
  std::vector<Value> clear() {
    std::vector<Value> out;
    for (Item& i : order_) out.push_back(std::move(i.value));
    order_.clear();
    index_.clear();
    bytes_ = 0;
    return out;
  }

  int64_t bytes() const { return bytes_; }
  size_t size() const { return order_.size(); }

 private:
  struct Item {
    std::string key;
    Value value;
    int64_t bytes;
  };
  std::list<Item> order_;  // most recently used first
  std::unordered_map<std::string, typename std::list<Item>::iterator> index_;
  int64_t bytes_ = 0;
};

}  // namespace braze
