"""The programs of Nicolas P. Rougier's book "From Python to NumPy"
(tests/python/programs/from_python_to_numpy.py, from
https://github.com/rougier/from-python-to-numpy, commit 8a5f0d9; BSD 2-Clause
License) ported to braze as a NumPy user would: each program's numerical core
unchanged but for its input arrays, which are braze tensors, run for a few
steps and compared with the same program on NumPy.

Not ported: anatomy.py, display.py, tools.py (printing an array's layout,
plotting, timing helpers); array_list.py, gpudata.py (np.ndarray subclasses
and buffers); DART_sampling_python.py, game_of_life_python.py,
boid_python.py, mandelbrot_python.py (pure Python, no arrays); sampling.py,
mosaic.py (copies of Bridson_sampling.py); voronoi.py, marker_collection.py,
smoke_2.py, smoke_interactive.py, benchmark.py, vec2.py, experiments/
(matplotlib drawing, or the same solvers again). From the chapters' text,
03-anatomy.rst's examples (memory layout, views and copies) are here too.

Each program function takes `asarray` and `rng`: it runs once with
np.asarray and a fresh np.random.default_rng(0), which makes and records the
NumPy inputs, then with braze's asarray and another default_rng(0): braze's
asarray checks that it gets the very values NumPy got and makes a tensor of
them. Everything the program returns is compared with NumPy's: an array
NumPy returns must be a braze tensor on the braze side (not an ndarray a
call left braze for), of the same shape and dtype (but for BRAZE_DTYPES:
braze's documented result types), its values equal, floats to 1e-9 relative
(float64) or 1e-5 (float32) of each element and of the array's largest
magnitude.

A program braze cannot run yet is an xfail(strict=True) whose reason says
what is missing, so that a fix flips it to a failure to be unmarked.
"""

import numpy as np
import pytest

from ported import assert_matches, leaves, params, run_both
from programs.from_python_to_numpy import PROGRAMS

# Where braze's result dtype differs from NumPy's by design (docs/semantics.md,
# "Result types of ops"): {program: {result index: the dtype braze gives}}.
BRAZE_DTYPES = {
    "anatomy_views_and_copies": {7: np.float32},  # X + 2.0*Y of int64: a Python float takes float32 (weak scalars)
}

# Results the program itself makes NumPy arrays, on braze too:
# {program: {result index, ...}}. np.array of a list of Python tuples (the
# paths the maze solvers walk with Python ints).
NUMPY_RESULTS = {
    "maze_bellman_ford": {1, 2, 3},  # G, then P = np.array(P) and its columns X, Y
    "maze_breadth_first": {0, 1, 2},  # P = np.array(path) and its columns X, Y
}

# Float tolerances where the default is too tight: {program: {result index: rtol}}.
RTOL = {
    # the boids' markers are float64, but rotated by cos and sin of float32
    # angles (np.arctan2 of the float32 velocities): a last-bit difference of
    # float32 arctan2/cos/sin moves a vertex by 2e-6 of 300
    "boids": {2: 1e-5},
}

_COMPLEX = "braze has no complex dtype: ValueError: unsupported dtype 'complex128'"

# What braze cannot run yet: (the exception, why); AssertionError: a wrong result.
XFAIL = {
    "gray_scott_structured": (ValueError, "braze has no structured dtypes: bz.asarray of the "
                                          "[('U', float64), ('V', float64)] array raises ValueError: "
                                          "unsupported dtype 'void128'"),
    "find_index_of_views": (ValueError, "the program reads NumPy's memory layout (byte_bounds, strides): a braze "
                                        "tensor is not an np.ndarray (isinstance(view, np.ndarray) is False), so "
                                        "find_index(base, base[1:-1,1:-1]) returns '...' where NumPy's gives "
                                        "'1:7,1:7', and np.allclose(Z, base[...]) raises ValueError: subtract: "
                                        "shapes [6, 6] and [8, 8] do not broadcast"),
    "mandelbrot_numpy_1": (ValueError, _COMPLEX + " (C = X + Y[:,None]*1j)"),
    "mandelbrot_numpy_2": (ValueError, _COMPLEX + " (C = X + Y*1j)"),
}


@pytest.mark.parametrize("name", params(PROGRAMS, XFAIL))
def test_program_matches_numpy(name):
    got, want = run_both(PROGRAMS[name])
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, f"{name}: result {i}", BRAZE_DTYPES.get(name, {}).get(i),
                       i in NUMPY_RESULTS.get(name, ()), RTOL.get(name, {}).get(i))
