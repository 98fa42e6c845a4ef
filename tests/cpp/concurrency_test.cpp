// Thread safety as a property: several threads realizing mixed graphs at
// once, each result checked against the reference interpreter; identical
// graphs made and compiled once however many threads ask (ProgramCache,
// KernelCache); an exception while making reaches every waiter; the
// thread pool entered from many threads and from its own tasks (Note [Pool
// jobs]); the copy-bandwidth probe beside realizes; lazy tensors shared
// between threads (Note [Shared lazy tensors]); CUDA host emulation from
// several threads. scripts/sanitize.sh thread runs this suite under
// ThreadSanitizer (tests/tsan.supp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "graph/reference.h"
#include "jit_cpu/kernel_cache.h"
#include "jit_cpu/thread_pool.h"
#include "runtime/braze.h"
#include "runtime/copy_bandwidth.h"
#include "runtime/execute.h"
#include "tests/cpp/cuda_test_env.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/random_tensor.h"

namespace braze {
namespace {

// What these tests look for includes deadlocks: one aborts the binary with
// a message after `seconds` instead of hanging CI.
class Watchdog {
 public:
  explicit Watchdog(int seconds = 300)
      : thread_([this, seconds] {
          std::unique_lock lock(mu_);
          if (cv_.wait_for(lock, std::chrono::seconds(seconds), [&] { return done_; })) return;
          std::fprintf(stderr, "%s: not finished after %d s: a deadlock?\n",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), seconds);
          std::abort();
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Runs body(t) on `n` threads that start together; rethrows the first
// exception a thread threw.
void on_threads(int n, const std::function<void(int)>& body) {
  std::latch start(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        body(t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

int64_t stat(std::atomic<int64_t> Stats::*counter) { return (Runtime::get().stats().*counter).load(); }

// A graph of realized inputs and a scalar: element-wise chains, broadcasts,
// reductions, the composites, matmul with epilogues. Most are past
// jit::kParallelThreshold elements, so their kernels split across the pool.
struct Case {
  const char* name;
  std::vector<Shape> shapes;
  std::function<Tensor(const std::vector<Tensor>&, double)> build;
};

std::vector<Case> mixed_cases() {
  using V = std::vector<Tensor>;
  return {
      {"elementwise", {{256, 160}, {256, 160}},
       [](const V& x, double s) { return exp(x[0] * s) + tanh(x[1]) - x[0] / (abs(x[1]) + 1.0); }},
      {"broadcast", {{3, 5, 4099}, {4099}}, [](const V& x, double s) { return maximum(x[0] + x[1], 0.0) * s; }},
      {"row_sum", {{512, 129}}, [](const V& x, double s) { return sum(exp(x[0] * s), std::vector<int64_t>{1}); }},
      {"column_mean", {{700, 65}}, [](const V& x, double s) { return mean(x[0] * s, std::vector<int64_t>{0}); }},
      {"softmax", {{300, 257}}, [](const V& x, double s) { return softmax(x[0] * s, -1); }},
      {"layer_norm", {{128, 384}, {384}, {384}},
       [](const V& x, double s) { return layer_norm(x[0] * s, x[1], x[2], 1e-5); }},
      {"transpose_add", {{256, 256}}, [](const V& x, double s) { return transpose(x[0]) * s + x[0]; }},
      {"argmax", {{200, 300}}, [](const V& x, double s) { return argmax(x[0] * s, 1); }},
      {"matmul_bias_relu", {{64, 96}, {96, 80}, {80}},
       [](const V& x, double s) { return relu(matmul(x[0], x[1]) + x[2]) * s; }},
      {"two_matmuls", {{32, 48}, {48, 40}, {32, 24}, {24, 40}},
       [](const V& x, double s) { return matmul(x[0], x[1]) * s + matmul(x[2], x[3]); }},
      {"matmul_gelu_softmax", {{48, 72}, {72, 136}, {136}},
       [](const V& x, double s) { return softmax(gelu(matmul(x[0], x[1]) + x[2]) * s, -1); }},
  };
}

std::vector<Tensor> inputs_of(const Case& c, uint32_t seed) {
  std::vector<Tensor> in;
  for (const Shape& s : c.shapes) in.push_back(testing::random_tensor(s, seed++, 1.0f));
  return in;
}

// The reference interpreter's value of the case's graph.
Array reference_value(const Tensor& root) {
  Lowered l = lower(std::vector<Tensor>{root});
  return reference::evaluate(l.graph, l.inputs, l.graph.outputs)[0];
}

// A scalar per thread, none of them special (0.5, 1, ...: Note [Scalar
// parameters]), so every thread's graph has the same structure.
double scale_of(int thread) { return 0.37 + 0.11 * thread; }

TEST(Concurrency, ThreadsRealizingMixedGraphsMatchTheReference) {
  Watchdog watchdog;
  constexpr int kThreads = 4, kRounds = 4;
  const std::vector<Case> cases = mixed_cases();
  std::vector<std::vector<Tensor>> inputs;
  for (size_t c = 0; c < cases.size(); ++c) inputs.push_back(inputs_of(cases[c], static_cast<uint32_t>(10 * c)));
  // Each thread its own scalar: the same program runs with other values at once.
  std::vector<std::vector<Array>> want(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (size_t c = 0; c < cases.size(); ++c) want[t].push_back(reference_value(cases[c].build(inputs[c], scale_of(t))));
  Runtime::get().programs().clear();  // the first round makes them, concurrently
  std::atomic<int> checked{0};
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < kRounds; ++round)
      for (size_t k = 0; k < cases.size(); ++k) {
        size_t c = (k + t * 3) % cases.size();  // threads meet different and identical graphs
        Tensor got = cases[c].build(inputs[c], scale_of(t));
        EXPECT_TRUE(testing::close(got.data(), want[t][c], 2e-4)) << cases[c].name << ", thread " << t << ", round " << round;
        ++checked;
      }
  });
  EXPECT_EQ(checked.load(), kThreads * kRounds * static_cast<int>(cases.size()));
}

// One structure per thread, each its own shape: many programs made at once.
TEST(Concurrency, ThreadsMakingProgramsOfDifferentShapesMatchTheReference) {
  Watchdog watchdog;
  constexpr int kThreads = 6;
  auto build = [](const Tensor& x, const Tensor& w) { return softmax(relu(matmul(x, w)) - mean(x, std::vector<int64_t>{-1}, true), -1); };
  std::vector<Tensor> xs, ws;
  std::vector<Array> want;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(testing::random_tensor({33 + 7 * t, 40}, 100 + t, 1.0f));
    ws.push_back(testing::random_tensor({40, 40}, 200 + t, 1.0f));
    want.push_back(reference_value(build(xs[t], ws[t])));
  }
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < 3; ++round)
      EXPECT_TRUE(testing::close(build(xs[t], ws[t]).data(), want[t], 2e-4)) << "thread " << t << ", round " << round;
  });
}

// The bz.stats()-style counters of a realize, and the library lookups of
// making programs (runtime/execute.h): what making a program costs.
struct Counts {
  int64_t programs_compiled, programs_replayed, kernels_compiled, cache_hits_memory, arena_bytes, library_lookups;
  static Counts now() {
    return {stat(&Stats::programs_compiled), stat(&Stats::programs_replayed), stat(&Stats::kernels_compiled),
            stat(&Stats::cache_hits_memory), stat(&Stats::arena_bytes), braze::library_lookups()};
  }
  Counts since(const Counts& o) const {
    return {programs_compiled - o.programs_compiled, programs_replayed - o.programs_replayed,
            kernels_compiled - o.kernels_compiled, cache_hits_memory - o.cache_hits_memory,
            arena_bytes - o.arena_bytes, library_lookups - o.library_lookups};
  }
};

TEST(Concurrency, IdenticalGraphsMakeEachProgramAndKernelOnce) {
  Watchdog watchdog;
  constexpr int kThreads = 6;
  Tensor x = testing::random_tensor({64, 300}, 1, 1.0f), w = testing::random_tensor({300, 72}, 2, 0.05f),
         bias = testing::random_tensor({72}, 3, 1.0f);
  auto build = [&](double s) {
    return softmax(gelu(matmul(x, w) + bias) * s, -1) + mean(x, std::vector<int64_t>{1}, true);
  };
  // What making it costs on one thread, from empty caches.
  Runtime::get().programs().clear();
  Runtime::get().arenas().clear();  // Note [Arena pool]: each phase allocates its arena
  jit::KernelCache::get().clear();
  Counts before = Counts::now();
  build(scale_of(0)).data();
  Counts one = Counts::now().since(before);
  ASSERT_EQ(one.programs_compiled, 1);
  ASSERT_GE(one.kernels_compiled, 2);  // the softmax and the mean
  ASSERT_EQ(one.library_lookups, 1);   // the matmul
  // The same from empty caches on kThreads threads at once.
  Runtime::get().programs().clear();
  Runtime::get().arenas().clear();  // Note [Arena pool]: each phase allocates its arena
  jit::KernelCache::get().clear();
  std::vector<Array> want;
  for (int t = 0; t < kThreads; ++t) want.push_back(reference_value(build(scale_of(t))));
  before = Counts::now();
  on_threads(kThreads, [&](int t) {
    EXPECT_TRUE(testing::close(build(scale_of(t)).data(), want[t], 2e-4)) << "thread " << t;
  });
  Counts many = Counts::now().since(before);
  EXPECT_EQ(many.programs_compiled, 1);
  EXPECT_EQ(many.programs_replayed, kThreads - 1);
  EXPECT_EQ(many.kernels_compiled, one.kernels_compiled);
  EXPECT_EQ(many.cache_hits_memory, one.cache_hits_memory);  // no second make looked the kernels up
  EXPECT_EQ(many.library_lookups, one.library_lookups);
  EXPECT_EQ(many.arena_bytes, one.arena_bytes);  // one arena
}

TEST(Concurrency, AKernelIsCompiledOnceWhenThreadsAskAtOnce) {
  Watchdog watchdog;
  constexpr int kThreads = 8;
  Tensor x = testing::random_tensor({77, 1031}, 4, 1.0f);
  Schedule s = make_schedule(lower(std::vector<Tensor>{softmax(x * 1.5, -1)}).graph);
  ASSERT_EQ(s.steps.size(), 1u);
  jit::KernelCache::get().clear();
  std::atomic<int> misses{0};
  std::vector<const jit::CompiledKernel*> got(kThreads);
  on_threads(kThreads, [&](int t) {
    jit::Lookup l = jit::KernelCache::get().find_or_compile(s.steps[0].spec, Runtime::get().cpu_isa());
    if (!l.hit) ++misses;
    got[t] = l.kernel.get();
  });
  EXPECT_EQ(misses.load(), 1);
  ASSERT_NE(got[0], nullptr);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(got[t], got[0]) << "thread " << t;
}

// A small program for the cache tests below.
std::shared_ptr<Program> small_program() {
  Lowered l = lower(std::vector<Tensor>{from_vector<float>({1, 2, 3}, {3}) * 2.5f}, {.scalars_as_inputs = true});
  return std::make_shared<Program>(l, KernelMode::Interpreted, MemoryOptions{}, allocate_array);
}

TEST(Concurrency, ThreadsAskingForOneKeyWaitForOneMake) {
  Watchdog watchdog;
  constexpr int kThreads = 6;
  ProgramCache cache{int64_t{1} << 30};
  std::atomic<int> makes{0}, compiled{0};
  std::vector<Program*> got(kThreads);
  on_threads(kThreads, [&](int t) {
    ProgramCache::Found f = cache.find_or_make("key", [&] {
      ++makes;
      // Long enough for every thread to ask meanwhile, even on a loaded machine.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return small_program();
    });
    compiled += f.compiled;
    got[t] = f.program.get();
  });
  EXPECT_EQ(makes.load(), 1);
  EXPECT_EQ(compiled.load(), 1);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(got[t], got[0]) << "thread " << t;
}

TEST(Concurrency, AnExceptionWhileMakingReachesEveryWaiterAndIsNotKept) {
  Watchdog watchdog;
  constexpr int kWaiters = 5;
  ProgramCache cache{int64_t{1} << 30};
  std::atomic<int> makes{0}, arrived{0}, failed{0};
  std::promise<void> started, open;
  std::shared_future<void> gate = open.get_future().share();
  auto failing = [&]() -> std::shared_ptr<Program> {
    if (makes++ == 0) started.set_value();
    gate.wait();
    throw std::invalid_argument("the graph cannot be made");
  };
  auto ask = [&] {
    try {
      cache.find_or_make("key", failing);
      ADD_FAILURE() << "made a program that throws";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "the graph cannot be made");
      ++failed;
    }
  };
  std::thread maker(ask);
  started.get_future().wait();  // the maker is making: the others wait for it
  std::vector<std::thread> waiters;
  for (int t = 0; t < kWaiters; ++t) waiters.emplace_back([&] { ++arrived, ask(); });
  while (arrived.load() < kWaiters) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into find_or_make, waiting
  open.set_value();
  maker.join();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(makes.load(), 1);
  EXPECT_EQ(failed.load(), kWaiters + 1);
  EXPECT_EQ(cache.size(), 0u);
  // Not kept: the next ask makes it again.
  ProgramCache::Found f = cache.find_or_make("key", small_program);
  EXPECT_TRUE(f.compiled);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(Concurrency, APoolEnteredFromManyThreadsAndFromItsTasksRunsEachIndexOnce) {
  Watchdog watchdog;
  jit::ThreadPool pool(4);
  constexpr int kCallers = 3, kOuter = 6, kMiddle = 5, kInner = 7;
  // Per caller, outer and middle index: how often each inner index ran.
  std::vector<std::atomic<int>> runs(kCallers * kOuter * kMiddle * kInner);
  on_threads(kCallers, [&](int c) {
    for (int round = 0; round < 20; ++round)
      pool.run(kOuter, [&](int64_t i) {
        pool.run(kMiddle, [&](int64_t j) {
          pool.run(kInner, [&](int64_t k) { ++runs[((c * kOuter + i) * kMiddle + j) * kInner + k]; });
        });
      });
  });
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 20) << "index " << i;
}

