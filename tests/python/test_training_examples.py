"""The training examples train: examples/train_mlp.py and train_cnn.py
reach their test accuracy on scikit-learn's digits in a few epochs,
train_lm.py's loss falls (with checkpointed blocks too, in less memory), and the CNN's training step is one program that
replays with nothing allocated (issue 23)."""

import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import braze as bz

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
# The reference interpreter runs no programs: nothing to count there.
REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
counts_programs = pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference runs no programs")


@pytest.fixture
def examples_path(monkeypatch):
    """The examples importable as modules (they import their harness)."""
    monkeypatch.syspath_prepend(EXAMPLES)


def test_train_mlp_reaches_its_accuracy():
    pytest.importorskip("sklearn")
    # train_mlp.py's main takes no arguments: run it as its users do. 10
    # epochs reach 97.5% with the default seed (about 1 s).
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_mlp.py"), "--epochs", "10"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    accuracy = float(re.search(r"test accuracy ([\d.]+)% after 10 epochs", r.stdout).group(1)) / 100
    assert accuracy >= 0.95, r.stdout
    if not REFERENCE:
        assert "programs compiled: 2 in epoch 1, 0 after it" in r.stdout, r.stdout


def test_train_cnn_reaches_its_accuracy(examples_path):
    pytest.importorskip("sklearn")
    import train_cnn
    # 5 epochs reach 98.1% with the default seed and learning rate.
    result = train_cnn.main(["--epochs", "5"])
    assert result["accuracy"] >= 0.95, result
    assert result["losses"][-1] < result["losses"][0] / 4, result


def test_train_lm_loss_falls(examples_path):
    import train_lm
    result = train_lm.main(["--steps", "60", "--every", "20", "--generate", "20"])
    losses = result["losses"]
    assert len(losses) == 60 and all(math.isfinite(v) for v in losses)
    # It starts near ln(vocabulary), the loss of a uniform guess.
    assert abs(losses[0] - math.log(result["vocab"])) < 0.25, losses[0]
    assert np.mean(losses[-10:]) < 0.8 * losses[0], losses
    assert len(result["sample"]) == 20


def test_train_lm_with_checkpoints_gives_the_same_losses_in_less_memory(examples_path):
    import train_lm
    args = ["--steps", "8", "--every", "4", "--generate", "0"]
    plain = train_lm.main(args)
    checked = train_lm.main(args + ["--checkpoint"])
    np.testing.assert_allclose(checked["losses"], plain["losses"], rtol=1e-5)
    if not REFERENCE:  # the arena of the step's program: the blocks' activations are recomputed, not kept
        assert checked["arena_bytes"] < plain["arena_bytes"], (checked["arena_bytes"], plain["arena_bytes"])


def steps_stats(step, batch, count):
    """bz.stats() deltas of each of `count` calls of step(*batch)."""
    out = []
    for _ in range(count):
        before = bz.stats()
        loss = float(step(*batch))
        after = bz.stats()
        assert math.isfinite(loss)
        out.append({k: after[k] - before[k] for k in ("programs_compiled", "programs_replayed", "allocations",
                                                      "realizations", "kernels_launched")})
    return out


@counts_programs
def test_cnn_step_replays_one_program_allocating_nothing(examples_path):
    import train_cnn
    rng = np.random.default_rng(0)
    params = {k: bz.tensor(v) for k, v in train_cnn.init_params(rng).items()}
    x = bz.tensor(rng.random((train_cnn.BATCH, 1, train_cnn.SIDE, train_cnn.SIDE), dtype=np.float32))
    y = bz.tensor(rng.integers(0, train_cnn.CLASSES, train_cnn.BATCH))
    step = bz.optim.compile_step(train_cnn.loss_fn, bz.optim.Adam(params, lr=1e-3))
    first, second, *later = steps_stats(step, (x, y), 4)
    # The first step compiles the program (or replays it: an earlier test
    # may have trained this structure) and allocates the loss's buffer.
    assert first["realizations"] == 1, first
    for s in [second] + later:
        assert s["programs_compiled"] == 0, s
        assert s["programs_replayed"] == 1 and s["realizations"] == 1, s
        assert s["allocations"] == 0, s
        assert s["kernels_launched"] == second["kernels_launched"], s


@counts_programs
def test_lm_step_replays_one_program_allocating_nothing(examples_path):
    # The step is some 500 ops deep, past the lazy depth limit, which used to
    # cut it into 4 programs with ~200 allocations (Note [Traced functions add
    # no depth], runtime/autodiff.h).
    import train_lm
    chars, data = train_lm.encode(train_lm.load_text())
    rng = np.random.default_rng(0)
    params = {k: bz.tensor(v) for k, v in train_lm.init_params(rng, len(chars)).items()}
    x, y = (bz.tensor(a) for a in train_lm.sample_batch(rng, data))
    step = bz.optim.compile_step(train_lm.loss_fn, bz.optim.Adam(params, lr=1e-3))
    _, *later = steps_stats(step, (x, y), 3)
    for s in later:
        assert s["programs_replayed"] == 1 and s["realizations"] == 1, s
        assert s["allocations"] == 0, s
