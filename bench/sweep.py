"""Issue 25's sweep: the slow cases found before users find them. Every op
and composite x dtype x layout x size, braze beside NumPy in one process,
with all of braze's threads and with one, the ratio printed per case and
the worst cases last (worst first).

The cases come from the op table (``bz.ops()``): every element-wise row
(the NumPy function of its ``numpy`` column, or the formula a NumPy user
writes for rsqrt, sigmoid, relu; scipy.special.erf for erf where SciPy is
installed, else erf has no peer), ``astype`` (to float32; float32 to
float64) and the reductions (sum, prod, max, min, argmax, argmin over the
last axis). Then the composites braze builds from them: the NumPy ufuncs of
python/braze (``_numpy_functions.UFUNCS``, the inverse trigonometric
functions), softmax, log_softmax, logsumexp, layer_norm (with weight and
bias), rms_norm (with weight), gelu (exact and tanh), silu, mean, var, std
(over the last axis), clip, mse_loss and cross_entropy, each against the
NumPy formula its tests use. Views, leaves, matmul and conv2d are not swept.

Each case is an R x C input (1K: 32 x 32, 64K: 256 x 256, 1M: 1024 x 1024,
16M: 4096 x 4096) in one of five layouts, the same view of the same memory
for both systems (NumPy reads braze's buffer through ``.numpy()``):
contiguous; transposed (``base.T``); broadcast (a row of C values broadcast
over the rows: a unary op's operand, and every operand after the first of
the others, as in ``X + b``); sliced (``base[1:R+1, 16:C+16]`` of an
(R+2) x (C+32) buffer); strided (``base[:, ::2]``). Values lie in each op's
domain (positive for log and sqrt, a small exponent for power, ...).

The default run sweeps every dtype at 1K, 64K and 1M, and float32 alone at
16M (every dtype there would take about an hour on a 2-core machine; the
default is held to about a quarter of an hour): --dtypes applies to every
size (--dtypes all: every dtype everywhere). --quick: float32 and int32 at
64K and 1M.

braze is timed as a user sees it: a fresh expression realized per call
(``op(x).numpy()``; its program is cached, so calls after the first
replay). NumPy allocates its result per call too. Both are timed with
timing.best_in_turn: the best of BENCH_REPS rounds (default 7), fewer (at
least 2) where the rounds would take over CASE_BUDGET (0.1 s), as at 16M.
The ratio is NumPy's time over braze's: above 1, braze is faster.

Each case's braze result is checked once against NumPy computed in float64
(for a float result, then rounded to braze's result dtype) on the same
values, with a loose tolerance (float32: 1e-4), integers exactly: every row
up to 64K elements, every 4th row and the last at 1M, every 64th at 16M
(rows are computed independently: a layout or tail bug shows on each). A
mismatch or an error while realizing is printed as a finding and the sweep
goes on. A case braze refuses (a
TypeError or ValueError when recording, e.g. ``negative`` of bool) is
skipped and counted, as is one NumPy refuses.

Threads: braze reads BRAZE_NUM_THREADS once, when its pool starts, so the
single-threaded pass runs in a child process with BRAZE_NUM_THREADS=1 (and
NumPy timed again beside it); the all-threads pass runs in this process.
NumPy's element-wise functions and reductions are single-threaded in both.

The summary gives per size and thread count the median ratio and the
cases slower than NumPy (ratio < 1.0) and below 0.8; per layout the median
and the cases below 1.0 at 1M and above; issue 25's targets (no case below
1.0 at 1M and above, none below 0.8 at 1K-64K) as counts; the skips, the
findings, and the 25 worst cases.

Run: cd bench && PYTHONPATH=../build/python ../.venv/bin/python sweep.py
  [--quick] [--sizes 1K,64K,1M,16M] [--ops 'exp,log*'] [--dtypes float32,int32|all]
  [--layouts contiguous,strided] [--threads all|1|both] [--json rows.json]
"""
import argparse
import fnmatch
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np

import braze as bz
import timing
from timing import best_in_turn

try:
    from scipy.special import erf as _scipy_erf
except ImportError:  # erf then has no NumPy peer; its check uses math.erf
    _scipy_erf = None

