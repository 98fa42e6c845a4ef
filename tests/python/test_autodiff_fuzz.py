"""A differential fuzzer of reverse-mode gradients over random graphs
(docs/autodiff.md; the per-op checks are tests/python/test_autodiff.py).

Each seed builds a random function of 1-3 float64 tensors (shapes up to
4x5, broadcastable ones such as (3, 1) and (5,), 0-d) out of 3-12 random
ops: every differentiable element-wise row of the op table (bz.ops(), the
same DIFFERENTIABLE list test_autodiff.py sweeps), as functions, operators
and methods, with tensor, constant and Python-scalar operands; reductions
(sum, mean, max, min, prod, logsumexp, var, std over a random axis or axes,
keepdims random); movement (transpose, permute_dims, reshape, broadcast_to,
expand_dims, squeeze); matmul wherever two shapes allow it; composites
(softmax, log_softmax, layer_norm, rms_norm, gelu, silu). Operands are
chosen among all earlier values, so values fan out and the backward has to
add their gradients up. The loss is sum(v * W) over every value nothing
else uses, for fixed random weights W.

It checks, for every input:
- bz.grad against central finite differences of the same braze function in
  float64 (finite_difference of test_autodiff.py: eps 1e-6, atol 1e-5,
  rtol 1e-3);
- that bz.value_and_grad realized as one graph with the loss gives the same
  gradient as bz.grad realized alone, and the same loss as the function
  evaluated with no gradient; and that the PyTorch-style backward() agrees.

Smooth regions: the graph is built on the concrete inputs, each new value
evaluated (by braze) as it is drawn, and an op is only drawn where its
function is smooth well beyond the finite-difference step: the operands of
abs, relu, maximum, minimum, comparisons (where's condition) and remainder
stay MARGIN away from their kinks (shifted by a constant, or the op is
drawn again), max / min reduce lanes with no near ties, log, sqrt, rsqrt,
power take positive-ized bases (square(v) + c, exp, sigmoid(v) + c, ...),
reciprocal and divide denominators away from 0, log1p's argument above -1,
std and layer_norm lanes with some spread, and every value stays within
+-LIMIT. None of this is a tolerance: the gradient must match.

A failure prints the seed and the graph as a standalone Python reproducer
(its inputs, constants, weights and function), which is also exactly the
code the test runs: the function is built by exec of that text.

Budget: BRAZE_FUZZ_GRADS graphs (default 150, seeds 0 .. N-1): a few
seconds on either backend (BRAZE_BACKEND=reference too: the graphs are
small). BRAZE_FUZZ_GRADS=20000 is the on-demand run (about 4 minutes).
"""

import math
import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import braze as bz
from test_autodiff import ATOL, DIFFERENTIABLE, EPS, RTOL, finite_difference

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
N_GRAPHS = int(os.environ.get("BRAZE_FUZZ_GRADS", "150"))
COVERAGE_SEEDS = 150  # test_fuzzer_draws_every_op: the generator's coverage over the default seeds
# test_random_graphs_and_their_backward_match_the_reference_interpreter
REFERENCE_GRAPHS = int(os.environ.get("BRAZE_FUZZ_GRADS_REFERENCE", "60"))

MARGIN = 1e-2   # distance kept from every kink, tie and branch boundary (the FD step moves values ~1e-6)
LIMIT = 20.0    # every value stays within +-LIMIT (finite differences of a loss of moderate size)
MAX_SIZE = 60   # elements per value
MAX_NDIM = 4

# --- terms: an expression (text) with its value -------------------------------------------------


class Term:
    """A piece of the function: its Python text and its value at the inputs.
    atom: the text needs no parentheses as an operand."""

    def __init__(self, expr, value, atom=False):
        self.expr, self.value, self.atom = expr, np.asarray(value, dtype=np.float64), atom

    @property
    def shape(self):
        return self.value.shape

    @property
    def ndim(self):
        return self.value.ndim

    def p(self):
        return self.expr if self.atom else f"({self.expr})"


def _lit(c):
    return repr(float(c))


