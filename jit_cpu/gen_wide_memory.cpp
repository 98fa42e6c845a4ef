// Loads and stores of wide kernels (Note [Wide kernels] in lanes.h): float64
// and int64 as they are, float32, float16 and bfloat16 widened exactly on
// load (rounded on store, through float32 as the reference rounds), the
// narrower integers sign- or zero-extended on load (narrowed on store), bools
// as 64-bit masks; tails under k1 (AVX-512) or vmaskmov or the bounce area
// (AVX2), strided inputs by gathers (every other element by two loads),
// aranges computed.
#include <array>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

namespace {
constexpr uint64_t kByteLanes = 0x0101010101010101ull;  // pdep: bit i to byte i
}  // namespace

template <class Vmm>
void RowKernelGen<Vmm>::load_wide(int32_t k, const Vmm& dst, bool tail) {
  const KernelInput& in = s_.inputs[k];
  if (in.kind == KernelInput::Kind::Window) return window_lanes(k, dst);
  input_base(k);
  if (in.kind == KernelInput::Kind::Arange) return arange_wide(k, dst);
  if (p_.inputs[k].inner_stride != 1) return gather_wide(k, dst, tail);
  const int size = static_cast<int>(itemsize(in.dtype));
  load_wide_at(in.dtype, dst, ptr[rax + r8 * size], tail);
}

// dst = the vector of dtype t's elements at `at`, widened to 64-bit lanes.
template <class Vmm>
void RowKernelGen<Vmm>::load_wide_at(DType t, const Vmm& dst, Xbyak::Address at, bool tail) {
  const int size = static_cast<int>(itemsize(t));
  const Half h(dst.getIdx());
  switch (t) {
    case DType::Float64:
    case DType::Int64:
      if (!tail) vmovupd(dst, at);
      else if constexpr (kZmm) vmovupd(dst | k1 | T_z, at);
      else {
        vmovupd(scratch(4), tail_mask());
        vmaskmovpd(dst, scratch(4), at);
      }
      return;
    case DType::Float32:
    case DType::Int32:  // into half a register, then widened
    case DType::UInt32:
      if (!tail) vmovups(h, at);
      else if constexpr (kZmm) vmovups(h | k1 | T_z, at);
      else {
        vmovups(Half(4), tail_mask(4));
        vmaskmovps(h, Half(4), at);
      }
      widen_dwords(dst, t);
      return;
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Float16:
    case DType::BFloat16:
      if (tail && !kZmm) {
        bounce_in(size);
        at = ptr[rsp + kBounce];
        tail = false;
      }
      widen_small(dst, at, t, tail);
      return;
    default: break;
  }
  throw Unsupported("loads of " + std::string(name(t)) + " in wide kernels");
}

// dst = the V elements of 8 or 16 bits at `at` (t: bool, int8, uint8,
// int16, uint16, float16 or bfloat16) in 64-bit lanes, the lanes past a tail zero
// (AVX-512; AVX2 tails come from the bounce area).
template <class Vmm>
void RowKernelGen<Vmm>::widen_small(const Vmm& dst, const Xbyak::Address& at, DType t, bool tail) {
  const Half h(dst.getIdx());
  auto masked = [&](const auto& r) {
    if constexpr (kZmm) {
      if (tail) return r | k1 | T_z;
    }
    return r;
  };
  switch (t) {
    case DType::Int8: vpmovsxbq(masked(dst), at); return;
    case DType::UInt8: vpmovzxbq(masked(dst), at); return;
    case DType::Int16: vpmovsxwq(masked(dst), at); return;
    case DType::UInt16: vpmovzxwq(masked(dst), at); return;
    case DType::Bool:
      vpmovzxbq(masked(dst), at);
      vxorpd(scratch(4), scratch(4), scratch(4));
      vpsubq(dst, scratch(4), dst);  // 0 or 1 -> 0 or all ones
      return;
    case DType::Float16:  // exact in float32, then in float64
      vcvtph2ps(masked(h), at);
      vcvtps2pd(dst, h);
      return;
    case DType::BFloat16:  // the high half of a float32
      vpmovzxwd(masked(h), at);
      vpslld(h, h, 16);
      vcvtps2pd(dst, h);
      return;
    default: break;
  }
  throw Unsupported("loads of " + std::string(name(t)) + " in wide kernels");
}

