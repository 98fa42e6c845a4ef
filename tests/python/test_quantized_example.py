"""examples/quantized_mlp.py (issue 28): train_mlp.py's MLP quantized after
training to uint8 activations and int8 weights keeps its test accuracy on
the digits, its int8 forward is NumPy's integer computation (the int32
sums bit for bit), the activations' zero points are corrected for, and
each int8 matmul is one oneDNN call where oneDNN sums int8 exactly."""

import os

import numpy as np
import pytest

import braze as bz

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, kernels or library calls there


@pytest.fixture(scope="module")
def run():
    """The example's main, run once for the module: 5 epochs (96.9% float32
    test accuracy with the default seed, about 1 s), 3 timed forwards."""
    pytest.importorskip("sklearn")
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(EXAMPLES)  # the example imports train_mlp, training and harness
        import quantized_mlp
        return quantized_mlp, quantized_mlp.main(["--epochs", "5", "--iterations", "3"])


def test_int8_keeps_the_float32_accuracy(run):
    _, r = run
    # Measured with seeds 0-3 at 3, 5 and 10 epochs, extremes or 99.9th percentiles: the int8
    # accuracy equal to float32's but once (+0.28 points, one digit of 360), predictions agreeing
    # on 99.7-100%. 2 points is 7 digits.
    assert r["float_accuracy"] >= 0.9, r["float_accuracy"]
    assert abs(r["int8_accuracy"] - r["float_accuracy"]) <= 0.02, (r["int8_accuracy"], r["float_accuracy"])
    assert r["agreement"] >= 0.98, r["agreement"]


def test_int8_forward_is_numpys_integer_computation(run):
    _, r = run
    # main exits when its cross-check fails; it passed, and here are its figures.
    assert r["failures"] == []
    assert r["check"]["inputs_off"] == 0  # every uint8 layer input is NumPy's
    np.testing.assert_allclose(r["check"]["logits"], r["check"]["numpy_logits"], rtol=1e-5, atol=1e-5)


def test_activation_zero_points_are_corrected(run):
    qm, r = run
    x_test, y_test = r["test"]
    # The layers' inputs are never negative, so calibration gives zero point 0. Ranges widened
    # down to -(hi - lo) put it near 128: the correction z_x * sum_k w_q[k, :] must then remove it.
    ranges = {k: (lo - (hi - lo), hi) for k, (lo, hi) in r["ranges"].items()}
    model = qm.quantize_model(r["params"], ranges)
    assert all(layer["z_x"] >= 100 for layer in model), [layer["z_x"] for layer in model]
    check, failures = qm.cross_check(model, x_test)
    assert failures == []
    accuracy = float(np.mean(check["logits"].argmax(axis=-1) == y_test))
    # Half of each input's 256 steps are spent on values that never occur: 96.7% against 96.9%.
    assert abs(accuracy - r["float_accuracy"]) <= 0.02, (accuracy, r["float_accuracy"])
    # Without the correction, the model is far off (41% measured): the test above is not vacuous.
    uncorrected = [dict(layer, correction=bz.tensor(np.zeros(layer["correction"].shape, np.int32)))
                   for layer in model]
    wrong = qm.int8_forward(uncorrected, bz.tensor(x_test)).numpy().argmax(axis=-1)
    assert np.mean(wrong == y_test) < r["float_accuracy"] - 0.2


def test_each_int8_matmul_is_one_onednn_call(run):
    if REFERENCE or not bz._core._library_calls()["int8"]:
        pytest.skip("oneDNN does not sum int8 into int32 exactly on this CPU (no VNNI) or BRAZE_BACKEND=reference: "
                    "the int8 matmuls run on the reference interpreter (Note [Integer matmul])")
    _, r = run
    # Per layer a library call and a kernel after it, and the first layer's quantize of the input.
    assert r["steps"]["braze int8"] == (3, 2), r["steps"]
    counts = r["counts"]["braze int8"]
    assert counts["library_calls_reference"] == 0, counts
    assert counts["kernels_launched"] == 5, counts
    # A replayed forward writing into the same output allocates nothing (harness.replaying).
    assert counts["allocations"] == 0 and counts["programs_compiled"] == 0, counts
