"""Bounded memory (Note [Bounded caches] in runtime/program.h, Note [Arena
pool] in runtime/arena_pool.h): a loop that realizes a new shape every
iteration holds no more than the configured bounds plus a fixed overhead,
and a cycle of recurring shapes that fits the bounds replays its programs
instead of compiling them again. Each case runs in a fresh interpreter:
braze reads its bounds from the environment once per process."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import braze as bz

BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))
MB = 1 << 20

# BRAZE_BACKEND=reference makes no programs: nothing here would be cached.
pytestmark = pytest.mark.skipif(os.environ.get("BRAZE_BACKEND") == "reference",
                                reason="BRAZE_BACKEND=reference makes no programs")

# A transformer-like block (layer_norm, two matmuls with a gelu and a bias
# as oneDNN post-ops, a softmax and a residual add) on a batch of
# 1 + (i % period) rows at iteration i (period 0: 1 + i, a shape never seen
# before every time). Prints the resident set size (/proc/self/statm) after
# the first iteration and every 100th, bz.stats() and the caches' figures.
LOOP = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import braze as bz
    iterations, period = int(sys.argv[1]), int(sys.argv[2])
    page = os.sysconf("SC_PAGE_SIZE")
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page
    rng = np.random.default_rng(0)
    D, F = 64, 256
    p = {k: rng.standard_normal(s, dtype=np.float32) * 0.1 for k, s in
         (("w1", (D, F)), ("b1", (F,)), ("w2", (F, D)), ("b2", (D,)), ("g", (D,)), ("b", (D,)))}
    t = {k: bz.tensor(v) for k, v in p.items()}
    def block(x):
        h = bz.gelu(bz.layer_norm(x, t["g"], t["b"], eps=1e-5) @ t["w1"] + t["b1"], approximate="tanh")
        return x + bz.softmax(h @ t["w2"] + t["b2"], axis=-1)
    def np_block(x):
        mu = x.mean(-1, keepdims=True)
        ln = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * p["g"] + p["b"]
        u = ln @ p["w1"] + p["b1"]
        h = 0.5 * u * (1 + np.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))
        z = h @ p["w2"] + p["b2"]
        e = np.exp(z - z.max(-1, keepdims=True))
        return x + e / e.sum(-1, keepdims=True)
    samples = []
    for i in range(iterations):
        n = 1 + (i % period if period else i)
        x = rng.standard_normal((n, D), dtype=np.float32)
        y = block(bz.tensor(x)).numpy()
        if i % 250 == 0:  # right all along, replayed or not, whatever was evicted
            np.testing.assert_allclose(y, np_block(x), rtol=2e-3, atol=2e-3)
        if i == 0 or (i + 1) % 100 == 0:
            samples.append(rss())
    print(json.dumps({"rss": samples, "stats": bz.stats(), "memory": bz._core._memory()}))
""")


def run(code, args=(), **env_vars):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_BACKEND="cpu", PYTHONPATH=path)
    for name in ("BRAZE_PROGRAM_CACHE_MB", "BRAZE_KERNEL_CACHE_MB", "BRAZE_ARENA_POOL_MB", "BRAZE_HOST_POOL_MB"):
        env.pop(name, None)
    env.update(env_vars)
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=300)


def loop(iterations, period, **env_vars):
    r = run(LOOP, (iterations, period), **env_vars)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# The bounds of the long run, small so that every cache is past its bound
# within a few hundred iterations.
BOUNDS = {"BRAZE_PROGRAM_CACHE_MB": 8, "BRAZE_KERNEL_CACHE_MB": 2, "BRAZE_ARENA_POOL_MB": 4, "BRAZE_HOST_POOL_MB": 8}
# What the bounds leave out (Note [Bounded caches]): the largest run's own
# arena, inputs and outputs (at 2,000 rows a few MB), one entry over each
# bound, and the allocator's fragmentation.
OVERHEAD = 48 * MB


