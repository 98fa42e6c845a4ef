#include "jit_cpu/disassemble.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "jit_cpu/host_call.h"

#if BRAZE_HAVE_ZYDIS
#include <Zycore/Format.h>
#include <Zydis/Zydis.h>
#endif

namespace braze::jit {

namespace {

std::string offset_prefix(size_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  0x%04zx: ", offset);
  return buf;
}

#if BRAZE_HAVE_ZYDIS
// How one instruction is spelled where objdump's spelling (the one people
// search for and compare with) differs from Zydis' own: the formatter hooks
// below read it. Zydis names conditions by their negation (jnle, cmovnz),
// leaves a compare's predicate as an immediate (vcmpps ..., 0x3), calls a
// 64-bit immediate load plain mov, and shows the register in a multi-byte
// nop's ModRM (nop dword ptr [rax], eax).
struct Spelling {
  std::string mnemonic;          // empty: Zydis' mnemonic
  int hidden_operand = -1;       // an operand not shown: a compare's predicate, a nop's register
  const char* symbol = nullptr;  // the name shown for the immediate (Note [Host calls])
};

std::string positive_condition(std::string_view m) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"nl", "ge"}, {"nle", "g"}, {"z", "e"}, {"nz", "ne"}, {"nb", "ae"}, {"nbe", "a"}};
  for (std::string_view head : {"j", "cmov", "set"})
    if (m.starts_with(head))
      for (auto [negated, positive] : kNames)
        if (m.substr(head.size()) == negated) return std::string(head).append(positive);
  return "";
}

// vcmpps with predicate 1 is vcmpltps. Float compares have 32 predicates (8
// without a VEX or EVEX prefix); integer compares 8, two of them unnamed.
std::string compare_with_predicate(std::string_view m, uint64_t predicate, bool legacy) {
  static constexpr const char* kFloat[32] = {
      "eq",    "lt",    "le",    "unord",   "neq",    "nlt",    "nle",    "ord",       // 0-7
      "eq_uq", "nge",   "ngt",   "false",   "neq_oq", "ge",     "gt",     "true",      // 8-15
      "eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq", "ord_s",     // 16-23
      "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq", "gt_oq", "true_us",  // 24-31
  };
  static constexpr const char* kInt[8] = {"eq", "lt", "le", nullptr, "neq", "nlt", "nle", nullptr};
  for (std::string_view head : {"cmp", "vcmp"}) {
    if (!m.starts_with(head) || predicate >= (legacy ? 8u : 32u)) continue;
    std::string_view type = m.substr(head.size());
    if (type == "ps" || type == "pd" || type == "ss" || type == "sd")
      return std::string(head).append(kFloat[predicate]).append(type);
  }
  if (m.starts_with("vpcmp") && predicate < 8 && kInt[predicate]) {
    std::string_view type = m.substr(5);
    for (std::string_view t : {"b", "ub", "w", "uw", "d", "ud", "q", "uq"})
      if (type == t) return std::string("vpcmp").append(kInt[predicate]).append(type);
  }
  return "";
}

Spelling spell(const ZydisDecodedInstruction& in, const ZydisDecodedOperand* ops) {
  Spelling s;
  const char* zydis = ZydisMnemonicGetString(in.mnemonic);
  std::string_view m = zydis ? zydis : "";
  int last = in.operand_count_visible - 1;
  bool imm_last = last >= 0 && ops[last].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
  if (in.mnemonic == ZYDIS_MNEMONIC_MOV && in.raw.imm[0].size == 64 && imm_last) {
    s.mnemonic = "movabs";
    s.symbol = host_function_name(ops[last].imm.value.u);
  } else if (in.mnemonic == ZYDIS_MNEMONIC_NOP && last == 1) {
    s.hidden_operand = 1;
  } else if (imm_last) {
    // A compare's predicate, or a jump's target (an immediate too).
    bool legacy = in.encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY;
    s.mnemonic = compare_with_predicate(m, ops[last].imm.value.u, legacy);
    if (!s.mnemonic.empty()) s.hidden_operand = last;
  }
  if (s.mnemonic.empty() && s.hidden_operand < 0) s.mnemonic = positive_condition(m);
  return s;
}

// Zydis' Intel style, set to read like objdump -M intel: lower-case hex, a
// size on every memory operand, no padding of displacements and immediates,
// rip-relative operands as encoded ([rip+0x790]). Absolute addresses (branch
// targets, which are offsets: the code is decoded at address 0) get the four
// digits of the line prefixes, so `jle 0x007b` finds its line `0x007b:`.
// The hooks apply the instruction's Spelling, reaching it and Zydis' own
// functions (which they fall back on) through the formatter's user data.
struct Formatter {
  ZydisFormatter zydis;
  ZydisFormatterFunc print_mnemonic, format_imm, format_reg;
  Spelling spelling;
};

Formatter& formatter_of(ZydisFormatterContext* context) { return *static_cast<Formatter*>(context->user_data); }

ZyanStatus append(ZydisFormatterBuffer* buffer, ZydisTokenType token, const char* text) {
  ZyanString* string;
  ZYAN_CHECK(ZydisFormatterBufferAppend(buffer, token));
  ZYAN_CHECK(ZydisFormatterBufferGetString(buffer, &string));
  return ZyanStringAppendFormat(string, "%s", text);
}

ZyanStatus print_mnemonic(const ZydisFormatter* zydis, ZydisFormatterBuffer* buffer, ZydisFormatterContext* context) {
  Formatter& f = formatter_of(context);
  if (f.spelling.mnemonic.empty()) return f.print_mnemonic(zydis, buffer, context);
  return append(buffer, ZYDIS_TOKEN_MNEMONIC, f.spelling.mnemonic.c_str());
}

