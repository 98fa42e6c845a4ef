"""The arena (on unless BRAZE_ARENA=0) and BRAZE_POISON=1 (memplan/,
runtime/execute.cpp): the intermediates of a program live in one planned arena, and the answers are
the same, bit for bit, even with dead arena bytes poisoned with NaN. braze
reads the environment once per process, so each case runs in a fresh
interpreter."""

import json
import os
import subprocess
import sys
import textwrap

import braze as bz

BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))

# Matrix products between fused kernels: several intermediates alive over
# several steps, so the plan shares memory between them.
PROGRAM = textwrap.dedent("""
    import json
    import numpy as np
    import braze as bz
    rng = np.random.default_rng(0)
    w = lambda *s: bz.tensor(rng.standard_normal(s, dtype=np.float32) * 0.3)
    x = w(32, 16)
    h = bz.maximum(x @ w(16, 64) + w(64), 0.0)
    h = bz.softmax(h @ w(64, 64), axis=-1) * 2.0 - 1.0
    y = bz.tanh(h @ w(64, 16)) + x
    bz.reset_stats()
    out = y.numpy()
    print(json.dumps({"bits": out.view(np.uint32).tolist(), "stats": bz.stats()}))
""")


def run(**env_vars):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_BACKEND="cpu", PYTHONPATH=path)
    for name in ("BRAZE_ARENA", "BRAZE_POISON"):
        env.pop(name, None)
    env.update(env_vars)
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)


def result(**env_vars):
    r = run(**env_vars)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_arena_and_poison_give_the_same_bits_with_fewer_allocations():
    plain = result(BRAZE_ARENA="0")
    assert plain["stats"]["arena_bytes"] == 0
    for env in ({}, {"BRAZE_ARENA": "1"}, {"BRAZE_POISON": "1"}):  # the arena is on by default
        got = result(**env)
        assert got["bits"] == plain["bits"], env
        assert got["stats"]["arena_bytes"] > 0, env
        assert got["stats"]["allocations"] < plain["stats"]["allocations"], (env, got["stats"], plain["stats"])
        assert got["stats"]["kernels_launched"] == plain["stats"]["kernels_launched"]


def test_a_switch_other_than_0_or_1_is_an_error_naming_the_variable():
    r = run(BRAZE_ARENA="yes")
    assert r.returncode != 0
    assert "BRAZE_ARENA='yes' is not a switch; expected 0 or 1" in r.stderr
