// Machine code as text: what BRAZE_DUMP=asm writes, and what a person reads
// to see what the generator emitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace braze::jit {

// The disassembler this build has ("zydis 4.0.0"), or "" when braze was
// configured without Zydis (it is optional: jit_cpu/CMakeLists.txt).
std::string disassembler();

// x86-64 code in Intel syntax, one instruction per line prefixed by its
// offset from `code` ("  0x001c: vmovups zmm0, zmmword ptr [rax]"). Every
// address is such an offset, so the text is the same in every run: a branch
// target (`jle 0x007b`), the offset a rip-relative operand reaches
// (`[rip+0x790]  # 0x0800`); a host function's address is its name
// (`movabs rax, host_sin_f64`, Note [Host calls]). A byte the disassembler
// cannot decode is written as `.byte 0x..` and decoding goes on after it,
// so the text always covers all `size` bytes. Without a disassembler, one
// comment line saying so.
std::string disassemble(const uint8_t* code, size_t size);

// Data as text in the same layout: 32-bit little-endian words, four per
// line ("  0x0140: .long 0x3f800000, ..."), a last short word as bytes.
// For the constant pool that follows a kernel's instructions.
std::string dump_words(const uint8_t* data, size_t size, size_t first_offset);

}  // namespace braze::jit
