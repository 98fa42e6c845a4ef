"""Note [No silent slow paths] (runtime/slow_paths.h): work that runs on the
reference interpreter instead of generated code or a library is said once
per kind on stderr, or refused with BRAZE_STRICT=1. Each case runs in its
own process: the warning is once per process and BRAZE_STRICT is read once.
The slow path shown is a bfloat16 matmul or convolution with oneDNN held to
AVX2 (DNNL_MAX_CPU_ISA), where oneDNN 2.6 runs no bfloat16."""

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import numpy as np
    import braze as bz

    def conv(dtype, n):
        x = bz.ones((1, 3, n, n), dtype=dtype)
        w = bz.ones((4, 3, 3, 3), dtype=dtype)
        return bz.conv2d(x, w).numpy()

    def run(name, f):
        try:
            f()
            print(name, "ran")
        except Exception as e:
            print(name, type(e).__name__, e)

    run("conv_bf16_8", lambda: conv(bz.bfloat16, 8))
    run("conv_bf16_9", lambda: conv(bz.bfloat16, 9))  # the same kind: said once
    run("conv_f32", lambda: conv(bz.float32, 8))      # oneDNN: nothing to say
    run("conv_f16", lambda: conv(bz.float16, 8))      # in float32 (Note [Half library calls in float32])
    run("conv_f64", lambda: conv(bz.float64, 8))      # BLAS calls (Note [Convolutions as matmuls])
    run("conv_i32", lambda: conv(bz.int32, 8))        # sums of products, generated
    h = bz.ones((4, 4), dtype=bz.bfloat16)
    run("matmul_bf16", lambda: (h @ h).numpy())
    f = bz.tensor(np.ones((4, 4), np.float16))
    run("matmul_f16", lambda: (f @ f).numpy())
    a = bz.tensor(np.arange(16, dtype=np.int32).reshape(4, 4))
    run("matmul_i32", lambda: (a @ a).numpy())     # a sum of products, generated (Note [Integer matmul as a sum])
    z = bz.zeros((0, 4), dtype=bz.int32)
    run("matmul_empty", lambda: (z @ a).numpy())   # nothing to compute: no slow path
    run("after", lambda: np.testing.assert_array_equal((a + 1).numpy(), np.arange(1, 17).reshape(4, 4)))
""")


def run(strict):
    env = dict(os.environ)
    env.pop("BRAZE_BACKEND", None)  # the reference backend is asked for, never a slow path to report
    env.pop("BRAZE_STRICT", None)
    env["DNNL_MAX_CPU_ISA"] = "AVX2"  # no bfloat16 in oneDNN 2.6
    if strict is not None:
        env["BRAZE_STRICT"] = strict
    p = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return dict(line.split(" ", 1) for line in p.stdout.splitlines()), p.stderr


def test_a_slow_path_is_said_once_per_kind():
    out, err = run(None)
    assert all(v == "ran" for v in out.values()), out
    warnings = [line for line in err.splitlines() if line.startswith("braze: warning:")]
    assert len(warnings) == 2, err
    assert "conv2d of bfloat16 [1, 3, 8, 8] x [4, 3, 3, 3] runs on the reference interpreter" in warnings[0]
    assert "oneDNN 2.6 runs bfloat16 only with AVX-512" in warnings[0]
    assert "matmul of bfloat16 [4, 4] x [4, 4]" in warnings[1]
    assert "BRAZE_STRICT=1" in warnings[1]


def test_strict_refuses_each_slow_path_and_braze_keeps_working():
    out, err = run("1")
    assert "braze: warning" not in err
    for case in ("conv_bf16_8", "conv_bf16_9", "matmul_bf16"):
        assert out[case].startswith("RuntimeError "), out
        assert "would run on the reference interpreter" in out[case] and "BRAZE_STRICT=1" in out[case]
    assert out["conv_bf16_9"].startswith("RuntimeError conv2d of bfloat16 [1, 3, 9, 9]")
    for case in ("conv_f32", "conv_f16", "conv_f64", "conv_i32", "matmul_f16", "matmul_i32", "matmul_empty", "after"):
        assert out[case] == "ran", out


@pytest.mark.parametrize("value", ["0", ""])
def test_strict_off(value):
    out, _ = run(value)
    assert all(v == "ran" for v in out.values()), out


def test_a_bad_strict_value_is_an_error_naming_it():
    out, _ = run("yes")
    assert out["conv_bf16_8"].startswith("ValueError BRAZE_STRICT='yes' is not 0 or 1"), out
