"""braze's demo: record a lazy expression, realize it, compare with NumPy."""

import numpy as np

import braze as bz

rng = np.random.default_rng(0)
a = rng.standard_normal((4, 6), dtype=np.float32)
b = rng.standard_normal(6, dtype=np.float32)

x = bz.tensor(a)
y = bz.softmax(bz.maximum(x + b, 0.0) * 2.0, axis=-1)  # lazy: nothing has run yet
print("recorded:", y)

got = y.numpy()  # realize
z = np.maximum(a + b, 0.0) * 2.0
want = np.exp(z - z.max(-1, keepdims=True))
want /= want.sum(-1, keepdims=True)

np.set_printoptions(precision=5, suppress=True)
print("realized:", y)
print("braze:\n", got)
print("numpy:\n", want)
print("max abs difference:", float(np.abs(got - want).max()))
print("stats:", {k: v for k, v in bz.stats().items() if v})
assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
