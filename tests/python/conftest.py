"""Shared helpers for the pytest suite: dtypes, input values, layouts, the
promotion rules of docs/semantics.md written independently of braze, and
assert_matches.

Every test compares braze against NumPy on the same logical values. Float
references are computed in float64 from the input values and rounded once to
the result dtype, which is what braze's semantics promise ("float16 and
bfloat16 compute in float32 or wider and round once on store").
"""

import os

import ml_dtypes
import numpy as np
import pytest

import braze as bz

def pytest_report_header(config):
    return f"braze backend: {os.environ.get('BRAZE_BACKEND') or 'cpu (default)'}; BRAZE_BACKEND=reference runs the oracle"


# --- the gpu marker ---------------------------------------------------------

def gpu_required():
    """BRAZE_REQUIRE_GPU=1 (scripts/gpu_check.sh): this run is on a GPU."""
    return os.environ.get("BRAZE_REQUIRE_GPU") == "1"


def use_gpu(monkeypatch):
    """Points device="cuda" at the driver, for a test marked gpu. Skips,
    saying why, where this machine has no GPU (bz._core._cuda_absent(): no
    NVIDIA driver, a driver that finds no device); a GPU that is there but
    cannot be used is no reason to skip: the test goes on and braze's error
    fails it. Under BRAZE_REQUIRE_GPU=1 the skip is a failure too
    (pytest_runtest_makereport below)."""
    monkeypatch.delenv("BRAZE_CUDA", raising=False)
    why = bz._core._cuda_absent()
    if why is not None:
        pytest.skip(f"no GPU here: {why} (BRAZE_CUDA=emulate checks the same path on the host)")


@pytest.fixture
def gpu(monkeypatch):
    """For a test marked gpu: the driver's device, or a skip saying why not."""
    use_gpu(monkeypatch)


