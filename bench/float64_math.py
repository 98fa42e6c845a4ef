"""float64 transcendentals in fused kernels (jit_cpu/README.md, the float64
vector math) beside NumPy: element-wise chains over N = 4M float64 values
(32 MB per array), braze's kernels generated vs interpreted, the best time
of BENCH_REPS runs (timing.py) and the largest difference from NumPy's
result, |got - want| / (|want| + 1) (the sums cancel near zero).

  sin_pow: sin(x) * |x| ** 1.5 + cos(0.5 x)
  six:     sin(x) + cos(x) erf(x) + (|x| + 1) ** 0.3 + expm1(0.1 x) - log1p(|x|)

Run: PYTHONPATH=build/python .venv/bin/python bench/float64_math.py
(with PYTHONPATH pointing at an older build, the same figures before).
"""
import os

import numpy as np

import braze as bz
from timing import best

N = int(os.environ.get("BENCH_N", 1 << 22))


def erf_np(x):
    try:
        from scipy.special import erf
        return erf(x)
    except ImportError:  # NumPy has no erf: math.erf per element
        import math
        return np.vectorize(math.erf, otypes=[np.float64])(x)


CHAINS = {
    "sin_pow": (lambda x: bz.sin(x) * bz.abs(x) ** 1.5 + bz.cos(x * 0.5),
                lambda x: np.sin(x) * np.abs(x) ** 1.5 + np.cos(x * 0.5)),
    "six": (lambda x: bz.sin(x) + bz.cos(x) * bz.erf(x) + (bz.abs(x) + 1.0) ** 0.3 + bz.expm1(x * 0.1)
            - bz.log1p(bz.abs(x)),
            lambda x: np.sin(x) + np.cos(x) * erf_np(x) + (np.abs(x) + 1.0) ** 0.3 + np.expm1(x * 0.1)
            - np.log1p(np.abs(x))),
}


def main():
    x = np.random.default_rng(0).standard_normal(N) * 3.0
    tx = bz.tensor(x)
    print(f"N = {N} float64")
    print(f"{'chain':<8} {'braze ms':>9} {'numpy ms':>9} {'ratio':>6} {'generated':>9} {'interpreted':>11} {'max diff':>12}")
    for name, (f, g) in CHAINS.items():
        bz.reset_stats()
        got = f(tx).numpy()
        s = bz.stats()
        want = g(x)
        diff = np.max(np.abs(got - want) / (np.abs(want) + 1))
        tb = best(lambda: f(tx).numpy())
        tn = best(lambda: g(x))
        print(f"{name:<8} {tb * 1e3:9.1f} {tn * 1e3:9.1f} {tb / tn:6.2f} {s['kernels_compiled']:9d} "
              f"{s.get('kernels_interpreted', 0):11d} {diff:12.2e}")


if __name__ == "__main__":
    main()
