#include "jit_cpu/thread_pool.h"

#include <cstdlib>
#include <string>

#include "graph/check.h"

namespace braze::jit {

namespace {

int threads_from_env() {
  const char* env = std::getenv("BRAZE_NUM_THREADS");
  if (!env || !*env) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  BRAZE_CHECK(end && *end == '\0' && n >= 1 && n <= 1024, "BRAZE_NUM_THREADS='", env,
              "' is not a thread count between 1 and 1024");
  return static_cast<int>(n);
}

}  // namespace

ThreadPool& ThreadPool::get() {
  static ThreadPool pool(threads_from_env());
  return pool;
}

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  task_ = &task;
  next_ = 0;
  count_ = n;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  while (next_ < count_) {
    int64_t i = next_++;
    lock.unlock();
    task(i);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

void ThreadPool::work() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && task_ && next_ < count_); });
    if (stop_) return;
    seen = generation_;
    while (task_ && next_ < count_) {
      int64_t i = next_++;
      const auto* task = task_;
      lock.unlock();
      (*task)(i);
      lock.lock();
      if (++finished_ == count_) done_.notify_all();
    }
  }
}

}  // namespace braze::jit
