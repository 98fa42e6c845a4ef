#include "jit_cuda/library_calls.h"

#include "graph/check.h"
#include "jit_cuda/cuda_error.h"

namespace braze::cuda {

namespace {

struct MatmulCall final : DeviceLibraryCall {
  MatmulPlan plan;
  std::shared_ptr<const LtMatmul> lt;  // null when there is nothing to multiply
};

struct ConvCall final : DeviceLibraryCall {
  ConvPlan plan;
  std::shared_ptr<const CudnnConv> conv;  // null when there is nothing to convolve
};

// The cached entry of `key`, made by `make` (and `created` set) when new;
// when `make` finds its library missing, the error says which op needed it.
template <class Entry, class Make>
std::shared_ptr<const Entry> find_or_make(std::unordered_map<std::string, std::shared_ptr<const Entry>>& cache,
                                          const std::string& key, bool& created, const char* op, const char* library,
                                          Make make) {
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const Entry> made;
  try {
    made = make();
  } catch (const CudaUnavailable& e) {
    throw CudaUnavailable(std::string(op) + " on cuda needs " + library + ", which could not be loaded: " + e.what());
  }
  created = true;
  return cache.emplace(key, std::move(made)).first->second;
}

const std::byte* address(const std::function<const Array&(NodeId)>& buffer, NodeId base) {
  return buffer(base).data.get();
}

void fill_zeros(Array& out, CUstream stream) {
  const size_t bytes = out.bytes();
  if (bytes == 0) return;
  BRAZE_CU(cuMemsetD8Async, (static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(out.data.get())), 0, bytes, stream),
           "writing the zeros of an empty sum");
}

}  // namespace

void check_library_call(const Graph& g, const FusedGroup& group) {
  if (g[group.nodes[0]].op == Op::MatMul) plan_matmul(g, group);
  else plan_conv(g, group);
}

double alpha_now(const Scale& s, const std::function<const Array&(NodeId)>& buffer) {
  double alpha = s.alpha;
  for (const ScaleOperand& o : s.operands) {
    const Array& a = buffer(o.base);
    alignas(8) std::byte value[8] = {};
    const std::byte* host = a.data.get();
    if (DeviceExecutor* ex = executor_of(a.data)) {  // a user's 0-d device tensor; parameters are on the host
      BRAZE_ASSERT(a.bytes() <= sizeof value, "a scale operand of ", a.bytes(), " bytes");
      ex->copy_to_host(value, a.data.get(), a.bytes());
      host = value;
    }
    double v = load_double(a.dtype, host, 0);
    alpha = o.divides ? alpha / v : alpha * v;
  }
  return alpha;
}

cublasLtHandle_t LibraryCalls::lt_handle() {
  if (!lt_) lt_ = std::make_unique<LtHandle>();
  return lt_->get();
}

cudnnHandle_t LibraryCalls::dnn_handle() {
  if (!dnn_) dnn_ = std::make_unique<CudnnHandle>(stream_);
  return dnn_->get();
}

PreparedLibraryCall LibraryCalls::prepare(const Graph& g, const FusedGroup& group, const LibraryOptions& o) {
  std::lock_guard lock(mutex_);
  PreparedLibraryCall out;
  if (g[group.nodes[0]].op == Op::MatMul) {
    auto call = std::make_shared<MatmulCall>();
    call->plan = plan_matmul(g, group);
    if (!call->plan.calls.empty()) {
      call->lt = find_or_make(matmuls_, key_text(call->plan, o.allow_tf32), out.created, "matmul", "cuBLASLt", [&] {
        return std::make_shared<const LtMatmul>(lt_handle(), call->plan, o.allow_tf32);
      });
      call->workspace_bytes = static_cast<int64_t>(call->lt->workspace_bytes());
    }
    out.call = std::move(call);
    return out;
  }
  auto call = std::make_shared<ConvCall>();
  call->plan = plan_conv(g, group);
  if (!call->plan.empty && !call->plan.zero_fill) {
    call->conv = find_or_make(convs_, key_text(call->plan, o.allow_tf32), out.created, "conv2d", "cuDNN", [&] {
      return std::make_shared<const CudnnConv>(dnn_handle(), call->plan, o.allow_tf32);
    });
    call->workspace_bytes = static_cast<int64_t>(call->conv->workspace_bytes());
  }
  out.call = std::move(call);
  return out;
}

void LibraryCalls::run(const DeviceLibraryCall& call, const std::function<const Array&(NodeId)>& buffer, Array& out,
                       void* workspace, CUstream stream) {
  BRAZE_ASSERT(call.workspace_bytes == 0 || workspace, "a library call without its workspace");
  std::lock_guard lock(mutex_);
  if (const auto* m = dynamic_cast<const MatmulCall*>(&call)) {
    const MatmulPlan& p = m->plan;
    if (p.zero_fill) return fill_zeros(out, stream);
    if (!m->lt) return;
    LtOperands in{address(buffer, p.a_base), address(buffer, p.b_base),
                  p.has_c ? address(buffer, p.c_base) : nullptr,
                  has_bias(p.epilogue) ? address(buffer, p.bias_base) : nullptr,
                  out.data.get()};
    m->lt->run(lt_handle(), p, in, alpha_now(p.scale, buffer), workspace, stream);
    return;
  }
  const auto& c = dynamic_cast<const ConvCall&>(call);
  const ConvPlan& p = c.plan;
  if (p.zero_fill) return fill_zeros(out, stream);
  if (!c.conv) return;
  const size_t item = itemsize(p.dtype);
  cudnnHandle_t h = dnn_handle();
  auto convolve = [&] {
    c.conv->run(h, p, address(buffer, p.x_base) + p.x_offset * static_cast<int64_t>(item),
                address(buffer, p.w_base) + p.w_offset * static_cast<int64_t>(item), out.data.get(),
                alpha_now(p.scale, buffer), workspace);
  };
  if (stream == stream_) return convolve();
  // The handle is bound to the device's stream; a capture borrows it.
  dnn_->bind(stream);
  try {
    convolve();
  } catch (...) {
    dnn_->bind(stream_);
    throw;
  }
  dnn_->bind(stream_);
}

}  // namespace braze::cuda
