// Loads and stores of wide kernels (Note [Wide kernels] in lanes.h): float64
// as it is, float32 and int32 widened exactly on load (float32 rounded on
// store), bools as 64-bit masks; tails under k1 (AVX-512) or vmaskmov
// (AVX2), strided inputs by gathers.
#include <array>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

namespace {
constexpr uint64_t kByteLanes = 0x0101010101010101ull;  // pdep: bit i to byte i
}  // namespace

// dst (float64) = dst (int64 lanes), rounded once as a C cast rounds.
// AVX-512 has vcvtqq2pd; AVX2 adds the high 48 bits, made exact in a
// float64 biased by 3 2^67, to the low 16 in one biased by 2^52.
template <class Vmm>
void RowKernelGen<Vmm>::int64_to_f64(const Vmm& dst) {
  if constexpr (kZmm) {
    vcvtqq2pd(dst, dst);
  } else {
    vpsrad(scratch(0), dst, 16);
    vpxor(scratch(1), scratch(1), scratch(1));
    vpblendw(scratch(0), scratch(0), scratch(1), 0x33);  // x >> 48 (arithmetic), as int64
    vpaddq(scratch(0), scratch(0), k_.f64(0x3p67));
    vpblendw(dst, dst, k_.f64(0x1p52), 0x88);           // 2^52 + the low 48 bits
    vsubpd(scratch(0), scratch(0), k_.f64(0x3p67 + 0x1p52));
    vaddpd(dst, scratch(0), dst);
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::load_wide(int32_t k, const Vmm& dst, bool tail) {
  const KernelInput& in = s_.inputs[k];
  input_base(k);
  if (p_.inputs[k].inner_stride != 1) return gather_wide(k, dst, tail);
  const int size = static_cast<int>(itemsize(in.dtype));
  Xbyak::Address at = ptr[rax + r8 * size];
  const Half h(dst.getIdx());
  switch (in.dtype) {
    case DType::Float64:
    case DType::Int64:
      if (!tail) vmovupd(dst, at);
      else if constexpr (kZmm) vmovupd(dst | k1 | T_z, at);
      else {
        vmovupd(scratch(4), tail_mask());
        vmaskmovpd(dst, scratch(4), at);
      }
      if (in.dtype == DType::Int64) int64_to_f64(dst);
      return;
    case DType::Float32:
    case DType::Int32:  // into half a register, then widened
      if (!tail) vmovups(h, at);
      else if constexpr (kZmm) vmovups(h | k1 | T_z, at);
      else {
        vmovups(Half(4), tail_mask(4));
        vmaskmovps(h, Half(4), at);
      }
      if (in.dtype == DType::Float32) vcvtps2pd(dst, h);
      else vcvtdq2pd(dst, h);
      return;
    case DType::Bool:
      if (tail && !kZmm) {
        bounce_in(1);
        at = ptr[rsp + kBounce];
        tail = false;
      }
      if constexpr (kZmm) {
        if (tail) vpmovzxbq(dst | k1 | T_z, at);
        else vpmovzxbq(dst, at);
      } else {
        vpmovzxbq(dst, at);
      }
      vxorpd(scratch(4), scratch(4), scratch(4));
      vpsubq(dst, scratch(4), dst);  // 0 or 1 -> 0 or all ones
      return;
    default: break;
  }
  throw Unsupported("loads of " + std::string(name(in.dtype)) + " in float64 kernels");
}

// Input k along a row that is not unit-stride: a gather of its lanes
// (bools copied one by one through the bounce area).
template <class Vmm>
void RowKernelGen<Vmm>::gather_wide(int32_t k, const Vmm& dst, bool tail) {
  const KernelInput& in = s_.inputs[k];
  const int64_t stride = p_.inputs[k].inner_stride;
  const int size = static_cast<int>(itemsize(in.dtype));
  imul(r9, r8, static_cast<int>(stride * size));
  add(rax, r9);
  if (in.dtype == DType::Bool) {
    bounce_strided(1, stride, tail ? static_cast<int>(width_ % V) : V);
    vpmovzxbq(dst, ptr[rsp + kBounce]);
    vxorpd(scratch(4), scratch(4), scratch(4));
    vpsubq(dst, scratch(4), dst);
    return;
  }
  std::array<uint32_t, 16> lanes{};
  for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
  vmovups(scratch(3), k_.lanes(lanes));
  const Half idx(3), h(dst.getIdx());
  const bool f64 = in.dtype == DType::Float64 || in.dtype == DType::Int64;  // 64-bit elements
  vxorps(dst, dst, dst);
  if constexpr (kZmm) {
    if (tail) kmovw(k3, k1);
    else kxnorw(k3, k3, k3);
    if (f64) vgatherdpd(dst | k3, ptr[rax + idx * 8]);
    else vgatherdps(h | k3, ptr[rax + idx * 4]);
  } else {
    if (f64) {
      if (tail) vmovups(scratch(4), tail_mask());
      else vpcmpeqd(scratch(4), scratch(4), scratch(4));
      vgatherdpd(dst, ptr[rax + idx * 8], scratch(4));
    } else {
      if (tail) vmovups(Half(4), tail_mask(4));
      else vpcmpeqd(Half(4), Half(4), Half(4));
      vgatherdps(h, ptr[rax + idx * 4], Half(4));
    }
  }
  if (in.dtype == DType::Int64) int64_to_f64(dst);
  if (f64) return;
  if (in.dtype == DType::Float32) vcvtps2pd(dst, h);
  else vcvtdq2pd(dst, h);
}

template <class Vmm>
void RowKernelGen<Vmm>::load_constant_wide(int32_t k, const Vmm& dst) {
  const KernelInput& in = s_.inputs[k];
  const Xbyak::Xmm x0(0);
  if (in.kind == KernelInput::Kind::Scalar) {  // its 64-bit lane (LaunchArgs)
    mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
    vbroadcastsd(dst, qword[r10 + 32 * k + 16]);
    return;
  }
  input_base(k);
  switch (in.dtype) {
    case DType::Float64: vbroadcastsd(dst, qword[rax]); return;
    case DType::Float32:
      vcvtss2sd(x0, x0, dword[rax]);
      vbroadcastsd(dst, x0);
      return;
    case DType::Int32:
      vcvtsi2sd(x0, x0, dword[rax]);
      vbroadcastsd(dst, x0);
      return;
    case DType::Int64:
      vcvtsi2sd(x0, x0, qword[rax]);
      vbroadcastsd(dst, x0);
      return;
    case DType::Bool:
      movzx(r9d, byte[rax]);
      neg(r9);
      vmovq(x0, r9);
      vpbroadcastq(dst, x0);
      return;
    default: break;
  }
  throw Unsupported("loads of " + std::string(name(in.dtype)) + " in float64 kernels");
}

template <class Vmm>
void RowKernelGen<Vmm>::store_wide(size_t k, const Vmm& x, bool tail) {
  const KernelOutput& o = s_.outputs[k];
  const int size = static_cast<int>(itemsize(o.dtype));
  output_base(k);
  const Xbyak::Address at = ptr[rax + r8 * size];
  switch (o.dtype) {
    case DType::Float64:
      if (!tail) {
        if (stream_) vmovntpd(at, x);
        else vmovupd(at, x);
      } else if constexpr (kZmm) {
        vmovupd(at | k1, x);
      } else {
        vmovupd(scratch(4), tail_mask());
        vmaskmovpd(at, scratch(4), x);
      }
      return;
    case DType::Float32:
      vcvtpd2ps(Half(0), x);
      if (!tail) vmovups(at, Half(0));
      else if constexpr (kZmm) vmovups(at | k1, Half(0));
      else {
        vmovups(Half(4), tail_mask(4));
        vmaskmovps(at, Half(4), Half(0));
      }
      return;
    case DType::Bool:  // a bit per lane, then a byte per bit
      if constexpr (kZmm) {
        vpmovq2m(k2, x);
        kmovb(r9d, k2);
      } else {
        vmovmskpd(r9d, x);
      }
      mov(r10, kByteLanes);
      pdep(r9, r9, r10);
      if (!tail) {
        if (V == 8) mov(qword[rax + r8], r9);
        else mov(dword[rax + r8], r9d);
        return;
      }
      for (int i = 0; i < width_ % V; ++i) {
        mov(byte[rax + r8 + i], r9b);
        shr(r9, 8);
      }
      return;
    default: break;
  }
  throw Unsupported("stores of " + std::string(name(o.dtype)) + " in float64 kernels");
}

template <class Vmm>
void RowKernelGen<Vmm>::store_scalar_wide(size_t k, const Vmm& x) {
  const KernelOutput& o = s_.outputs[k];
  mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
  const Xbyak::Xmm x0(0), xv(x.getIdx());
  switch (o.dtype) {
    case DType::Float64: vmovsd(qword[rax], xv); return;
    case DType::Float32:
      vcvtsd2ss(x0, xv, xv);
      vmovss(dword[rax], x0);
      return;
    case DType::Bool:
      vmovq(r9, xv);
      shr(r9, 63);
      mov(byte[rax], r9b);
      return;
    default: break;
  }
  throw Unsupported("stores of " + std::string(name(o.dtype)) + " in float64 kernels");
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
