// The driver executor (runtime/driver_executor.cpp) over a fake libcuda
// (jit_cuda_fake_libcuda.cpp): what braze asks of the driver, checked on a
// machine without a GPU. Its own executable, run by CTest with
// BRAZE_LIBCUDA pointing at the fake (cuda_fake_driver), since a process
// loads one driver for its life. Kernels compile through the real NVRTC
// and are never run, so these checks read the calls the fake recorded, not
// results. `braze_fake_driver_checks --child WHAT` is a helper process a
// check starts: a fresh driver table, other environment variables, and an
// exit whose status the check reads.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "jit_cuda/nvrtc_api.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/cuda_executors.h"

namespace braze {
namespace {

const Device kCuda{DeviceKind::CUDA, 0};

// The fake libcuda this process loaded (BRAZE_LIBCUDA): dlopen of the same
// path hands back the same library.
void* fake() {
  const char* path = std::getenv("BRAZE_LIBCUDA");
  void* h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (!h) {
    std::cerr << "BRAZE_LIBCUDA does not name the fake libcuda this process loaded (run through ctest)\n";
    std::abort();
  }
  return h;
}

std::string trace() {
  auto f = reinterpret_cast<const char* (*)()>(dlsym(fake(), "braze_fake_cuda_trace"));
  return f();
}

void clear_trace() { reinterpret_cast<void (*)()>(dlsym(fake(), "braze_fake_cuda_clear_trace"))(); }

std::vector<std::string> lines_with(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos) out.push_back(line);
  return out;
}

// The stream braze's executor made ("stream=0x..."), from the trace.
std::string brazes_stream(const std::string& t) {
  std::vector<std::string> made = lines_with(t, "cuStreamCreate");
  if (made.empty()) return "(none)";
  std::string line = made.front();
  size_t at = line.find("stream=");
  return line.substr(at, line.find(' ', at) - at);
}

struct Child {
  int status = -1;
  std::string out;
};

// This program run as `--child what` with `env` added ("NAME=value"), its
// output and exit status.
Child run_child(const std::string& what, const std::vector<std::string>& env = {}) {
  std::string cmd;
  for (const std::string& e : env) cmd += e + " ";
  cmd += "/proc/" + std::to_string(getpid()) + "/exe --child " + what + " 2>&1";
  Child c;
  FILE* p = popen(("env " + cmd).c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) c.out.append(buf, n);
  c.status = pclose(p);
  return c;
}

TEST(FakeDriver, ProgramsRunOnBrazesOwnStream) {
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor xd = to(x, kCuda);
  Tensor y = softmax(xd * 0.5f, -1) + 1.0f;
  realize({y});
  std::vector<float> back = y.to_vector<float>();  // (the fake runs no kernel: values unchecked)
  std::string t = trace();
  std::string stream = brazes_stream(t);
  ASSERT_NE(stream, "(none)") << t;
  EXPECT_NE(lines_with(t, "cuStreamCreate").front().find("non-blocking"), std::string::npos) << t;
  std::vector<std::string> launches = lines_with(t, "cuLaunchKernel");
  ASSERT_FALSE(launches.empty()) << t;
  for (const char* call : {"cuLaunchKernel", "cuMemcpy", "cuMemset", "cuMemFree", "cuMemAllocFromPool"})
    for (const std::string& line : lines_with(t, call))
      EXPECT_NE(line.find(stream), std::string::npos) << "not on braze's stream: " << line << "\n" << t;
  // No call on the legacy default stream (stream 0), and no synchronous copy.
  EXPECT_TRUE(lines_with(t, "stream=0\n").empty() && lines_with(t, "stream=0 ").empty()) << t;
  for (const char* sync_call : {"cuMemcpyHtoD ", "cuMemcpyDtoH ", "cuMemcpyDtoD ", "cuMemsetD8 ", "cuMemAlloc "})
    EXPECT_TRUE(lines_with(t, sync_call).empty()) << sync_call << "\n" << t;
}

// The lines of `text` that start with `what` (work that ran, not captured).
std::vector<std::string> lines_starting(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& line : lines_with(text, what))
    if (line.rfind(what, 0) == 0) out.push_back(line);
  return out;
}

