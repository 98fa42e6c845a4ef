"""NPBench's NumPy kernels (tests/python/programs/npbench/, verbatim from
https://github.com/spcl/npbench, commit f2d7f27; BSD-3-Clause, Copyright (c)
2021, SPCL) run unchanged on braze tensors and compared with NumPy.

For each benchmark: its own `initialize` builds the inputs at the sizes of
SIZES below: NPBench's "S" preset (each under a second on NumPy), or smaller
where S would keep braze busy for more than about half a second on either
backend (the matrix products of thousands, and Python loops of small graphs
such as cholesky's or syrk's), so that the file runs in about ten seconds on
the default backend and on the reference one. The kernel runs once on NumPy
copies of the arrays and once on braze tensors made of them (bz.tensor;
Python and NumPy scalars stay what initialize made them, but for the
mandelbrot bounds of BRAZE_SCALARS), with the arguments NPBench's
bench_info/<name>.json passes. Then everything the kernel returned and every
array argument (many polybench kernels write their results into their
arguments) is compared with NumPy's, dtype included.

A benchmark braze cannot run yet is an xfail(strict=True) whose reason says
what is missing, so that a fix flips it to a failure to be unmarked.
"""

from collections import namedtuple
import importlib

import numpy as np
import pytest

import braze as bz

Bench = namedtuple("Bench", "module func init_args init_outputs args")

