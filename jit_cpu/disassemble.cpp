#include "jit_cpu/disassemble.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jit_cpu/host_call.h"

#if BRAZE_HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

namespace braze::jit {

namespace {

std::string offset_prefix(size_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  0x%04zx: ", offset);
  return buf;
}

#if BRAZE_HAVE_CAPSTONE
// "rax, 0x7f3a..." loading a host function's address (Note [Host calls])
// becomes "rax, host_sin_f64": the address differs from run to run, the
// name does not.
std::string name_host_address(const char* mnemonic, std::string operands) {
  if (std::strcmp(mnemonic, "movabs") != 0) return operands;
  size_t comma = operands.rfind(", 0x");
  if (comma == std::string::npos) return operands;
  uint64_t address = std::strtoull(operands.c_str() + comma + 2, nullptr, 16);
  if (const char* name = host_function_name(address)) operands.replace(comma + 2, std::string::npos, name);
  return operands;
}

// Owns a capstone handle and its one instruction buffer.
struct Capstone {
  csh handle = 0;
  cs_insn* insn = nullptr;
  ~Capstone() {
    if (insn) cs_free(insn, 1);
    if (handle) cs_close(&handle);
  }
};
#endif

}  // namespace

#if BRAZE_HAVE_CAPSTONE
std::string disassembler() {
  int major = 0, minor = 0;
  cs_version(&major, &minor);
  return "capstone " + std::to_string(major) + "." + std::to_string(minor);
}

std::string disassemble(const uint8_t* code, size_t size) {
  Capstone cs;
  if (cs_err err = cs_open(CS_ARCH_X86, CS_MODE_64, &cs.handle); err != CS_ERR_OK)
    return std::string("# capstone cannot open x86-64: ") + cs_strerror(err) + "\n";
  cs_option(cs.handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
  cs.insn = cs_malloc(cs.handle);
  std::string out;
  const uint8_t* at = code;
  size_t left = size;
  uint64_t address = 0;  // offsets from the start, not the code's address: stable across runs
  while (left > 0) {
    if (cs_disasm_iter(cs.handle, &at, &left, &address, cs.insn)) {
      out += offset_prefix(cs.insn->address);
      out += cs.insn->mnemonic;
      if (cs.insn->op_str[0] != '\0') out += " " + name_host_address(cs.insn->mnemonic, cs.insn->op_str);
      out += "\n";
      continue;
    }
    // Not an instruction (or one capstone does not know): show the byte and
    // resynchronise on the next one.
    char buf[16];
    std::snprintf(buf, sizeof buf, ".byte 0x%02x\n", *at);
    out += offset_prefix(address) + buf;
    ++at, --left, ++address;
  }
  return out;
}
#else
std::string disassembler() { return ""; }

std::string disassemble(const uint8_t*, size_t) {
  return "# no disassembly: braze was built without capstone (install libcapstone-dev and reconfigure)\n";
}
#endif

std::string dump_words(const uint8_t* data, size_t size, size_t first_offset) {
  std::string out;
  for (size_t i = 0; i < size; i += 16) {
    out += offset_prefix(first_offset + i);
    size_t words = std::min<size_t>(4, (size - i) / 4);
    if (words > 0) out += ".long ";
    for (size_t w = 0; w < words; ++w) {
      uint32_t v;
      std::memcpy(&v, data + i + 4 * w, 4);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%s0x%08x", w ? ", " : "", v);
      out += buf;
    }
    size_t rest_begin = i + 4 * words, rest_end = std::min(size, i + 16);
    if (rest_begin < rest_end) {
      out += words ? "; .byte " : ".byte ";
      for (size_t b = rest_begin; b < rest_end; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%s0x%02x", b > rest_begin ? ", " : "", data[b]);
        out += buf;
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace braze::jit