SIZES = {"1K": 1 << 10, "64K": 1 << 16, "1M": 1 << 20, "16M": 1 << 24}
SHAPES = {1 << 10: (32, 32), 1 << 16: (256, 256), 1 << 20: (1024, 1024), 1 << 24: (4096, 4096)}
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)]
BOOL = np.dtype(np.bool_)
DTYPES = FLOATS + INTS + [BOOL]
LAYOUTS = ["contiguous", "transposed", "broadcast", "sliced", "strided"]
QUICK = {"dtypes": "float32,int32", "sizes": "64K,1M"}
# Without --dtypes, 16M runs float32 alone: every dtype there would take an hour, not
# the quarter of an hour the default run is held to on a 2-core machine.
DEFAULT_16M_DTYPES = [np.dtype(np.float32)]
CASE_BUDGET = 0.1  # seconds for a case's timed rounds, beyond which they are cut (to 2 at least)
CHECK_ELEMENTS = 1 << 18  # the check reads every k-th row (and the last) where the output is larger
WORST = 25

# --- values --------------------------------------------------------------------------

# Each domain: floats uniform in [lo, hi), integers in [lo, hi] (per dtype), bools at random.
FLOAT_DOMAINS = {"any": (-4.0, 4.0), "pos": (0.25, 4.0), "unit": (-0.95, 0.95), "ge1": (1.0, 5.0),
                 "small": (-2.0, 2.0), "near1": (0.99, 1.01)}
INT_ANY = {"int8": (-30, 30), "uint8": (0, 40), "int16": (-200, 200), "uint16": (0, 300), "int32": (-1000, 1000),
           "uint32": (0, 1000), "int64": (-1000, 1000)}
INT_DOMAINS = {"pos": (1, 30), "unit": (-1, 1), "ge1": (1, 30), "small": (0, 3), "near1": (-1, 1)}
DOMAIN_INDEX = {d: i for i, d in enumerate(list(FLOAT_DOMAINS) + ["cond"])}


def is_float(dt):
    return np.dtype(dt) in FLOATS


def domain_values(pool, domain, dtype, count, offset):
    """`count` values of `dtype` in `domain`, from the size's random pool at `offset`."""
    u = pool[offset:offset + count]
    if dtype == BOOL or domain == "cond":
        return u < 0.5
    if is_float(dtype):
        lo, hi = FLOAT_DOMAINS[domain]
        return (lo + (hi - lo) * u).astype(dtype)
    lo, hi = INT_ANY[dtype.name] if domain == "any" else INT_DOMAINS[domain]
    if dtype.kind == "u":
        lo = max(lo, 0)
    return (lo + np.floor(u * (hi - lo + 1))).astype(dtype)


class Inputs:
    """The operands of one size, dtype and layout, made on first use and
    shared by the ops that need them: (NumPy view, braze view) of one buffer
    per (domain, operand slot)."""

    def __init__(self, pool, dtype, layout, shape):
        self.pool, self.dtype, self.layout, self.shape = pool, dtype, layout, shape
        self.made = {}

    def operand(self, domain, slot, arity):
        key = (domain, slot, arity > 1)  # a broadcast layout's first operand is full when others follow
        if key not in self.made:
            self.made[key] = self._make(domain, slot, arity)
        return self.made[key]

    def _make(self, domain, slot, arity):
        r, c = self.shape
        dtype = BOOL if domain == "cond" else self.dtype
        offset = 1009 * (8 * slot + DOMAIN_INDEX[domain])
        layout = self.layout
        if layout == "broadcast" and arity > 1 and slot == 0:
            layout = "contiguous"  # X + b: the first operand full, the others rows
        base_shape = {"contiguous": (r, c), "transposed": (c, r), "broadcast": (c,), "sliced": (r + 2, c + 32),
                      "strided": (r, 2 * c)}[layout]
        host = domain_values(self.pool, domain, dtype, math.prod(base_shape), offset).reshape(base_shape)
        t = bz.asarray(host)
        a = t.numpy()  # braze's buffer, read-only: both systems read the same memory
        del host
        view = {"contiguous": lambda x: x, "transposed": lambda x: x.T,
                "sliced": lambda x: x[1:r + 1, 16:c + 16], "strided": lambda x: x[:, ::2]}
        if layout == "broadcast":
            return np.broadcast_to(a, (r, c)), bz.broadcast_to(t, (r, c))
        return view[layout](a), view[layout](t)


