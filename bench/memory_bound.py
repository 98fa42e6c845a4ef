"""Resident memory of a loop whose shapes change (Note [Bounded caches] in
runtime/program.h; docs/stats.md, "Memory"): a transformer block (pre-norm
attention with a causal softmax, then a gelu MLP; T=32, D=128, 4 heads, MLP
512, float32) realized with a new batch size every iteration (`new`:
1, 2, 3, ...) or a cycle of recurring ones (`cycle`: 1 + i % period).
Prints the resident set size (/proc/self/statm) every tenth of the run,
programs compiled and replayed, evictions, and at the end what each bounded
cache holds (bz._core._memory()). The bounds come from the environment
(BRAZE_PROGRAM_CACHE_MB, BRAZE_KERNEL_CACHE_MB, BRAZE_ARENA_POOL_MB,
BRAZE_HOST_POOL_MB; docs/environment.md).

Run: PYTHONPATH=build/python .venv/bin/python bench/memory_bound.py [new|cycle] [iterations] [period]
"""
import math
import os
import sys
import time

import numpy as np

import braze as bz

T, D, H = 32, 128, 4
DH, F = D // H, 4 * D
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def weights(rng):
    w = lambda *s: bz.tensor((rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32))
    p = {n: w(D, D) for n in ("wq", "wk", "wv", "wo")}
    p.update(w1=w(D, F), w2=w(F, D), b1=w(F))
    p.update({n: w(D) for n in ("bq", "bk", "bv", "bo", "b2", "ln1_w", "ln1_b", "ln2_w", "ln2_b")})
    return p


def block(x, p, b):
    ln1 = bz.layer_norm(x, p["ln1_w"], p["ln1_b"], eps=1e-5)
    heads = lambda t: bz.permute_dims(t.reshape((b, T, H, DH)), (0, 2, 1, 3))
    q, k, v = (heads(ln1 @ p["w" + n] + p["b" + n]) for n in "qkv")
    att = bz.softmax((q @ k.mT) * (1.0 / math.sqrt(DH)), axis=-1)
    ctx = bz.permute_dims(att @ v, (0, 2, 1, 3)).reshape((b, T, D))
    h = x + (ctx @ p["wo"] + p["bo"])
    ln2 = bz.layer_norm(h, p["ln2_w"], p["ln2_b"], eps=1e-5)
    return h + (bz.gelu(ln2 @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "new"
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    period = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    rng = np.random.default_rng(0)
    p = weights(rng)
    print(f"transformer block T={T} D={D} H={H} MLP {F}, batch "
          f"{'1 + i' if mode == 'new' else f'1 + i % {period}'}, {iterations} iterations")
    start = time.perf_counter()
    for i in range(iterations):
        b = 1 + (i if mode == "new" else i % period)
        block(bz.tensor(rng.standard_normal((b, T, D), dtype=np.float32)), p, b).numpy()
        if (i + 1) % max(1, iterations // 10) == 0:
            s = bz.stats()
            print(f"  iteration {i + 1:5d}: RSS {rss_mb():8.1f} MB; programs compiled {s['programs_compiled']}, "
                  f"replayed {s['programs_replayed']}, evicted {s['programs_evicted']}; kernels evicted "
                  f"{s['kernels_evicted']}, primitives evicted {s['library_primitives_evicted']}; "
                  f"{time.perf_counter() - start:.1f} s")
    for cache, m in bz._core._memory().items():
        print(f"  {cache}: {m['entries']} kept, {m['bytes'] / 2**20:.1f} of {m['limit'] / 2**20:.0f} MB "
              f"({m['variable']})")


if __name__ == "__main__":
    main()
