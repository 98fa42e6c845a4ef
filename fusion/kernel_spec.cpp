#include "fusion/kernel_spec.h"

#include <xxhash.h>

#include <cstdio>
#include <sstream>

namespace braze {

namespace {

const char* space_name(Space s) { return s == Space::Full ? "full" : "reduced"; }

const char* kind_name(KernelInput::Kind k) {
  switch (k) {
    case KernelInput::Kind::Buffer: return "buffer";
    case KernelInput::Kind::Scalar: return "scalar";
    case KernelInput::Kind::Arange: return "arange";
    case KernelInput::Kind::Window: return "window";
  }
  return "?";
}

}  // namespace

Shape KernelSpec::reduced_shape() const {
  Shape s = domain;
  for (int64_t a : reduce_axes) s[a] = 1;
  return s;
}

std::string canonical_text(const KernelSpec& s) {
  std::ostringstream out;
  out << "kernel domain=" << to_string(s.domain) << " reduce=" << to_string(s.reduce_axes) << "\n";
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const KernelInput& in = s.inputs[i];
    out << "in" << i << " " << kind_name(in.kind) << " " << name(in.dtype) << " " << space_name(in.space);
    if (in.kind != KernelInput::Kind::Scalar)
      out << " shape=" << to_string(in.view.shape) << " strides=" << to_string(in.view.strides)
          << " offset=" << in.view.offset;
    for (size_t d = 0; d < in.view.window.size(); ++d)
      out << (d ? "," : " window=") << in.view.window[d].lo << ":" << in.view.window[d].hi;
    if (in.kind == KernelInput::Kind::Window) out << " bounds=" << in.bounds.lo << ":" << in.bounds.hi;
    if (in.same_buffer_as >= 0) out << " buffer=in" << in.same_buffer_as;
    out << "\n";
  }
  for (size_t i = 0; i < s.body.size(); ++i) {
    const KernelOp& op = s.body[i];
    out << "v" << i << " = ";
    if (op.op == Op::Input) {
      out << "load in" << op.input;
      if (!op.args.empty()) out << " if v" << op.args[0];
    } else {
      out << info(op.op).name;
      for (int32_t a : op.args) out << " v" << a;
      if (!op.attr.ints.empty()) out << " " << to_string(op.attr.ints);
    }
    out << " : " << name(op.dtype) << " " << space_name(op.space) << "\n";
  }
  for (size_t i = 0; i < s.outputs.size(); ++i)
    out << "out" << i << " = v" << s.outputs[i].value << " : " << name(s.outputs[i].dtype) << " "
        << space_name(s.outputs[i].space) << "\n";
  return out.str();
}

std::string KernelKey::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hash[0]),
                static_cast<unsigned long long>(hash[1]));
  return buf;
}

KernelKey kernel_key(const KernelSpec& spec) {
  std::string text = canonical_text(spec);
  XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return {{h.high64, h.low64}};
}

}  // namespace braze