# --- the cases ------------------------------------------------------------------------


class Op:
    """One swept function: `braze(*tensors, **extras)` beside
    `numpy(*arrays, **extras)` (None: no NumPy peer); `ref` (default
    `numpy`) is the check's reference, given float64 arrays for a float
    result. `rowwise`: each output row depends on its input row only, so the
    check may read a sample of rows. `extras(dtype, r, c)` makes
    keyword operands that are not laid out (weights, labels) as
    {name: (ndarray, tensor)}."""

    def __init__(self, name, group, arity, braze, numpy, domains=None, ref=None, rowwise=True, extras=None):
        self.name, self.group, self.arity = name, group, arity
        self.braze, self.numpy = braze, numpy
        self.ref = ref or numpy
        self.domains = domains or ("any",) * arity
        self.rowwise, self.extras = rowwise, extras


# Operand domains where "any" (floats in [-4, 4)) is outside the op's domain or dull.
DOMAINS = {
    "log": ("pos",), "log2": ("pos",), "log1p": ("pos",), "log10": ("pos",), "sqrt": ("pos",), "rsqrt": ("pos",),
    "reciprocal": ("pos",), "arccosh": ("ge1",), "arctanh": ("unit",), "arcsin": ("unit",), "arccos": ("unit",),
    "divide": ("any", "pos"), "remainder": ("any", "pos"), "floor_divide": ("any", "pos"),
    "power": ("pos", "small"), "float_power": ("pos", "small"),
    "bitwise_left_shift": ("any", "small"), "bitwise_right_shift": ("any", "small"),
    "where": ("cond", "any", "any"), "prod": ("near1",),
}


def _erf_ref(x):
    if _scipy_erf is not None:
        return _scipy_erf(x)
    return np.vectorize(math.erf, otypes=[np.float64])(x)


# Rows of the op table with no NumPy function: what a NumPy user writes.
NUMPY_FORMULAS = {
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "erf": _scipy_erf,
    # Autodiff's rows (issue 23): their values are x itself, so a NumPy
    # program's version is a copy, which is what a realize of them makes.
    "stop_gradient": np.copy,
    "depend": lambda x, token: np.copy(x),
}


def table_ops():
    """The op table's rows: element-wise ops, astype and the reductions."""
    ops = []
    for row in bz.ops():
        api = row["api"]
        if row["kind"] == "elementwise" and row["auto"]:
            f = getattr(np, row["numpy"]) if row["numpy"] else NUMPY_FORMULAS[api]
            ref = _erf_ref if api == "erf" else f
            ops.append(Op(api, "op", row["arity"], getattr(bz, api), f, DOMAINS.get(api), ref))
        elif api == "astype":
            to = lambda x: np.float64 if x.dtype == np.float32 else np.float32  # noqa: E731
            ops.append(Op("astype", "op", 1, lambda t: t.astype(to(t)), lambda a: a.astype(to(a))))
        elif row["kind"] == "reduce":
            ops.append(Op(api, "reduce", 1, lambda t, f=getattr(bz, api): f(t, axis=-1),
                          lambda a, f=getattr(np, row["numpy"]): f(a, axis=-1), DOMAINS.get(api)))
    return ops


def ufunc_ops():
    """The NumPy ufuncs braze builds from its ops in Python."""
    from braze import _inverse_trig, _numpy_functions
    names = list(_numpy_functions.UFUNCS) + list(_inverse_trig.__all__)
    ops, seen = [], set()
    for name in names:
        f = getattr(bz, name)
        if f in seen or not hasattr(np, name):  # atan is arctan
            continue
        seen.add(f)
        ops.append(Op(name, "ufunc", getattr(np, name).nin, f, getattr(np, name), DOMAINS.get(name)))
    return ops


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _np_log_softmax(x):
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def _np_logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


def _np_layer_norm(x, weight, bias):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) * weight + bias


def _np_rms_norm(x, weight):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * weight


def _np_gelu(x, erf=_scipy_erf):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def _np_cross_entropy(x, labels):
    picked = np.take_along_axis(_np_log_softmax(x), labels[:, None], axis=-1)
    return -picked.mean()


def _weights(names):
    def make(dtype, r, c):
        rng = np.random.default_rng(7)
        out = {}
        for name in names:
            w = (rng.random(c) + 0.5).astype(dtype) if is_float(dtype) else rng.integers(1, 3, c).astype(dtype)
            out[name] = (w, bz.asarray(w))
        return out
    return make