// An arange's element, start + i * step with i the element's index (rax
// at the row's start, then r8 along it): for an integer arange in int64
// arithmetic, which wraps as the reference's, then wrapped to its dtype;
// for a float one in float64, as the reference computes it (no fused
// multiply-add), then rounded to its dtype.
template <class Vmm>
void RowKernelGen<Vmm>::arange_wide(int32_t k, const Vmm& dst) {
  const int64_t stride = p_.inputs[k].inner_stride;
  const Xbyak::Xmm x0(0);
  imul(r9, r8, static_cast<int>(stride));
  add(rax, r9);
  vmovq(x0, rax);
  vpbroadcastq(dst, x0);
  std::array<uint32_t, 16> lanes{};
  for (int i = 0; i < 8; ++i) {
    const auto offset = static_cast<uint64_t>(i * stride);
    lanes[2 * i] = static_cast<uint32_t>(offset);
    lanes[2 * i + 1] = static_cast<uint32_t>(offset >> 32);
  }
  vpaddq(dst, dst, k_.lanes(lanes));
  mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
  if (is_float(s_.inputs[k].dtype)) {  // start + double(i) * step, then rounded to its dtype
    longs_.to_f64(dst, dst, scratch(0), scratch(1));
    vbroadcastsd(scratch(2), qword[r10 + 32 * k + 24]);
    vmulpd(dst, dst, scratch(2));
    vbroadcastsd(scratch(2), qword[r10 + 32 * k + 16]);
    vaddpd(dst, dst, scratch(2));
    convert_wide(dst, dst, DType::Float64, s_.inputs[k].dtype);
    return;
  }
  vpbroadcastq(scratch(2), qword[r10 + 32 * k + 24]);
  ints_.mul(dst, dst, scratch(2), scratch(0), scratch(1), Width::k64);
  vpbroadcastq(scratch(2), qword[r10 + 32 * k + 16]);
  vpaddq(dst, dst, scratch(2));
  longs_.wrap(dst, dst, DType::Int64, s_.inputs[k].dtype, scratch(0));
}

// Input k along a row that is not unit-stride: a gather of its lanes
// (8- and 16-bit elements copied one by one through the bounce area).
template <class Vmm>
void RowKernelGen<Vmm>::gather_wide(int32_t k, const Vmm& dst, bool tail) {
  const KernelInput& in = s_.inputs[k];
  const int64_t stride = p_.inputs[k].inner_stride;
  const int size = static_cast<int>(itemsize(in.dtype));
  imul(r9, r8, static_cast<int>(stride * size));
  add(rax, r9);
  if (size < 4) {  // copied one by one: no gathers of 8- and 16-bit elements
    bounce_strided(size, stride * size, tail ? static_cast<int>(width_ % V) : V);
    widen_small(dst, ptr[rsp + kBounce], in.dtype, false);
    return;
  }
  const bool f64 = size == 8;  // 64-bit elements
  if (stride == 2 && !tail) {  // Note [Every other element]
    load_every_other_wide(dst, f64);
    if (!f64) widen_dwords(dst, in.dtype);
    return;
  }
  std::array<uint32_t, 16> lanes{};
  for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
  vmovups(scratch(3), k_.lanes(lanes));
  const Half idx(3), h(dst.getIdx());
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
  if (!f64) widen_dwords(dst, in.dtype);
}