def test_2000_new_shapes_stay_under_the_configured_bounds():
    got = loop(2000, 0, **{k: str(v) for k, v in BOUNDS.items()})
    stats, memory, rss = got["stats"], got["memory"], got["rss"]
    assert stats["programs_compiled"] == 2000 and stats["programs_replayed"] == 0
    # Every bound was reached and enforced.
    assert stats["programs_evicted"] > 1000, stats
    assert stats["kernels_evicted"] > 1000, stats
    assert stats["library_primitives_evicted"] > 1000, stats
    for cache, row in memory.items():
        assert row["bytes"] <= row["limit"] or row["entries"] == 1, (cache, row)
    # Programs keep no arenas: the pool keeps one, the largest.
    assert memory["idle_arenas"]["entries"] == 1, memory
    # The bound: what the process held after its first iteration, plus
    # the caches' bounds (the kernel bound once for generated code, once
    # for oneDNN's primitives; the freed host blocks kept for reuse), plus
    # the fixed overhead.
    bound = rss[0] + (BOUNDS["BRAZE_PROGRAM_CACHE_MB"] + 2 * BOUNDS["BRAZE_KERNEL_CACHE_MB"] +
                      BOUNDS["BRAZE_ARENA_POOL_MB"] + BOUNDS["BRAZE_HOST_POOL_MB"]) * MB + OVERHEAD
    print(f"RSS MB at iterations 1, 100, ..., 2000: {[round(r / MB, 1) for r in rss]}; bound {bound / MB:.1f}")
    assert max(rss) <= bound, ([r // MB for r in rss], bound // MB)


def test_a_cycle_of_300_shapes_that_fits_the_bounds_replays():
    got = loop(900, 300)  # the default bounds hold 300 such programs
    stats, memory, rss = got["stats"], got["memory"], got["rss"]
    # Compiled in the first cycle, replayed in the next two (the count cap
    # of 256 programs that this replaces compiled every iteration).
    assert stats["programs_compiled"] == 300, stats
    assert stats["programs_replayed"] == 600, stats
    assert stats["programs_evicted"] == 0 and stats["kernels_evicted"] == 0, stats
    assert memory["programs"]["entries"] == 300, memory
    # One arena serves the 300 programs (Note [Arena pool]).
    assert memory["idle_arenas"]["entries"] == 1, memory
    # Level after the first cycle: samples at iterations 300, 400, ..., 900.
    print(f"RSS MB at iterations 1, 100, ..., 900: {[round(r / MB, 1) for r in rss]}")
    assert max(rss[3:]) - rss[3] <= 8 * MB, [r // MB for r in rss]


CHECK = "import braze as bz, numpy as np; print((bz.tensor(np.ones(4, np.float32)) * 3).numpy())"


@pytest.mark.parametrize("variable", ["BRAZE_PROGRAM_CACHE_MB", "BRAZE_KERNEL_CACHE_MB", "BRAZE_ARENA_POOL_MB"])
@pytest.mark.parametrize("value", ["-1", "1.5", "12MB", " 3", "1099511627776"])
def test_a_bound_that_is_not_a_size_is_an_error_naming_the_variable(variable, value):
    r = run(CHECK, **{variable: value})
    assert r.returncode != 0
    assert f"ValueError: {variable}='{value}' is not a size; expected a whole number of megabytes from 0 to 1048576" \
        in r.stderr, r.stderr


def test_bounds_are_read_from_the_environment():
    code = "import json, braze as bz; print(json.dumps(bz._core._memory()))"
    got = json.loads(run(code, BRAZE_PROGRAM_CACHE_MB="7", BRAZE_KERNEL_CACHE_MB="0", BRAZE_ARENA_POOL_MB="5").stdout)
    assert got["programs"]["limit"] == 7 * MB and got["programs"]["variable"] == "BRAZE_PROGRAM_CACHE_MB"
    assert got["cpu_kernels"]["limit"] == 0 and got["onednn_primitives"]["limit"] == 0
    assert got["idle_arenas"]["limit"] == 5 * MB
    # A bound of 0 keeps only what runs now: answers stay right.
    r = run(CHECK, BRAZE_PROGRAM_CACHE_MB="0", BRAZE_KERNEL_CACHE_MB="0", BRAZE_ARENA_POOL_MB="0")
    assert r.returncode == 0 and "[3. 3. 3. 3.]" in r.stdout, r.stderr


def test_doctor_shows_each_bound_and_its_variable():
    cli = pathlib.Path(BRAZE_PATH).parent / "tools" / "braze"
    if not cli.exists():
        pytest.skip("the braze CLI is not built next to this Python package")
    env = dict(os.environ, BRAZE_PROGRAM_CACHE_MB="96", BRAZE_KERNEL_CACHE_MB="24", BRAZE_ARENA_POOL_MB="48")
    r = subprocess.run([str(cli), "doctor", "--format", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = {m["cache"]: m for m in json.loads(r.stdout)["memory"]}
    assert {k: (v["variable"], v["limit"] // MB) for k, v in rows.items()} == {
        "programs": ("BRAZE_PROGRAM_CACHE_MB", 96), "cpu_kernels": ("BRAZE_KERNEL_CACHE_MB", 24),
        "onednn_primitives": ("BRAZE_KERNEL_CACHE_MB", 24), "idle_arenas": ("BRAZE_ARENA_POOL_MB", 48)}
    text = subprocess.run([str(cli), "doctor"], env=env, capture_output=True, text=True, timeout=120).stdout
    assert "  programs: 0 kept, 0.0 of 96.0 MB (BRAZE_PROGRAM_CACHE_MB)" in text, text
    bad = subprocess.run([str(cli), "doctor"], env=dict(env, BRAZE_ARENA_POOL_MB="lots"), capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1 and "BRAZE_ARENA_POOL_MB='lots' is not a size" in bad.stderr, bad.stderr