def _labels(dtype, r, c):
    y = np.random.default_rng(8).integers(0, c, r)
    return {"labels": (y, bz.asarray(y))}


def _clip_bounds(dtype):
    if dtype == BOOL:
        return 0, 1
    if is_float(dtype):
        return -1.0, 1.0
    lo, hi = INT_ANY[dtype.name]
    return lo + (hi - lo) // 4, hi - (hi - lo) // 4


def composite_ops():
    gelu_ref = _np_gelu if _scipy_erf else (lambda x: _np_gelu(x, _erf_ref))
    return [
        Op("softmax", "composite", 1, lambda t: bz.softmax(t, axis=-1), _np_softmax),
        Op("log_softmax", "composite", 1, lambda t: bz.log_softmax(t, axis=-1), _np_log_softmax),
        Op("logsumexp", "composite", 1, lambda t: bz.logsumexp(t, axis=-1), _np_logsumexp),
        Op("layer_norm", "composite", 1, lambda t, weight, bias: bz.layer_norm(t, weight, bias), _np_layer_norm,
           extras=_weights(["weight", "bias"])),
        Op("rms_norm", "composite", 1, lambda t, weight: bz.rms_norm(t, weight), _np_rms_norm,
           extras=_weights(["weight"])),
        Op("gelu", "composite", 1, bz.gelu, _np_gelu if _scipy_erf else None, ref=gelu_ref),
        Op("gelu_tanh", "composite", 1, lambda t: bz.gelu(t, approximate="tanh"), _np_gelu_tanh),
        Op("silu", "composite", 1, bz.silu, lambda x: x / (1 + np.exp(-x))),
        Op("mean", "composite", 1, lambda t: bz.mean(t, axis=-1), lambda a: np.mean(a, axis=-1)),
        Op("var", "composite", 1, lambda t: bz.var(t, axis=-1), lambda a: np.var(a, axis=-1)),
        Op("std", "composite", 1, lambda t: bz.std(t, axis=-1), lambda a: np.std(a, axis=-1)),
        Op("clip", "composite", 1, lambda t: bz.clip(t, *_clip_bounds(t.dtype)),
           lambda a: np.clip(a, *_clip_bounds(a.dtype))),
        Op("mse_loss", "composite", 2, bz.mse_loss, lambda a, b: np.mean((a - b) ** 2), rowwise=False),
        Op("cross_entropy", "composite", 1, lambda t, labels: bz.cross_entropy(t, labels), _np_cross_entropy,
           rowwise=False, extras=_labels),
    ]


def all_ops():
    return table_ops() + ufunc_ops() + composite_ops()


# --- one case --------------------------------------------------------------------------

# Loose tolerances of the check, by braze's result dtype (rtol; atol the same, scaled
# by the result's magnitude for reductions and composites).
TOLERANCE = {"float64": 1e-6, "float32": 1e-4, "float16": 1e-2, "bfloat16": 4e-2}


def _call_text(op, dtype, layout, shape):
    return f"{op.name} of {dtype.name} {shape[0]}x{shape[1]} {layout}"


def check(op, got, arrays, extras, shape):
    """None if braze's result `got` matches NumPy's reference, else what differs."""
    got = np.asarray(got)
    rows = slice(None)
    step = math.prod(shape) // CHECK_ELEMENTS
    if op.rowwise and step > 1:
        rows = np.r_[0:shape[0]:step, shape[0] - 1]
        got = got[rows]
    floating = is_float(got.dtype)
    arrays = [a[rows] for a in arrays]
    kw = {k: v[0] for k, v in extras.items()}
    if floating:  # the reference in float64, from the same values
        arrays = [a.astype(np.float64) for a in arrays]
        kw = {k: (v.astype(np.float64) if k != "labels" else v) for k, v in kw.items()}
    with np.errstate(all="ignore"):
        want = np.asarray(op.ref(*arrays, **kw))
    if want.shape != got.shape:
        return f"shape {got.shape}, NumPy's {want.shape}"
    if floating:
        tol = TOLERANCE[got.dtype.name]
        with np.errstate(all="ignore"):  # rounded once to braze's result dtype, as its semantics say
            g, w = got.astype(np.float64), want.astype(got.dtype).astype(np.float64)
        scaled = op.group in ("reduce", "composite")
        atol = tol * (max(1.0, float(np.nanmax(np.abs(w), initial=0.0))) if scaled else 1.0)
        with np.errstate(all="ignore"):
            bad = ~np.isclose(g, w, rtol=tol, atol=atol, equal_nan=True)
    else:  # exact, compared as values (NumPy's result dtype may be wider)
        as_values = np.int64 if want.dtype.kind in "biu" else np.float64
        g, w = got.astype(as_values), want.astype(as_values)
        bad = np.asarray(g != w)
    if not bad.any():
        return None
    i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
    where = "row-sampled " if isinstance(rows, np.ndarray) else ""
    return (f"{int(bad.sum())} of {bad.size} {where}elements differ; first at {tuple(int(k) for k in i)}: "
            f"braze {g[i].item()!r}, NumPy {w[i].item()!r} (result {got.dtype.name})")