# NPBench's bench_info/<name>.json: the module, the kernel, what initialize
# takes and gives, and the kernel's arguments by name.
BENCHMARKS = {
    "adi": Bench("adi", "kernel", "N", "u", "TSTEPS N u"),
    "arc_distance": Bench("arc_distance", "arc_distance", "N", "theta_1 phi_1 theta_2 phi_2",
                          "theta_1 phi_1 theta_2 phi_2"),
    "atax": Bench("atax", "kernel", "M N", "x A", "A x"),
    "azimint_hist": Bench("azimint_hist", "azimint_hist", "N", "data radius", "data radius npt"),
    "azimint_naive": Bench("azimint_naive", "azimint_naive", "N", "data radius", "data radius npt"),
    "bicg": Bench("bicg", "kernel", "M N", "A p r", "A p r"),
    "cavity_flow": Bench("cavity_flow", "cavity_flow", "ny nx", "u v p dx dy dt",
                         "nx ny nt nit u v dt dx dy p rho nu"),
    "channel_flow": Bench("channel_flow", "channel_flow", "ny nx", "u v p dx dy dt",
                          "nit u v dt dx dy p rho nu F"),
    "cholesky": Bench("cholesky", "kernel", "N", "A", "A"),
    "cholesky2": Bench("cholesky2", "kernel", "N", "A", "A"),
    "compute": Bench("compute", "compute", "M N", "array_1 array_2 a b c", "array_1 array_2 a b c"),
    "contour_integral": Bench("contour_integral", "contour_integral", "NR NM slab_per_bc num_int_pts",
                              "Ham int_pts Y", "NR NM slab_per_bc Ham int_pts Y"),
    "conv2d": Bench("conv2d", "conv2d_bias", "C_in C_out H K N W", "input weights bias", "input weights bias"),
    "correlation": Bench("correlation", "kernel", "M N", "float_n data", "M float_n data"),
    "covariance": Bench("covariance", "kernel", "M N", "float_n data", "M float_n data"),
    "covariance2": Bench("covariance2", "kernel", "M N", "float_n data", "M float_n data"),
    "crc16": Bench("crc16", "crc16", "N", "data", "data"),
    "deriche": Bench("deriche", "kernel", "W H", "alpha imgIn", "alpha imgIn"),
    "doitgen": Bench("doitgen", "kernel", "NR NQ NP", "A C4", "NR NQ NP A C4"),
    "durbin": Bench("durbin", "kernel", "N", "r", "r"),
    "fdtd_2d": Bench("fdtd_2d", "kernel", "TMAX NX NY", "ex ey hz _fict_", "TMAX ex ey hz _fict_"),
    "floyd_warshall": Bench("floyd_warshall", "kernel", "N", "path", "path"),
    "gemm": Bench("gemm", "kernel", "NI NJ NK", "alpha beta C A B", "alpha beta C A B"),
    "gemver": Bench("gemver", "kernel", "N", "alpha beta A u1 v1 u2 v2 w x y z",
                    "alpha beta A u1 v1 u2 v2 w x y z"),
    "gesummv": Bench("gesummv", "kernel", "N", "alpha beta A B x", "alpha beta A B x"),
    "go_fast": Bench("go_fast", "go_fast", "N", "a", "a"),
    "gramschmidt": Bench("gramschmidt", "kernel", "M N", "A", "A"),
    "hdiff": Bench("hdiff", "hdiff", "I J K", "in_field out_field coeff", "in_field out_field coeff"),
    "heat_3d": Bench("heat_3d", "kernel", "N", "A B", "TSTEPS A B"),
    "jacobi_1d": Bench("jacobi_1d", "kernel", "N", "A B", "TSTEPS A B"),
    "jacobi_2d": Bench("jacobi_2d", "kernel", "N", "A B", "TSTEPS A B"),
    "k2mm": Bench("k2mm", "kernel", "NI NJ NK NL", "alpha beta A B C D", "alpha beta A B C D"),
    "k3mm": Bench("k3mm", "kernel", "NI NJ NK NL NM", "A B C D", "A B C D"),
    "lenet": Bench("lenet", "lenet5", "N H W",
                   "input conv1 conv1bias conv2 conv2bias fc1w fc1b fc2w fc2b fc3w fc3b C_before_fc1",
                   "input conv1 conv1bias conv2 conv2bias fc1w fc1b fc2w fc2b fc3w fc3b N C_before_fc1"),
    "lu": Bench("lu", "kernel", "N", "A", "A"),
    "ludcmp": Bench("ludcmp", "kernel", "N", "A b", "A b"),
    "mandelbrot1": Bench("mandelbrot1", "mandelbrot", None, "", "xmin xmax ymin ymax XN YN maxiter horizon"),
    "mandelbrot2": Bench("mandelbrot2", "mandelbrot", None, "", "xmin xmax ymin ymax XN YN maxiter horizon"),
    "mlp": Bench("mlp", "mlp", "C_in N S0 S1 S2", "input w1 b1 w2 b2 w3 b3", "input w1 b1 w2 b2 w3 b3"),
    "mvt": Bench("mvt", "kernel", "N", "x1 x2 y_1 y_2 A", "x1 x2 y_1 y_2 A"),
    "nbody": Bench("nbody", "nbody", "N tEnd dt", "mass pos vel Nt", "mass pos vel N Nt dt G softening"),
    "nussinov": Bench("nussinov", "kernel", "N", "seq", "N seq"),
    "resnet": Bench("resnet", "resnet_basicblock", "N W H C1 C2", "input conv1 conv2 conv3",
                    "input conv1 conv2 conv3"),
    "scattering_self_energies": Bench("scattering_self_energies", "scattering_self_energies",
                                      "Nkz NE Nqz Nw N3D NA NB Norb", "neigh_idx dH G D Sigma",
                                      "neigh_idx dH G D Sigma"),
    "seidel_2d": Bench("seidel_2d", "kernel", "N", "A", "TSTEPS N A"),
    "softmax": Bench("softmax", "softmax", "N H SM", "x", "x"),
    "spmv": Bench("spmv", "spmv", "M N nnz", "A_row A_col A_val x", "A_row A_col A_val x"),
    "stockham_fft": Bench("stockham_fft", "stockham_fft", "R K", "N x y", "N R K x y"),
    "symm": Bench("symm", "kernel", "M N", "alpha beta C A B", "alpha beta C A B"),
    "syr2k": Bench("syr2k", "kernel", "M N", "alpha beta C A B", "alpha beta C A B"),
    "syrk": Bench("syrk", "kernel", "M N", "alpha beta C A", "alpha beta C A"),
    "trisolv": Bench("trisolv", "kernel", "N", "L x b", "L x b"),
    "trmm": Bench("trmm", "kernel", "M N", "alpha A B", "alpha A B"),
    "vadv": Bench("vadv", "vadv", "I J K", "dtr_stage utens_stage u_stage wcon u_pos utens",
                  "utens_stage u_stage wcon u_pos utens dtr_stage"),
}

