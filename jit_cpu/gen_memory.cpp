// Loads and stores of every dtype: full vectors, tails (k-masks, vmaskmov or the
// stack bounce), strided and tiled inputs, row constants, streaming stores.
#include <array>
#include <string>

#include "jit_cpu/row_kernel_gen.h"

namespace braze::jit::detail {

template <class Vmm>
Xbyak::Address RowKernelGen<Vmm>::tail_mask(int bytes) {
  // Lanes of `bytes` (default: the kernel's), the first width % V of them set.
  const int per = (bytes ? bytes : eb_) / 4;
  std::array<uint32_t, 16> m{};
  for (int64_t i = 0; i < width_ % V * per; ++i) m[i] = 0xffffffffu;
  return k_.lanes(m);
}

template <class Vmm>
void RowKernelGen<Vmm>::load_element(int32_t k, const Vmm& dst, bool tail) {
  const KernelInput& in = s_.inputs[k];
  const int64_t stride = p_.inputs[k].inner_stride;
  if (from_tile_ && tile_of_[k] >= 0) {  // Note [Tile chunks]: in the kernel's lanes already
    mov(rax, chunk_word(2));
    vmovups(dst, ptr[rax + r8 * eb_ + (tile_of_[k] * G + group_row_) * tile_width_ * eb_]);
    return;
  }
  if (wide_) return load_wide(k, dst, tail);  // Note [Wide kernels]
  if (in.kind == KernelInput::Kind::Window) return window_lanes(k, dst);
  input_base(k);
  if (in.kind == KernelInput::Kind::Arange) {  // start + i * step, i the element's index
    imul(r9, r8, static_cast<int>(stride));
    add(rax, r9);
    vmovq(Xbyak::Xmm(0), rax);
    vpbroadcastd(dst, Xbyak::Xmm(0));
    std::array<uint32_t, 16> lanes{};
    for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
    vpaddd(dst, dst, k_.lanes(lanes));
    mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
    vpbroadcastd(scratch(0), dword[r10 + 32 * k + 8]);
    vpbroadcastd(scratch(1), dword[r10 + 32 * k]);
    if (lanes_of(in.dtype) == Lanes::Int) {  // int32 arithmetic wraps as the reference's int64 does, mod 2^32
      vpmulld(dst, dst, scratch(0));
      vpaddd(dst, dst, scratch(1));
      ints_.wrap(dst, dst, DType::Int32, in.dtype);
      return;
    }
    vcvtdq2ps(dst, dst);
    vfmadd213ps(dst, scratch(0), scratch(1));
    return;
  }
  const int size = static_cast<int>(itemsize(in.dtype));
  Xbyak::RegExp at = rax + r8 * size;
  if (stride != 1 && size != 4) {
    // No gathers of 8- and 16-bit elements (a 32-bit gather would read
    // past the buffer's end): the lanes are copied one by one into the
    // bounce area and loaded from there as a contiguous vector.
    imul(r9, r8, static_cast<int>(stride * size));
    add(rax, r9);
    bounce_strided(size, stride * size, tail ? static_cast<int>(width_ % V) : V);
    at = rsp + kBounce;
    tail = false;
  } else if (stride == 2 && !tail) {  // Note [Every other element]
    load_every_other(dst);
    return;
  } else if (stride != 1) {  // a gather of 32-bit elements
    std::array<uint32_t, 16> lanes{};
    for (int i = 0; i < 16; ++i) lanes[i] = static_cast<uint32_t>(i * stride);
    imul(r9, r8, static_cast<int>(stride * size));
    add(rax, r9);
    vmovups(scratch(3), k_.lanes(lanes));
    vxorps(dst, dst, dst);
    if constexpr (kZmm) {
      if (tail) kmovw(k3, k1);
      else kxnorw(k3, k3, k3);
      vgatherdps(dst | k3, ptr[rax + scratch(3) * 4]);
    } else {
      if (tail) vmovups(scratch(4), tail_mask());
      else vpcmpeqd(scratch(4), scratch(4), scratch(4));
      vgatherdps(dst, ptr[rax + scratch(3) * 4], scratch(4));
    }
    return;
  }
  if (tail && !kZmm) {
    if (size == 4) {
      vmovups(scratch(4), tail_mask());
      vmaskmovps(dst, scratch(4), ptr[at]);
      return;
    }
    bounce_in(size);  // the partial vector, copied to the stack
    at = rsp + kBounce;
    tail = false;
  }
  load_converted(in.dtype, dst, at, tail);
}

// dst = the vector of dtype t's elements at `at`, in 32-bit lanes.
template <class Vmm>
void RowKernelGen<Vmm>::load_converted(DType t, const Vmm& dst, Xbyak::RegExp at, bool tail) {
  // An AVX-512 tail loads under k1, zeroing the lanes past the row; any
  // other load is whole (an AVX2 tail was bounced to the stack above).
  auto load = [&](auto&& emit) {
    if constexpr (kZmm) {
      if (tail) return emit(dst | k1 | T_z);
    }
    emit(dst);
  };
  const Xbyak::Address from = ptr[at];
  switch (t) {
    case DType::Float32:
    case DType::Int32: load([&](const Vmm& d) { vmovups(d, from); }); break;
    case DType::Int8: load([&](const Vmm& d) { vpmovsxbd(d, from); }); break;
    case DType::UInt8: load([&](const Vmm& d) { vpmovzxbd(d, from); }); break;
    case DType::Int16: load([&](const Vmm& d) { vpmovsxwd(d, from); }); break;
    case DType::UInt16: load([&](const Vmm& d) { vpmovzxwd(d, from); }); break;
    case DType::Float16: load([&](const Vmm& d) { vcvtph2ps(d, from); }); break;
    case DType::BFloat16:
      load([&](const Vmm& d) { vpmovzxwd(d, from); });
      vpslld(dst, dst, 16);
      break;
    case DType::Bool:
      load([&](const Vmm& d) { vpmovzxbd(d, from); });
      int_to_mask(dst);
      break;
    default: throw Unsupported("loads of " + std::string(name(t)));
  }
}

// Note [Masked loads on the CPU]
// A masked load (Note [Masked loads], fusion/lower_windows.h) reads input k
// only in the lanes its mask sets. Most vectors of a padded input lie
// wholly inside the window or wholly outside it, so the mask's lanes are
// tested first: all set, the ordinary load (vector, gather or tail); none,
// zeros; some (the window's edges, two vectors a row), the set lanes are
// copied one by one into the zeroed bounce area and loaded from there.
// No address outside the window is read, so padding past either end of a
// buffer never faults.
template <class Vmm>
void RowKernelGen<Vmm>::load_masked(int32_t k, const Vmm& dst, const Vmm& mask, bool tail) {
  const int lanes = tail ? static_cast<int>(width_ % V) : V;
  const uint32_t all = lanes >= 32 ? ~0u : (1u << lanes) - 1;
  Xbyak::Label whole, none, done;
  if constexpr (kZmm) {
    if (wide_) vptestmq(k2, mask, mask);
    else vptestmd(k2, mask, mask);
    kmovw(r10d, k2);
  } else {
    if (wide_) vmovmskpd(r10d, mask);
    else vmovmskps(r10d, mask);
  }
  and_(r10d, all);
  cmp(r10d, all);
  je(whole, T_NEAR);
  test(r10d, r10d);
  jz(none, T_NEAR);
  bounce_masked(k, lanes);
  if (wide_) load_wide_at(s_.inputs[k].dtype, dst, ptr[rsp + kBounce], false);
  else load_converted(s_.inputs[k].dtype, dst, rsp + kBounce, false);
  jmp(done, T_NEAR);
  L(none);
  vxorps(dst, dst, dst);
  jmp(done, T_NEAR);
  L(whole);
  load_element(k, dst, tail);
  L(done);
}

// The lanes of input k whose bits r10 sets, from element r8 on, copied to
// the bounce area (zeroed first) as contiguous elements of its dtype.
template <class Vmm>
void RowKernelGen<Vmm>::bounce_masked(int32_t k, int lanes) {
  const int size = static_cast<int>(itemsize(s_.inputs[k].dtype));
  const int64_t step = p_.inputs[k].inner_stride * size;
  if (!fits_int32(step * V)) throw Unsupported("strides past 32 bits");
  vxorps(Xbyak::Ymm(0), Xbyak::Ymm(0), Xbyak::Ymm(0));
  vmovups(ptr[rsp + kBounce], Xbyak::Ymm(0));
  vmovups(ptr[rsp + kBounce + 32], Xbyak::Ymm(0));
  input_base(k);
  imul(r9, r8, static_cast<int>(step));
  add(rax, r9);
  for (int i = 0; i < lanes; ++i) {
    Xbyak::Label skip;
    bt(r10d, i);
    jnc(skip);
    const Xbyak::RegExp from = rax + static_cast<int>(i * step);
    const int to = kBounce + i * size;
    switch (size) {
      case 1: movzx(r9d, byte[from]); mov(byte[rsp + to], r9b); break;
      case 2: movzx(r9d, word[from]); mov(word[rsp + to], r9w); break;
      case 4: mov(r9d, dword[from]); mov(dword[rsp + to], r9d); break;
      default: mov(r9, qword[from]); mov(qword[rsp + to], r9); break;
    }
    L(skip);
  }
}

// A row constant's masked load: the mask is the same in every lane.
template <class Vmm>
void RowKernelGen<Vmm>::load_constant_masked(int32_t k, const Vmm& dst, const Vmm& mask) {
  Xbyak::Label none, done;
  vmovd(r10d, Xbyak::Xmm(mask.getIdx()));
  test(r10d, r10d);
  jz(none, T_NEAR);
  load_constant(k, dst);
  jmp(done, T_NEAR);
  L(none);
  vxorps(dst, dst, dst);
  L(done);
}

// A Window input along the row: its index, as an arange's with start 0 and
// step 1 (32-bit lanes; 64-bit in wide kernels), compared with its bounds.
template <class Vmm>
void RowKernelGen<Vmm>::window_lanes(int32_t k, const Vmm& dst) {
  const KernelInput& in = s_.inputs[k];
  const int64_t stride = p_.inputs[k].inner_stride;
  input_base(k);
  imul(r9, r8, static_cast<int>(stride));
  add(rax, r9);
  vmovq(Xbyak::Xmm(0), rax);
  std::array<uint32_t, 16> step{}, lo{}, hi{};
  if (wide_) {
    vpbroadcastq(dst, Xbyak::Xmm(0));
    for (int i = 0; i < 8; ++i) {
      const auto at = static_cast<uint64_t>(i * stride);
      step[2 * i] = static_cast<uint32_t>(at), step[2 * i + 1] = static_cast<uint32_t>(at >> 32);
      const auto l = static_cast<uint64_t>(in.bounds.lo), h = static_cast<uint64_t>(in.bounds.hi);
      lo[2 * i] = static_cast<uint32_t>(l), lo[2 * i + 1] = static_cast<uint32_t>(l >> 32);
      hi[2 * i] = static_cast<uint32_t>(h), hi[2 * i + 1] = static_cast<uint32_t>(h >> 32);
    }
    vpaddq(dst, dst, k_.lanes(step));
  } else {
    if (!fits_int32(in.bounds.hi) || !fits_int32(in.bounds.lo)) throw Unsupported("windows past 32 bits");
    vpbroadcastd(dst, Xbyak::Xmm(0));
    for (int i = 0; i < 16; ++i) {
      step[i] = static_cast<uint32_t>(i * stride);
      lo[i] = static_cast<uint32_t>(in.bounds.lo), hi[i] = static_cast<uint32_t>(in.bounds.hi);
    }
    vpaddd(dst, dst, k_.lanes(step));
  }
  vmovups(scratch(1), k_.lanes(lo));
  ints_.cmp(scratch(2), dst, scratch(1), IntOps<Vmm>::Ge, width());
  vmovups(scratch(1), k_.lanes(hi));
  ints_.cmp(dst, dst, scratch(1), IntOps<Vmm>::Lt, width());
  vandps(dst, dst, scratch(2));
}

// A Window input that is the same along the row: one compare of the row's
// index, broadcast as a mask.
template <class Vmm>
void RowKernelGen<Vmm>::window_constant(int32_t k, const Vmm& dst) {
  const KernelInput& in = s_.inputs[k];
  Xbyak::Label outside;
  input_base(k);  // rax: the index
  xor_(r9d, r9d);
  mov(r10, in.bounds.lo);
  cmp(rax, r10);
  jl(outside);
  mov(r10, in.bounds.hi);
  cmp(rax, r10);
  jge(outside);
  mov(r9, -1);
  L(outside);
  vmovq(Xbyak::Xmm(0), r9);
  if (wide_) vpbroadcastq(dst, Xbyak::Xmm(0));
  else vpbroadcastd(dst, Xbyak::Xmm(0));
}

// Note [Every other element]
// A row read with stride 2 (x[:, ::2], the even lanes of interleaved
// pairs) was gathered: on Zen 5 a 16-lane gather costs more than the two
// lines it reads (x[:, ::2] * 2 of [4096, 4096] took 4.9 ms, a read of
// all of x and a write of half of it 1.6). Two contiguous loads cover
// the 2V - 1 elements from r8's, the second one ending on the last of
// them (so nothing past the row is read), and a permute keeps the even
// ones. A tail still gathers under its mask.
template <class Vmm>
void RowKernelGen<Vmm>::load_every_other(const Vmm& dst) {
  const Vmm low = scratch(3), high = scratch(4);
  vmovups(low, ptr[rax + r8 * 8]);                   // elements 0 .. V - 1
  vmovups(high, ptr[rax + r8 * 8 + (V - 1) * 4]);    // V - 1 .. 2V - 2
  if constexpr (kZmm) {
    std::array<uint32_t, 16> pick{};  // of low then high: low's 0, 2, .. 14, then high's 1, 3, .. 15
    for (int i = 0; i < 16; ++i) pick[i] = i < 8 ? 2 * i : 16 + 2 * (i - 8) + 1;
    vmovups(dst, k_.lanes(pick));
    vpermi2ps(dst, low, high);
  } else {
    vshufps(dst, low, high, 0xd8);  // per 128-bit lane: low's 0, 2 and high's 1, 3
    vpermpd(dst, dst, 0xd8);        // the pairs in order: lanes 0 .. 7
  }
}

// Copies the row's last partial vector (elements r8 .. L) of `size`-byte
// elements at rax into the zeroed bounce area (AVX2 has no masked loads of
// 8- and 16-bit elements).
template <class Vmm>
void RowKernelGen<Vmm>::bounce_in(int size) {
  vxorps(Xbyak::Ymm(0), Xbyak::Ymm(0), Xbyak::Ymm(0));
  vmovups(ptr[rsp + kBounce], Xbyak::Ymm(0));
  for (int i = 0; i < width_ % V; ++i) {
    if (size == 2) {
      movzx(r9d, word[rax + r8 * 2 + 2 * i]);
      mov(word[rsp + kBounce + 2 * i], r9w);
    } else {
      movzx(r9d, byte[rax + r8 + i]);
      mov(byte[rsp + kBounce + i], r9b);
    }
  }
}

// Copies `n` elements of `size` bytes, `step` bytes apart from rax on,
// into the zeroed bounce area.
template <class Vmm>
void RowKernelGen<Vmm>::bounce_strided(int size, int64_t step, int n) {
  vxorps(Xbyak::Ymm(0), Xbyak::Ymm(0), Xbyak::Ymm(0));
  vmovups(ptr[rsp + kBounce], Xbyak::Ymm(0));
  for (int i = 0; i < n; ++i) {
    if (size == 2) {
      movzx(r9d, word[rax + static_cast<int>(i * step)]);
      mov(word[rsp + kBounce + 2 * i], r9w);
    } else {
      movzx(r9d, byte[rax + static_cast<int>(i * step)]);
      mov(byte[rsp + kBounce + i], r9b);
    }
  }
}

// the partial vector at the bounce area to r8.. at rax
template <class Vmm>
void RowKernelGen<Vmm>::bounce_out(int size) {
  for (int i = 0; i < width_ % V; ++i) {
    if (size == 2) {
      movzx(r9d, word[rsp + kBounce + 2 * i]);
      mov(word[rax + r8 * 2 + 2 * i], r9w);
    } else {
      movzx(r9d, byte[rsp + kBounce + i]);
      mov(byte[rax + r8 + i], r9b);
    }
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::load_constant(int32_t k, const Vmm& dst) {
  const KernelInput& in = s_.inputs[k];
  Xbyak::Xmm x0(0);
  if (in.kind == KernelInput::Kind::Window) return window_constant(k, dst);
  if (wide_) return load_constant_wide(k, dst);
  switch (in.kind) {
    case KernelInput::Kind::Scalar:  // passed as its lane (LaunchArgs)
      mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
      vbroadcastss(dst, dword[r10 + 32 * k]);
      return;
    case KernelInput::Kind::Arange:
      input_base(k);
      mov(r10, qword[rdi + offsetof(LaunchArgs, values)]);
      if (lanes_of(in.dtype) == Lanes::Int) {
        imul(eax, dword[r10 + 32 * k + 8]);
        add(eax, dword[r10 + 32 * k]);
        vmovd(x0, eax);
        vpbroadcastd(dst, x0);
        ints_.wrap(dst, dst, DType::Int32, in.dtype);
        return;
      }
      vcvtsi2ss(x0, x0, rax);
      vmulss(x0, x0, dword[r10 + 32 * k + 8]);
      vaddss(x0, x0, dword[r10 + 32 * k]);
      vbroadcastss(dst, x0);
      return;
    case KernelInput::Kind::Window:  // above
    case KernelInput::Kind::Buffer: break;
  }
  input_base(k);
  auto broadcast_r9d = [&] {
    vmovd(x0, r9d);
    vpbroadcastd(dst, x0);
  };
  switch (in.dtype) {
    case DType::Float32:
    case DType::Int32: vbroadcastss(dst, dword[rax]); return;
    case DType::Int8: movsx(r9d, byte[rax]); return broadcast_r9d();
    case DType::UInt8: movzx(r9d, byte[rax]); return broadcast_r9d();
    case DType::Int16: movsx(r9d, word[rax]); return broadcast_r9d();
    case DType::UInt16: movzx(r9d, word[rax]); return broadcast_r9d();
    case DType::Float16:
    case DType::BFloat16:
      load_half_float(in.dtype, x0);
      vbroadcastss(dst, x0);
      return;
    case DType::Bool:
      movzx(r9d, byte[rax]);
      broadcast_r9d();
      int_to_mask(dst);
      return;
    default: throw Unsupported("loads of " + std::string(name(in.dtype)));
  }
}

// x = the float16 or bfloat16 at [rax] as a float32 (exact), in x's
// first lane.
template <class Vmm>
void RowKernelGen<Vmm>::load_half_float(DType t, const Xbyak::Xmm& x) {
  movzx(r9d, word[rax]);
  if (t == DType::BFloat16) shl(r9d, 16);  // the high half of a float32
  vmovd(x, r9d);
  if (t == DType::Float16) vcvtph2ps(x, x);
}

// float32 lanes to bfloat16 bits in the low half of each 32-bit lane,
// rounding to nearest even; a NaN is made quiet and truncated, as
// graph/half.h does.
template <class Vmm>
void RowKernelGen<Vmm>::to_bf16_bits(const Vmm& dst, const Vmm& x) {
  vpsrld(scratch(1), x, 16);
  vandps(scratch(1), scratch(1), k_.bits_of(1));
  vpaddd(scratch(1), scratch(1), k_.bits_of(0x7fff));
  vpaddd(dst, x, scratch(1));
  vpsrld(dst, dst, 16);
  ops_.cmp(scratch(1), x, x, Ops::Unord);
  vpsrld(scratch(2), x, 16);
  vorps(scratch(2), scratch(2), k_.bits_of(0x40));
  ops_.blend(dst, dst, scratch(2), scratch(1));
}

template <class Vmm>
void RowKernelGen<Vmm>::store_element(size_t k, const Vmm& x, bool tail) {
  const KernelOutput& o = s_.outputs[k];
  if (wide_) return store_wide(k, x, tail);
  const int size = static_cast<int>(itemsize(o.dtype));
  output_base(k);
  Xbyak::Address at = ptr[rax + r8 * size];
  if constexpr (kZmm) {
    const Xbyak::Ymm y0(0);
    switch (o.dtype) {
      case DType::Float32:
      case DType::Int32:
        if (tail) vmovups(at | k1, x);
        else if (stream_) vmovntps(at, x);
        else vmovups(at, x);
        return;
      case DType::Int8:
      case DType::UInt8: tail ? vpmovdb(at | k1, x) : vpmovdb(at, x); return;  // in range: truncation is exact
      case DType::Int16:
      case DType::UInt16: tail ? vpmovdw(at | k1, x) : vpmovdw(at, x); return;
      case DType::Float16: tail ? vcvtps2ph(at | k1, x, 0) : vcvtps2ph(at, x, 0); return;
      case DType::BFloat16:
        to_bf16_bits(scratch(0), x);
        tail ? vpmovdw(at | k1, scratch(0)) : vpmovdw(at, scratch(0));
        return;
      case DType::Bool:
        vpsrld(scratch(0), x, 31);
        tail ? vpmovdb(at | k1, scratch(0)) : vpmovdb(at, scratch(0));
        return;
      default: break;
    }
    (void)y0;
  } else {
    const Xbyak::Xmm x0(0), x1(1), xl(x.getIdx());
    switch (o.dtype) {
      case DType::Float32:
      case DType::Int32:
        if (tail) {
          vmovups(scratch(4), tail_mask());
          vmaskmovps(at, scratch(4), x);
        } else if (stream_) {
          vmovntps(at, x);
        } else {
          vmovups(at, x);
        }
        return;
      case DType::Float16: vcvtps2ph(x0, x, 0); break;
      case DType::BFloat16:
        to_bf16_bits(scratch(0), x);
        vextracti128(x1, scratch(0), 1);
        vpackusdw(x0, x0, x1);
        break;
      case DType::Bool:
        vpsrld(scratch(0), x, 31);
        vextracti128(x1, scratch(0), 1);
        vpackusdw(x0, x0, x1);
        vpackuswb(x0, x0, x0);
        break;
      case DType::Int8:  // in range: the saturating packs are exact
        vextracti128(x1, x, 1);
        vpackssdw(x0, xl, x1);
        vpacksswb(x0, x0, x0);
        break;
      case DType::UInt8:
        vextracti128(x1, x, 1);
        vpackusdw(x0, xl, x1);
        vpackuswb(x0, x0, x0);
        break;
      case DType::Int16:
        vextracti128(x1, x, 1);
        vpackssdw(x0, xl, x1);
        break;
      case DType::UInt16:
        vextracti128(x1, x, 1);
        vpackusdw(x0, xl, x1);
        break;
      default: throw Unsupported("stores of " + std::string(name(o.dtype)));
    }
    if (!tail) {
      if (size == 2) vmovdqu(at, x0);
      else vmovq(at, x0);
      return;
    }
    vmovdqu(ptr[rsp + kBounce], x0);
    bounce_out(size);
    return;
  }
  throw Unsupported("stores of " + std::string(name(o.dtype)));
}

// The float32 in x's first lane to [rax] as t (float32, float16 or
// bfloat16), rounding to nearest even; a NaN stays a quiet NaN.
template <class Vmm>
void RowKernelGen<Vmm>::store_float_scalar(DType t, const Xbyak::Xmm& x) {
  const Xbyak::Xmm x0(0);
  if (t == DType::Float32) {
    vmovss(dword[rax], x);
  } else if (t == DType::Float16) {
    vcvtps2ph(x0, x, 0);
    vpextrw(word[rax], x0, 0);
  } else {
    Xbyak::Label number, rounded;
    vmovd(r9d, x);
    mov(r10d, r9d);
    and_(r10d, 0x7fffffff);
    cmp(r10d, 0x7f800000);
    jbe(number);
    or_(r9d, 0x400000);  // a NaN: made quiet, then truncated (graph/half.h)
    jmp(rounded);
    L(number);
    mov(r10d, r9d);
    shr(r10d, 16);
    and_(r10d, 1);
    add(r9d, 0x7fff);
    add(r9d, r10d);
    L(rounded);
    shr(r9d, 16);
    mov(word[rax], r9w);
  }
}

template <class Vmm>
void RowKernelGen<Vmm>::store_scalar(size_t k, const Vmm& x) {
  const KernelOutput& o = s_.outputs[k];
  if (wide_) return store_scalar_wide(k, x);
  mov(rax, qword[rsp + out_slot_ + 8 * static_cast<int>(k)]);
  Xbyak::Xmm x0(0), xv(x.getIdx());
  switch (o.dtype) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16: return store_float_scalar(o.dtype, xv);
    case DType::Int32: vmovss(dword[rax], xv); return;
    case DType::Int64: vmovq(qword[rax], xv); return;  // Note [Integer sums]
    case DType::Int8:
    case DType::UInt8:
      vmovd(r9d, xv);
      mov(byte[rax], r9b);
      return;
    case DType::Int16:
    case DType::UInt16:
      vmovd(r9d, xv);
      mov(word[rax], r9w);
      return;
    case DType::Bool:
      vmovd(r9d, xv);
      shr(r9d, 31);
      mov(byte[rax], r9b);
      return;
    default: throw Unsupported("stores of " + std::string(name(o.dtype)));
  }
}

template class RowKernelGen<Xbyak::Ymm>;
template class RowKernelGen<Xbyak::Zmm>;

}  // namespace braze::jit::detail