def run_case(op, inputs, tally):
    """Times one case; returns (braze s, NumPy s) or None (skipped), noting
    refusals and findings in `tally`."""
    dtype, layout, shape = inputs.dtype, inputs.layout, inputs.shape
    operands = [inputs.operand(d, i, op.arity) for i, d in enumerate(op.domains)]
    arrays, tensors = [o[0] for o in operands], [o[1] for o in operands]
    extras = op.extras(dtype, *shape) if op.extras else {}
    bx = {k: v[1] for k, v in extras.items()}
    nx = {k: v[0] for k, v in extras.items()}
    label = f"{op.name}[{dtype.name}]"
    try:
        expr = op.braze(*tensors, **bx)
    except (TypeError, ValueError):
        tally["refused"].add(label)
        tally["refused_cases"] += 1
        return None
    t = time.perf_counter()
    try:
        got = expr.numpy()
    except Exception as e:  # noqa: BLE001 (any error realizing is a finding)
        tally["findings"].append(f"error: {_call_text(op, dtype, layout, shape)}: {type(e).__name__}: {e}")
        return None
    t_braze = time.perf_counter() - t
    try:
        problem = check(op, got, arrays, extras, shape)
    except Exception as e:  # noqa: BLE001 (a reference NumPy cannot compute: no check)
        problem = None
        tally["unchecked"].add(f"{label}: {type(e).__name__}")
    if problem:
        tally["findings"].append(f"mismatch: {_call_text(op, dtype, layout, shape)}: {problem}")
    del got, expr
    if op.numpy is None:
        tally["no_peer"].add(label)
        tally["no_peer_cases"] += 1
        return None
    t = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            op.numpy(*arrays, **nx)
    except (TypeError, ValueError):
        tally["no_peer"].add(label)
        tally["no_peer_cases"] += 1
        return None
    t_numpy = time.perf_counter() - t
    reps = max(2, min(timing.REPS, int(CASE_BUDGET / max(t_braze + t_numpy, 1e-9))))
    saved, timing.REPS = timing.REPS, reps
    try:
        with np.errstate(all="ignore"):
            times = best_in_turn({"braze": lambda: op.braze(*tensors, **bx).numpy(),
                                  "numpy": lambda: op.numpy(*arrays, **nx)})
    finally:
        timing.REPS = saved
    return times["braze"], times["numpy"]


# --- the sweep ---------------------------------------------------------------------------


def header_line():
    return (f"{'thr':>3} {'size':>4} {'op':19} {'dtype':8} {'layout':10} {'braze us':>10} {'numpy us':>10} "
            f"{'ratio':>6}")


def row_line(r):
    return (f"{r['threads']:>3} {r['size']:>4} {r['op']:19} {r['dtype']:8} {r['layout']:10} "
            f"{r['braze'] * 1e6:10.1f} {r['numpy'] * 1e6:10.1f} {r['ratio']:6.2f}")