# The sizes used here; NPBench's "S" preset in the comment where it differs.
SIZES = {
    "adi": dict(TSTEPS=5, N=100),  # S
    "arc_distance": dict(N=100000),  # S
    "atax": dict(M=400, N=500),  # S: M=4000, N=5000
    "azimint_hist": dict(N=400000, npt=1000),  # S
    "azimint_naive": dict(N=40000, npt=100),  # S: N=400000, npt=1000
    "bicg": dict(M=400, N=500),  # S: M=4000, N=5000
    "cavity_flow": dict(ny=61, nx=61, nt=25, nit=5, rho=1.0, nu=0.1),  # S
    "channel_flow": dict(ny=21, nx=21, nit=5, rho=1.0, nu=0.1, F=1.0),  # S: ny=61, nx=61
    "cholesky": dict(N=50),  # S: N=100
    "cholesky2": dict(N=1000),  # S
    "compute": dict(M=500, N=500),  # S: M=2000, N=2000
    "contour_integral": dict(NR=50, NM=150, slab_per_bc=2, num_int_pts=32),  # S
    "conv2d": dict(N=8, C_in=3, C_out=16, K=2, H=32, W=32),  # S
    "correlation": dict(M=100, N=120),  # S: M=500, N=600
    "covariance": dict(M=100, N=120),  # S: M=500, N=600
    "covariance2": dict(M=500, N=600),  # S
    "crc16": dict(N=1600),  # S
    "deriche": dict(W=200, H=100),  # S: W=400, H=200
    "doitgen": dict(NR=60, NQ=60, NP=128),  # S
    "durbin": dict(N=300),  # S: N=1000
    "fdtd_2d": dict(TMAX=20, NX=200, NY=220),  # S
    "floyd_warshall": dict(N=200),  # S
    "gemm": dict(NI=100, NJ=110, NK=120),  # S: NI=1000, NJ=1100, NK=1200
    "gemver": dict(N=1000),  # S
    "gesummv": dict(N=500),  # S: N=2000
    "go_fast": dict(N=2000),  # S
    "gramschmidt": dict(M=35, N=30),  # S: M=70, N=60
    "hdiff": dict(I=64, J=64, K=60),  # S
    "heat_3d": dict(TSTEPS=25, N=25),  # S
    "jacobi_1d": dict(TSTEPS=800, N=3200),  # S
    "jacobi_2d": dict(TSTEPS=50, N=150),  # S
    "k2mm": dict(NI=80, NJ=85, NK=90, NL=95),  # S: NI=800, NJ=850, NK=900, NL=950
    "k3mm": dict(NI=80, NJ=85, NK=90, NL=95, NM=100),  # S: NI=800, NJ=850, NK=900, NL=950, NM=1000
    "lenet": dict(N=4, H=28, W=28),  # S
    "lu": dict(N=60),  # S
    "ludcmp": dict(N=60),  # S
    "mandelbrot1": dict(xmin=-1.75, xmax=0.25, XN=125, ymin=-1.0, ymax=1.0, YN=125, maxiter=60, horizon=2.0),  # S
    "mandelbrot2": dict(xmin=-2.0, xmax=0.5, XN=200, ymin=-1.25, ymax=1.25, YN=200, maxiter=40, horizon=2.0),  # S
    "mlp": dict(C_in=3, N=8, S0=3000, S1=200, S2=200),  # S: C_in=3, N=8, S0=30000, S1=2000, S2=2000
    "mvt": dict(N=550),  # S: N=5500
    "nbody": dict(N=25, tEnd=2.0, dt=0.05, softening=0.1, G=1.0),  # S
    "nussinov": dict(N=40),  # S
    "resnet": dict(N=8, W=14, H=14, C1=32, C2=8),  # S
    "scattering_self_energies": dict(Nkz=2, NE=4, Nqz=2, Nw=2, N3D=2, NA=6, NB=2, Norb=3),  # S
    "seidel_2d": dict(TSTEPS=8, N=30),  # S: TSTEPS=8, N=50
    "softmax": dict(N=16, H=16, SM=128),  # S
    "spmv": dict(M=4096, N=4096, nnz=8192),  # S
    "stockham_fft": dict(R=2, K=15),  # S
    "symm": dict(M=20, N=25),  # S: M=40, N=50
    "syr2k": dict(M=18, N=25),  # S: M=35, N=50
    "syrk": dict(M=25, N=35),  # S: M=50, N=70
    "trisolv": dict(N=2000),  # S
    "trmm": dict(M=33, N=40),  # S: M=65, N=80
    "vadv": dict(I=60, J=60, K=40),  # S
}

# The mandelbrot kernels take no arrays, only the plane's bounds: these become
# 0-d braze tensors, so that np.linspace(xmin, xmax, ...) is braze's.
BRAZE_SCALARS = {"mandelbrot1": ("xmin", "xmax", "ymin", "ymax"),
                 "mandelbrot2": ("xmin", "xmax", "ymin", "ymax")}

# Float tolerances: float64 to 1e-9, float32 to 1e-5, relative to each
# element and to the array's largest magnitude (sums of float32 rounded in
# another order, as braze's reference backend does them, differ from NumPy's
# by that much: resnet's batch norms). A few benchmarks need more:
RTOL = {
    # a gravitational N-body simulation: the last steps amplify the last bits
    # of reductions summed in another order (NPBench checks it to 0.1)
    "nbody": 1e-7,
}

_COMPLEX = "braze has no complex dtype: bz.tensor of the complex128 inputs raises " \
    "ValueError: unsupported dtype 'complex128'"
_MANDELBROT = "braze has no complex dtype: the kernel makes complex128 values (C = X + Y * 1j), " \
    "ValueError: unsupported dtype 'complex128'"

