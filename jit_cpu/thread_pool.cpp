#include "jit_cpu/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
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

struct ThreadPool::Job {
  const std::function<void(int64_t)>* task;
  int64_t count;
  int64_t next = 0, finished = 0;
  std::exception_ptr error;  // the first a task threw
};

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
  Job job{.task = &task, .count = n, .next = 0, .finished = 0, .error = nullptr};
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&job);
  wake_.notify_all();
  while (job.next < job.count) run_index(lock, job, job.next++);
  done_.wait(lock, [&] { return job.finished == job.count; });
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::run_index(std::unique_lock<std::mutex>& lock, Job& job, int64_t i) {
  // The last index claimed: the job leaves the queue (it may not be at
  // its front when workers took from an older one).
  if (job.next == job.count) std::erase(queue_, &job);
  lock.unlock();
  std::exception_ptr error;
  try {
    (*job.task)(i);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error && !job.error) job.error = error;
  // The caller may return (and `job` go) as soon as it sees this.
  if (++job.finished == job.count) done_.notify_all();
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job& job = *queue_.front();
    run_index(lock, job, job.next++);
  }
}

}  // namespace braze::jit
