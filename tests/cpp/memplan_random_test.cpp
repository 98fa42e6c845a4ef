// The memory planner at scale: thousands of random graphs and random lives
// (the verifier must accept every plan), and the benchmark workloads, where
// both strategies are measured against the lower bound. The printed
// figures are what memplan/README.md quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "fusion/schedule.h"
#include "memplan/liveness.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "runtime/braze.h"
#include "runtime/lower.h"
#include "tests/cpp/random_graph.h"

namespace braze::memplan {
namespace {

constexpr Strategy kStrategies[] = {Strategy::GreedyBySize, Strategy::HeapBestFit};

// Ratios of arena to lower bound over many plans: how many hit the bound,
// the share within 5 %, the median, the 99th percentile and the worst.
class RatioSummary {
 public:
  void add(int64_t arena, int64_t bound) {
    if (bound > 0) ratios_.push_back(static_cast<double>(arena) / static_cast<double>(bound));
  }
  double worst() const { return ratios_.empty() ? 1.0 : *std::max_element(ratios_.begin(), ratios_.end()); }
  double share_within(double r) const {
    return ratios_.empty() ? 1.0
                           : static_cast<double>(std::count_if(ratios_.begin(), ratios_.end(),
                                                               [&](double x) { return x <= r + 1e-12; })) /
                                 static_cast<double>(ratios_.size());
  }
  std::string line() {
    if (ratios_.empty()) return "no plan with scratch";
    std::sort(ratios_.begin(), ratios_.end());
    auto q = [&](double f) { return ratios_[static_cast<size_t>(f * static_cast<double>(ratios_.size() - 1))]; };
    char buf[200];
    std::snprintf(buf, sizeof buf, "%zu plans: at bound %.1f%%, <= 1.05 %.1f%%, median %.3f, p99 %.3f, worst %.3f",
                  ratios_.size(), 100 * share_within(1.0), 100 * share_within(1.05), q(0.5), q(0.99), worst());
    return buf;
  }