TEST(Concurrency, APoolTaskThatThrowsReachesItsCallerAndThePoolGoesOn) {
  Watchdog watchdog;
  jit::ThreadPool pool(3);
  std::atomic<int> ran{0};
  try {
    pool.run(16, [&](int64_t i) {
      ++ran;
      if (i == 5) throw std::runtime_error("task 5 failed");
    });
    ADD_FAILURE() << "the task's exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 5 failed");
  }
  EXPECT_EQ(ran.load(), 16);  // every index ran before run() rethrew
  std::atomic<int> after{0};
  pool.run(32, [&](int64_t) { ++after; });
  EXPECT_EQ(after.load(), 32);
}

TEST(Concurrency, TheCopyBandwidthProbeBesideRealizes) {
  Watchdog watchdog;
  const std::vector<Case> cases = mixed_cases();
  std::vector<std::vector<Tensor>> inputs;
  std::vector<Array> want;
  for (size_t c = 0; c < cases.size(); ++c) {
    inputs.push_back(inputs_of(cases[c], static_cast<uint32_t>(10 * c)));
    want.push_back(reference_value(cases[c].build(inputs[c], 1.0)));
  }
  std::atomic<bool> probing{true};
  double bandwidth = 0;
  on_threads(3, [&](int t) {
    if (t == 0) {
      bandwidth = copy_bandwidth();
      probing = false;
      return;
    }
    // At least one pass over the cases, and on while the probe runs.
    for (int pass = 0; pass == 0 || probing; ++pass)
      for (size_t c = 0; c < cases.size(); ++c)
        EXPECT_TRUE(testing::close(cases[c].build(inputs[c], 1.0).data(), want[c], 2e-4)) << cases[c].name;
  });
  EXPECT_GT(bandwidth, 1e8);  // bytes per second
}