# What braze cannot run yet: (the exception, why).
XFAIL = {
    "contour_integral": (ValueError, _COMPLEX),
    "scattering_self_energies": (ValueError, _COMPLEX),
    "stockham_fft": (ValueError, _COMPLEX),
    "mandelbrot1": (ValueError, _MANDELBROT),
    "mandelbrot2": (ValueError, _MANDELBROT),
}


def _inputs(name):
    bench = BENCHMARKS[name]
    values = dict(SIZES[name])
    if bench.init_args is not None:
        module = importlib.import_module(f"programs.npbench.{bench.module}")
        np.random.seed(42)  # mlp's initialize draws its input from np.random's global state
        made = module.initialize(*[values[a] for a in bench.init_args.split()])
        outputs = bench.init_outputs.split()
        values.update(zip(outputs, made if len(outputs) > 1 else (made,)))
    return [values[a] for a in bench.args.split()]


def _run(name, args):
    bench = BENCHMARKS[name]
    module = importlib.import_module(f"programs.npbench.{bench.module}")
    return getattr(module, bench.func)(*args)


def _leaves(result):
    return bz.autodiff.tree_flatten(result)[0]


def _assert_matches(got, want, what, rtol=None):
    got = got.numpy() if isinstance(got, bz.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, f"{what}: {got.dtype} != {want.dtype}"
    if want.dtype.kind == "f":
        rtol = rtol or (1e-9 if want.dtype == np.float64 else 1e-5)
        scale = float(np.max(np.abs(want), initial=0.0))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _param(name):
    if name in XFAIL:
        raises, reason = XFAIL[name]
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=raises, reason=reason))
    return name


@pytest.mark.parametrize("name", [_param(n) for n in BENCHMARKS])
def test_npbench_kernel_matches_numpy(name):
    args = _inputs(name)
    want_args = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    want = _run(name, want_args)

    scalars = BRAZE_SCALARS.get(name, ())
    names = BENCHMARKS[name].args.split()
    got_args = [bz.tensor(np.array(a, copy=True)) if isinstance(a, np.ndarray) or n in scalars else a
                for n, a in zip(names, args)]
    got = _run(name, got_args)

    got_leaves, want_leaves = _leaves(got), _leaves(want)
    bz.realize(*[t for t in got_leaves + got_args if isinstance(t, bz.Tensor)])
    assert len(got_leaves) == len(want_leaves)
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        if w is None:  # the kernel returns nothing: its results are in its arguments
            assert g is None
            continue
        _assert_matches(g, w, f"{name}: result {i}", RTOL.get(name))
    for n, g, w in zip(names, got_args, want_args):
        if isinstance(w, np.ndarray):
            _assert_matches(g, w, f"{name}: argument {n} after the kernel", RTOL.get(name))


# With braze as the kernels' numpy (`import braze as np`), beyond XFAIL:
AS_NUMPY_XFAIL = {
    "cavity_flow": (AssertionError, "braze's default float is float32 (docs/numpy-compat.md, Differences on "
                                    "purpose): np.zeros((ny, nx)) holds b in float32, NumPy's in float64"),
}


def _as_numpy_param(name):
    raises, reason = XFAIL.get(name) or AS_NUMPY_XFAIL.get(name) or (None, None)
    if reason is None:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=raises, reason=reason))


@pytest.mark.parametrize("name", [_as_numpy_param(n) for n in BENCHMARKS])
def test_npbench_kernel_with_braze_as_numpy(name):
    """The kernel's module-level ``np`` rebound to braze (python/braze/
    _numpy_names.py: ``np.ndarray(shape)``, ``np.minimum.outer``), on
    braze tensors, against NumPy."""
    import types
    bench = BENCHMARKS[name]
    args = _inputs(name)
    want_args = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    want = _run(name, want_args)
    kernel = getattr(importlib.import_module(f"programs.npbench.{bench.module}"), bench.func)
    as_braze = types.FunctionType(kernel.__code__, {**kernel.__globals__, "np": bz}, kernel.__name__,
                                  kernel.__defaults__, kernel.__closure__)
    scalars = BRAZE_SCALARS.get(name, ())
    names = bench.args.split()
    got_args = [bz.tensor(np.array(a, copy=True)) if isinstance(a, np.ndarray) or n in scalars else a
                for n, a in zip(names, args)]
    got = as_braze(*got_args)
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        if w is not None:
            _assert_matches(g, w, f"{name}: result {i}", RTOL.get(name))
    for n, g, w in zip(names, got_args, want_args):
        if isinstance(w, np.ndarray):
            _assert_matches(g, w, f"{name}: argument {n} after the kernel", RTOL.get(name))
