// oneDNN primitives for call descriptions, created once per key and cached
// (Note [oneDNN primitives]).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#ifdef BRAZE_HAVE_OPENMP
#include <omp.h>
#endif

#include "fusion/blas_layout.h"
#include "fusion/library_rules.h"
#include "graph/check.h"
#include "graph/log.h"
#include "graph/lru.h"
#include "jit_cpu/blas_matmul.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/dnn_call.h"
#include "jit_cpu/dnn_packing.h"
#include "jit_cpu/kernel_cache.h"

namespace braze::dnn {

namespace {

using dnnl::memory;
using Dims = memory::dims;

// Note [Small calls on one thread]
// oneDNN runs each call on OpenMP's team, whose threads sleep between
// calls (OMP_WAIT_POLICY=PASSIVE, python/braze/__init__.py); waking them
// costs tens of microseconds on our VMs, more than a small matmul takes on
// one core. A training step of a 64-128-10 MLP (five matmuls of 64 rows)
// took 0.82 ms with a team of two and 0.34 ms with one. So a call of fewer
// than kOneThreadFlops runs with a team of one: set while its primitive is
// created (oneDNN partitions the work for the team it sees then) and
// while it runs. The team size is the calling thread's own setting, so
// threads realizing at once do not disturb each other.
constexpr double kOneThreadFlops = 8e6;

[[maybe_unused]] double flops(const Call& c) {  // used where OpenMP is found
  const double out = static_cast<double>(numel(c.out));
  const Shape& b = c.b.view.shape;
  if (c.op == Op::Conv2d) return 2 * out * static_cast<double>(numel(b)) / static_cast<double>(std::max<int64_t>(b[0], 1));
  return 2 * out * static_cast<double>(c.a.view.shape.back());
}

// The same for a reorder (Note [Convolutions in oneDNN's layouts]) of
// fewer than kOneThreadBytes: a copy that one core does in about the time
// waking a second takes. The CNN of bench/training.py: 10 reorders a step
// of 4 to 260 KB, 40-100 us each with a team of two.
constexpr size_t kOneThreadBytes = 1 << 20;

class TeamFor {
 public:
  explicit TeamFor([[maybe_unused]] const Call& c) : TeamFor(flops(c) < kOneThreadFlops) {}
  explicit TeamFor(bool one) {
#ifdef BRAZE_HAVE_OPENMP
    if (one && omp_get_max_threads() > 1) {
      was_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#endif
  }
  ~TeamFor() {
#ifdef BRAZE_HAVE_OPENMP
    if (was_ > 0) omp_set_num_threads(was_);
#endif
  }
  TeamFor(const TeamFor&) = delete;
  TeamFor& operator=(const TeamFor&) = delete;

 private:
  int was_ = 0;
};

dnnl::engine& cpu_engine() {
  static dnnl::engine e = [] {
    // Note [Owning oneDNN primitives]: braze's cache is their only owner.
    dnnl::set_primitive_cache_capacity(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return e;
}

std::optional<memory::data_type> data_type(DType d) {
  switch (d) {
    case DType::Float32: return memory::data_type::f32;
    case DType::BFloat16: return memory::data_type::bf16;
    case DType::Int8: return memory::data_type::s8;  // Note [Integer matmul]
    case DType::UInt8: return memory::data_type::u8;
    case DType::Int32: return memory::data_type::s32;
    default: return std::nullopt;
  }
}

// Note [Integer matmul] (fusion/passes.h): int8 or uint8 activations times
// int8 weights into int32, a matmul or a convolution, no post-ops, where
// oneDNN sums exactly. "" when the call is one; else why not.
std::string integer_matmul_why_not(const Call& c) {
  const std::string what = c.op == Op::Conv2d ? "convolution" : "matmul";
  if (c.b.dtype != DType::Int8)
    return "oneDNN's integer " + what + " takes int8 weights (the right operand), not " + std::string(name(c.b.dtype));
  if (!c.post.empty()) return "oneDNN's integer " + what + " runs here without post-ops";
  if (!sums_int8_exactly())
    return "oneDNN sums int8 products exactly only with VNNI, and its kernels here are for " + isa();
  return "";
}

// A view as a oneDNN memory descriptor of `rank` axes: leading axes added as
// size 1; an axis of size 1 or stride 0 becomes size 1 (oneDNN broadcasts
// it) when `broadcast` allows, and is refused otherwise.
struct Desc {
  memory::desc md;
  std::string error;
};
Desc strided_desc(const Operand& o, size_t rank, const std::vector<bool>& broadcast) {
  const View& v = o.view;
  Dims dims(rank, 1), strides(rank, 0);
  size_t lead = rank - v.shape.size();
  for (int64_t s : v.strides)
    if (s < 0) return {{}, "an operand is read with a negative stride"};
  // Innermost first, so that a size-1 axis takes the stride a dense layout
  // has there (the extent of the axes inside it): oneDNN matches strides to
  // its formats, and [64, 1, 8, 8] with channel stride 4096 read as bacd, on
  // its reference convolution (100x slower).
  int64_t inner = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = inner;
    if (d < lead) continue;
    int64_t n = v.shape[d - lead], s = v.strides[d - lead];
    if (n == 1 || s == 0) {
      if (n != 1 && !broadcast[d]) return {{}, "an operand is broadcast along a matrix axis"};
      continue;
    }
    dims[d] = n;
    strides[d] = s;
    inner = std::max(inner, n * s);
  }
  return {memory::desc(dims, *data_type(o.dtype), strides), ""};
}

std::vector<bool> batch_axes(size_t rank) {
  std::vector<bool> b(rank, true);
  b[rank - 1] = b[rank - 2] = false;
  return b;
}

dnnl::algorithm eltwise(Activation a) {
  switch (a) {
    case Activation::Relu: return dnnl::algorithm::eltwise_relu;
    case Activation::Gelu: return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::GeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::Silu: return dnnl::algorithm::eltwise_swish;
    case Activation::Sigmoid: return dnnl::algorithm::eltwise_logistic;
    case Activation::Tanh: return dnnl::algorithm::eltwise_tanh;
  }
  return dnnl::algorithm::undef;
}

dnnl::algorithm binary(Op op) {
  switch (op) {
    case Op::Add: return dnnl::algorithm::binary_add;
    case Op::Sub: return dnnl::algorithm::binary_sub;
    case Op::Mul: return dnnl::algorithm::binary_mul;
    case Op::Div: return dnnl::algorithm::binary_div;
    default: BRAZE_ASSERT(false, "no oneDNN binary post-op for ", info(op).name);
  }
  return dnnl::algorithm::undef;
}

}  // namespace

// One cached primitive, or why there is none.
struct Entry {
  std::string error;
  dnnl::primitive primitive;
  std::vector<memory::desc> post_descs;  // per Binary post-op (the bias's not among them)
  // Note [Convolution bias]: the first post-op, an add of one value per
  // channel, read as the convolution's bias.
  std::optional<memory::desc> bias_md;
  memory::desc a_md, b_md, out_md, scratch_md;
  // Note [Packed matmul weights]: the right operand is first copied into
  // the layout the product reads fastest by a cached reorder primitive.
  std::optional<dnnl::reorder> pack;
  memory::desc packed_md;
  // Note [Convolutions in oneDNN's layouts]: the input copied into
  // the primitive's layout before it, its result out of its own after it,
  // both in the scratch memory past oneDNN's scratchpad (at these offsets).
  std::optional<dnnl::reorder> stage_src, unstage_dst;
  memory::desc staged_src_md, staged_dst_md;
  int64_t staged_src_at = 0, staged_dst_at = 0;
  int64_t packed_bytes = 0, scratch_bytes = 0;  // what a run is handed (RunMemory)
  bool blas = false;  // a float64 matmul, run by the BLAS (blas_matmul.h), no primitive
};

namespace {

// Note [Convolution bias]
// conv2d(x, w, b) adds b, one value per output channel, after the call:
// the fusion pass hands it over as the first post-op, a binary add, which
// oneDNN's gemm convolution (the one that reads braze's plain NCHW layout)
// applies on a slow path: [360, 1, 8, 8] x [16, 1, 3, 3] took 15-23 ms with
// it and 0.3-0.6 ms without. oneDNN's convolutions take a bias argument of
// their own, which every implementation adds as it stores, so that first
// add becomes the bias where its operand is one contiguous value per
// channel in the convolution's type. Its other post-ops are slow there as
// well (the same convolution with a multiply by 2.0: 2.4 ms, 0.67 as the
// call and a kernel; with a residual add: 17 ms, 1.2), so the CPU's rules
// give a convolution only that bias and activations (cpu_refuse,
// fusion/library_rules.cpp), and the rest is a kernel after it. Matmuls
// keep every post-op: their kernels apply them at full speed. (Measured on
// the gemm convolution, which float convolutions no longer take: Note
// [Convolutions in oneDNN's layouts]. The bias argument stays the fast way
// in every implementation; the other post-ops were not measured again.)
bool conv_bias(const Call& c) {
  if (c.op != Op::Conv2d || c.post.empty() || !is_float(c.dtype)) return false;
  const CallPostOp& p = c.post[0];
  return p.kind == PostOp::Kind::Binary && p.op == Op::Add && p.addend.dtype == c.dtype &&
         is_channel_bias(p.addend.view, c.out);
}

// Note [Convolutions in oneDNN's layouts]
// oneDNN's fast convolutions (brgconv and its direct JIT ones, with VNNI
// for int8) read and write channels blocked or innermost (nChw16c, nhwc)
// and read their weights blocked. Handed braze's NCHW layouts as they are,
// oneDNN picks slower implementations: its reference one for int8, 1.26 s
// for [8, 32, 28, 28] (uint8) x [64, 32, 3, 3] (int8), where float32 took
// 1.7 ms; its gemm convolution (im2col, then sgemm) for floats. So a
// convolution leaves the layouts to oneDNN (format_tag::any) and copies by
// reorder primitives: the input into scratch memory before the call, the
// result out of it after, the weights packed as a matmul's are (kept
// across runs where they are a program input, Note [Kept packed weights]).
// The int8 convolution above: 1.0 ms, of it 0.27 the convolution, 0.12 the
// input's reorder and 0.53 the result's (int32 nhwc to nchw). float32,
// against the gemm convolution, with bias and relu (bench/library_calls.py's
// bench_convolutions, braze's ms, two threads): [8, 64, 56, 56] x [64, 64, 3, 3] 16.9
// -> 10.3, [32, 32, 32, 32] x [64, 32, 3, 3] 14.4 -> 6.8, [8, 3, 224, 224]
// x [64, 3, 7, 7] stride 2 32.8 -> 12.9, [64, 1, 8, 8] x [16, 1, 3, 3]
// 0.125 -> 0.078; bench/training.py's CNN step 3.3 -> 2.3 ms. Every shape
// tried was faster, the 1x1 convolutions least (2.4 -> 1.7 ms).
void create(const Call& c, Entry& e) {
  if (c.op == Op::MatMul && cpu_blas_matmul(c.dtype, c.out)) {
    e.error = blas_why_not(c);
    e.blas = e.error.empty();
    return;
  }
  if (c.dtype == DType::Int32 && c.a.dtype != DType::Int32) {
    if (e.error = integer_matmul_why_not(c); !e.error.empty()) return;
  } else if (!is_float(c.dtype) || !data_type(c.dtype) || c.a.dtype != c.dtype || c.b.dtype != c.dtype) {
    e.error = "oneDNN runs float32 and bfloat16 here, not " + std::string(name(c.a.dtype)) + " x " +
              std::string(name(c.b.dtype)) + " -> " + std::string(name(c.dtype));
    return;
  }
  if (c.dtype == DType::BFloat16 && !runs_bfloat16()) {
    e.error = "oneDNN 2.6 runs bfloat16 only with AVX-512 (avx512_core), and its kernels here are for " + isa();
    return;
  }
  if (numel(c.a.view.shape) == 0 || numel(c.b.view.shape) == 0 || numel(c.out) == 0) {
    // oneDNN leaves the result of an empty sum (K = 0) unwritten; the
    // reference writes its zeros and applies the epilogue to them.
    e.error = "an operand or the result is empty";
    return;
  }
  const size_t rank = c.out.size();
  const bool conv = c.op == Op::Conv2d;
  Desc a = strided_desc(c.a, rank, conv ? std::vector<bool>(rank, false) : batch_axes(rank));
  Desc b{};
  if (conv && c.attr[6] > 1) {
    // Grouped weights [OC, IC/G, KH, KW] read as oneDNN's [G, OC/G, IC/G, KH, KW].
    const View& w = c.b.view;
    int64_t g = c.attr[6];
    Dims dims{g, w.shape[0] / g, w.shape[1], w.shape[2], w.shape[3]};
    Dims strides{w.strides[0] * (w.shape[0] / g), w.strides[0], w.strides[1], w.strides[2], w.strides[3]};
    bool negative = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; });
    b = negative ? Desc{{}, "an operand is read with a negative stride"}
                 : Desc{memory::desc(dims, *data_type(c.b.dtype), strides), ""};
  } else {
    b = strided_desc(c.b, rank, conv ? std::vector<bool>(rank, false) : batch_axes(rank));
  }
  if (!a.error.empty() || !b.error.empty()) {
    e.error = a.error.empty() ? b.error : a.error;
    return;
  }
  e.a_md = a.md;
  e.b_md = b.md;
  Strides dense = contiguous_strides(c.out);
  e.out_md = memory::desc(Dims(c.out.begin(), c.out.end()), *data_type(c.dtype), Dims(dense.begin(), dense.end()));
  dnnl::post_ops ops;
  if (conv_bias(c)) e.bias_md = memory::desc({c.out[1]}, *data_type(c.dtype), memory::format_tag::a);
  for (const CallPostOp& p : std::span(c.post).subspan(e.bias_md ? 1 : 0)) {
    if (p.kind == PostOp::Kind::Activation) {
      ops.append_eltwise(1.0f, eltwise(p.activation), p.activation == Activation::Silu ? 1.0f : 0.0f, 0.0f);
      continue;
    }
    if (p.kind == PostOp::Kind::Linear) {
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, static_cast<float>(p.alpha),
                         static_cast<float>(p.beta));
      continue;
    }
    // A 0-d operand (a scalar parameter) is all size-1 axes: oneDNN's
    // per-tensor broadcast, read from memory at each run.
    Desc d = strided_desc(p.addend, rank, std::vector<bool>(rank, true));
    if (!d.error.empty()) {
      e.error = d.error;
      return;
    }
    ops.append_binary(binary(p.op), d.md);
    e.post_descs.push_back(d.md);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    memory::desc& scratch_md = e.scratch_md;
    if (conv) {
      const std::vector<int64_t>& p = c.attr;
      const Shape& x = c.a.view.shape;
      const Shape& w = c.b.view.shape;
      Dims padding_r(2);
      for (int k = 0; k < 2; ++k)  // what makes oneDNN's output size equal ours (floor division)
        padding_r[k] = (c.out[2 + k] - 1) * p[k] + (w[2 + k] - 1) * p[4 + k] + 1 - x[2 + k] - p[2 + k];
      // Note [Convolutions in oneDNN's layouts]
      auto any = [](const memory::desc& md) { return memory::desc(md.dims(), md.data_type(), memory::format_tag::any); };
      dnnl::convolution_forward::desc d =
          e.bias_md ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::convolution_direct, any(e.a_md), any(e.b_md),
                                                      *e.bias_md, any(e.out_md), {p[0], p[1]}, {p[4] - 1, p[5] - 1},
                                                      {p[2], p[3]}, padding_r)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::convolution_direct, any(e.a_md), any(e.b_md),
                                                      any(e.out_md), {p[0], p[1]}, {p[4] - 1, p[5] - 1}, {p[2], p[3]},
                                                      padding_r);
      dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
      e.primitive = dnnl::convolution_forward(pd);
      scratch_md = pd.scratchpad_desc();
      int64_t at = (static_cast<int64_t>(scratch_md.get_size()) + 63) / 64 * 64;
      if (pd.src_desc() != e.a_md) {
        e.staged_src_md = pd.src_desc();
        e.stage_src = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.a_md, cpu_engine(), e.staged_src_md));
        e.staged_src_at = at;
        at += (static_cast<int64_t>(e.staged_src_md.get_size()) + 63) / 64 * 64;
      }
      if (pd.dst_desc() != e.out_md) {
        e.staged_dst_md = pd.dst_desc();
        e.unstage_dst = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.staged_dst_md, cpu_engine(), e.out_md));
        e.staged_dst_at = at;
        at += static_cast<int64_t>(e.staged_dst_md.get_size());
      }
      if (pd.weights_desc() != e.b_md) {
        e.packed_md = pd.weights_desc();
        e.pack = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.b_md, cpu_engine(), e.packed_md));
        e.packed_bytes = static_cast<int64_t>(e.packed_md.get_size());
      }
      e.scratch_bytes = at;
      return;
    } else {
      // Note [Packed matmul weights]
      memory::desc weights = e.b_md;
      if (std::optional<memory::desc> packed = packed_layout(c, e.a_md, e.b_md, e.out_md, attr, cpu_engine())) {
        weights = *packed;
        e.pack = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.b_md, cpu_engine(), weights));
        e.packed_md = weights;
        e.packed_bytes = static_cast<int64_t>(weights.get_size());
      }
      dnnl::matmul::desc d(e.a_md, weights, e.out_md);
      dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
      e.primitive = dnnl::matmul(pd);
      scratch_md = pd.scratchpad_desc();
    }
    e.scratch_bytes = static_cast<int64_t>(scratch_md.get_size());
  } catch (const dnnl::error& err) {
    e.error = std::string("oneDNN has no implementation for it on this CPU (") + err.what() + ")";
  }
}

