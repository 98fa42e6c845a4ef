// Fits y = X w + b by gradient descent through braze's C++ API: the data
// and parameters are tensors, the loss and its gradients are recorded
// lazily, and each step's loss, gradients and update are realized together
// as one program (assign() writes the new parameters in place), which every
// step after the first replays. Prints the fit and braze's counters; exits
// non-zero if the fit is off.
#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/braze.h"

int main() {
  using namespace braze;
  constexpr int64_t kSamples = 256, kFeatures = 4, kSteps = 200;
  const std::vector<float> w_true = {2.0f, -1.0f, 0.5f, 3.0f};
  const float b_true = 0.25f;

  // Features from a fixed pattern in [-1, 1); targets from the true line.
  std::vector<float> xs(kSamples * kFeatures), ys(kSamples);
  for (int64_t i = 0; i < kSamples; ++i) {
    float y = b_true;
    for (int64_t j = 0; j < kFeatures; ++j) {
      float x = static_cast<float>((i * 7 + j * 13) % 32) / 16.0f - 1.0f;
      xs[i * kFeatures + j] = x;
      y += w_true[j] * x;
    }
    ys[i] = y;
  }
  Tensor X = from_vector(xs, {kSamples, kFeatures});
  Tensor y = from_vector(ys, {kSamples, 1});

  Tensor w = variable(zeros({kFeatures, 1}));
  Tensor b = variable(zeros({1}));
  Tensor loss_out = zeros({});  // where each step's loss is written
  realize({w, b, loss_out});
  const double lr = 0.2;
  for (int64_t step = 0; step < kSteps; ++step) {
    Tensor loss = mse_loss(matmul(X, w) + b, y);
    Tensor cotangent = ones_like(loss);
    std::vector<Tensor> params = {w, b};
    std::vector<Tensor> g = vjp(std::span<const Tensor>(&loss, 1), std::span<const Tensor>(&cotangent, 1), params);
    assign({w, b, loss_out}, {w - lr * g[0], b - lr * g[1], loss});
  }

  std::vector<float> w_fit = w.to_vector<float>();
  double b_fit = b.item();
  double worst = std::fabs(b_fit - b_true);
  std::printf("fit after %lld steps: loss %.3g, w =", static_cast<long long>(kSteps), loss_out.item());
  for (int64_t j = 0; j < kFeatures; ++j) {
    std::printf(" %.4f", w_fit[j]);
    worst = std::fmax(worst, std::fabs(w_fit[j] - w_true[j]));
  }
  std::printf(", b = %.4f (largest error %.2g)\n", b_fit, worst);

  Stats& s = Runtime::get().stats();
  std::printf("braze: %lld programs compiled, %lld replayed, %lld kernels launched\n",
              static_cast<long long>(s.programs_compiled.load()), static_cast<long long>(s.programs_replayed.load()),
              static_cast<long long>(s.kernels_launched.load()));
  if (!(worst < 1e-3)) {
    std::printf("FAILED: the fit is off by %.3g\n", worst);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