 private:
  std::vector<double> ratios_;
};

void check_plans(const Liveness& l, RatioSummary (&summary)[2], const std::string& what) {
  for (int s = 0; s < 2; ++s)
    for (int64_t alignment : {64, 256}) {
      MemoryPlan p = plan_memory(l, {.alignment = alignment, .strategy = kStrategies[s]});
      ASSERT_EQ(plan_problem(l, p), "") << what << " " << name(kStrategies[s]) << " alignment " << alignment;
      ASSERT_GE(p.arena_bytes, lower_bound(l, alignment)) << what;
      ASSERT_LE(p.arena_bytes, no_reuse_bytes(l, alignment)) << what;  // never worse than no reuse
      if (alignment == 64) summary[s].add(p.arena_bytes, lower_bound(l, alignment));
    }
}

TEST(MemPlanRandomGraphs, EveryPlanVerifies) {
  RatioSummary summary[2];
  uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(3000);
  size_t with_scratch = 0, in_place = 0;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::vector<Array> inputs;
    Graph g = testing::RandomGraph(seed).build(inputs);
    Liveness l = liveness(make_schedule(g));
    with_scratch += !l.scratch.empty();
    for (const BufferLife& b : l.scratch) in_place += b.in_place_of >= 0;
    check_plans(l, summary, "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
  std::printf("random graphs (%u, %zu with scratch buffers, %zu outputs in place), arena / lower bound:\n", count,
              with_scratch, in_place);
  if (count >= 1000) {
    EXPECT_GT(in_place, 0u) << "no random graph exercises in-place outputs";
  }
  for (int s = 0; s < 2; ++s) std::printf("  %-15s %s\n", name(kStrategies[s]), summary[s].line().c_str());
}

// Lives of a random schedule: 2-300 buffers over up to 100 steps, sizes
// spread over four orders of magnitude (a bias next to an activation),
// lives mostly short with a few long ones (a residual stream).
Liveness random_lives(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Liveness l;
  l.steps = pick(1, 100);
  int n = pick(2, 300);
  for (int i = 0; i < n; ++i) {
    int32_t first = pick(0, l.steps - 1);
    int32_t span = pick(0, 9) == 0 ? pick(0, l.steps) : pick(0, 3);
    int64_t bytes = pick(0, 19) == 0 ? 0 : static_cast<int64_t>(std::pow(10.0, pick(0, 4000) / 1000.0) * 64);
    l.scratch.push_back({static_cast<NodeId>(i + 1), bytes, first, std::min(first + span, l.steps - 1)});
  }
  std::sort(l.scratch.begin(), l.scratch.end(), [](const BufferLife& a, const BufferLife& b) { return a.first < b.first; });
  return l;
}

TEST(MemPlanRandomLives, EveryPlanVerifies) {
  RatioSummary summary[2];
  uint32_t first = testing::fuzz_first(), count = testing::fuzz_graphs(3000);
  for (uint32_t seed = first; seed < first + count; ++seed) {
    check_plans(random_lives(seed), summary, "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
  std::printf("random lives (%u), arena / lower bound:\n", count);
  for (int s = 0; s < 2; ++s) std::printf("  %-15s %s\n", name(kStrategies[s]), summary[s].line().c_str());
}

// --- the benchmark workloads (../shared/bench/WORKLOADS.md) and larger graphs ---

Tensor input(Shape shape) { return from_array(allocate_array(DType::Float32, std::move(shape))); }

Tensor mlp(const Tensor& x, int64_t d, int64_t hidden) {
  Tensor w1 = input({d, hidden}), b1 = input({hidden}), w2 = input({hidden, d}), b2 = input({d});
  return matmul(maximum(matmul(x, w1) + b1, 0.0), w2) + b2;
}

// A pre-norm transformer block over [tokens, d] with `heads` heads.
Tensor transformer_block(const Tensor& x, int64_t batch, int64_t seq, int64_t d, int64_t heads) {
  int64_t dh = d / heads;
  auto split = [&](const Tensor& t) { return permute(reshape(t, {batch, seq, heads, dh}), {0, 2, 1, 3}); };
  Tensor h = layer_norm(x, input({d}), input({d}));
  Tensor q = split(matmul(h, input({d, d}))), k = split(matmul(h, input({d, d}))), v = split(matmul(h, input({d, d})));
  Tensor attn = softmax(matmul(q, matrix_transpose(k)) * (1.0 / std::sqrt(static_cast<double>(dh))), -1);
  Tensor o = reshape(permute(matmul(attn, v), {0, 2, 1, 3}), {batch * seq, d});
  Tensor y = x + matmul(o, input({d, d})) + input({d});
  Tensor f = gelu(matmul(layer_norm(y, input({d}), input({d})), input({d, 4 * d})) + input({4 * d}), "tanh");
  return y + matmul(f, input({4 * d, d})) + input({d});
}

struct Workload {
  const char* name;
  Tensor (*build)();
};

const Workload kWorkloads[] = {
    {"gelu_16M",
     [] {
       Tensor x = input({16 << 20});
       return 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
     }},
    {"bias_relu_scale", [] { return maximum(input({4096, 4096}) + input({4096}), 0.0) * input({4096, 1}); }},
    {"softmax_rows", [] { return softmax(input({4096, 4096}), -1); }},
    {"layernorm", [] { return layer_norm(input({16384, 1024}), input({1024}), input({1024}), 1e-5); }},
    {"colsum", [] { return sum(input({4096, 4096}), std::vector<int64_t>{0}); }},
    {"transpose_add",
     [] {
       Tensor x = input({4096, 4096});
       return transpose(x) + x;
     }},
    {"mlp", [] { return mlp(input({256, 1024}), 1024, 4096); }},
    {"small_chain",
     [] {
       Tensor x = input({1024});
       for (int k = 0; k < 10; ++k) x = k % 2 ? x * 1.01 : x + 0.5;
       return x;
     }},
    {"loop", [] { return softmax(maximum(input({4096, 4096}) + input({4096}), 0.0) * input({4096, 1}), -1); }},
    {"mlp_3_layers",
     [] {
       Tensor x = input({512, 1024});
       for (int k = 0; k < 3; ++k) x = mlp(x, 1024, 4096);
       return x;
     }},
    {"transformer_block", [] { return transformer_block(input({2 * 256, 768}), 2, 256, 768, 12); }},
    {"transformer_x4",
     [] {
       Tensor x = input({4 * 128, 512});
       for (int k = 0; k < 4; ++k) x = transformer_block(x, 4, 128, 512, 8);
       return x;
     }},
};

TEST(MemPlanWorkloads, ArenaAgainstLowerBoundAndNoReuse) {
  std::printf("%-18s %5s %6s %3s %12s %12s  %-22s %-22s\n", "workload", "steps", "bufs", "inp", "lower bound", "no reuse",
              "greedy_by_size", "heap_best_fit");
  for (const Workload& w : kWorkloads) {
    Tensor root = w.build();
    Liveness l = liveness(make_schedule(lower(std::vector<Tensor>{root}).graph));
    int64_t bound = lower_bound(l, 64), total = no_reuse_bytes(l, 64);
    int in_place = 0;
    for (const BufferLife& b : l.scratch) in_place += b.in_place_of >= 0;
    std::printf("%-18s %5d %6zu %3d %12lld %12lld", w.name, l.steps, l.scratch.size(), in_place,
                static_cast<long long>(bound), static_cast<long long>(total));
    for (Strategy st : kStrategies) {
      MemoryPlan p = plan_memory(l, {.alignment = 64, .strategy = st});
      verify_plan(l, p);
      double to_bound = bound ? static_cast<double>(p.arena_bytes) / static_cast<double>(bound) : 1.0;
      double to_total = total ? static_cast<double>(p.arena_bytes) / static_cast<double>(total) : 1.0;
      std::printf("  %6.3f x lb %5.3f x nr ", to_bound, to_total);
      if (st == kDefaultStrategy) {
        EXPECT_LE(static_cast<double>(p.arena_bytes), 1.05 * static_cast<double>(bound)) << w.name << "\n"
                                                                                          << to_string(l, p);
      }
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace braze::memplan
