// A fixed pool of worker threads for splitting a kernel's rows.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace braze::jit {

// Note [Pool jobs]
// Any number of threads may call run() at once, and a task may call run()
// itself. Each call is a job of its own, on its caller's stack: its task,
// its next unclaimed index and its count of finished ones. A job with
// indices left to claim is queued; workers take indices from the oldest
// queued job, and the caller claims indices of its own job only, never
// another's, until none is left, then waits for the ones workers took.
// So a job always progresses on its own caller even when every worker is
// busy with other jobs (each caller's work is then serial, as if the pool
// were its own), a nested run() cannot deadlock (the thread that waits
// waits only for indices other threads are already running, and those
// finish, nested jobs and all, the same way), and no thread runs a task of
// a job it is not part of while it is in the middle of a task of its own
// (launch()'s per-thread buffers stay the launching thread's). An index
// whose task throws counts as finished; the first exception is rethrown
// to the caller once every index has finished, so no worker still holds
// the task.
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
  // returns when all are done. Reentrant and thread-safe (Note [Pool jobs]).
  void run(int64_t n, const std::function<void(int64_t)>& task);

 private:
  struct Job;
  void work();
  // Runs index `i` of `job` (claimed under `lock`, which is released
  // meanwhile) and counts it finished.
  void run_index(std::unique_lock<std::mutex>& lock, Job& job, int64_t i);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<Job*> queue_;  // jobs with indices left to claim, oldest first
  bool stop_ = false;
};

}  // namespace braze::jit