def sweep(ops, sizes, dtypes_by_size, layouts, threads):
    """One pass in this process; returns its rows and tally."""
    tally = {"refused": set(), "refused_cases": 0, "no_peer": set(), "no_peer_cases": 0, "unchecked": set(),
             "findings": []}
    rows = []
    for size in sizes:
        n = SIZES[size]
        shape = SHAPES[n]
        pool = np.random.default_rng(0).random(2 * n + (1 << 16))
        for dtype in dtypes_by_size[size]:
            for layout in layouts:
                inputs = Inputs(pool, dtype, layout, shape)
                for op in ops:
                    got = run_case(op, inputs, tally)
                    if got is None:
                        continue
                    b, nt = got
                    r = {"threads": threads, "size": size, "op": op.name, "dtype": dtype.name, "layout": layout,
                         "braze": b, "numpy": nt, "ratio": nt / b}
                    rows.append(r)
                    print(row_line(r), flush=True)
                del inputs
        del pool
    return rows, tally


def run_child(args, rows_path):
    """The single-threaded pass: this script again, with BRAZE_NUM_THREADS=1."""
    cmd = [sys.executable, os.path.abspath(__file__), "--threads", "1", "--_child", rows_path,
           "--sizes", ",".join(args.sizes), "--layouts", ",".join(args.layouts)]
    if args.dtype_spec:
        cmd += ["--dtypes", args.dtype_spec]
    if args.ops:
        cmd += ["--ops", args.ops]
    env = dict(os.environ, BRAZE_NUM_THREADS="1")
    env.pop("OMP_NUM_THREADS", None)
    sys.stdout.flush()
    subprocess.run(cmd, env=env, check=True)
    with open(rows_path) as f:
        return json.load(f)


def summarize(rows, tally, threads_seen):
    print()
    print(f"{len(rows)} cases timed; ratio = NumPy's time / braze's (above 1: braze faster)")
    print(f"{'thr':>3} {'size':>4} {'cases':>6} {'median':>7} {'min':>6} {'<1.0':>5} {'<0.8':>5}")
    for threads in threads_seen:
        for size in SIZES:
            rs = [r["ratio"] for r in rows if r["threads"] == threads and r["size"] == size]
            if rs:
                print(f"{threads:>3} {size:>4} {len(rs):6d} {statistics.median(rs):7.2f} {min(rs):6.2f} "
                      f"{sum(x < 1.0 for x in rs):5d} {sum(x < 0.8 for x in rs):5d}")
    print("by layout, at 1M and above: median ratio, cases below 1.0")
    for threads in threads_seen:
        parts = []
        for layout in LAYOUTS:
            rs = [r["ratio"] for r in rows if r["threads"] == threads and r["layout"] == layout
                  and SIZES[r["size"]] >= 1 << 20]
            if rs:
                parts.append(f"{layout} {statistics.median(rs):.2f}, {sum(x < 1.0 for x in rs)}/{len(rs)}")
        print(f"  {threads:>3} thread(s): " + "; ".join(parts))
    print("issue 25's targets (no case below 1.0 at >= 1M, none below 0.8 at 1K-64K):")
    for threads in threads_seen:
        big = [r for r in rows if r["threads"] == threads and SIZES[r["size"]] >= 1 << 20]
        small = [r for r in rows if r["threads"] == threads and SIZES[r["size"]] < 1 << 20]
        print(f"  {threads} thread(s): {sum(r['ratio'] < 1.0 for r in big)} of {len(big)} cases at >= 1M slower "
              f"than NumPy; {sum(r['ratio'] < 0.8 for r in small)} of {len(small)} at 1K-64K below 0.8")
    print(f"skipped: {tally['refused_cases']} cases braze refuses ({len(tally['refused'])} op/dtype pairs), "
          f"{tally['no_peer_cases']} with no NumPy peer: {', '.join(sorted(tally['no_peer'])) or 'none'}")
    if tally["unchecked"]:
        print(f"not checked (NumPy's reference failed): {', '.join(sorted(tally['unchecked']))}")
    print(f"findings: {len(tally['findings'])}")
    for f in tally["findings"]:
        print(f"  {f}")
    print(f"the {WORST} worst cases:")
    print("  " + header_line())
    for r in sorted(rows, key=lambda r: r["ratio"])[:WORST]:
        print("  " + row_line(r))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", help=f"comma-separated, of {','.join(SIZES)} (default all)")
    ap.add_argument("--ops", help="comma-separated names or patterns (fnmatch: 'log*'); default all")
    ap.add_argument("--dtypes", help=f"comma-separated, or all (default: all of {','.join(d.name for d in DTYPES)}, "
                                     f"but float32 alone at 16M)")
    ap.add_argument("--layouts", help=f"comma-separated (default {','.join(LAYOUTS)})")
    ap.add_argument("--quick", action="store_true", help=f"dtypes {QUICK['dtypes']}, sizes {QUICK['sizes']}")
    ap.add_argument("--threads", choices=["all", "1", "both"], default="both")
    ap.add_argument("--json", help="also write every timed row, the skips and the findings here")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.dtypes = args.dtypes or QUICK["dtypes"]
        args.sizes = args.sizes or QUICK["sizes"]
    args.sizes = args.sizes.split(",") if args.sizes else list(SIZES)
    for s in args.sizes:
        if s not in SIZES:
            ap.error(f"unknown size {s!r}; sizes are {', '.join(SIZES)}")
    names = {d.name: d for d in DTYPES}
    args.dtype_spec = args.dtypes
    chosen = [names[d] if d in names else ap.error(f"unknown dtype {d!r}")
              for d in (args.dtypes.split(",") if args.dtypes and args.dtypes != "all" else names)]
    args.dtypes = {s: chosen if args.dtypes or s != "16M" else DEFAULT_16M_DTYPES for s in args.sizes}
    args.layouts = args.layouts.split(",") if args.layouts else list(LAYOUTS)
    for layout in args.layouts:
        if layout not in LAYOUTS:
            ap.error(f"unknown layout {layout!r}; layouts are {', '.join(LAYOUTS)}")
    return args