// "stream=0x..." of a trace line.
std::string stream_of(const std::string& line) {
  size_t at = line.find("stream=");
  return at == std::string::npos ? "" : line.substr(at, line.find(' ', at) - at);
}

// Note [Programs as CUDA graphs]: a program's first run launches its
// kernels; the second captures them on a stream of their own and launches
// the graph on braze's stream; a third, whose output is new memory, sets
// the parameters of the node that writes it and launches the graph again.
TEST(FakeDriver, ReplaysAreOneGraphLaunchPatchedWhereAddressesChange) {
  Tensor x = to(from_vector<float>(std::vector<float>(64 * 100, 1.0f), {64, 100}), kCuda);
  auto run = [&] {
    Tensor y = softmax(softmax(x * 2.0f, 0), -1);
    realize({y});
    return y;
  };
  clear_trace();
  Tensor first = run();
  std::string t = trace();
  std::vector<std::string> launches = lines_starting(t, "cuLaunchKernel");
  ASSERT_GE(launches.size(), 2u) << t;
  const std::string stream = stream_of(launches[0]);
  EXPECT_TRUE(lines_with(t, "Capture").empty()) << "a program run once is not captured\n" << t;

  clear_trace();
  Stats& stats = Runtime::get().stats();
  const int64_t captured = stats.graphs_captured, launched = stats.graphs_launched;
  Tensor second = run();
  t = trace();
  std::vector<std::string> begin = lines_with(t, "cuStreamBeginCapture");
  ASSERT_EQ(begin.size(), 1u) << t;
  EXPECT_NE(stream_of(begin[0]), stream) << "captured on braze's own stream\n" << t;
  EXPECT_EQ(lines_with(t, "captured cuLaunchKernel").size(), launches.size()) << t;
  EXPECT_TRUE(lines_starting(t, "cuLaunchKernel").empty()) << t;
  EXPECT_EQ(lines_with(t, "cuGraphInstantiateWithFlags nodes=" + std::to_string(launches.size())).size(), 1u) << t;
  std::vector<std::string> graph_launches = lines_with(t, "cuGraphLaunch");
  ASSERT_EQ(graph_launches.size(), 1u) << t;
  EXPECT_EQ(stream_of(graph_launches[0]), stream) << t;
  EXPECT_EQ(stats.graphs_captured - captured, 1);
  EXPECT_EQ(stats.graphs_launched - launched, 1);

  clear_trace();
  Tensor third = run();  // its output is other memory than the second's
  t = trace();
  EXPECT_TRUE(lines_with(t, "Capture").empty()) << t;
  EXPECT_TRUE(lines_starting(t, "cuLaunchKernel").empty()) << t;
  EXPECT_EQ(lines_with(t, "cuGraphExecKernelNodeSetParams").size(), 1u) << "only the node writing the output\n" << t;
  EXPECT_EQ(lines_with(t, "cuGraphLaunch").size(), 1u) << t;
}

TEST(FakeDriver, FreedMemoryGoesBackToItsPoolInStreamOrder) {
  clear_trace();
  {
    Tensor x = to(from_vector<float>({1, 2, 3}, {3}), kCuda);
    realize({x * 2.0f});
  }  // both arrays dropped
  std::string t = trace();
  std::vector<std::string> frees = lines_with(t, "cuMemFreeAsync");
  EXPECT_GE(frees.size(), 2u) << t;
  EXPECT_TRUE(lines_with(t, "cuMemFree ").empty()) << "a free that does not wait for queued kernels\n" << t;
  EXPECT_TRUE(lines_with(t, "unknown address").empty()) << t;
}

// Memory handed to another library (DLPack) waits for the whole device
// before it is freed, through cuCtxSynchronize as cuda.h declares it: asked
// for at CUDA 13.0 the driver hands out cuCtxSynchronize_v2(CUcontext),
// which failed every call on the first H100 run (Note [Entry points at an
// older version]; the fake hands it out the same way).
TEST(FakeDriver, ExportedMemoryWaitsForTheWholeDeviceBeforeItIsFreed) {
  {
    Tensor x = to(from_vector<float>({1, 2, 3}, {3}), kCuda) * 2.0f;
    realize({x});
    cuda::mark_exported(x.data().data);
    clear_trace();
  }
  std::string t = trace();
  EXPECT_TRUE(lines_with(t, "cuCtxSynchronize_v2").empty()) << t;
  size_t sync = t.find("cuCtxSynchronize\n"), free = t.find("cuMemFreeAsync");
  ASSERT_NE(sync, std::string::npos) << t;
  EXPECT_LT(sync, free) << t;
}

