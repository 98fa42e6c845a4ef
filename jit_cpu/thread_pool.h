// A fixed pool of worker threads for splitting a kernel's rows.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace braze::jit {

class ThreadPool {
 public:
  // One thread per core unless BRAZE_NUM_THREADS says otherwise.
  static ThreadPool& get();
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }  // the caller works too

  // Calls task(i) for i in [0, n) across the pool and the calling thread;
  // returns when all are done. Not reentrant.
  void run(int64_t n, const std::function<void(int64_t)>& task);

 private:
  void work();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t next_ = 0, count_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace braze::jit
