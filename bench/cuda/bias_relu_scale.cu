// Hand-written variants of braze's bias_relu_scale kernel (bench/gpu_fused.py:
// maximum(X + b, 0) * s of [8192, 8192] float32), timed against cudaMemcpy:
// braze's shape (one float4 per thread), grid-stride grids, streaming cache
// hints, several vectors per thread. H200, 2026-11-28: braze's shape 0.989,
// streaming hints 1.00, the rest slower; braze's replay of the same
// computation in gpu_fused.py took 0.139 ms against this shape's 0.130.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o bias_relu_scale bench/cuda/bias_relu_scale.cu && ./bias_relu_scale
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
#include <cuda_runtime.h>
constexpr unsigned N = 8192;
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
__device__ __forceinline__ float mx(float a, float b) { return (a != a) ? a : (a > b ? a : b); }
__device__ __forceinline__ float f(float x, float b, float s) { return mx(x + b, 0.f) * s; }
// A: braze today, one float4 per thread, grid covers all.
__global__ void __launch_bounds__(256) A(const float* __restrict__ X, const float* __restrict__ b, const float* __restrict__ s, float* __restrict__ o) {
  for (unsigned q = blockIdx.x * blockDim.x + threadIdx.x; q < N * N / 4; q += gridDim.x * blockDim.x) {
    unsigned i = q * 4, c = i % N, r = i / N;
    float4 x = *(const float4*)(X + i), bb = *(const float4*)(b + c); float ss = s[r];
    *(float4*)(o + i) = make_float4(f(x.x, bb.x, ss), f(x.y, bb.y, ss), f(x.z, bb.z, ss), f(x.w, bb.w, ss));
  }
}
// S: A with streaming hints (__ldcs X, __stcs out).
__global__ void __launch_bounds__(256) S(const float* __restrict__ X, const float* __restrict__ b, const float* __restrict__ s, float* __restrict__ o) {
  for (unsigned q = blockIdx.x * blockDim.x + threadIdx.x; q < N * N / 4; q += gridDim.x * blockDim.x) {
    unsigned i = q * 4, c = i % N, r = i / N;
    float4 x = __ldcs((const float4*)(X + i)), bb = *(const float4*)(b + c); float ss = s[r];
    __stcs((float4*)(o + i), make_float4(f(x.x, bb.x, ss), f(x.y, bb.y, ss), f(x.z, bb.z, ss), f(x.w, bb.w, ss)));
  }
}
// U: K float4 per thread, loads first (bytes in flight), grid = vectors / K / 256.
template <int K>
__global__ void __launch_bounds__(256) U(const float* __restrict__ X, const float* __restrict__ b, const float* __restrict__ s, float* __restrict__ o) {
  const unsigned base = blockIdx.x * blockDim.x * K + threadIdx.x;
  float4 x[K];
#pragma unroll
  for (int k = 0; k < K; ++k) x[k] = *(const float4*)(X + (base + k * blockDim.x) * 4);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    unsigned i = (base + k * blockDim.x) * 4, c = i % N, r = i / N;
    float4 bb = *(const float4*)(b + c); float ss = s[r];
    *(float4*)(o + i) = make_float4(f(x[k].x, bb.x, ss), f(x[k].y, bb.y, ss), f(x[k].z, bb.z, ss), f(x[k].w, bb.w, ss));
  }
}
// C: the copy with A's shape.
__global__ void __launch_bounds__(256) C(const float* __restrict__ X, float* __restrict__ o) {
  for (unsigned q = blockIdx.x * blockDim.x + threadIdx.x; q < N * N / 4; q += gridDim.x * blockDim.x)
    ((float4*)o)[q] = ((const float4*)X)[q];
}
template <class F> float best(F fn) {
  cudaEvent_t a, e; cudaEventCreate(&a); cudaEventCreate(&e);
  fn(); CK(cudaDeviceSynchronize());
  float bm = 1e9;
  for (int rep = 0; rep < 9; ++rep) {
    cudaEventRecord(a); for (int i = 0; i < 20; ++i) fn(); cudaEventRecord(e); cudaEventSynchronize(e);
    float ms; cudaEventElapsedTime(&ms, a, e); if (ms / 20 < bm) bm = ms / 20;
  }
  CK(cudaGetLastError());
  return bm;
}
int main() {
  size_t n = (size_t)N * N; float *X, *o, *b, *s;
  CK(cudaMalloc(&X, n * 4)); CK(cudaMalloc(&o, n * 4)); CK(cudaMalloc(&b, N * 4)); CK(cudaMalloc(&s, N * 4));
  std::vector<float> h(n); for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761u) % 1000) / 7.f - 70.f;
  CK(cudaMemcpy(X, h.data(), n * 4, cudaMemcpyHostToDevice));
  std::vector<float> hb(N), hs(N); for (unsigned i = 0; i < N; ++i) hb[i] = i % 13 - 6.f, hs[i] = i % 7 - 3.f;
  CK(cudaMemcpy(b, hb.data(), N * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(s, hs.data(), N * 4, cudaMemcpyHostToDevice));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const unsigned all = N * N / 4 / 256;
  float tm = best([&] { cudaMemcpyAsync(o, X, n * 4, cudaMemcpyDeviceToDevice); });
  float tc = best([&] { C<<<all, 256>>>(X, o); });
  printf("memcpy %.4f ms (%.0f GB/s); copy kernel, A's shape: %.4f ms (%.3f)\n", tm, 2.0 * n * 4 / tm / 1e6, tc, tm / tc);
  std::vector<float> ho(n);
  auto check = [&](const char* name, float t) {
    CK(cudaMemcpy(ho.data(), o, n * 4, cudaMemcpyDeviceToHost)); size_t bad = 0;
    for (size_t i = 0; i < n; i += 977) { float x = h[i] + hb[i % N]; float w = (x > 0 ? x : 0) * hs[i / N]; bad += ho[i] != w; }
    printf("%-34s %.4f ms  roofline %.3f  %s\n", name, t, tm / t, bad ? "WRONG" : "ok");
    cudaMemset(o, 0, n * 4);
  };
  check("A: braze today (1 float4/thread)", best([&] { A<<<all, 256>>>(X, b, s, o); }));
  check("A, grid 16 x SMs, grid-stride", best([&] { A<<<sms * 16, 256>>>(X, b, s, o); }));
  check("A, grid 8 x SMs, grid-stride", best([&] { A<<<sms * 8, 256>>>(X, b, s, o); }));
  check("S: streaming hints", best([&] { S<<<all, 256>>>(X, b, s, o); }));
  check("U<2>: 2 float4/thread", best([&] { U<2><<<all / 2, 256>>>(X, b, s, o); }));
  check("U<4>: 4 float4/thread", best([&] { U<4><<<all / 4, 256>>>(X, b, s, o); }));
  check("U<8>: 8 float4/thread", best([&] { U<8><<<all / 8, 256>>>(X, b, s, o); }));
  check("A again", best([&] { A<<<all, 256>>>(X, b, s, o); }));
  return 0;
}