def _round(c, digits=3):
    return float(f"{c:.{digits}g}")


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def _lanes(value, axis):
    """value's elements grouped by the lanes a reduction over `axis` reads: (lanes, lane length)."""
    axes = tuple(range(value.ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = tuple(a % value.ndim for a in axes) if value.ndim else ()
    rest = [a for a in range(value.ndim) if a not in axes]
    moved = np.transpose(value, rest + list(axes)) if value.ndim else value.reshape(1)
    n = int(np.prod([value.shape[a] for a in axes])) if value.ndim else 1
    return moved.reshape(-1, n), n


class GenerationError(AssertionError):
    pass


# --- the random graph -------------------------------------------------------------------------------


class Graph:
    """A random function of float64 tensors, built op by op on concrete input
    values. After construction: arrays (the inputs), source (a standalone
    reproducer), f (the function, exec'd from that source) and drawn (a
    Counter of the ops drawn)."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.env = {"bz": bz, "np": np}   # the eager values of every name, for evaluating new terms
        self.nodes = []                   # Terms named x0.. (inputs) and v0.. (values)
        self.lines = []                   # the function's body
        self.consts = []                  # module-level constants (C0.., W0..)
        self.consumed = set()
        self.drawn = Counter()
        self._make_inputs()
        target = int(self.rng.integers(3, 13))
        ops = sorted(CATALOGUE)
        for _ in range(400):
            if sum(self.drawn.values()) >= target:
                break
            name = ops[int(self.rng.integers(len(ops)))]
            expr = CATALOGUE[name](self)
            if expr is not None and self._add(expr):
                self.drawn[name] += 1
        self._finish()

    # -- inputs and output

    def _make_inputs(self):
        rng = self.rng
        base = [(3, 5), (4, 5), (2, 3), (3, 4), (4, 4), (2, 2, 3), (5,), (4,)][int(rng.integers(8))]
        self.arrays = []
        for i in range(int(rng.integers(1, 4))):
            kind = rng.random()
            if kind < 0.4:
                shape = base
            elif kind < 0.6:  # some axes 1: (3, 1), (1, 5)
                shape = tuple(1 if rng.random() < 0.5 else d for d in base)
            elif kind < 0.85:  # a suffix: (5,)
                shape = base[int(rng.integers(1, len(base) + 1)) - 1:] if len(base) > 1 else base
            else:
                shape = ()
            a = rng.uniform(-2, 2, shape)
            self.arrays.append(a)
            name = f"x{i}"
            self.env[name] = bz.tensor(a)
            self.nodes.append(Term(name, a, atom=True))

    def _finish(self):
        sinks = [t for t in self.nodes[len(self.arrays):] if t.expr not in self.consumed]
        if not sinks:  # no op drawn at all (cannot happen with 400 tries, but a graph needs an output)
            sinks = self.nodes[:1]
        terms = []
        for t in sinks:
            w = self._const("W", self.rng.standard_normal(t.shape))
            terms.append(f"bz.sum({t.expr} * {w.expr})")
        self.loss_expr = " + ".join(terms)
        args = ", ".join(f"x{i}" for i in range(len(self.arrays)))
        head = ["import numpy as np", "import braze as bz", ""]
        head += [f"a{i} = np.array({a.tolist()!r})  # {a.shape}" for i, a in enumerate(self.arrays)]
        body = [f"def f({args}):"] + [f"    {line}" for line in self.lines] + [f"    return {self.loss_expr}"]
        self.definitions = "\n".join(head + self.consts + [""] + body) + "\n"
        call = ", ".join(f"bz.tensor(a{i})" for i in range(len(self.arrays)))
        nums = ", ".join(str(i) for i in range(len(self.arrays)))
        ops = ", ".join(sorted(self.drawn.elements()))
        self.source = (f"# seed {self.seed}: {sum(self.drawn.values())} ops ({ops})\n" + self.definitions
                       + f"\ngrads = bz.grad(f, argnums=({nums},))({call})\n")
        namespace = {}
        exec(compile(self.definitions, f"<random graph {self.seed}>", "exec"), namespace)
        self.f = namespace["f"]

    # -- evaluating and adding terms

    def eval(self, expr, keep=False):
        try:
            out = eval(expr, self.env)
            value = np.asarray(out.numpy() if isinstance(out, bz.Tensor) else out, dtype=np.float64)
            return (value, out) if keep else value
        except Exception as e:  # the forward itself failed: a braze bug (or a generator bug)
            raise GenerationError(f"seed {self.seed}: evaluating {expr!r} raised {type(e).__name__}: {e}\n"
                                  f"the graph so far:\n" + "\n".join(self.consts + self.lines)) from e

    def term(self, expr, atom=False):
        return Term(expr, self.eval(expr), atom)

    def _add(self, expr):
        value, tensor = self.eval(expr, keep=True)
        if not (value.size and value.size <= MAX_SIZE and value.ndim <= MAX_NDIM
                and np.all(np.isfinite(value)) and np.max(np.abs(value)) <= LIMIT):
            return False
        name = f"v{len(self.nodes) - len(self.arrays)}"
        self.env[name] = tensor
        self.consumed |= set(re.findall(r"\b[xv]\d+\b", expr))
        self.lines.append(f"{name} = {expr}".ljust(60) + f"  # {value.shape}")
        self.nodes.append(Term(name, value, atom=True))
        return True

    def _const(self, prefix, value):
        name = f"{prefix}{sum(line.startswith(prefix) for line in self.consts)}"
        value = np.asarray(value, dtype=np.float64)
        self.consts.append(f"{name} = bz.tensor(np.array({value.tolist()!r}))")
        self.env[name] = bz.tensor(value)
        return Term(name, value, atom=True)

    # -- random choices

    def chance(self, p):
        return self.rng.random() < p

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def pick(self, pred=lambda t: True):
        """A value to use: recent ones, and inputs nothing uses yet, more often."""
        cands = [t for t in self.nodes if pred(t)]
        if not cands:
            return None
        recent = {t.expr for t in self.nodes[-3:]}
        w = np.array([1.0 + 3 * (t.expr in recent) + 3 * (t.expr.startswith("x") and t.expr not in self.consumed)
                      for t in cands])
        return cands[int(self.rng.choice(len(cands), p=w / w.sum()))]

    def scalar(self, lo=-2.0, hi=2.0):
        c = _round(self.rng.uniform(lo, hi))
        return Term(_lit(c), c, atom=c >= 0)

    def operand(self, a, scalars=True):
        """A second operand for a: a value whose shape broadcasts with a's,
        a constant tensor or a Python scalar."""
        r = self.rng.random()
        if scalars and r < 0.15:
            return self.scalar()
        if r < 0.25:
            shape = self.choice([a.shape, a.shape[1:], (a.shape[-1],) if a.ndim else (), ()])
            return self._const("C", _round_array(self.rng.uniform(-2, 2, shape)))
        return self.pick(lambda t: (s := _broadcast(a.shape, t.shape)) is not None and math.prod(s) <= MAX_SIZE)

    # -- domains: each returns a Term whose value is in the domain, or None

    def bounded(self, u, lim):
        m = float(np.max(np.abs(u.value))) if u.value.size else 0.0
        if m <= lim:
            return u
        if self.chance(0.5):
            return self.term(f"bz.tanh({u.expr}) * {_lit(lim)}")
        return self.term(f"{u.p()} * {_lit(_round(lim / m * 0.99, 2))}")

    def off_kink(self, u, at=0.0):
        """u, or u + s, at least MARGIN from `at` everywhere."""
        if np.min(np.abs(u.value - at)) >= MARGIN:
            return u
        for _ in range(5):
            s = _round(self.rng.uniform(-1, 1), 2)
            if np.min(np.abs(u.value + s - at)) >= MARGIN:
                return self.term(f"{u.p()} + {_lit(s)}" if s >= 0 else f"{u.p()} - {_lit(-s)}")
        return None

    def positive(self, u):
        """A positive-ized u, at least 0.08."""
        forms = [f"bz.square({u.expr}) + {_lit(self.choice([0.25, 0.5, 1.0]))}",
                 f"{u.p()} * {u.p()} + {_lit(self.choice([0.25, 0.5, 1.0]))}",
                 f"bz.sigmoid({u.expr}) + 0.25"]
        if np.max(np.abs(u.value)) <= 2.5:
            forms.append(f"bz.exp({u.expr})")
        if np.min(np.abs(u.value)) >= MARGIN:
            forms.append(f"bz.abs({u.expr}) + 0.25")
        if np.min(u.value) >= 0.2:
            return u if self.chance(0.5) else self.term(self.choice(forms))
        t = self.term(self.choice(forms))
        assert np.min(t.value) >= 0.08, (t.expr, t.value)
        return t

    def away_from_zero(self, u):
        if np.min(np.abs(u.value)) >= 0.25 and self.chance(0.6):
            return u
        t = self.positive(u)
        return self.term(f"-{t.p()}") if self.chance(0.3) else t


def _round_array(a):
    return np.array([_round(x) for x in np.ravel(a)]).reshape(np.shape(a))


# --- the ops: each draws its operands and returns the new value's text, or None -------------------------


def _unary(api, domain=None, method=False, extra_forms=()):
    def gen(g):
        u = g.pick()
        if domain is not None:
            u = domain(g, u)
            if u is None:
                return None
        forms = [f"bz.{api}({u.expr})"]
        if method:
            forms.append(f"{u.p()}.{api}()")
        forms += [form.format(u=u.expr, p=u.p()) for form in extra_forms]
        return g.choice(forms)
    return gen


def _any(g, u):
    return u


def _exp_arg(g, u):
    return g.bounded(u, 2.5)


def _tan_arg(g, u):  # away from tan's poles at +-pi/2
    return g.bounded(u, 1.2)


def _log1p_arg(g, u):
    if np.min(u.value) >= -0.8:
        return u
    return g.term(f"bz.tanh({u.expr}) * 0.8") if g.chance(0.5) else g.positive(u)


def _binary(op_forms):
    def gen(g):
        a = g.pick()
        b = g.operand(a)
        if b is None:
            return None
        if g.chance(0.3) and b.expr[0] not in "xv":  # the constant on the left
            a, b = b, a
        return g.choice(op_forms).format(a=a.expr, b=b.expr, pa=a.p(), pb=b.p())
    return gen


def _divide(g):
    a = g.pick()
    b = g.operand(a)
    if b is None:
        return None
    if not b.expr[0] in "xvC":  # a scalar denominator; the variable goes below, too
        a, b = b, a
    d = g.away_from_zero(b)
    return g.choice(["{pa} / {pd}", "bz.divide({a}, {d})"]).format(a=a.expr, pa=a.p(), d=d.expr, pd=d.p())


def _power(g):
    a = g.pick()
    r = g.rng.random()
    if r < 0.2:  # a scalar base
        e = g.bounded(a, 2.0)
        return f"{_lit(g.choice([0.5, 1.5, 2.0, 3.0]))} ** {e.p()}"
    base = g.positive(a)
    if r < 0.5:  # a scalar exponent
        c = g.choice([0.5, 1.5, 2.0, 2.5, 3.0, -0.5, -1.5])
        return g.choice([f"{base.p()} ** {_lit(c)}" if c > 0 else f"{base.p()} ** ({_lit(c)})",
                         f"bz.power({base.expr}, {_lit(c)})"])
    e = g.pick(lambda t: (s := _broadcast(a.shape, t.shape)) is not None and math.prod(s) <= MAX_SIZE)
    e = g.bounded(e, 2.0)
    return g.choice([f"bz.power({base.expr}, {e.expr})", f"{base.p()} ** {e.p()}"])


def _extremum(api):
    def gen(g):
        a = g.pick()
        b = g.operand(a)
        if b is None:
            return None
        if np.min(np.abs(a.value - b.value)) < MARGIN:  # a tie, or nearly: move b off it
            for _ in range(5):
                s = _round(g.rng.uniform(-1, 1), 2)
                if np.min(np.abs(a.value - b.value - s)) >= MARGIN:
                    b = g.term(f"{b.p()} + {_lit(s)}" if s >= 0 else f"{b.p()} - {_lit(-s)}")
                    break
            else:
                return None
        if g.chance(0.3):
            a, b = b, a
        return f"bz.{api}({a.expr}, {b.expr})"
    return gen


def _remainder(g):
    a = g.pick()
    if g.chance(0.4):
        c = _round(g.rng.uniform(0.5, 2.0)) * g.choice([1, 1, -1])
        d = Term(_lit(c), c, atom=c >= 0)
    else:
        d = g.operand(a, scalars=False)
        if d is None:
            return None
        d = g.away_from_zero(d)
    # remainder(a, d) jumps where a / d is an integer: keep a / d MARGIN from them, shifting a if need be.
    for s in [0.0] + [_round(g.rng.uniform(-1, 1), 2) for _ in range(5)]:
        q = (a.value + s) / d.value
        if np.min(np.abs(q - np.round(q))) >= MARGIN:
            if s:
                a = g.term(f"{a.p()} + {_lit(s)}" if s > 0 else f"{a.p()} - {_lit(-s)}")
            break
    else:
        return None
    return g.choice([f"bz.remainder({a.expr}, {d.expr})", f"{a.p()} % {d.p()}"])


def _where(g):
    p = g.pick()
    q = g.operand(p)
    if q is None:
        return None
    if np.min(np.abs(p.value - q.value)) < MARGIN:  # the condition flips under the FD step: move q off p
        for _ in range(5):
            s = _round(g.rng.uniform(-1, 1), 2)
            if np.min(np.abs(p.value - q.value - s)) >= MARGIN:
                q = g.term(f"{q.p()} + {_lit(s)}" if s >= 0 else f"{q.p()} - {_lit(-s)}")
                break
        else:
            return None
    cond = g.choice(["{a} > {b}", "{a} < {b}", "{a} >= {b}", "{a} <= {b}", "bz.greater({x}, {y})",
                     "bz.less({x}, {y})"]).format(a=p.p(), b=q.p(), x=p.expr, y=q.expr)
    a = g.pick()
    b = g.scalar() if g.chance(0.25) else g.operand(a)
    if b is None:
        return None
    if g.chance(0.5):
        a, b = b, a
    if _broadcast(p.shape, q.shape, a.shape, b.shape) is None:
        return None
    return f"bz.where({cond}, {a.expr}, {b.expr})"


def _checkpoint(g):
    # Note [Checkpoints]: a smooth body recomputed in the backward, reading
    # a second value from its closure (a variable's gradient flows both
    # through the argument and through the closure).
    u = g.pick()
    v = g.operand(u)
    if v is None:
        return None
    body = g.choice(["bz.tanh(t) * {v}", "bz.sin(t * {v}) + t", "bz.sigmoid(t) - {v} * t",
                     "bz.sin(t) * bz.tanh(t * {v}).sum()"]).format(v=v.p())
    policy = g.choice(["", ", policy='dots_saveable'", ", policy='dots_and_reductions_saveable'"])
    return f"bz.checkpoint(lambda t: {body}{policy})({u.expr})"


def _axis(g, u, tuples=True):
    """A random reduction axis of u: None, an int (maybe negative) or a tuple."""
    if u.ndim == 0 or g.chance(0.2):
        return None
    if tuples and u.ndim >= 2 and g.chance(0.25):
        return tuple(sorted(int(a) for a in g.rng.choice(u.ndim, 2, replace=False)))
    a = int(g.rng.integers(u.ndim))
    return a - u.ndim if g.chance(0.3) else a


def _reduction_call(g, api, u, axis, extra="", method=False):
    keepdims = g.chance(0.5)
    args = ([] if axis is None and g.chance(0.5) else [f"axis={axis!r}"]) + ([extra] if extra else [])
    args += ["keepdims=True"] if keepdims else []
    if method:
        return f"{u.p()}.{api}({', '.join(args)})"
    return f"bz.{api}({', '.join([u.expr] + args)})"


def _reduction(api, method=True):
    def gen(g):
        u = g.pick()
        return _reduction_call(g, api, u, _axis(g, u), method=method and g.chance(0.3))
    return gen


def _extremum_reduction(api):
    def gen(g):
        u = g.pick()
        axis = _axis(g, u)
        lanes, n = _lanes(u.value, axis)
        if n > 1:
            top = np.sort(lanes, axis=1)
            gap = top[:, -1] - top[:, -2] if api == "max" else top[:, 1] - top[:, 0]
            if np.min(gap) < MARGIN:  # a tie (a broadcast value, say): its gradient is split, not an FD's
                return None
        return _reduction_call(g, api, u, axis, method=g.chance(0.3))
    return gen


def _spread(api):
    def gen(g):
        u = g.pick()
        axis = _axis(g, u)
        lanes, n = _lanes(u.value, axis)
        correction = g.choice([0, 1]) if n >= 2 else 0
        if api == "std" and (n < 2 or np.min(np.var(lanes, axis=1)) < 0.01):
            return None  # sqrt at 0: its gradient is inf
        return _reduction_call(g, api, u, axis, f"correction={correction}" if correction else "",
                               method=g.chance(0.3))
    return gen


def _logsumexp(g):
    u = g.pick()
    return _reduction_call(g, "logsumexp", u, _axis(g, u), method=g.chance(0.3))


def _transpose(g):
    u = g.pick(lambda t: t.ndim >= 2)
    if u is None:
        return None
    perm = tuple(int(a) for a in g.rng.permutation(u.ndim))
    return g.choice([f"bz.transpose({u.expr})", f"{u.p()}.T", f"bz.matrix_transpose({u.expr})", f"{u.p()}.mT",
                     f"bz.transpose({u.expr}, {perm!r})"])


def _permute_dims(g):
    u = g.pick(lambda t: t.ndim >= 2)
    if u is None:
        return None
    perm = tuple(int(a) for a in g.rng.permutation(u.ndim))
    return f"bz.permute_dims({u.expr}, {perm!r})"


def _factor(g, n):
    """A random shape of n elements, rank 0 to 3."""
    dims = []
    while n > 1 and len(dims) < 3:
        divisors = [d for d in range(2, n + 1) if n % d == 0]
        d = g.choice(divisors) if len(dims) < 2 else n
        dims.append(d)
        n //= d
    if g.chance(0.3):
        dims.insert(int(g.rng.integers(len(dims) + 1)), 1)
    return tuple(dims)


def _reshape(g):
    u = g.pick()
    shape = _factor(g, u.value.size)
    if len(shape) > MAX_NDIM:
        return None
    spec = list(shape)
    if spec and g.chance(0.3):
        spec[int(g.rng.integers(len(spec)))] = -1
    spec = tuple(spec)
    return g.choice([f"bz.reshape({u.expr}, {spec!r})", f"{u.p()}.reshape({spec!r})"])


def _broadcast_to(g):
    u = g.pick()
    shape = [int(g.rng.integers(2, 4)) if d == 1 and g.chance(0.6) else d for d in u.shape]
    if g.chance(0.5) or tuple(shape) == u.shape:
        shape.insert(0, int(g.rng.integers(2, 4)))
    if len(shape) > MAX_NDIM or math.prod(shape) > MAX_SIZE:
        return None
    return f"bz.broadcast_to({u.expr}, {tuple(shape)!r})"


def _expand_dims(g):
    u = g.pick(lambda t: t.ndim < MAX_NDIM)
    if u is None:
        return None
    return f"bz.expand_dims({u.expr}, {int(g.rng.integers(-u.ndim - 1, u.ndim + 1))})"


def _squeeze(g):
    u = g.pick(lambda t: 1 in t.shape)
    if u is None:
        return None
    ones = [i for i, d in enumerate(u.shape) if d == 1]
    return g.choice([f"bz.squeeze({u.expr})", f"bz.squeeze({u.expr}, {g.choice(ones)})", f"{u.p()}.squeeze()"])


def _matmul(g):
    cands = []
    for a in g.nodes:
        for b in g.nodes:
            if a.ndim == 0 or b.ndim == 0:
                continue
            for transpose in (False, True):
                if transpose and b.ndim < 2:
                    continue
                sb = b.shape[:-2] + b.shape[:-3:-1] if transpose else b.shape
                try:
                    out = np.matmul(np.zeros(a.shape), np.zeros(sb)).shape
                except ValueError:
                    continue
                if math.prod(out) <= MAX_SIZE and len(out) <= MAX_NDIM:
                    cands.append((a, b, transpose))
    if not cands:
        return None
    a, b, transpose = g.choice(cands)
    rhs = g.choice([f"bz.matrix_transpose({b.expr})", f"{b.p()}.mT"]) if transpose else b.expr  # b: a name
    return g.choice([f"{a.p()} @ {rhs}", f"bz.matmul({a.expr}, {rhs})"])


def _softmax(api):
    def gen(g):
        u = g.pick(lambda t: t.ndim >= 1)
        if u is None:
            return None
        if g.chance(0.4):
            return f"bz.{api}({u.expr})"
        return f"bz.{api}({u.expr}, axis={int(g.rng.integers(-u.ndim, u.ndim))})"
    return gen


def _norm_weight(g, d):
    """A weight or bias of shape (d,) for a norm: a value, a constant or none."""
    r = g.rng.random()
    if r < 0.5:
        t = g.pick(lambda t: t.shape == (d,))
        if t is not None:
            return t
    if r < 0.75:
        return g._const("C", _round_array(g.rng.uniform(-2, 2, (d,))))
    return None


def _layer_norm(g):
    u = g.pick(lambda t: t.ndim >= 1 and t.shape[-1] >= 2)
    if u is None or np.min(np.var(u.value, axis=-1)) < 0.05:
        return None  # a flat lane: 1 / sqrt(var + eps) is steep there
    d = u.shape[-1]
    w, b = _norm_weight(g, d), _norm_weight(g, d)
    args = [u.expr] + ([w.expr] if w is not None else []) + ([f"bias={b.expr}"] if b is not None else [])
    return f"bz.layer_norm({', '.join(args)})"


def _rms_norm(g):
    u = g.pick(lambda t: t.ndim >= 1)
    if u is None or np.min(np.mean(np.square(u.value), axis=-1)) < 0.05:
        return None
    w = _norm_weight(g, u.shape[-1])
    return f"bz.rms_norm({u.expr}{', ' + w.expr if w is not None else ''})"


def _positive_of(g, u):
    return g.positive(u)


def _away_of(g, u):
    return g.away_from_zero(u)


def _off_zero(g, u):
    return g.off_kink(u)


CATALOGUE = {
    # Element-wise: one entry per DIFFERENTIABLE row of the op table (test_every_table_op_is_drawn).
    "negative": _unary("negative", _any, method=True, extra_forms=["-{p}"]),
    "abs": _unary("abs", _off_zero, method=True),
    "exp": _unary("exp", _exp_arg, method=True),
    "exp2": _unary("exp2", _exp_arg, method=True),
    "expm1": _unary("expm1", _exp_arg, method=True),
    "log": _unary("log", _positive_of, method=True),
    "log2": _unary("log2", _positive_of, method=True),
    "log1p": _unary("log1p", _log1p_arg, method=True),
    "sqrt": _unary("sqrt", _positive_of, method=True),
    "rsqrt": _unary("rsqrt", _positive_of, method=True),
    "reciprocal": _unary("reciprocal", _away_of, method=True),
    "square": _unary("square", _any, method=True),
    "sin": _unary("sin", _any, method=True),
    "cos": _unary("cos", _any, method=True),
    "tan": _unary("tan", _tan_arg, method=True),
    "tanh": _unary("tanh", _any, method=True),
    "sigmoid": _unary("sigmoid", _any, method=True),
    "relu": _unary("relu", _off_zero, method=True),
    "erf": _unary("erf", _any, method=True),
    "copy": _unary("copy", _any, method=True),
    "add": _binary(["{pa} + {pb}", "bz.add({a}, {b})"]),
    "subtract": _binary(["{pa} - {pb}", "bz.subtract({a}, {b})"]),
    "multiply": _binary(["{pa} * {pb}", "bz.multiply({a}, {b})"]),
    "divide": _divide,
    "power": _power,
    "maximum": _extremum("maximum"),
    "minimum": _extremum("minimum"),
    "remainder": _remainder,
    "where": _where,
    "depend": _binary(["bz.depend({a}, {b})"]),
    # Reductions.
    "sum": _reduction("sum"),
    "mean": _reduction("mean"),
    "prod": _reduction("prod"),
    "max": _extremum_reduction("max"),
    "min": _extremum_reduction("min"),
    "logsumexp": _logsumexp,
    "var": _spread("var"),
    "std": _spread("std"),
    # Movement.
    "transpose": _transpose,
    "permute_dims": _permute_dims,
    "reshape": _reshape,
    "broadcast_to": _broadcast_to,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    # Library calls and composites.
    "matmul": _matmul,
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "layer_norm": _layer_norm,
    "rms_norm": _rms_norm,
    "gelu": _unary("gelu", _any, extra_forms=["bz.gelu({u}, approximate='tanh')"]),
    "silu": _unary("silu", _any),
    "checkpoint": _checkpoint,
}


# --- the checks -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(N_GRAPHS))
def test_random_graph_gradient(seed):
    g = Graph(seed)
    f, arrays = g.f, g.arrays
    nums = tuple(range(len(arrays)))

    def tensors():
        return [bz.tensor(a) for a in arrays]

    try:
        # bz.grad, realized alone.
        alone = bz.grad(f, argnums=nums)(*tensors())
        bz.realize(*alone)
        for i, (gr, a) in enumerate(zip(alone, arrays)):
            assert gr.shape == a.shape and gr.dtype == np.float64, (i, gr.shape, gr.dtype, a.shape)
            assert not gr.requires_grad
        alone = [gr.numpy() for gr in alone]

        # Central finite differences of the same function, in float64.
        want = finite_difference(lambda *arrs: f(*[bz.tensor(a) for a in arrs]).numpy(), arrays, eps=EPS)
        for i, (gr, w) in enumerate(zip(alone, want)):
            np.testing.assert_allclose(gr, w, rtol=RTOL, atol=ATOL,
                                       err_msg=f"bz.grad w.r.t. x{i} against finite differences")

        # value_and_grad: the loss and the gradients in one realize.
        value, together = bz.value_and_grad(f, argnums=nums)(*tensors())
        bz.realize(value, *together)
        plain = f(*tensors()).numpy()
        np.testing.assert_allclose(value.numpy(), plain, rtol=1e-12, atol=1e-12,
                                   err_msg="value_and_grad's loss against the function evaluated alone")
        for i, (a, b) in enumerate(zip(together, alone)):
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-12, atol=1e-12,
                                       err_msg=f"x{i}: value_and_grad's gradient (realized with the loss) "
                                               f"against bz.grad's (realized alone)")

        # PyTorch style: backward() into .grad.
        variables = [t.requires_grad_() for t in tensors()]
        f(*variables).backward()
        for i, (v, b) in enumerate(zip(variables, alone)):
            got = v.grad.numpy() if v.grad is not None else np.zeros(v.shape)  # an unused input keeps None
            np.testing.assert_allclose(got, b, rtol=1e-12, atol=1e-12,
                                       err_msg=f"x{i}: backward()'s .grad against bz.grad's")
    except Exception as e:
        # The same exception type (a braze internal error is a RuntimeError),
        # with the seed and the graph.
        kind = type(e) if type(e) in (AssertionError, RuntimeError, ValueError, TypeError) else AssertionError
        raise kind(f"random graph, seed {seed} (rerun: pytest "
                   f"'tests/python/test_autodiff_fuzz.py::test_random_graph_gradient[{seed}]'):\n"
                   f"{type(e).__name__}: {e}\n\n--- the graph, a standalone reproducer ---\n{g.source}") from e


def gradients_of(seed):
    """The loss and the gradients of seed's graph, as NumPy arrays."""
    g = Graph(seed)
    value, grads = bz.value_and_grad(g.f, argnums=tuple(range(len(g.arrays))))(*[bz.tensor(a) for a in g.arrays])
    return [value.numpy()] + [x.numpy() for x in grads]


@pytest.mark.skipif(REFERENCE, reason="under BRAZE_BACKEND=reference both sides are the interpreter")
def test_random_graphs_and_their_backward_match_the_reference_interpreter(tmp_path):
    # The differential fuzzer's check for gradients: the same graphs and
    # their backward, fused and generated here, against the reference
    # interpreter in a process of its own (the backend is chosen per
    # process). float64 throughout: generated transcendentals are within 2
    # ulp and sums add in another order, hence the tolerance.
    seeds = list(range(REFERENCE_GRAPHS))
    out = tmp_path / "reference.npz"
    script = (f"import sys, numpy as np, braze as bz; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
              f"import test_autodiff_fuzz as t; "
              f"np.savez({str(out)!r}, **{{f'{{s}}_{{i}}': a for s in {seeds!r} "
              f"for i, a in enumerate(t.gradients_of(s))}}); "
              f"st = bz.stats(); assert st['kernels_launched'] == 0 and st['reference_evaluations'] > 0, st")
    env = {**os.environ, "BRAZE_BACKEND": "reference"}
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    want = np.load(out)
    before = bz.stats()
    for seed in seeds:
        got = gradients_of(seed)
        for i, a in enumerate(got):
            np.testing.assert_allclose(a, want[f"{seed}_{i}"], rtol=1e-9, atol=1e-9,
                                       err_msg=f"seed {seed}, {'the loss' if i == 0 else f'the gradient of x{i - 1}'}"
                                               f" against the reference interpreter:\n{Graph(seed).source}")
    after = bz.stats()
    assert after["kernels_interpreted"] == before["kernels_interpreted"]  # every kernel generated


def test_every_table_op_is_drawn():
    # A new differentiable element-wise row of graph/ops.def fails here until
    # the fuzzer draws it (with its domain), as test_autodiff's sweeps do.
    table = {o["api"] for o in DIFFERENTIABLE}
    missing = table - set(CATALOGUE)
    assert not missing, f"differentiable element-wise ops the fuzzer never draws: {sorted(missing)}"


def test_fuzzer_draws_every_op():
    # The guards (smooth regions, sizes) must not starve an op: over the
    # default seeds every op of the catalogue is drawn, several times.
    drawn = Counter()
    for seed in range(COVERAGE_SEEDS):
        drawn.update(Graph(seed).drawn)
    rare = {name: drawn[name] for name in CATALOGUE if drawn[name] < 3}
    assert not rare, f"ops drawn fewer than 3 times over {COVERAGE_SEEDS} graphs: {rare}"


def test_graph_description_is_the_function():
    # The reproducer printed on failure is the very code under test: exec'ing
    # it anew gives the same loss.
    g = Graph(0)
    ns = {}
    exec(g.source, ns)
    got = float(ns["f"](*[bz.tensor(a) for a in g.arrays]).numpy())
    assert got == float(g.f(*[bz.tensor(a) for a in g.arrays]).numpy())
    assert len(ns["grads"]) == len(g.arrays)


# --- what the fuzzer found: a reshape inside a fused graph ------------------------------------------------
#
# Seeds 519, 1336, ... and 786, 2016, ... of a 20000-graph run crashed the
# CPU backend (not a gradient rule: the reference interpreter passed them):
# the partition put a node shaped like neither its kernel's domain nor its
# rows into the kernel (fusion/partition.cpp, try_join). Both are common in
# backward graphs (the gradient of a reshape then a broadcast is
# reshape(sum(g, axis=0))).


@pytest.mark.parametrize("case", ["forward", "forward_then_multiply", "gradient"])
def test_reshape_of_a_reduction(case):
    x = bz.tensor(np.arange(16.0).reshape(4, 4))
    want = np.arange(16.0).reshape(4, 4).sum(axis=0).reshape(2, 2)
    if case == "forward":
        np.testing.assert_array_equal(bz.sum(x, axis=0).reshape((2, 2)).numpy(), want)
    elif case == "forward_then_multiply":
        np.testing.assert_array_equal((bz.sum(x, axis=0).reshape((2, 2)) * bz.tensor(np.ones((2, 2)))).numpy(), want)
    else:
        ones = bz.tensor(np.ones((3, 1, 1)))
        g = bz.grad(lambda x: bz.sum(bz.reshape(x, (2, 2)) + ones))(bz.tensor(np.arange(4.0)))
        np.testing.assert_array_equal(g.numpy(), np.full(4, 3.0))


@pytest.mark.parametrize("case", ["forward", "gradient"])
def test_reshape_of_a_fused_value_that_reads_a_reduction(case):
    if case == "forward":
        a = np.arange(20.0).reshape(4, 5)
        x, y = bz.tensor(a), bz.tensor(np.ones(10))
        got = (bz.reshape(x - bz.sum(x, axis=-1, keepdims=True), (2, 10)) + y).numpy()
        np.testing.assert_allclose(got, (a - a.sum(axis=-1, keepdims=True)).reshape(2, 10) + 1)
    else:
        a = np.array([[0.1, 0.5, 0.2], [0.9, 0.3, 0.7]])
        g = bz.grad(lambda x: bz.sum(bz.max(bz.reshape(bz.softmax(x), (3, 2)), axis=0)))(bz.tensor(a))
        want = finite_difference(lambda b: bz.sum(bz.max(bz.reshape(bz.softmax(bz.tensor(b)), (3, 2)), axis=0)).numpy(),
                                 [a])[0]
        np.testing.assert_allclose(g.numpy(), want, rtol=RTOL, atol=ATOL)