// Note [Shared lazy tensors]: threads realize the same lazy tensors, and
// graphs that read them, at once; each node is realized once or more, its
// first result kept.
TEST(Concurrency, LazyTensorsSharedBetweenThreads) {
  Watchdog watchdog;
  constexpr int kThreads = 4;
  Tensor x = testing::random_tensor({257, 129}, 7, 1.0f);
  auto y_of = [](const Tensor& x) { return exp(x * 0.5) + 1.0; };
  auto z_of = [](const Tensor& y) { return sum(y, std::vector<int64_t>{1}); };
  const Array want_y = reference_value(y_of(x)), want_z = reference_value(z_of(y_of(x)));
  const Array want_w = reference_value(z_of(y_of(x)) * 2.0 + 1.0);
  for (int round = 0; round < 20; ++round) {
    Tensor y = y_of(x), z = z_of(y), w = z * 2.0 + 1.0;  // lazy, shared by the threads
    const uint32_t depth = lazy_depth(*w.node());
    on_threads(kThreads, [&](int t) {
      switch ((t + round) % 4) {
        case 0: EXPECT_TRUE(testing::close(y.data(), want_y, 1e-5)); break;
        case 1: EXPECT_TRUE(testing::close(z.data(), want_z, 1e-4)); break;
        case 2: EXPECT_TRUE(testing::close(w.data(), want_w, 1e-4)); break;
        case 3: EXPECT_TRUE(testing::close(z_of(y).data(), want_z, 1e-4)); break;
      }
      EXPECT_EQ(y.shape(), (Shape{257, 129}));
      EXPECT_LE(lazy_depth(*w.node()), depth);  // read while other threads realize
    });
    EXPECT_TRUE(testing::close(w.data(), want_w, 1e-4)) << "round " << round;
  }
}

// BRAZE_CUDA=emulate from several threads (Note [Host emulation]): at
// least no crash, and right answers.
TEST(Concurrency, CudaHostEmulationFromSeveralThreads) {
  Watchdog watchdog;
  testing::ScopedEnv mode("BRAZE_CUDA", "emulate");  // set before the threads start
  try {
    cuda_executor(testing::kCuda);
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  constexpr int kThreads = 3;
  Tensor x = testing::random_tensor({37, 61}, 11, 1.0f);
  Tensor xd = to(x, testing::kCuda);
  auto build = [](const Tensor& x, double s) { return sum(exp(x * s) + x, std::vector<int64_t>{1}); };
  std::vector<Array> want;
  for (int t = 0; t < kThreads; ++t) want.push_back(reference_value(build(x, scale_of(t))));
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < 3; ++round) {
      Tensor y = build(xd, scale_of(t));
      EXPECT_EQ(y.device(), testing::kCuda);
      EXPECT_TRUE(testing::close(y.host_data(), want[t], 1e-4)) << "thread " << t << ", round " << round;
    }
  });
}

}  // namespace
}  // namespace braze
