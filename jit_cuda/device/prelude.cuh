// Device helpers every generated kernel includes (as "braze/prelude.cuh",
// handed to NVRTC from memory: jit_cuda/embedded_headers.h). Self-contained
// on purpose: NVRTC 13 has no built-in cuda_fp16.h, cuda_bf16.h or
// <cstdint> (they need the toolkit's include directory, which a machine with
// only the driver and the NVRTC redistributable lacks), so half and
// bfloat16 are converted with PTX cvt instructions on raw 16-bit storage
// (in host emulation, device/host_emulation.h, by graph/half.h).
#pragma once

namespace bz {

// 16-bit floats in memory: their bits. Math happens in float32.
typedef unsigned short f16_bits;
typedef unsigned short bf16_bits;

template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
template <class T> struct is_flt { static constexpr bool value = same<T, float>::value || same<T, double>::value; };

#if defined(BRAZE_CUDA_EMULATION)  // compiled for the CPU (device/host_emulation.h)
inline float h2f(f16_bits h) { return braze::half_to_float(h); }
inline f16_bits f2h(float f) { return braze::float_to_half(f); }
inline bf16_bits f2b(float f) { return braze::float_to_bf16(f); }
#else
__device__ __forceinline__ float h2f(f16_bits h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ f16_bits f2h(float f) {
  f16_bits h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ bf16_bits f2b(float f) {
  bf16_bits h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));  // sm_80 and later
  return h;
}
#endif
__device__ __forceinline__ float b2f(bf16_bits h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
// A float32 value rounded to what a float16 / bfloat16 value can hold: what
// the reference stores after every op of those dtypes.
__device__ __forceinline__ float rh(float f) { return h2f(f2h(f)); }
__device__ __forceinline__ float rb(float f) { return b2f(f2b(f)); }

// Conversions as graph/array.cpp stores them: to bool is "not zero"; a float
// to an integer goes through int64 (NaN, infinities and |x| >= 2^63 give
// INT64_MIN) and then wraps to the narrower type.
template <class F> __device__ __forceinline__ long long to_int64(F x) {
  if (!(x >= F(-9223372036854775808.0) && x < F(9223372036854775808.0))) return (long long)(1ull << 63);
  return static_cast<long long>(x);
}
template <class To, class From> __device__ __forceinline__ To cv(From x) {
  if constexpr (same<To, bool>::value) return x != From(0);
  else if constexpr (!is_flt<To>::value && is_flt<From>::value) return static_cast<To>(to_int64(x));
  else return static_cast<To>(x);
}

// N elements of T moved as one aligned access (Note [CUDA vector access] in
// jit_cuda/cuda_layout.h): alignas makes NVRTC emit one ld/st.global.v4.b32
// for 16 bytes (v2 for 8, ...). The caller guarantees `p` is aligned to
// sizeof(Vec); host emulation checks it, as a GPU faults on a misaligned
// vector access.
template <class T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };
#if defined(BRAZE_CUDA_EMULATION)
template <class T, int N> inline Vec<T, N> load_vec(const T* p) {
  bz_emu_check_aligned(p, sizeof(Vec<T, N>));
  Vec<T, N> r;
  std::memcpy(&r, p, sizeof r);
  return r;
}
template <class T, int N> inline void store_vec(T* p, const Vec<T, N>& x) {
  bz_emu_check_aligned(p, sizeof(Vec<T, N>));
  std::memcpy(p, &x, sizeof x);
}
#else
template <class T, int N> __device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}
template <class T, int N> __device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& x) {
  *reinterpret_cast<Vec<T, N>*>(p) = x;
}
#endif

// Reductions. Accumulators are float (float16, bfloat16, float32 inputs),
// double (float64) or long long (integers and bool, wrapping as NumPy's).
template <class T> struct Arg { T v; long long i; };  // argmax/argmin: value and position

__device__ __forceinline__ float shfl(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ double shfl(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ long long shfl(long long v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <class T> __device__ __forceinline__ Arg<T> shfl(Arg<T> a, int o) { return {shfl(a.v, o), shfl(a.i, o)}; }

struct SumOp { template <class T> __device__ T operator()(T a, T b) const { return braze::fn::wrap_add(a, b); } };
struct ProdOp { template <class T> __device__ T operator()(T a, T b) const { return braze::fn::wrap_mul(a, b); } };
struct MaxOp { template <class T> __device__ T operator()(T a, T b) const { return braze::fn::Maximum{}(a, b); } };
struct MinOp { template <class T> __device__ T operator()(T a, T b) const { return braze::fn::Minimum{}(a, b); } };
// NaN wins (the first one), then the larger (smaller) value, then the first
// position: the same answer in any combining order, so threads may combine
// their partial results as the shuffle tree pairs them.
template <bool kMax> struct ArgOp {
  template <class T> __device__ Arg<T> operator()(Arg<T> a, Arg<T> b) const {
    bool an = braze::fn::is_nan(a.v), bn = braze::fn::is_nan(b.v);
    if (an != bn) return an ? a : b;
    if (!an && a.v != b.v) return (kMax ? a.v > b.v : a.v < b.v) ? a : b;
    return a.i <= b.i ? a : b;
  }
};

// One value per block from one per thread; every thread gets the result.
// blockDim.x is a multiple of 32; `sh` holds 32 values.
template <class T, class Op> __device__ T block_reduce(T v, Op op, T identity, T* sh) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl(v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x >> 5) ? sh[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, shfl(v, o));
    if (lane == 0) sh[0] = v;
  }
  __syncthreads();
  v = sh[0];
  __syncthreads();  // sh may be written again by the next reduction
  return v;
}

// One value per column of a SplitColumns block (jit_cuda/cuda_source_rows.cpp)
// from the partial values of its threads: thread t holds one of column
// t % columns. They combine pairwise in a fixed tree (blockDim.x and
// `columns` are powers of two), never by atomics, so the result does not
// depend on timing; every thread gets its column's value. `sh` holds
// blockDim.x values.
template <class T, class Op> __device__ T column_reduce(T v, Op op, T* sh, unsigned columns) {
  const unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half >= columns; half /= 2) {
    if (t < half) sh[t] = op(sh[t], sh[t + half]);
    __syncthreads();
  }
  v = sh[t % columns];
  __syncthreads();  // sh may be written again by the next reduction
  return v;
}

}  // namespace bz