@pytest.fixture(params=["emulate", pytest.param("gpu", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    """Runs a test twice: under host emulation (BRAZE_CUDA=emulate), and,
    marked gpu, on the driver."""
    if request.param == "emulate":
        monkeypatch.setenv("BRAZE_CUDA", "emulate")
    else:
        use_gpu(monkeypatch)
    return request.param


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under BRAZE_REQUIRE_GPU=1 a test marked gpu that skips fails instead:
    a run on a GPU whose tests all skipped must not read as passed."""
    report = (yield).get_result()
    if report.skipped and gpu_required() and item.get_closest_marker("gpu") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"BRAZE_REQUIRE_GPU=1, but this gpu test skipped: {reason}"


# --- dtypes -----------------------------------------------------------------

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)]
BOOL = np.dtype(np.bool_)
DTYPES = FLOATS + INTS + [BOOL]
DTYPE_IDS = [d.name for d in DTYPES]

F32 = np.dtype(np.float32)
I64 = np.dtype(np.int64)


def is_float(dt):
    return np.dtype(dt) in FLOATS


def kind(dt):
    """0 bool, 1 integer, 2 float: the order of docs/semantics.md."""
    dt = np.dtype(dt)
    return 2 if dt in FLOATS else (0 if dt == BOOL else 1)


def promote(a, b):
    """Result dtype of a tensor-tensor op (docs/semantics.md, 'Promotion')."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if kind(a) != kind(b):
        return a if kind(a) > kind(b) else b
    if kind(a) == 2:
        if {a, b} == {np.dtype(np.float16), BF16}:
            return F32
        return a if a.itemsize >= b.itemsize else b
    if kind(a) == 1:
        return np.promote_types(a, b)  # NumPy's: mixed signedness widens (uint8 + int8 is int16)
    return a if a.itemsize >= b.itemsize else b


def weak_scalar_dtype(tensor_dtype, value):
    """The dtype a Python scalar takes next to a tensor ('Python scalars are weak')."""
    k = 0 if isinstance(value, bool) else (1 if isinstance(value, int) else 2)
    if k <= kind(tensor_dtype):
        return np.dtype(tensor_dtype)
    return F32 if k == 2 else (I64 if k == 1 else BOOL)


def result_dtype(rule, *dts):
    """The result dtype by an op's dtype rule (graph/op.h DTypeRule), or None
    when the rule rejects the inputs."""
    dts = [np.dtype(d) for d in dts]
    to_float = lambda t: t if is_float(t) else F32
    if rule in ("Same", "SameNonEmpty"):
        return dts[0]
    if rule == "SameNumeric":
        return None if dts[0] == BOOL else dts[0]
    if rule == "ToFloat":
        return to_float(dts[0])
    if rule in ("ToBool", "Compare", "Logical"):
        return BOOL
    p = dts[0]
    for d in dts[1:]:
        p = promote(p, d)
    if rule == "Promote":
        return p
    if rule == "PromoteNumeric":
        return None if p == BOOL else p
    if rule == "PromoteFloat":
        return to_float(p)
    if rule == "Select":
        return promote(dts[1], dts[2])
    if rule in ("Bitwise", "Shift"):  # integers and bool; NumPy shifts bools as int8
        return None if is_float(p) else (np.dtype(np.int8) if rule == "Shift" and p == BOOL else p)
    raise AssertionError(f"no test rule for {rule}")


def compute_dtype(*dts):
    """The dtype a NumPy reference computes in: float64 when any input is a
    float, else int64 (results wrap to the narrower type exactly as braze's
    integer arithmetic does)."""
    return np.dtype(np.float64) if any(is_float(d) for d in dts) else I64


# --- values -----------------------------------------------------------------

FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 2.5]
INT_RANGES = {"int8": (-30, 30), "uint8": (0, 40), "int16": (-200, 200), "uint16": (0, 300), "int32": (-1000, 1000),
              "uint32": (0, 1000), "int64": (-1000, 1000)}


def values(dtype, shape, seed=0, specials=True, lo=None, hi=None):
    """Deterministic values of `dtype` and `shape`.

    Floats are normal(0, 2) with, when `specials`, NaN, +-Inf, +-0 and halves
    (round-half-to-even cases) scattered over the first positions; integers
    lie in a range where every op in the suite wraps the same way in braze
    and NumPy; `lo`/`hi` override the range (floats: uniform).
    """
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if kind(dtype) == 1:
        a, b = INT_RANGES[dtype.name]
        a, b = (a if lo is None else lo), (b if hi is None else hi)
        return rng.integers(a, b, size=shape, endpoint=True).astype(dtype)
    if lo is not None:
        flat = rng.uniform(lo, hi, size=n)
    else:
        flat = rng.standard_normal(n) * 2.0
    if specials and n:
        k = min(len(FLOAT_SPECIALS), n // 2 or 1)
        pos = rng.permutation(n)[:k]
        flat[pos] = rng.permutation(FLOAT_SPECIALS)[:k]
    return flat.reshape(shape).astype(dtype)


# --- layouts ----------------------------------------------------------------

LAYOUTS = ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast", "zero_size", "scalar"]
SHAPE = (3, 5)


def layout_shape(layout, shape=SHAPE):
    return {"zero_size": (0, shape[1]), "scalar": ()}.get(layout, shape)


def make_layout(layout, logical, filler_seed=99):
    """A braze tensor with the logical values of the NumPy array `logical`,
    laid out in memory as `layout` says: the tensor is a view of a buffer
    that holds those values (and filler) in another arrangement.

    For "broadcast", `logical` must be constant along axis 0 (the rows are
    one row repeated): make it with logical_values().
    """
    logical = np.asarray(logical)
    if layout in ("contiguous", "zero_size", "scalar"):
        t = bz.tensor(logical)
    elif layout == "transposed":
        t = bz.tensor(np.ascontiguousarray(logical.T)).T
    elif layout == "sliced":
        r, c = logical.shape
        big = values(logical.dtype, (2 * r + 1, c), seed=filler_seed)
        big[1:-1:2, ::-1] = logical
        t = bz.tensor(big)[1:-1:2, ::-1]
    elif layout == "sliced_reversed":
        r, c = logical.shape
        big = values(logical.dtype, (r + 2, 2 * c), seed=filler_seed)
        big[-2:0:-1, ::-2] = logical
        t = bz.tensor(big)[-2:0:-1, ::-2]
    elif layout == "broadcast":
        row = logical[0]
        assert np.array_equal(np.broadcast_to(row, logical.shape), logical, equal_nan=is_float(logical.dtype)), \
            "the broadcast layout needs repeated rows"
        t = bz.broadcast_to(bz.tensor(np.ascontiguousarray(row)), logical.shape)
    else:
        raise AssertionError(layout)
    assert t.shape == logical.shape, (layout, t.shape, logical.shape)
    return t


def logical_values(dtype, layout, seed=0, shape=SHAPE, **kw):
    """Values whose shape fits `layout` (repeated rows for 'broadcast')."""
    s = layout_shape(layout, shape)
    if layout == "broadcast":
        return np.broadcast_to(values(dtype, (s[1],), seed=seed, **kw), s).copy()
    return values(dtype, s, seed=seed, **kw)


@pytest.fixture(params=LAYOUTS)
def layout(request):
    return request.param


@pytest.fixture
def layouts():
    """make_layout, for tests that build several operands in one layout."""
    return make_layout


# --- comparison -------------------------------------------------------------

# (rtol, atol) by result dtype, for element-wise results rounded once.
TOLERANCE = {
    "float64": (1e-12, 1e-300),
    "float32": (2e-6, 1e-37),
    "float16": (2e-3, 1e-7),
    "bfloat16": (1.6e-2, 1e-37),
}


def tolerance(dtype):
    return TOLERANCE[np.dtype(dtype).name]


def assert_matches(got, expected, dtype=None, rtol=None, atol=None):
    """`got` (a braze tensor) equals `expected` (NumPy): same dtype (`dtype`,
    or expected's), same shape, exact for integers and bools, within the
    dtype's tolerance for floats, with NaN and +-Inf in the same places."""
    dtype = np.dtype(dtype if dtype is not None else np.asarray(expected).dtype)
    assert got.dtype == dtype, f"dtype {got.dtype}, expected {dtype}"
    expected = np.asarray(expected)
    if expected.dtype != dtype:
        with np.errstate(all="ignore"):
            expected = expected.astype(dtype)
    arr = got.numpy()
    assert arr.dtype == dtype
    assert tuple(got.shape) == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    assert arr.shape == expected.shape
    if is_float(dtype):
        r, a = tolerance(dtype)
        np.testing.assert_allclose(arr.astype(np.float64), expected.astype(np.float64),
                                   rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(arr, expected)


def as_compute(a, dtype):
    """`a` converted to the reference's compute dtype."""
    return np.asarray(a).astype(dtype)
