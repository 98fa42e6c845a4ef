// Built without oneDNN (no libdnnl-dev): every library call runs on the
// reference interpreter, and this says so.
#include "graph/check.h"
#include "graph/log.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel_cache.h"

namespace braze::dnn {

bool available() { return false; }

std::string version() { return "not built in (install libdnnl-dev and rebuild): matmul and conv2d run on the reference interpreter"; }

std::string isa() { return ""; }

std::string blas() { return ""; }

bool runs_bfloat16() { return false; }

bool sums_int8_exactly() { return false; }

Prepared prepare(const Graph&, const FusedGroup&) {
  static const bool said = [] {
    BRAZE_LOG(Info, "matmul and conv2d run on the reference interpreter: braze was built without oneDNN");
    return true;
  }();
  (void)said;
  return {.why_not = "braze was built without oneDNN"};
}

int64_t memory_bytes(const Entry&) { return 0; }

CacheFigures cache_figures() { return {.limit = jit::kernel_cache_limit_from_env()}; }

void clear_cache() {}

void run(const Prepared&, const Graph&, const FusedGroup&, const std::function<const Array&(NodeId)>&, Array&,
         const RunMemory&) {
  BRAZE_ASSERT(false, "dnn::run without oneDNN");
}

}  // namespace braze::dnn