ZyanStatus format_imm(const ZydisFormatter* zydis, ZydisFormatterBuffer* buffer, ZydisFormatterContext* context) {
  Formatter& f = formatter_of(context);
  if (context->operand->id == f.spelling.hidden_operand) return ZYDIS_STATUS_SKIP_TOKEN;
  if (f.spelling.symbol) return append(buffer, ZYDIS_TOKEN_SYMBOL, f.spelling.symbol);
  return f.format_imm(zydis, buffer, context);
}

ZyanStatus format_reg(const ZydisFormatter* zydis, ZydisFormatterBuffer* buffer, ZydisFormatterContext* context) {
  Formatter& f = formatter_of(context);
  if (context->operand->id == f.spelling.hidden_operand) return ZYDIS_STATUS_SKIP_TOKEN;
  return f.format_reg(zydis, buffer, context);
}

bool init_formatter(Formatter& f) {
  const std::pair<ZydisFormatterProperty, ZyanUPointer> props[] = {
      {ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE},
      {ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE},
      {ZYDIS_FORMATTER_PROP_FORCE_RELATIVE_RIPREL, ZYAN_TRUE},
      {ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, 4},
      {ZYDIS_FORMATTER_PROP_DISP_PADDING, static_cast<ZyanUPointer>(ZYDIS_PADDING_DISABLED)},
      {ZYDIS_FORMATTER_PROP_IMM_PADDING, static_cast<ZyanUPointer>(ZYDIS_PADDING_DISABLED)},
  };
  if (!ZYAN_SUCCESS(ZydisFormatterInit(&f.zydis, ZYDIS_FORMATTER_STYLE_INTEL))) return false;
  for (const auto& [prop, value] : props)
    if (!ZYAN_SUCCESS(ZydisFormatterSetProperty(&f.zydis, prop, value))) return false;
  // ZydisFormatterSetHook installs ours and hands back Zydis' own, which
  // ours fall back on.
  f.print_mnemonic = print_mnemonic;
  f.format_imm = format_imm;
  f.format_reg = format_reg;
  const std::pair<ZydisFormatterFunction, ZydisFormatterFunc*> hooks[] = {
      {ZYDIS_FORMATTER_FUNC_PRINT_MNEMONIC, &f.print_mnemonic},
      {ZYDIS_FORMATTER_FUNC_FORMAT_OPERAND_IMM, &f.format_imm},
      {ZYDIS_FORMATTER_FUNC_FORMAT_OPERAND_REG, &f.format_reg},
  };
  for (const auto& [type, slot] : hooks) {
    auto fn = std::bit_cast<const void*>(*slot);  // Zydis passes functions as void pointers
    if (!ZYAN_SUCCESS(ZydisFormatterSetHook(&f.zydis, type, &fn))) return false;
    *slot = std::bit_cast<ZydisFormatterFunc>(fn);
  }
  return true;
}

struct Decoded {
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  uint64_t offset;
};

// The offset a rip-relative operand reaches (a constant in the pool), as a
// comment objdump-style: the encoded displacement alone says little.
std::string riprel_comment(const Decoded& d) {
  for (int i = 0; i < d.insn.operand_count_visible; ++i) {
    const ZydisDecodedOperand& op = d.ops[i];
    uint64_t target = 0;
    if (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP &&
        ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d.insn, &op, d.offset, &target))) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "  # 0x%04llx", static_cast<unsigned long long>(target));
      return buf;
    }
  }
  return "";
}

std::string instruction_text(Formatter& f, const Decoded& d) {
  f.spelling = spell(d.insn, d.ops);
  char buf[256];
  if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&f.zydis, &d.insn, d.ops, d.insn.operand_count_visible, buf,
                                                    sizeof buf, d.offset, &f)))
    return "(zydis cannot format this instruction)";
  return buf + riprel_comment(d);
}
#endif

}  // namespace

#if BRAZE_HAVE_ZYDIS
std::string disassembler() {
  ZyanU64 v = ZydisGetVersion();
  return "zydis " + std::to_string(ZYDIS_VERSION_MAJOR(v)) + "." + std::to_string(ZYDIS_VERSION_MINOR(v)) + "." +
         std::to_string(ZYDIS_VERSION_PATCH(v));
}

std::string disassemble(const uint8_t* code, size_t size) {
  ZydisDecoder decoder;
  Formatter formatter;
  if (!ZYAN_SUCCESS(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
      !init_formatter(formatter))
    return "# zydis cannot set up an x86-64 decoder and Intel-syntax formatter\n";
  std::string out;
  Decoded d;
  // Offsets from the start, not the code's address: stable across runs.
  for (d.offset = 0; d.offset < size;) {
    if (ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code + d.offset, size - d.offset, &d.insn, d.ops))) {
      out += offset_prefix(d.offset) + instruction_text(formatter, d) + "\n";
      d.offset += d.insn.length;
      continue;
    }
    // Not an instruction (or one cut off by the end): show the byte and
    // resynchronise on the next one.
    char buf[16];
    std::snprintf(buf, sizeof buf, ".byte 0x%02x\n", code[d.offset]);
    out += offset_prefix(d.offset) + buf;
    ++d.offset;
  }
  return out;
}
#else
std::string disassembler() { return ""; }

std::string disassemble(const uint8_t*, size_t) {
  return "# no disassembly: braze was built without Zydis (install libzydis-dev and reconfigure)\n";
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