// Note [Every other element] (gen_memory.cpp) in wide kernels: rax at a
// row's element r8, the V even elements of the 2V - 1 from there, read by
// two loads (the second ending on the last of them) and one permute. The
// 64-bit elements fill dst; 32-bit ones its low half, to be widened. A
// gather of 8 float64 lanes cost 5.9x NumPy's strided loop on Zen 4
// (isnan(x[:, ::2]) of [1024, 2048]: 1.39 ms, NumPy 0.24).
template <class Vmm>
void RowKernelGen<Vmm>::load_every_other_wide(const Vmm& dst, bool f64) {
  std::array<uint32_t, 16> pick{};  // low's lanes 0, 2, .. then high's 1, 3, ..: V of them
  for (int i = 0; i < V; ++i) pick[f64 ? 2 * i : i] = i < V / 2 ? 2 * i : V + 2 * (i - V / 2) + 1;
  if (f64) {
    const Vmm low = scratch(3), high = scratch(4);
    vmovupd(low, ptr[rax]);                 // elements 0 .. V - 1
    vmovupd(high, ptr[rax + (V - 1) * 8]);  // V - 1 .. 2V - 2
    if constexpr (kZmm) {
      vmovups(dst, k_.lanes(pick));
      vpermi2pd(dst, low, high);
    } else {
      vshufpd(dst, low, high, 0b1010);  // per 128-bit lane: low's even element, high's odd one
      vpermpd(dst, dst, 0xd8);          // the pairs in order
    }
    return;
  }
  const Half low(3), high(4), h(dst.getIdx());
  vmovups(low, ptr[rax]);
  vmovups(high, ptr[rax + (V - 1) * 4]);
  if constexpr (kZmm) {
    vmovups(h, k_.lanes(pick));
    vpermi2ps(h, low, high);
  } else {
    vshufps(h, low, high, 0xd8);  // one 128-bit lane: low's 0, 2 and high's 1, 3
  }
}

// dst = the V 32-bit elements of dtype t in the low half of dst, widened
// to 64-bit lanes: float32 exactly to float64, int32 sign-extended, uint32
// zero-extended.
template <class Vmm>
void RowKernelGen<Vmm>::widen_dwords(const Vmm& dst, DType t) {
  const Half h(dst.getIdx());
  if (t == DType::Float32) vcvtps2pd(dst, h);
  else if (t == DType::UInt32) vpmovzxdq(dst, h);
  else vpmovsxdq(dst, h);
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
  auto broadcast_r9 = [&] {
    vmovq(x0, r9);
    vpbroadcastq(dst, x0);
  };
  if (in.kind == KernelInput::Kind::Arange && is_float(in.dtype)) {  // as arange_wide's
    mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
    vcvtsi2sd(x0, x0, rax);
    vmulsd(x0, x0, qword[r10 + 32 * k + 24]);
    vaddsd(x0, x0, qword[r10 + 32 * k + 16]);
    vbroadcastsd(dst, x0);
    convert_wide(dst, dst, DType::Float64, in.dtype);
    return;
  }
  if (in.kind == KernelInput::Kind::Arange) {  // start + i * step, i the row's index (rax)
    mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
    mov(r9, rax);
    imul(r9, qword[r10 + 32 * k + 24]);
    add(r9, qword[r10 + 32 * k + 16]);
    broadcast_r9();
    longs_.wrap(dst, dst, DType::Int64, in.dtype, scratch(0));
    return;
  }
  switch (in.dtype) {
    case DType::Float64:
    case DType::Int64: vbroadcastsd(dst, qword[rax]); return;
    case DType::Float32:
      vcvtss2sd(x0, x0, dword[rax]);
      vbroadcastsd(dst, x0);
      return;
    case DType::Int32:
      movsxd(r9, dword[rax]);
      return broadcast_r9();
    case DType::UInt32:
      mov(r9d, dword[rax]);  // zero-extends into r9
      return broadcast_r9();
    case DType::Int16:
      movsx(r9, word[rax]);
      return broadcast_r9();
    case DType::UInt16:
      movzx(r9d, word[rax]);
      return broadcast_r9();
    case DType::Int8:
      movsx(r9, byte[rax]);
      return broadcast_r9();
    case DType::UInt8:
    case DType::Bool:
      movzx(r9d, byte[rax]);
      if (in.dtype == DType::Bool) neg(r9);  // 0 or all ones
      return broadcast_r9();
    case DType::Float16:
    case DType::BFloat16:
      load_half_float(in.dtype, x0);
      vcvtss2sd(x0, x0, x0);
      vbroadcastsd(dst, x0);
      return;
    default: break;
  }
  throw Unsupported("loads of " + std::string(name(in.dtype)) + " in wide kernels");
}