def select_ops(pattern):
    ops = all_ops()
    if not pattern:
        return ops
    pats = pattern.split(",")
    chosen = [op for op in ops if any(fnmatch.fnmatchcase(op.name, p) for p in pats)]
    if not chosen:
        sys.exit(f"no op matches {pattern!r}; ops: {', '.join(op.name for op in ops)}")
    return chosen


def main():
    args = parse_args()
    ops = select_ops(args.ops)
    if args._child:  # the single-threaded pass, for the parent to report
        rows, tally = sweep(ops, args.sizes, args.dtypes, args.layouts, "1")
        with open(args._child, "w") as f:
            json.dump({"rows": rows, "tally": {k: sorted(v) if isinstance(v, set) else v for k, v in tally.items()}},
                      f)
        return
    cores = os.environ.get("BRAZE_NUM_THREADS") or str(os.cpu_count())
    dtypes = ",".join(d.name for d in args.dtypes[args.sizes[0]])
    if any(args.dtypes[s] != args.dtypes[args.sizes[0]] for s in args.sizes):
        dtypes += " (" + "; ".join(f"{s}: {','.join(d.name for d in args.dtypes[s])}" for s in args.sizes
                                   if args.dtypes[s] != args.dtypes[args.sizes[0]]) + ")"
    print(f"braze vs NumPy {np.__version__}: {len(ops)} ops and composites, dtypes {dtypes}, "
          f"layouts {','.join(args.layouts)}, sizes "
          f"{','.join(f'{s} ({SHAPES[SIZES[s]][0]}x{SHAPES[SIZES[s]][1]})' for s in args.sizes)}; "
          f"threads {args.threads} (all = {cores}); best of up to {timing.REPS} rounds; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print(header_line(), flush=True)
    start = time.perf_counter()
    rows, tally = [], {"refused": set(), "refused_cases": 0, "no_peer": set(), "no_peer_cases": 0,
                       "unchecked": set(), "findings": []}
    threads_seen = []
    if args.threads in ("all", "both"):
        rows, tally = sweep(ops, args.sizes, args.dtypes, args.layouts, cores)
        threads_seen.append(cores)
    if args.threads in ("1", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            child = run_child(args, os.path.join(tmp, "rows.json"))
        rows += child["rows"]
        ct = child["tally"]
        for key in ("refused", "no_peer", "unchecked"):
            tally[key] |= set(ct[key])
        tally["refused_cases"] += ct["refused_cases"]
        tally["no_peer_cases"] += ct["no_peer_cases"]
        tally["findings"] += [f"(1 thread) {f}" for f in ct["findings"]]
        threads_seen.append("1")
    summarize(rows, tally, threads_seen)
    print(f"load average {os.getloadavg()[0]:.1f}; {time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "tally": {k: sorted(v) if isinstance(v, set) else v for k, v in tally.items()}},
                      f, indent=1)


if __name__ == "__main__":
    main()