// Bounded in bytes like the kernel cache (Note [Owning oneDNN primitives]).
class PrimitiveCache {
 public:
  static PrimitiveCache& get() {
    static PrimitiveCache cache(jit::kernel_cache_limit_from_env());
    return cache;
  }
  explicit PrimitiveCache(int64_t limit) : limit_(limit) {}

  // The entry for `c`, created on first use; `created` says whether now,
  // `evicted` how many entries its creation dropped.
  std::shared_ptr<const Entry> find_or_create(const Call& c, bool* created, int64_t* evicted) {
    std::string key = key_text(c);
    std::vector<std::shared_ptr<const Entry>> dropped;  // released after the lock
    std::lock_guard lock(mutex_);
    if (std::shared_ptr<const Entry>* found = map_.find(key)) {
      BRAZE_LOG(Debug, "oneDNN ", key, ": primitive cache hit");
      return *found;
    }
    auto e = std::make_shared<Entry>();
    {
      TeamFor team(c);  // Note [Small calls on one thread]
      create(c, *e);
    }
    if (e->error.empty())
      BRAZE_LOG(Info, "oneDNN ", key, ": primitive created", e->pack ? " (right operand packed)" : "", ", ",
                e->scratch_bytes, " scratchpad bytes");
    else
      BRAZE_LOG(Info, "oneDNN ", key, ": runs on the reference interpreter because ", e->error);
    map_.insert(key, e, static_cast<int64_t>(key.size()) + memory_bytes(*e));
    dropped = map_.evict(limit_, 1);  // the newest stays: its caller runs it now
    *created = true;
    *evicted = static_cast<int64_t>(dropped.size());
    return e;
  }