TEST(FakeDriver, ThePoolKeepsWhatIsFreed) {
  // Made with the executor (the first check made it): one pool, told to keep everything.
  Child c = run_child("pool");
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("cuMemPoolCreate"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("release_threshold=18446744073709551615"), std::string::npos) << c.out;
}

// Note [Tables live until exit]: a process whose program cache holds device
// memory at exit frees it through the driver table without crashing.
TEST(FakeDriver, ExitAfterDeviceWorkIsClean) {
  Child c = run_child("leave-a-program");
  EXPECT_EQ(c.status, 0) << "exit status " << c.status << ": " << c.out;
  EXPECT_NE(c.out.find("realized on the device"), std::string::npos) << c.out;
}

// Note [Loading CUDA libraries]: a CUDA 12 driver with only a CUDA 13 NVRTC
// is one line naming both versions, not a failure at every module load.
TEST(FakeDriver, ADriverOlderThanNvrtcIsOneLineNamingBoth) {
  ASSERT_TRUE(cuda::nvrtc_available());
  const std::string nvrtc = cuda::nvrtc().version();
  ASSERT_EQ(nvrtc.substr(0, 3), "13.") << "this check expects a CUDA 13 NVRTC here";
  Child c = run_child("executor", {"BRAZE_FAKE_CUDA_VERSION=12080", "BRAZE_LIBNVRTC=" + cuda::nvrtc().path});
  EXPECT_NE(c.status, 0) << c.out;
  std::string first = c.out.substr(0, c.out.find('\n'));
  EXPECT_NE(first.find("is CUDA " + nvrtc), std::string::npos) << c.out;
  EXPECT_NE(first.find("the NVIDIA driver is CUDA 12.8"), std::string::npos) << c.out;
  EXPECT_NE(first.find("BRAZE_LIBNVRTC"), std::string::npos) << c.out;
  // The same driver at 13.0 loads it.
  Child ok = run_child("executor", {"BRAZE_FAKE_CUDA_VERSION=13000"});
  EXPECT_EQ(ok.status, 0) << ok.out;
}

// A driver that finds no device is "no GPU here": what a gpu test may skip on.
TEST(FakeDriver, NoDeviceIsAbsenceNotABrokenSetup) {
  Child none = run_child("absent", {"BRAZE_FAKE_CUDA_DEVICES=0"});
  EXPECT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find("absent: "), std::string::npos) << none.out;
  Child old = run_child("absent", {"BRAZE_FAKE_CUDA_VERSION=12080"});
  EXPECT_EQ(old.status, 0) << old.out;
  EXPECT_NE(old.out.find("present"), std::string::npos) << "a broken setup must not read as no GPU: " << old.out;
}

// --- the helper processes -----------------------------------------------------------

int child(const std::string& what) {
  try {
    if (what == "executor") {
      std::cout << "ok " << cuda_executor(kCuda)->describe() << "\n";
      return 0;
    }
    if (what == "pool") {
      cuda_executor(kCuda);
      std::cout << trace();
      return 0;
    }
    if (what == "absent") {
      std::optional<std::string> why = cuda_absent();
      std::cout << (why ? "absent: " + *why : std::string("present")) << "\n";
      return 0;
    }
    if (what == "leave-a-program") {
      // Kernels only: the program cache keeps the program and its device arena.
      Tensor x = to(from_vector<float>(std::vector<float>(64 * 100, 1.0f), {64, 100}), kCuda);
      Tensor y = softmax(softmax(x * 2.0f, 0), -1);
      realize({y});
      std::cout << "realized on the device" << std::endl;
      return 0;  // static destructors free the arena through the driver table
    }
  } catch (const std::exception& e) {
    std::cout << e.what() << "\n";
    return 1;
  }
  std::cout << "unknown --child " << what << "\n";
  return 2;
}

}  // namespace
}  // namespace braze

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--child") return braze::child(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
