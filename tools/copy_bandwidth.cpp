#include "tools/copy_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "jit_cpu/thread_pool.h"

namespace braze::cli {

double copy_bandwidth() {
  constexpr int64_t kFloats = int64_t{16} << 20;
  constexpr size_t kBytes = kFloats * sizeof(float);
  // Pages touched before timing, so the first run does not measure faults.
  auto src = std::make_unique<float[]>(kFloats), dst = std::make_unique<float[]>(kFloats);
  std::fill_n(src.get(), kFloats, 1.0f);
  std::fill_n(dst.get(), kFloats, 0.0f);
  jit::ThreadPool& pool = jit::ThreadPool::get();
  const int64_t parts = pool.size();
  auto copy = [&] {
    pool.run(parts, [&](int64_t p) {
      int64_t begin = kFloats * p / parts, end = kFloats * (p + 1) / parts;
      std::memcpy(dst.get() + begin, src.get() + begin, (end - begin) * sizeof(float));
    });
  };
  copy();
  double best_ns = 1e300;
  for (int r = 0; r < 5; ++r) {
    auto start = std::chrono::steady_clock::now();
    copy();
    best_ns = std::min<double>(
        best_ns, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  }
  return 2.0 * kBytes / best_ns * 1e9;
}

}  // namespace braze::cli