  CacheFigures figures() {
    std::lock_guard lock(mutex_);
    return {map_.size(), map_.bytes(), limit_};
  }

  void clear() {
    std::vector<std::shared_ptr<const Entry>> dropped;
    std::lock_guard lock(mutex_);
    dropped = map_.clear();
  }

 private:
  std::mutex mutex_;
  LruMap<std::shared_ptr<const Entry>> map_;
  const int64_t limit_;
};

void* address(const Array& a, const Operand& o) {
  return a.data.get() + o.view.offset * static_cast<int64_t>(itemsize(o.dtype));
}

}  // namespace

// Note [Owning oneDNN primitives]: measured on a 2-core EPYC (oneDNN 2.6.3,
// avx512_core) as the resident set's growth over 200 matmul primitives
// kept (a fixed mmap threshold, so that freed blocks do not blur it):
// 28 to 38 KB each for [M, 64] @ [64, 128] with M below 300, 62 KB with M
// from 1,000 to 2,200 (a packing reorder beside each); rounded up.
int64_t memory_bytes(const Entry& e) {
  constexpr int64_t kPrimitiveBytes = 64 << 10, kReorderBytes = 32 << 10, kRefusedBytes = 512;
  if (!e.error.empty()) return kRefusedBytes + static_cast<int64_t>(e.error.size());
  return kPrimitiveBytes + kReorderBytes * ((e.pack ? 1 : 0) + (e.stage_src ? 1 : 0) + (e.unstage_dst ? 1 : 0));
}