template <class Vmm>
void RowKernelGen<Vmm>::store_wide(size_t k, const Vmm& x, bool tail) {
  const KernelOutput& o = s_.outputs[k];
  const int size = static_cast<int>(itemsize(o.dtype));
  output_base(k);
  const Xbyak::Address at = ptr[rax + r8 * size];
  const Xbyak::Xmm x0(0), x1(1), xl(x.getIdx());
  switch (o.dtype) {
    case DType::Float64:
    case DType::Int64:
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
      return store_half(at, tail);
    case DType::Float16:
    case DType::BFloat16:  // through float32, as the reference rounds (graph/array.cpp)
      vcvtpd2ps(Half(0), x);
      if (o.dtype == DType::Float16) {
        if constexpr (kZmm) {
          tail ? vcvtps2ph(at | k1, Half(0), 0) : vcvtps2ph(at, Half(0), 0);
          return;
        }
        vcvtps2ph(x0, Half(0), 0);
      } else {
        to_bf16_bits(scratch(3), scratch(0));
        if constexpr (kZmm) {
          tail ? vpmovdw(at | k1, Half(3)) : vpmovdw(at, Half(3));
          return;
        }
        vpackusdw(x0, Xbyak::Xmm(3), Xbyak::Xmm(3));
      }
      if (!tail) {
        vmovq(at, x0);
        return;
      }
      vmovdqu(ptr[rsp + kBounce], x0);
      bounce_out(2);
      return;
    case DType::Int32:  // in range: truncation is exact
    case DType::UInt32:
      if constexpr (kZmm) {
        vpmovqd(Half(0), x);
      } else {
        vextracti128(x1, x, 1);
        vshufps(x0, xl, x1, 0x88);  // the low dword of each lane
      }
      return store_half(at, tail);
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:  // in range: truncation and the saturating packs are exact
      if constexpr (kZmm) {
        if (size == 1) tail ? vpmovqb(at | k1, x) : vpmovqb(at, x);
        else tail ? vpmovqw(at | k1, x) : vpmovqw(at, x);
        return;
      }
      vextracti128(x1, x, 1);
      vshufps(x0, xl, x1, 0x88);  // the low dword of each lane
      if (o.dtype == DType::UInt16) vpackusdw(x0, x0, x0);
      else vpackssdw(x0, x0, x0);
      if (o.dtype == DType::Int8) vpacksswb(x0, x0, x0);
      if (o.dtype == DType::UInt8) vpackuswb(x0, x0, x0);
      if (!tail) {
        if (size == 1) vmovd(at, x0);
        else vmovq(at, x0);
        return;
      }
      vmovdqu(ptr[rsp + kBounce], x0);
      bounce_out(size);
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
  throw Unsupported("stores of " + std::string(name(o.dtype)) + " in wide kernels");
}

// Half(0), V lanes of 32 bits, to `at`.
template <class Vmm>
void RowKernelGen<Vmm>::store_half(const Xbyak::Address& at, bool tail) {
  if (!tail) {
    vmovups(at, Half(0));
  } else if constexpr (kZmm) {
    vmovups(at | k1, Half(0));
  } else {
    vmovups(Half(4), tail_mask(4));
    vmaskmovps(at, Half(4), Half(0));
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::store_scalar_wide(size_t k, const Vmm& x) {
  const KernelOutput& o = s_.outputs[k];
  mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
  const Xbyak::Xmm x0(0), xv(x.getIdx());
  switch (o.dtype) {
    case DType::Float64:
    case DType::Int64: vmovsd(qword[rax], xv); return;
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
      vcvtsd2ss(x0, xv, xv);
      return store_float_scalar(o.dtype, x0);
    case DType::Int32:
    case DType::UInt32: vmovss(dword[rax], xv); return;
    case DType::Int16:
    case DType::UInt16:
      vmovd(r9d, xv);
      mov(word[rax], r9w);
      return;
    case DType::Int8:
    case DType::UInt8:
      vmovd(r9d, xv);
      mov(byte[rax], r9b);
      return;
    case DType::Bool:
      vmovq(r9, xv);
      shr(r9, 63);
      mov(byte[rax], r9b);
      return;
    default: break;
  }
  throw Unsupported("stores of " + std::string(name(o.dtype)) + " in wide kernels");
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
