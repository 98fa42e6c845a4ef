#include "runtime/context.h"

#include <cstdlib>
#include <string_view>

#include "graph/check.h"
#include "graph/env.h"

namespace braze {

namespace {

thread_local Device t_default_device{};

// Note [Calls that compute]
std::atomic<const ComputeHooks*> compute_hooks{nullptr};
thread_local int t_compute_depth = 0;

BackendKind backend_from_env() {
  const char* env = std::getenv("BRAZE_BACKEND");
  std::string v = env ? env : "";
  BRAZE_CHECK(v.empty() || v == "reference" || v == "cpu", "BRAZE_BACKEND='", v,
              "' is not a backend; expected 'cpu' (the default) or 'reference'");
  return v == "reference" ? BackendKind::Reference : BackendKind::Cpu;
}

// An on/off switch: unset (`otherwise`), "0" or "1".
bool flag_from_env(const char* variable, bool otherwise) {
  const char* env = std::getenv(variable);
  std::string v = env ? env : "";
  BRAZE_CHECK(v.empty() || v == "0" || v == "1", variable, "='", v, "' is not a switch; expected 0 or 1");
  return v.empty() ? otherwise : v == "1";
}

}  // namespace

Runtime::Runtime()
    : backend_(backend_from_env()),
      cpu_isa_(jit::host_isa()),
      dumper_(dump_options_from_env()),
      arenas_(megabytes_from_env("BRAZE_ARENA_POOL_MB", kDefaultArenaPoolMegabytes)),
      programs_(megabytes_from_env("BRAZE_PROGRAM_CACHE_MB", kDefaultProgramCacheMegabytes)),
      poison_(flag_from_env("BRAZE_POISON", false)),
      arena_(poison_ || flag_from_env("BRAZE_ARENA", true)) {}

Runtime& Runtime::get() {
  static Runtime runtime;
  return runtime;
}

std::vector<std::pair<std::string, int64_t>> Runtime::stats_snapshot() const {
  std::vector<std::pair<std::string, int64_t>> out;
#define BRAZE_STAT_ROW(name) out.emplace_back(#name, stats_.name.load(std::memory_order_relaxed));
  BRAZE_STATS(BRAZE_STAT_ROW)
#undef BRAZE_STAT_ROW
  return out;
}

void Runtime::reset_stats() {
#define BRAZE_STAT_RESET(name) stats_.name.store(0, std::memory_order_relaxed);
  BRAZE_STATS(BRAZE_STAT_RESET)
#undef BRAZE_STAT_RESET
}

Device Runtime::default_device() { return t_default_device; }
void Runtime::set_default_device(Device d) { t_default_device = d; }

void set_compute_hooks(const ComputeHooks* hooks) { compute_hooks.store(hooks); }

ComputeScope::ComputeScope() {
  if (t_compute_depth++ > 0) return;
  hooks_ = compute_hooks.load();
  if (hooks_) state_ = hooks_->enter();
}

ComputeScope::~ComputeScope() {
  --t_compute_depth;
  if (hooks_) hooks_->leave(state_);
}

}  // namespace braze
