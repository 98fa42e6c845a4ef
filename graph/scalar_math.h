// The scalar formula of every element-wise op, one functor per op, named as
// its row in graph/ops.def. Plain header code so that the reference
// interpreter (host, T = double or int64_t) and generated CUDA kernels
// (device, T = float or an integer type) share one definition.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define BRAZE_HD __host__ __device__ inline
#else
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#define BRAZE_HD inline
#endif

namespace braze::fn {

#if !defined(__CUDACC_RTC__)
using std::ceil, std::copysign, std::cos, std::erf, std::exp, std::exp2, std::expm1, std::floor,
    std::fmod, std::log, std::log1p, std::log2, std::nearbyint, std::pow, std::sin,
    std::sqrt, std::tan, std::tanh, std::isnan, std::isinf, std::signbit;
#endif

template <class T>
inline constexpr bool kIsFloat = static_cast<T>(0.5) != static_cast<T>(0);

// Integer +, -, * and negation wrap around in two's complement, as NumPy's
// do. Signed overflow is undefined behaviour in C++, so integer arithmetic
// goes through unsigned long long, whose low bits are the wrapped result
// for every integer width; converting back to T is modular (C++20, and
// CUDA's conversion does the same).
using Wide = unsigned long long;
template <class T> BRAZE_HD T wrap_add(T a, T b) { if constexpr (kIsFloat<T>) return a + b; else return T(Wide(a) + Wide(b)); }
template <class T> BRAZE_HD T wrap_sub(T a, T b) { if constexpr (kIsFloat<T>) return a - b; else return T(Wide(a) - Wide(b)); }
template <class T> BRAZE_HD T wrap_mul(T a, T b) { if constexpr (kIsFloat<T>) return a * b; else return T(Wide(a) * Wide(b)); }

template <class T> BRAZE_HD T nan_value() { return static_cast<T>(0.0 / 0.0); }
template <class T> BRAZE_HD bool is_nan(T x) { if constexpr (kIsFloat<T>) return x != x; else return false; }

// Unary.
// -x, not 0 - x: negative(+0.0) is -0.0.
struct Neg {
  template <class T> BRAZE_HD T operator()(T x) const {
    if constexpr (kIsFloat<T>) return -x;
    else return wrap_sub(T(0), x);
  }
};
// abs of the most negative integer wraps to itself, as in NumPy.
struct Abs { template <class T> BRAZE_HD T operator()(T x) const { return x < 0 ? wrap_sub(T(0), x) : (x == 0 ? T(0) : x); } };
struct Sign {
  template <class T> BRAZE_HD T operator()(T x) const {
    if (is_nan(x)) return x;
    return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
  }
};
struct Exp { template <class T> BRAZE_HD T operator()(T x) const { return exp(x); } };
struct Exp2 { template <class T> BRAZE_HD T operator()(T x) const { return exp2(x); } };
struct Expm1 { template <class T> BRAZE_HD T operator()(T x) const { return expm1(x); } };
struct Log { template <class T> BRAZE_HD T operator()(T x) const { return log(x); } };
struct Log2 { template <class T> BRAZE_HD T operator()(T x) const { return log2(x); } };
struct Log1p { template <class T> BRAZE_HD T operator()(T x) const { return log1p(x); } };
struct Sqrt { template <class T> BRAZE_HD T operator()(T x) const { return sqrt(x); } };
struct Rsqrt { template <class T> BRAZE_HD T operator()(T x) const { return T(1) / sqrt(x); } };
struct Reciprocal { template <class T> BRAZE_HD T operator()(T x) const { return T(1) / x; } };
struct Square { template <class T> BRAZE_HD T operator()(T x) const { return wrap_mul(x, x); } };
struct Sin { template <class T> BRAZE_HD T operator()(T x) const { return sin(x); } };
struct Cos { template <class T> BRAZE_HD T operator()(T x) const { return cos(x); } };
struct Tan { template <class T> BRAZE_HD T operator()(T x) const { return tan(x); } };
struct Tanh { template <class T> BRAZE_HD T operator()(T x) const { return tanh(x); } };
struct Sigmoid { template <class T> BRAZE_HD T operator()(T x) const { return T(1) / (T(1) + exp(-x)); } };
struct Relu {
  // NaN stays NaN, as in maximum(x, 0).
  template <class T> BRAZE_HD T operator()(T x) const { return x < 0 ? T(0) : x; }
};
struct Erf { template <class T> BRAZE_HD T operator()(T x) const { return erf(x); } };
struct Floor { template <class T> BRAZE_HD T operator()(T x) const { if constexpr (kIsFloat<T>) return floor(x); else return x; } };
struct Ceil { template <class T> BRAZE_HD T operator()(T x) const { if constexpr (kIsFloat<T>) return ceil(x); else return x; } };
// Round half to even, as NumPy: nearbyint in the default rounding mode.
struct Round { template <class T> BRAZE_HD T operator()(T x) const { if constexpr (kIsFloat<T>) return nearbyint(x); else return x; } };
struct IsNan { template <class T> BRAZE_HD bool operator()(T x) const { return is_nan(x); } };
struct IsInf {
  template <class T> BRAZE_HD bool operator()(T x) const {
    if constexpr (kIsFloat<T>) return isinf(x); else return false;
  }
};
// The sign bit itself, as NumPy's: -0.0 and a NaN with its sign bit set
// are negative. Integers: x < 0.
struct SignBit {
  template <class T> BRAZE_HD bool operator()(T x) const {
    if constexpr (kIsFloat<T>) return signbit(x); else return x < 0;
  }
};
struct LogicalNot { template <class T> BRAZE_HD bool operator()(T x) const { return !(x != 0); } };
// Bitwise ops take integers and bool only (DTypeRule::Bitwise, Shift); the
// float branches are never reached, but the reference instantiates every
// functor for double. A bool's invert is logical_not: Graph::apply records
// it so, since bools compute as the integers 0 and 1, where ~1 is -2.
struct BitwiseInvert {
  template <class T> BRAZE_HD T operator()(T x) const {
    if constexpr (kIsFloat<T>) return nan_value<T>();
    else return T(~x);
  }
};
// Cast and Copy move a value unchanged; the conversion happens on store.
struct Cast { template <class T> BRAZE_HD T operator()(T x) const { return x; } };
struct Copy { template <class T> BRAZE_HD T operator()(T x) const { return x; } };
struct StopGradient { template <class T> BRAZE_HD T operator()(T x) const { return x; } };

// Binary.
struct Depend { template <class T> BRAZE_HD T operator()(T a, T) const { return a; } };
struct Add { template <class T> BRAZE_HD T operator()(T a, T b) const { return wrap_add(a, b); } };
struct Sub { template <class T> BRAZE_HD T operator()(T a, T b) const { return wrap_sub(a, b); } };
struct Mul { template <class T> BRAZE_HD T operator()(T a, T b) const { return wrap_mul(a, b); } };
struct Div { template <class T> BRAZE_HD T operator()(T a, T b) const { return a / b; } };
struct Pow {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      return pow(a, b);
    } else {
      // Integer power by squaring. A negative exponent truncates toward zero
      // (NumPy raises; a kernel cannot, and only 1 and -1 survive it).
      if (b < 0) return a == 1 ? T(1) : (a == -1 ? (b % 2 ? T(-1) : T(1)) : T(0));
      T r = 1;
      for (; b; b >>= 1, a = wrap_mul(a, a))
        if (b & 1) r = wrap_mul(r, a);
      return r;
    }
  }
};
// NaN propagates through maximum and minimum, as in NumPy.
struct Maximum {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return nan_value<T>();
    return a < b ? b : a;
  }
};
struct Minimum {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return nan_value<T>();
    return b < a ? b : a;
  }
};
// Python's %: the result has the sign of the divisor. x % 0 is NaN for
// floats and 0 for integers (NumPy's result, without its warning).
struct Mod {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      T r = fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      else if (r == 0) r = copysign(T(0), b);  // a zero takes the divisor's sign too: -4.0 % 2.0 is +0.0
      return r;
    } else {
      // x % 0 is 0; x % -1 is 0 too, and must not divide: MIN % -1 traps
      // (for an unsigned T, T(-1) is its largest value, an ordinary divisor).
      constexpr bool is_signed = T(-1) < T(0);
      if (b == 0 || (is_signed && b == T(-1))) return T(0);
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
struct Eq { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a < b; } };
struct Le { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a >= b; } };
struct LogicalAnd { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a != 0 && b != 0; } };
struct LogicalOr { template <class T> BRAZE_HD bool operator()(T a, T b) const { return a != 0 || b != 0; } };
// Note [Shift counts]
// NumPy's shifts (npy_lshift, npy_rshift in numpy/_core/include/numpy/
// npy_math.h) define what C leaves undefined: a count outside [0, width)
// of the computing type, a negative one read as unsigned, shifts every bit
// out: 0, or -1 for >> of a negative value; >> is arithmetic. Computed in
// any type at least as wide as the dtype and wrapped to it (the reference
// computes in int64, 32-bit kernel lanes hold int8 sign-extended) this
// gives the same bits: the bits a narrow dtype keeps are shifted out for
// every count past its width too, and a sign-extended value shifted right
// past its width is its sign.
struct BitwiseAnd { template <class T> BRAZE_HD T operator()(T a, T b) const { if constexpr (kIsFloat<T>) return nan_value<T>(); else return T(a & b); } };
struct BitwiseOr { template <class T> BRAZE_HD T operator()(T a, T b) const { if constexpr (kIsFloat<T>) return nan_value<T>(); else return T(a | b); } };
struct BitwiseXor { template <class T> BRAZE_HD T operator()(T a, T b) const { if constexpr (kIsFloat<T>) return nan_value<T>(); else return T(a ^ b); } };
struct LeftShift {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) return nan_value<T>();
    else return Wide(b) < 8 * sizeof(T) ? T(Wide(a) << Wide(b)) : T(0);
  }
};
struct RightShift {
  template <class T> BRAZE_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) return nan_value<T>();
    else if (Wide(b) < 8 * sizeof(T)) return T(a >> b);  // arithmetic for signed T (C++20; every compiler before)
    else return T(a >> (8 * sizeof(T) - 1) >> 1);  // every bit out: the sign, 0 for unsigned T
  }
};

// Ternary.
struct Where { template <class T> BRAZE_HD T operator()(bool c, T a, T b) const { return c ? a : b; } };

}  // namespace braze::fn
