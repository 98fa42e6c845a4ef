"""NumPy programs nobody here wrote, run unchanged on braze tensors beside
NumPy in one process (issue 22): the program's own functions call np.* and
NumPy's protocols bring each call to braze.

picogpt: picoGPT's gpt2() forward pass (tests/python/programs/picogpt_gpt2.py,
jaymody/picoGPT 817292b), GPT-2 small's width (768, 12 heads) with 4 layers,
a 2048-token vocabulary and 128 tokens, random weights; its attention scores
are float64, as NumPy makes them (`/ np.sqrt(d)` is a float64 scalar).
jacobi: the sweep u[1:-1, 1:-1] = 0.25 * (four shifted slices) on 1024x1024
float32, 20 sweeps per call.
heat: explicit diffusion with insulated edges as NumPy code writes it,
p = np.pad(u, 1, mode="edge") and a five-point stencil of p's slices, on
1024x1024 float32, 20 steps recorded lazily per call (padding is a view:
Note [Windows]).
shallow_water: benchpress's shallow water (tests/python/programs/
shallow_water.py, verbatim) on a 1024x1024 float32 grid, 10 steps per call:
edge copies by slice assignment, then half and full steps whose flux
kernel holds more live values than AVX2's 16 registers (Note [Spilled
values]: run it with BRAZE_CPU_ISA=avx2 too).
features: a feature map np.concatenate([x, x * x, np.sin(x), np.tanh(x)],
axis=1) @ w on [4096, 64] float32 (a lazy concatenation: Note [Lazy
concatenation]).

Prints ms per call (best of BENCH_REPS rounds, in turn) and braze's speedup.
Run: PYTHONPATH=build/python .venv/bin/python bench/numpy_programs.py
"""
import os
import sys

import numpy as np

import braze as bz
from timing import best_in_turn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from programs import picogpt_gpt2, shallow_water  # noqa: E402
from test_programs import gpt2_params, to_braze  # noqa: E402


def picogpt():
    params, n_head = gpt2_params(np.random.default_rng(0), n_vocab=2048, n_ctx=256, n_embd=768, n_head=12,
                                 n_layer=4)
    braze_params = to_braze(params)
    inputs = [int(i) for i in np.random.default_rng(1).integers(0, 2048, 128)]
    return {"numpy": lambda: np.asarray(picogpt_gpt2.gpt2(inputs, **params, n_head=n_head)),
            "braze": lambda: np.asarray(picogpt_gpt2.gpt2(inputs, **braze_params, n_head=n_head))}


def sweeps(u, n):
    for _ in range(n):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def jacobi():
    u0 = np.zeros((1024, 1024), np.float32)
    u0[0] = 1.0
    return {"numpy": lambda: sweeps(u0.copy(), 20), "braze": lambda: np.asarray(sweeps(bz.tensor(u0), 20))}


def heat_steps(u, n):
    for _ in range(n):
        p = np.pad(u, 1, mode="edge")
        u = u + 0.1 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u)
    return u


def heat():
    u0 = np.random.default_rng(2).random((1024, 1024)).astype(np.float32)
    return {"numpy": lambda: heat_steps(u0, 20), "braze": lambda: np.asarray(heat_steps(bz.tensor(u0), 20))}


def water():
    state = shallow_water.model(1024, 1024)

    def run(convert):
        s = {k: convert(v) for k, v in state.items()}
        shallow_water.simulate(s, 10)
        return np.asarray(s["H"])
    return {"numpy": lambda: run(np.copy), "braze": lambda: run(bz.tensor)}


def feature_map(x, w):
    return np.concatenate([x, x * x, np.sin(x), np.tanh(x)], axis=1) @ w


def features():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4096, 64)).astype(np.float32)
    w = rng.standard_normal((256, 128)).astype(np.float32)
    bx, bw = bz.tensor(x), bz.tensor(w)
    return {"numpy": lambda: feature_map(x, w), "braze": lambda: np.asarray(feature_map(bx, bw))}


def main():
    print(f"{'program':14} {'numpy ms':>10} {'braze ms':>10} {'braze is':>10}")
    for name, make in (("picogpt", picogpt), ("jacobi", jacobi), ("heat", heat), ("shallow_water", water),
                       ("features", features)):
        t = best_in_turn(make())
        print(f"{name:14} {t['numpy'] * 1e3:10.1f} {t['braze'] * 1e3:10.1f} {t['numpy'] / t['braze']:9.2f}x")


if __name__ == "__main__":
    main()
