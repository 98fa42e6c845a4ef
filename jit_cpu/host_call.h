// A call from generated code to a C++ function over the lanes of one
// register, for a rare slow path (Note [Host calls]).
#pragma once

#include <xbyak/xbyak.h>

#include <cstdint>
#include <type_traits>

namespace braze::jit {

// Note [Host calls]
// ~~~~~~~~~~~~~~~~~
// Some lanes need what no short register sequence does well: sin and cos of
// a float64 past the fast reduction's domain (|x| > 2^32) need hundreds of
// bits of 2/pi. For such a vector the kernel calls `fn(dst, x, lanes)`, a
// plain C++ function that rewrites dst's lanes from x's. Every vector
// register (and, on AVX-512, k1..k7) and every caller-saved general register
// is saved around the call, so the call looks like one instruction to the
// code around it: no register allocation or live value changes. dst and x
// are passed as their spill slots, and dst is reloaded from its slot. The
// kernel's frame keeps rsp 16-byte aligned and uses nothing below rsp, so
// the call may push. The function's address is baked into the code (kernels
// live in this process only); it changes from run to run, so call_host
// records the function's name and the disassembler prints that name in
// place of the address, keeping BRAZE_DUMP=asm byte-identical across runs.
using LaneFn = void (*)(double* dst, const double* x, int64_t lanes);

// Remembers `name` for `fn`'s address (thread-safe, idempotent).
void name_host_function(LaneFn fn, const char* name);
// The name recorded for a code address, or null when it is no host function.
const char* host_function_name(uint64_t address);

template <class R>
void call_host(Xbyak::CodeGenerator& c, LaneFn fn, const char* name, const R& dst, const R& x, int lanes) {
  name_host_function(fn, name);
  constexpr bool kZmm = std::is_same_v<R, Xbyak::Zmm>;
  constexpr int kRegs = kZmm ? 32 : 16, kBytes = kZmm ? 64 : 32;
  static const Xbyak::Reg64 kCallerSaved[] = {c.rax, c.rcx, c.rdx, c.rsi, c.rdi, c.r8, c.r9, c.r10, c.r11};
  for (const Xbyak::Reg64& r : kCallerSaved) c.push(r);
  c.sub(c.rsp, kRegs * kBytes + 64 + 8);  // 9 pushes + 8: rsp stays 16-byte aligned
  for (int i = 0; i < kRegs; ++i) c.vmovupd(c.ptr[c.rsp + i * kBytes], R(i));
  if constexpr (kZmm)
    for (int i = 1; i < 8; ++i) c.kmovw(c.ptr[c.rsp + kRegs * kBytes + 8 * i], Xbyak::Opmask(i));
  c.lea(c.rdi, c.ptr[c.rsp + dst.getIdx() * kBytes]);
  c.lea(c.rsi, c.ptr[c.rsp + x.getIdx() * kBytes]);
  c.mov(c.edx, lanes);
  c.mov(c.rax, reinterpret_cast<uint64_t>(fn));
  c.vzeroupper();
  c.call(c.rax);
  for (int i = 0; i < kRegs; ++i) c.vmovupd(R(i), c.ptr[c.rsp + i * kBytes]);
  if constexpr (kZmm)
    for (int i = 1; i < 8; ++i) c.kmovw(Xbyak::Opmask(i), c.ptr[c.rsp + kRegs * kBytes + 8 * i]);
  c.add(c.rsp, kRegs * kBytes + 64 + 8);
  for (int i = 8; i >= 0; --i) c.pop(kCallerSaved[i]);
}

}  // namespace braze::jit