CacheFigures cache_figures() { return PrimitiveCache::get().figures(); }

void clear_cache() { PrimitiveCache::get().clear(); }

Prepared prepare(const Graph& g, const FusedGroup& group) {
  Prepared p;
  p.entry = PrimitiveCache::get().find_or_create(describe_call(g, group), &p.created, &p.evicted);
  p.why_not = p.entry->error;
  p.packed_bytes = p.entry->packed_bytes;
  p.scratch_bytes = p.entry->scratch_bytes;
  return p;
}

void run(const Prepared& p, const Graph& g, const FusedGroup& group,
         const std::function<const Array&(NodeId)>& buffer, Array& out, const RunMemory& mem) {
  BRAZE_ASSERT(p.entry && p.why_not.empty(), "dnn::run on a call oneDNN refused: ", p.why_not);
  const Entry& e = *p.entry;
  BRAZE_ASSERT((e.packed_bytes == 0 || mem.packed) && (e.scratch_bytes == 0 || mem.scratch),
               "dnn::run: no memory for ", e.packed_bytes, " packed and ", e.scratch_bytes, " scratchpad bytes");
  Call c = describe_call(g, group);
  TeamFor team(c);  // Note [Small calls on one thread]
  if (e.blas) {
    blas_matmul(c, buffer(c.a.base), buffer(c.b.base), out);
    return;
  }
  dnnl::engine& eng = cpu_engine();
  memory src(e.a_md, eng, address(buffer(c.a.base), c.a)), dst(e.out_md, eng, out.data.get());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, e.stage_src ? memory(e.staged_src_md, eng, mem.scratch + e.staged_src_at) : src},
      {DNNL_ARG_WEIGHTS, e.pack ? memory(e.packed_md, eng, mem.packed)
                               : memory(e.b_md, eng, address(buffer(c.b.base), c.b))},
      {DNNL_ARG_DST, e.unstage_dst ? memory(e.staged_dst_md, eng, mem.scratch + e.staged_dst_at) : dst},
  };
  // Note [Convolution bias]: the first post-op is the bias, not among oneDNN's.
  const size_t first = e.bias_md ? 1 : 0;
  if (e.bias_md) args.emplace(DNNL_ARG_BIAS, memory(*e.bias_md, eng, address(buffer(c.post[0].addend.base), c.post[0].addend)));
  int k = 0;
  for (size_t i = first; i < c.post.size(); ++i) {
    if (c.post[i].kind != PostOp::Kind::Binary) continue;
    const Operand& o = c.post[i].addend;
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i - first)) | DNNL_ARG_SRC_1,
                 memory(e.post_descs[k++], eng, address(buffer(o.base), o)));
  }
  if (e.scratch_md.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, memory(e.scratch_md, eng, mem.scratch));
  dnnl::stream s(eng);
  auto copy = [&](const dnnl::reorder& r, const memory& from, const memory& to) {
    TeamFor team(to.get_desc().get_size() < kOneThreadBytes);
    r.execute(s, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  };
  if (e.pack && mem.pack) copy(*e.pack, memory(e.b_md, eng, address(buffer(c.b.base), c.b)), args.at(DNNL_ARG_WEIGHTS));
  if (e.stage_src) copy(*e.stage_src, src, args.at(DNNL_ARG_SRC));
  e.primitive.execute(s, args);
  if (e.unstage_dst) copy(*e.unstage_dst, args.at(DNNL_ARG_DST), dst);
  s.wait();
}

}  // namespace braze::dnn
