"""Reverse-mode autodiff (issue 23; Note [Reverse mode], runtime/autodiff.h).

What it checks:
- every float-differentiable element-wise op of the op table (bz.ops()) x
  layouts (contiguous, transposed view, broadcast operands, strided and
  negative-step slices as the variable, 0-d, zero-size), in float64, against
  central finite differences of the same braze function, and by the
  random-direction test <u, J^T v> = d/de <v, f(x + e u)>; a table test makes
  a new row without a gradient test fail;
- second derivatives (grad of grad) against finite differences of the first;
- float32 gradients against the float64 ones;
- reductions (ties, zeros in prod), movement ops, matmul (1-d, batched,
  broadcast), conv2d, where (NaN in the branch not taken), composites;
- documented edge cases (sqrt at 0, pow(0, 0), ties, relu and abs at 0) and
  the errors (integer inputs, non-scalar outputs, slices, strided conv2d);
- the API: bz.grad / value_and_grad / vjp over trees, has_aux, argnums,
  closures, nesting, stop_gradient, no_grad, and the PyTorch-style
  requires_grad_ / backward / .grad;
- that the backward fuses with the forward (kernel counts).

All finite differences go through finite_difference() below (float64, eps
1e-6, compared with atol 1e-5, rtol 1e-3), applied to the same braze function
the gradient is taken of, so the only thing under test is the gradient.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import braze as bz
from conftest import layout_shape, make_layout, result_dtype

OPS = bz.ops()
F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no kernels to count

EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3


def api(o):
    return o["api"]


# --- the finite-difference oracle -------------------------------------------------------------


def finite_difference(f, arrays, direction=None, eps=EPS):
    """Central finite differences of the scalar function f(*arrays) (float64
    NumPy arrays in, a number out). Along `direction` (arrays shaped like
    `arrays`): the directional derivative. Without: the gradient, one array
    per argument, one element at a time."""
    if direction is None:
        grads = []
        for i, a in enumerate(arrays):
            g = np.zeros(np.shape(a))
            for idx in np.ndindex(g.shape):
                unit = [np.zeros(np.shape(b)) for b in arrays]
                unit[i][idx] = 1.0
                g[idx] = finite_difference(f, arrays, unit, eps)
            grads.append(g)
        return grads

    def at(s):
        return float(np.asarray(f(*[np.asarray(a + s * eps * u) for a, u in zip(arrays, direction)])))

    return (at(1.0) - at(-1.0)) / (2 * eps)


def test_finite_difference_oracle():
    # The oracle itself: d/dx sum(w x^3) = 3 w x^2, and a directional derivative.
    x, w = np.array([[0.5, -1.0], [2.0, 1.5]]), np.array([[1.0, 2.0], [-1.0, 0.5]])
    u = np.array([[1.0, 0.0], [2.0, -1.0]])
    (g,) = finite_difference(lambda a: np.sum(w * a ** 3), [x])
    np.testing.assert_allclose(g, 3 * w * x ** 2, rtol=1e-8)
    d = finite_difference(lambda a: np.sum(w * a ** 3), [x], [u])
    assert d == pytest.approx(np.sum(3 * w * x ** 2 * u), rel=1e-8)


def check_gradient(loss, arrays, make=None, rtol=RTOL, atol=ATOL):
    """bz.grad of the scalar braze function loss(*tensors) with respect to
    every argument, against finite_difference of the same function; `make`
    turns the NumPy arrays into the tensors (a layout). Returns the gradients."""
    make = make or (lambda arrs: [bz.tensor(np.asarray(a)) for a in arrs])
    tensors = make(arrays)
    got = bz.grad(loss, argnums=tuple(range(len(tensors))))(*tensors)
    want = finite_difference(lambda *a: loss(*make(a)).numpy(), arrays)
    for i, (g, t, w) in enumerate(zip(got, tensors, want)):
        assert g.shape == t.shape and g.dtype == t.dtype, (i, g.shape, g.dtype, t.shape, t.dtype)
        assert not g.requires_grad
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=atol, err_msg=f"argument {i}")
    return got


def weighted(f, out_shape, dtype=F64, seed=7):
    """sum(f(*xs) * W) for fixed random weights W: a scalar loss whose
    gradient is J^T W, so every output element's derivative counts."""
    W = bz.tensor(np.random.default_rng(seed).standard_normal(out_shape).astype(dtype))
    return lambda *xs: bz.sum(f(*xs) * W)


# --- input domains: where each op is smooth -----------------------------------------------------


def _dom(fn):
    return lambda rng, shape: np.asarray(fn(rng, shape), dtype=np.float64)


ANY = _dom(lambda rng, s: rng.uniform(-2, 2, s))
POSITIVE = _dom(lambda rng, s: rng.uniform(0.5, 2, s))
NONZERO = _dom(lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2, s))  # abs, relu at a kink otherwise
EXPONENT = _dom(lambda rng, s: rng.uniform(-2, 2, s))
# maximum/minimum: the first operand is a quarter off the second's half grid: no ties, whatever broadcasts.
OFF_GRID = _dom(lambda rng, s: rng.integers(-4, 5, s) * 0.5 + 0.25)
HALF_GRID = _dom(lambda rng, s: rng.integers(-4, 5, s) * 0.5)
# remainder: a / b is at least 0.05 from an integer for every a and b (b in +-2, +-4; a = 2k + (0.2 .. 1.8)).
DIVIDEND = _dom(lambda rng, s: 2.0 * rng.integers(-3, 3, s) + rng.uniform(0.2, 1.8, s))
DIVISOR = _dom(lambda rng, s: rng.choice([-4.0, -2.0, 2.0, 4.0], s))
CONDITION = None  # where's condition: a constant, not a variable
WITHIN_PI_4 = _dom(lambda rng, s: rng.uniform(-0.75, 0.75, s))  # tan: away from its poles

DOMAINS = {
    "negative": [ANY], "abs": [NONZERO], "exp": [ANY], "exp2": [ANY], "expm1": [ANY], "log": [POSITIVE],
    "log2": [POSITIVE], "log1p": [POSITIVE], "sqrt": [POSITIVE], "rsqrt": [POSITIVE], "reciprocal": [NONZERO],
    "square": [ANY], "sin": [ANY], "cos": [ANY], "tan": [WITHIN_PI_4], "tanh": [ANY], "sigmoid": [ANY], "relu": [NONZERO], "erf": [ANY],
    "copy": [ANY],
    "add": [ANY, ANY], "subtract": [ANY, ANY], "multiply": [ANY, ANY], "divide": [ANY, NONZERO],
    "power": [POSITIVE, EXPONENT], "maximum": [OFF_GRID, HALF_GRID], "minimum": [OFF_GRID, HALF_GRID],
    "remainder": [DIVIDEND, DIVISOR],
    "where": [CONDITION, ANY, ANY], "depend": [ANY, ANY],
}

# Float results whose gradient is 0 by definition: flat almost everywhere
# (documented non-differentiable), or stop_gradient (finite differences see
# the identity there, so it has its own test).
ZERO_GRADIENT = {"sign", "floor", "ceil", "round", "stop_gradient"}

ELEMENTWISE = [o for o in OPS if o["kind"] == "elementwise" and o["auto"]]


def _float_result(o):
    out = result_dtype(o["rule"], *([F64] * o["arity"]))
    return out is not None and out.kind == "f"


NON_FLOAT = [o for o in ELEMENTWISE if not _float_result(o)]  # comparisons, logical, bitwise, isnan: no gradient
DIFFERENTIABLE = [o for o in ELEMENTWISE if _float_result(o) and o["api"] not in ZERO_GRADIENT]


# --- the element-wise cases ---------------------------------------------------------------------

# "broadcast": operands (3, 1) and (5,) meet at (3, 5) (a unary op's (3, 1)
# variable is broadcast_to (3, 5) first); "sliced" / "sliced_reversed": the
# variable is a strided / negative-step slice of a bigger braze tensor full of
# filler (NaN and Inf included) that must not leak into the gradient.
LAYOUTS = ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast", "scalar", "zero_size"]


def elementwise_case(op, layout, seed=0, shape=(3, 5)):
    """(arrays, make, f, out_shape): the variables' float64 values, a function
    turning them into tensors of a dtype in `layout`, and the braze function
    of those tensors (where's condition is a constant inside it)."""
    domains = DOMAINS.get(op["api"])
    assert domains is not None, f"{op['api']}: a differentiable op with no input domain: add it to DOMAINS"
    assert len(domains) == op["arity"], op["api"]
    if layout == "broadcast":
        shapes = {1: [(3, 1)], 2: [(3, 1), (5,)], 3: [(3, 5), (3, 1), (5,)]}[op["arity"]]
    else:
        shapes = [layout_shape(layout, shape)] * op["arity"]
    out_shape = np.broadcast_shapes(*shapes)
    rng = np.random.default_rng(seed)
    arrays = [d(rng, s) for d, s in zip(domains, shapes) if d is not None]
    cond = rng.random(shapes[0]) < 0.5 if op["api"] == "where" else None
    fn = getattr(bz, op["api"])

    def make(arrs, dtype=F64):
        arrs = [np.asarray(a).astype(dtype) for a in arrs]
        if layout == "broadcast":
            return [bz.tensor(a) for a in arrs]
        return [make_layout(layout, a) for a in arrs]

    def f(*xs):
        if cond is not None:
            xs = (bz.tensor(cond),) + xs
        if layout == "broadcast" and op["arity"] == 1:
            xs = (bz.broadcast_to(xs[0], out_shape),)
        return fn(*xs)

    return arrays, make, f, out_shape


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=api)
def test_elementwise_gradient(op, layout):
    arrays, make, f, out_shape = elementwise_case(op, layout)
    check_gradient(weighted(f, out_shape), arrays, make)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=api)
def test_elementwise_vjp_random_direction(op, layout):
    # <u, J^T v> against the derivative of <v, f(x + e u)> at e = 0.
    arrays, make, f, out_shape = elementwise_case(op, layout)
    rng = np.random.default_rng(11)
    v = rng.standard_normal(out_shape)
    u = [rng.standard_normal(np.shape(a)) for a in arrays]
    out, vjp_fn = bz.vjp(f, *make(arrays))
    assert out.shape == out_shape and not out.requires_grad
    np.testing.assert_allclose(out.numpy(), f(*make(arrays)).numpy())
    jtv = vjp_fn(bz.tensor(v))
    assert isinstance(jtv, tuple) and len(jtv) == len(arrays)
    lhs = sum(float(np.sum(ui * g.numpy())) for ui, g in zip(u, jtv))
    rhs = finite_difference(lambda *a: np.sum(v * f(*make(a)).numpy()), arrays, direction=u)
    assert lhs == pytest.approx(rhs, rel=RTOL, abs=ATOL)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast"])
@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=api)
def test_float32_gradient_is_close_to_float64(op, layout):
    arrays, make, f, out_shape = elementwise_case(op, layout)
    arrays = [a.astype(F32).astype(F64) for a in arrays]  # the same values in both dtypes
    n = tuple(range(len(arrays)))
    g64 = bz.grad(weighted(f, out_shape, F64), argnums=n)(*make(arrays, F64))
    g32 = bz.grad(weighted(f, out_shape, F32), argnums=n)(*make(arrays, F32))
    for a, b in zip(g32, g64):
        assert a.dtype == F32 and a.shape == b.shape
        np.testing.assert_allclose(a.numpy().astype(F64), b.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=api)
def test_second_derivative(op):
    # A Hessian-vector product: d/dx <W', grad <W, f(x)>>, against finite
    # differences of braze's first derivative. For a unary op that is f''(x) W W'.
    arrays, make, f, out_shape = elementwise_case(op, "contiguous", seed=3, shape=(2, 3))
    n = tuple(range(len(arrays)))
    first = bz.grad(weighted(f, out_shape, seed=1), argnums=n)
    rng = np.random.default_rng(5)
    ws = [bz.tensor(rng.standard_normal(np.shape(a))) for a in arrays]

    def outer(*xs):
        return sum((bz.sum(g * w) for g, w in zip(first(*xs), ws)), start=bz.tensor(0.0))

    second = bz.grad(outer, argnums=n)(*make(arrays))  # grad of grad
    want = finite_difference(lambda *a: outer(*make(a)).numpy(), arrays)
    for g, w in zip(second, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(ZERO_GRADIENT))
def test_zero_gradient_ops(name):
    # sign, floor, ceil, round: flat almost everywhere, gradient 0 (as JAX);
    # stop_gradient: the value passes, the gradient does not.
    a = np.array([[-1.7, -0.3, 0.4], [1.2, 2.6, 3.1]])
    x = bz.tensor(a)
    g = bz.grad(lambda x: bz.sum(getattr(bz, name)(x) * x))(x)
    np.testing.assert_array_equal(g.numpy(), getattr(np, name)(a) if name != "stop_gradient" else a)
    np.testing.assert_array_equal(bz.grad(lambda x: bz.sum(getattr(bz, name)(x)))(x).numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("op", NON_FLOAT, ids=api)
def test_non_float_ops_carry_no_gradient(op):
    # Comparisons, logical, bitwise ops, isnan, isinf: their results are used
    # (cast to float, multiplied by x), and no gradient flows through them.
    a = np.array([[-1.5, 0.5, 2.0], [1.0, -0.25, 3.0]])
    b = np.array([[1.0, 0.5, -2.0], [1.0, 0.75, 2.0]])
    floats = result_dtype(op["rule"], *([F64] * op["arity"])) is not None

    def f(x):
        args = [x, bz.tensor(b), x][:op["arity"]]
        if not floats:  # bitwise ops take integers and bools
            args = [t > 0 for t in args]
        r = getattr(bz, op["api"])(*args)
        assert not r.requires_grad
        return bz.sum(r.astype(bz.float64) * x), r

    g, r = bz.grad(f, has_aux=True)(bz.tensor(a))
    np.testing.assert_array_equal(g.numpy(), r.numpy().astype(F64))


# --- the op table is covered ----------------------------------------------------------------------

# Rows that are not element-wise, or not float-differentiable, and the test of each.
COVERED_BY = {
    "input": "test_constants_have_no_gradient", "full": "test_constants_have_no_gradient",
    "arange": "test_constants_have_no_gradient", "astype": "test_cast_gradient",
    "broadcast_to": "test_movement_gradient", "reshape": "test_movement_gradient",
    "permute": "test_movement_gradient", "slice": "test_slice_gradient", "pad": "test_pad_gradient",
    "sum": "test_reduction_gradient", "prod": "test_prod_gradient_with_zeros", "max": "test_max_min_ties_split",
    "min": "test_max_min_ties_split", "argmax": "test_argmax_argmin_carry_no_gradient",
    "argmin": "test_argmax_argmin_carry_no_gradient", "matmul": "test_matmul_gradient",
    "conv2d": "test_conv2d_gradient",
}


def test_every_op_has_a_gradient_test():
    # A new row of graph/ops.def fails here until this file tests its gradient.
    elementwise = {o["api"] for o in ELEMENTWISE}
    assert {o["api"] for o in DIFFERENTIABLE} == set(DOMAINS), "DOMAINS must list exactly the differentiable rows"
    assert ZERO_GRADIENT <= elementwise
    for o in OPS:
        if o["api"] in elementwise:
            continue  # the sweeps above, generated from the table: DIFFERENTIABLE, ZERO_GRADIENT, NON_FLOAT
        assert o["api"] in COVERED_BY, f"{o['api']} ({o['kind']}): no gradient test; add one and list it in COVERED_BY"
        assert callable(globals().get(COVERED_BY[o["api"]])), COVERED_BY[o["api"]]


# --- reductions -------------------------------------------------------------------------------------

DISTINCT = _dom(lambda rng, s: (rng.permutation(int(np.prod(s))) * 0.5 - 3).reshape(s))  # max/min: no ties


def _var1(x, axis=None, keepdims=False):
    return bz.var(x, axis=axis, correction=1, keepdims=keepdims)


def _std1(x, axis=None, keepdims=False):
    return bz.std(x, axis=axis, correction=1, keepdims=keepdims)


REDUCTIONS = {
    "sum": (bz.sum, ANY), "prod": (bz.prod, NONZERO), "max": (bz.max, DISTINCT), "min": (bz.min, DISTINCT),
    "mean": (bz.mean, ANY), "var": (bz.var, ANY), "var_correction_1": (_var1, ANY), "std": (bz.std, ANY),
    "std_correction_1": (_std1, ANY), "logsumexp": (bz.logsumexp, ANY),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_gradient(name, axis, keepdims):
    fn, domain = REDUCTIONS[name]
    a = domain(np.random.default_rng(2), (3, 4))
    out_shape = fn(bz.tensor(a), axis=axis, keepdims=keepdims).shape
    check_gradient(weighted(lambda x: fn(x, axis=axis, keepdims=keepdims), out_shape), [a])


@pytest.mark.parametrize("name", ["sum", "max", "std", "logsumexp", "prod"])
def test_reduction_of_a_3d_view(name):
    fn, domain = REDUCTIONS[name]
    a = domain(np.random.default_rng(4), (2, 3, 4))

    def make(arrs):  # a permuted view of a buffer laid out (4, 2, 3)
        return [bz.permute_dims(bz.tensor(np.ascontiguousarray(arrs[0].transpose(2, 0, 1))), (1, 2, 0))]

    check_gradient(weighted(lambda x: fn(x, axis=(0, 2)), (3,)), [a], make)


def _np_prod_of_others(x, axis):
    """d prod / dx: the product of the other elements of each x's lane."""
    moved = np.moveaxis(x, axis, -1) if axis is not None else x.reshape(1, -1)
    out = np.empty_like(moved)
    for idx in np.ndindex(moved.shape[:-1]):
        lane = moved[idx]
        out[idx] = [np.prod(np.delete(lane, j)) for j in range(lane.size)]
    return np.moveaxis(out, -1, axis) if axis is not None else out.reshape(x.shape)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_prod_gradient_with_zeros(axis):
    # Lanes with no zero, one zero and two zeros (rows for axis 1, columns
    # for axis 0; over axis None: a has two zeros, a[:2] and a[1:2] one).
    # The gradient is the product of the others: not y / x (0 / 0).
    a = np.array([[2.0, 3.0, -1.5, 0.5],
                  [0.0, 4.0, 2.0, 3.0],
                  [0.0, 1.5, 0.0, 2.0]])
    for x in (a, a[:2], a[1:2]):
        got = bz.grad(lambda t: bz.sum(bz.prod(t, axis=axis)))(bz.tensor(x))
        np.testing.assert_allclose(got.numpy(), _np_prod_of_others(x, axis), rtol=1e-15, atol=0)
    # prod is a polynomial, so finite differences are exact there too.
    check_gradient(weighted(lambda t: bz.prod(t, axis=axis), np.prod(a, axis=axis).shape), [a])


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_ties_split(name, axis):
    # Tied extrema share the gradient evenly (1/k each of k ties).
    a = np.array([[1.0, 3.0, 3.0, 2.0],
                  [3.0, 3.0, 3.0, 0.0],
                  [0.0, -1.0, 3.0, 0.0]])
    w = np.random.default_rng(9).standard_normal(getattr(np, name)(a, axis=axis).shape)
    got = bz.grad(lambda t: bz.sum(getattr(bz, name)(t, axis=axis) * bz.tensor(w)))(bz.tensor(a))
    ext = getattr(np, name)(a, axis=axis, keepdims=True)
    hit = (a == ext).astype(F64)
    want = hit / hit.sum(axis=axis, keepdims=True) * (w if axis is None else np.expand_dims(w, axis))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15, atol=0)


def test_argmax_argmin_carry_no_gradient():
    a = np.array([[0.5, 2.0, -1.0], [3.0, 1.0, 2.5]])

    def f(x):
        i = bz.argmax(x, axis=1) * 10 + bz.argmin(x, axis=1)
        assert not i.requires_grad
        return bz.sum(bz.max(x, axis=1) * i.astype(bz.float64))

    np.testing.assert_array_equal(bz.grad(f)(bz.tensor(a)).numpy(), [[0, 12, 0], [1, 0, 0]])  # i = 12, 1


# --- movement -----------------------------------------------------------------------------------------

MOVEMENT = {
    "reshape": lambda x: bz.reshape(x, (3, 2)),
    "reshape_flat": lambda x: bz.reshape(x, (-1,)),
    "permute_dims": lambda x: bz.permute_dims(x, (2, 0, 1)),
    "transpose": lambda x: bz.transpose(x),
    "broadcast_to": lambda x: bz.broadcast_to(x, (4, 2, 3, 5)),
    "expand_dims": lambda x: bz.expand_dims(x, 1),
    "squeeze_axis": lambda x: bz.squeeze(x, 2),
    "squeeze": lambda x: bz.squeeze(x),
    "chain": lambda x: bz.broadcast_to(bz.reshape(bz.permute_dims(x, (1, 0, 2)), (6,)), (2, 6)) * 2,
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement_gradient(name):
    a = ANY(np.random.default_rng(1), (2, 3, 1))
    out_shape = MOVEMENT[name](bz.tensor(a)).shape
    check_gradient(weighted(MOVEMENT[name], out_shape), [a])


# --- matmul -----------------------------------------------------------------------------------------

MATMUL_SHAPES = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 2)),
                 ((3, 4), (2, 4, 2)), ((2, 1, 2, 3), (2, 3, 2)), ((3, 0), (0, 2)), ((0, 4), (4, 2))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_gradient(sa, sb):
    rng = np.random.default_rng(3)
    a, b = ANY(rng, sa), ANY(rng, sb)
    out_shape = np.matmul(a, b).shape
    check_gradient(weighted(bz.matmul, out_shape), [a, b])


def test_matmul_of_views_and_the_operator():
    rng = np.random.default_rng(4)
    a, b = ANY(rng, (3, 4)), ANY(rng, (4, 2))
    make = lambda arrs: [make_layout("transposed", arrs[0]), make_layout("sliced_reversed", arrs[1])]  # noqa: E731
    check_gradient(weighted(lambda x, y: x @ y, (3, 2)), [a, b], make)
    c = rng.standard_normal((4, 5))  # a NumPy constant on the right
    g = bz.grad(lambda x: bz.sum(x @ c))(bz.tensor(a))
    np.testing.assert_allclose(g.numpy(), np.ones((3, 5)) @ c.T, rtol=1e-13)


BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))

# Each case in a fresh interpreter: a crash there fails the test, not the run.
ONE_ELEMENT_MATMUL = textwrap.dedent("""
    import json, sys
    import numpy as np
    import braze as bz
    case = sys.argv[1]
    rng = np.random.default_rng(0)
    if case == "forward":  # the root cause: a one-element constant matrix operand
        print(json.dumps(bz.matmul(bz.full((1, 1), 2.0, bz.float64), bz.tensor(np.ones((1, 3)))).numpy().tolist()))
    elif case == "vdot":
        a, b = rng.standard_normal(3), rng.standard_normal(3)
        g = bz.grad(lambda x: bz.vdot(x, bz.tensor(b)))(bz.tensor(a))
        print(json.dumps([g.numpy().tolist(), b.tolist()]))
    else:
        sa, sb = json.loads(case)
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        ga, gb = bz.grad(lambda x, y: bz.sum(bz.matmul(x, y)), argnums=(0, 1))(bz.tensor(a), bz.tensor(b))
        def unit(shape, idx):
            u = np.zeros(shape)
            u[idx] = 1.0
            return u
        # sum(a @ b) is bilinear: its derivative along a unit vector is exact.
        want_a = np.array([np.sum(np.matmul(unit(sa, i), b)) for i in np.ndindex(*sa)]).reshape(sa)
        want_b = np.array([np.sum(np.matmul(a, unit(sb, i))) for i in np.ndindex(*sb)]).reshape(sb)
        print(json.dumps([ga.numpy().tolist(), want_a.tolist(), gb.numpy().tolist(), want_b.tolist()]))
""")


@pytest.mark.parametrize("case", ["forward", "vdot", "[[1, 3], [3, 1]]", "[[3], [3, 1]]", "[[1, 3], [3]]",
                                  "[[2, 1, 3], [3, 1]]"])
def test_matmul_gradient_with_a_one_element_result(case):
    # The cotangent of a matmul whose result has one element per matrix is
    # a constant of one element per matrix, and a library matmul with such an
    # operand must not crash ("forward" is the same crash with no autodiff).
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, "-c", ONE_ELEMENT_MATMUL, case], env=dict(os.environ, PYTHONPATH=path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit status {r.returncode}: {r.stderr[-2000:]}"
    got = json.loads(r.stdout)
    if case == "forward":
        assert got == [[2.0, 2.0, 2.0]]
        return
    for g, w in zip(got[::2], got[1::2]):
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-12)


# --- where --------------------------------------------------------------------------------------------


def test_where_routes_the_cotangent():
    rng = np.random.default_rng(5)
    c = rng.random((3, 4)) < 0.5
    x, y, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    gx, gy = bz.grad(lambda x, y: bz.sum(bz.where(bz.tensor(c), x, y) * bz.tensor(w)), argnums=(0, 1))(
        bz.tensor(x), bz.tensor(y))
    np.testing.assert_array_equal(gx.numpy(), np.where(c, w, 0))
    np.testing.assert_array_equal(gy.numpy(), np.where(c, 0, w))
    # A scalar branch and a broadcast condition.
    g = bz.grad(lambda x: bz.sum(bz.where(bz.tensor(c[0]), x, 0.0)))(bz.tensor(x))
    np.testing.assert_array_equal(g.numpy(), np.broadcast_to(c[0], (3, 4)).astype(F64))


def test_where_nan_in_the_branch_not_taken():
    # The NaN and Inf *values* of the branch not taken never reach the
    # gradient of the branch taken: d/dx where(c, x, y) is c exactly.
    x = np.array([-2.0, -0.5, 0.5, 3.0])
    y = np.array([np.nan, np.inf, np.nan, -np.inf])
    gx, gy = bz.grad(lambda x, y: bz.sum(bz.where(x > 0, x, y)), argnums=(0, 1))(bz.tensor(x), bz.tensor(y))
    np.testing.assert_array_equal(gx.numpy(), [0, 0, 1, 1])
    np.testing.assert_array_equal(gy.numpy(), [1, 1, 0, 0])
    g = bz.grad(lambda x: bz.sum(bz.where(x > 0, x, bz.full((4,), np.nan, bz.float64))))(bz.tensor(x))
    np.testing.assert_array_equal(g.numpy(), [0, 0, 1, 1])
    # log's rule reads x, not log(x): the NaN log(-2) on the untaken side stays out.
    g = bz.grad(lambda x: bz.sum(bz.where(x > 0, bz.log(x), x)))(bz.tensor(x))
    np.testing.assert_array_equal(g.numpy(), [1, 1, 2, 1 / 3])


def test_where_over_sqrt_is_nan_unless_guarded():
    # JAX and PyTorch semantics (gradients.def, Sqrt: "NaN where g is 0
    # too"): the untaken sqrt still runs its rule, 0 / (2 sqrt(x)) is NaN at
    # x <= 0, so where(x > 0, sqrt(x), 0) has a NaN gradient there. The
    # double-where guard (JAX's FAQ) avoids it.
    x = np.array([-1.0, 0.0, 4.0])
    g = bz.grad(lambda x: bz.sum(bz.where(x > 0, bz.sqrt(x), 0.0)))(bz.tensor(x)).numpy()
    assert np.isnan(g[:2]).all() and g[2] == 0.25
    safe = lambda x: bz.where(x > 0, bz.sqrt(bz.where(x > 0, x, 1.0)), 0.0)  # noqa: E731
    np.testing.assert_array_equal(bz.grad(lambda x: bz.sum(safe(x)))(bz.tensor(x)).numpy(), [0, 0, 0.25])


# --- composites -----------------------------------------------------------------------------------------

LABELS = np.array([2, 0, 3])
COMPOSITES = {
    # name: (variable shapes, function)
    "softmax": ([(3, 4)], lambda x: bz.softmax(x)),
    "softmax_axis0": ([(3, 4)], lambda x: bz.softmax(x, axis=0)),
    "log_softmax": ([(3, 4)], lambda x: bz.log_softmax(x)),
    "log_softmax_axis0": ([(3, 4)], lambda x: bz.log_softmax(x, axis=0)),
    "layer_norm": ([(3, 4), (4,), (4,)], lambda x, w, b: bz.layer_norm(x, w, b)),
    "layer_norm_plain": ([(3, 4)], lambda x: bz.layer_norm(x)),
    "rms_norm": ([(3, 4), (4,)], lambda x, w: bz.rms_norm(x, w)),
    "rms_norm_plain": ([(3, 4)], lambda x: bz.rms_norm(x)),
    "gelu": ([(3, 4)], lambda x: bz.gelu(x)),
    "gelu_tanh": ([(3, 4)], lambda x: bz.gelu(x, approximate="tanh")),
    "silu": ([(3, 4)], lambda x: bz.silu(x)),
    "mse_loss": ([(3, 4), (3, 4)], bz.mse_loss),
    "mse_loss_broadcast": ([(3, 4), (4,)], bz.mse_loss),
    "cross_entropy": ([(3, 4)], lambda x: bz.cross_entropy(x, bz.tensor(LABELS))),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_gradient(name):
    shapes, fn = COMPOSITES[name]
    rng = np.random.default_rng(6)
    arrays = [ANY(rng, s) for s in shapes]
    out_shape = fn(*[bz.tensor(a) for a in arrays]).shape
    check_gradient(weighted(fn, out_shape), arrays)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64], ids=str)
def test_cross_entropy_gradient_is_softmax_minus_onehot(label_dtype):
    logits = np.random.default_rng(8).standard_normal((5, 4)) * 3
    labels = np.array([0, 3, 3, 1, 2], dtype=label_dtype)
    g = bz.grad(lambda x: bz.cross_entropy(x, bz.tensor(labels)))(bz.tensor(logits))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    want = (e / e.sum(axis=1, keepdims=True) - np.eye(4)[labels]) / 5
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12, atol=1e-15)


# --- leaves and casts -----------------------------------------------------------------------------------


def test_constants_have_no_gradient():
    a = np.array([1.0, -2.0, 0.5])

    def f(x):
        return bz.sum(x * bz.arange(3).astype(bz.float64) + bz.full((3,), 2.0, bz.float64) + bz.tensor(a))

    np.testing.assert_array_equal(bz.grad(f)(bz.tensor(a)).numpy(), [0, 1, 2])
    # A function that does not use its argument: zeros of its shape and dtype.
    g = bz.grad(lambda x: bz.sum(bz.tensor(a)))(bz.tensor(a.astype(F32)))
    assert g.dtype == F32
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))


def test_cast_gradient():
    a = np.array([0.3, -1.25, 2.5])
    # float64 -> float32 -> float64: the gradient comes back in the input's dtype.
    g = bz.grad(lambda x: bz.sum(bz.square(x.astype(bz.float32)).astype(bz.float64)))(bz.tensor(a))
    assert g.dtype == F64
    np.testing.assert_allclose(g.numpy(), 2 * a.astype(F32), rtol=1e-7)
    # Through an integer: no gradient (the cast's result is not a float).
    g = bz.grad(lambda x: bz.sum(x.astype(bz.int32).astype(bz.float64) * 3 + x))(bz.tensor(a))
    np.testing.assert_array_equal(g.numpy(), np.ones(3))
    # Mixed dtypes: each gradient takes its input's dtype.
    gx, gy = bz.grad(lambda x, y: bz.sum(x * y), argnums=(0, 1))(bz.tensor(a.astype(F32)), bz.tensor(a * 2))
    assert (gx.dtype, gy.dtype) == (F32, F64)
    np.testing.assert_allclose(gx.numpy(), (a * 2).astype(F32))
    np.testing.assert_allclose(gy.numpy(), a.astype(F32).astype(F64))


# --- documented edge cases ----------------------------------------------------------------------------


def test_sqrt_at_zero_is_inf():
    g = bz.grad(lambda x: bz.sum(bz.sqrt(x)))(bz.tensor(np.array([0.0, 4.0])))
    np.testing.assert_array_equal(g.numpy(), [np.inf, 0.25])


def test_power_at_zero():
    # d/da a^b is 0 where b is 0, pow(0, 0) included; d/db is 0 where a is 0.
    a, b = np.array([0.0, 0.0, 2.0, 0.0]), np.array([0.0, 2.0, 0.0, 3.0])
    ga, gb = bz.grad(lambda a, b: bz.sum(bz.power(a, b)), argnums=(0, 1))(bz.tensor(a), bz.tensor(b))
    np.testing.assert_array_equal(ga.numpy(), [0, 0, 0, 0])
    np.testing.assert_allclose(gb.numpy(), [0, 0, np.log(2.0), 0], rtol=1e-15)
    # A constant exponent (x ** 2.5, x ** 3 as multiplications) differentiates too.
    x = np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(bz.grad(lambda x: bz.sum(x ** 2.5))(bz.tensor(x)).numpy(), 2.5 * x ** 1.5, rtol=1e-14)
    np.testing.assert_allclose(bz.grad(lambda x: bz.sum(x ** 3))(bz.tensor(x)).numpy(), 3 * x ** 2, rtol=1e-14)
    np.testing.assert_allclose(bz.grad(lambda x: bz.sum(2.0 ** x))(bz.tensor(x)).numpy(), np.log(2) * 2 ** x,
                               rtol=1e-14)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_ties_split(name):
    a, b = np.array([1.0, 2.0, np.nan, 3.0]), np.array([1.0, 5.0, 1.0, np.nan])
    ga, gb = bz.grad(lambda x, y: bz.sum(getattr(bz, name)(x, y)), argnums=(0, 1))(bz.tensor(a), bz.tensor(b))
    win_a = (a > b) if name == "maximum" else (a < b)
    # A tie: 0.5 each. A NaN on either side (the result is NaN): both get all of it.
    np.testing.assert_array_equal(ga.numpy(), [0.5, float(win_a[1]), 1, 1])
    np.testing.assert_array_equal(gb.numpy(), [0.5, float(not win_a[1]), 1, 1])
    # The same tensor on both sides: the halves add up to 1.
    g = bz.grad(lambda x: bz.sum(getattr(bz, name)(x, x)))(bz.tensor(a[:2]))
    np.testing.assert_array_equal(g.numpy(), [1, 1])


@pytest.mark.parametrize("name,want", [("relu", [0, 0, 0, 1]), ("abs", [-1, 0, 0, 1])])
def test_relu_and_abs_at_zero_give_zero(name, want):
    g = bz.grad(lambda x: bz.sum(getattr(bz, name)(x)))(bz.tensor(np.array([-2.0, 0.0, -0.0, 3.0])))
    np.testing.assert_array_equal(g.numpy(), want)


# --- errors -----------------------------------------------------------------------------------------


def _braze_still_works():
    g = bz.grad(lambda x: bz.sum(x * x))(bz.tensor(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_], ids=str)
def test_integer_inputs_raise(dtype):
    x = bz.tensor(np.array([1, 0, 1], dtype=dtype))
    with pytest.raises(ValueError, match=r"^grad: only float tensors have gradients, not (int32|int64|bool)"):
        bz.grad(lambda x: bz.sum(x * 1.0))(x)
    with pytest.raises(ValueError, match=r"^requires_grad: only float tensors have gradients"):
        x.requires_grad_()
    assert not x.requires_grad
    with pytest.raises(TypeError, match=r"can only differentiate with respect to braze tensors, got ndarray"):
        bz.grad(lambda x: bz.sum(x * 1.0))(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"can only differentiate with respect to braze tensors, got float"):
        bz.grad(lambda x: x * 2)(1.0)
    _braze_still_works()


def test_non_scalar_output_raises():
    x = bz.tensor(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"grad: the function must return a one-element tensor, got \(2,\)"):
        bz.grad(lambda x: x * 2)(x)
    with pytest.raises(TypeError, match=r"one-element tensor, got tuple"):
        bz.grad(lambda x: (bz.sum(x), x))(x)  # an aux output without has_aux
    with pytest.raises(ValueError, match=r"argnums 2 but the function got 1"):
        bz.grad(lambda x: bz.sum(x), argnums=2)(x)
    y = x.requires_grad_() * 2
    with pytest.raises(ValueError, match=r"^backward: the output has shape \[2\]; give the gradient"):
        y.backward()
    with pytest.raises(ValueError, match=r"^backward: the tensor .* does not require a gradient"):
        bz.sum(bz.tensor(np.array([1.0]))).backward()
    # A one-element output of any rank is fine.
    g = bz.grad(lambda x: bz.sum(x, keepdims=True))(bz.tensor(np.ones((2, 3))))
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))
    _braze_still_works()


SLICES = {"range": lambda x: x[1:3], "int": lambda x: x[0], "step": lambda x: x[::2], "reversed": lambda x: x[::-1],
          "2d": lambda x: bz.reshape(x, (2, 2))[:, 1], "step3_reversed": lambda x: x[::-3],
          "offset_step": lambda x: x[1::2], "empty": lambda x: x[3:1], "reversed_range": lambda x: x[2:0:-1]}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_slice_gradient(name):
    # A slice's gradient is g put back where the slice read: padding (a
    # view, Note [Windows]), spread out with zeros for a step, flipped for a
    # negative one (runtime/autodiff.cpp, slice_gradient).
    a = np.array([1.0, 2.0, 3.0, 4.0])
    out_shape = SLICES[name](bz.tensor(a)).shape
    check_gradient(weighted(SLICES[name], out_shape), [a])
    v = bz.tensor(a).requires_grad_()
    bz.sum(SLICES[name](v) * 2).backward()
    want = np.zeros(4)
    want[SLICES[name](bz.tensor(np.arange(4))).numpy()] = 2.0  # the elements read
    np.testing.assert_array_equal(v.grad.numpy(), want)


def test_slice_gradient_of_a_2d_view():
    # Strided and reversed on both axes of a transposed view.
    a = np.random.default_rng(3).standard_normal((5, 7))
    f = lambda x: bz.transpose(x)[::-2, 1:5:3] * 3  # noqa: E731
    check_gradient(weighted(f, f(bz.tensor(a)).shape), [a])


def test_pad_gradient():
    a = np.random.default_rng(4).standard_normal((3, 4))
    f = lambda x: bz.exp(bz.pad(x, ((1, 1), (0, 2)))) + bz.pad(x, 1, mode="edge")  # noqa: E731
    check_gradient(weighted(f, f(bz.tensor(a)).shape), [a])
    g = lambda x: bz.pad(x, ((0, 1), (2, 0)), mode="reflect") * 2  # noqa: E731
    check_gradient(weighted(g, g(bz.tensor(a)).shape), [a])


# conv2d (Note [Convolution gradients], runtime/autodiff.cpp): x [N, C, H, W], w [O, C / groups, kh, kw].
CONV_CASES = {
    "plain": ((1, 2, 4, 5), (3, 2, 2, 3), {}),
    "padding": ((1, 2, 4, 4), (2, 2, 3, 3), dict(padding=1)),
    "dilation": ((1, 1, 5, 5), (2, 1, 2, 2), dict(dilation=2)),
    "groups": ((2, 4, 3, 4), (4, 2, 2, 2), dict(groups=2)),
    "bias_and_all": ((1, 2, 5, 5), (2, 1, 2, 2), dict(padding=(1, 0), dilation=(2, 1), groups=2, bias=True)),
}


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv2d_gradient(name):
    sx, sw, cfg = CONV_CASES[name]
    cfg = dict(cfg)
    rng = np.random.default_rng(18)
    arrays = [ANY(rng, sx), ANY(rng, sw)] + ([ANY(rng, (sw[0],))] if cfg.pop("bias", False) else [])

    def conv(x, w, b=None):
        return bz.conv2d(x, w, bias=b, **cfg)

    out_shape = conv(*[bz.tensor(a) for a in arrays]).shape
    g64 = check_gradient(weighted(conv, out_shape), arrays)
    # float32 (oneDNN's primitive where float64 runs on the interpreter) agrees.
    g32 = bz.grad(weighted(conv, out_shape, F32), argnums=tuple(range(len(arrays))))(
        *[bz.tensor(a.astype(F32)) for a in arrays])
    for a, b in zip(g32, g64):
        assert a.dtype == F32
        np.testing.assert_allclose(a.numpy().astype(F64), b.numpy(), rtol=1e-4, atol=1e-4)


def test_conv2d_gradient_limits():
    # Strided: the input's gradient convolves g spread out with zeros
    # (interior padding) and padded at its end with what the stride skipped;
    # a padding wider than the kernel less one still raises, saying so.
    rng = np.random.default_rng(19)
    x, w = ANY(rng, (1, 1, 5, 5)), ANY(rng, (2, 1, 3, 3))
    check_gradient(weighted(lambda w: bz.conv2d(bz.tensor(x), w, stride=2), (1, 2, 2, 2)), [w])
    check_gradient(weighted(lambda x: bz.conv2d(x, bz.tensor(w), stride=2), (1, 2, 2, 2)), [x])
    x6 = ANY(rng, (2, 2, 6, 7))
    w6 = ANY(rng, (4, 1, 2, 3))
    conv = lambda x, w: bz.conv2d(x, w, stride=(2, 3), padding=1, groups=2)  # noqa: E731
    check_gradient(weighted(conv, conv(bz.tensor(x6), bz.tensor(w6)).shape), [x6, w6])
    with pytest.raises(ValueError, match=r"^gradient of conv2d: not supported yet: padding 3 wider"):
        bz.grad(lambda x: bz.sum(bz.conv2d(x, bz.tensor(w), padding=3)))(bz.tensor(x))
    # conv2d of constants inside a differentiated function is fine.
    ones_x, ones_w = bz.tensor(np.ones((1, 1, 4, 4))), bz.tensor(np.ones((2, 1, 3, 3)))
    g = bz.grad(lambda s: bz.sum(bz.conv2d(ones_x, ones_w) * s))(bz.tensor(2.0))
    assert float(g.numpy()) == 2 * 9 * 4
    _braze_still_works()


def _setitem_then(x):
    y = x * 2
    y[0] = 0.0  # writes y's realized storage; the recorded graph still says y = 2x
    return bz.sum(y * x)


# Functions that realize their operands and compute on the host (Note
# [Concatenation realizes]; _gather.py; linalg's LAPACK calls; setitem):
# recording stops there, so a gradient through them must be right or an
# error, never silently zero or stale.
HOST_FUNCTIONS = {
    "concatenate": lambda x: bz.sum(bz.concatenate([x, x * 2]) ** 2),
    "stack": lambda x: bz.sum(bz.stack([x, x * 2]) ** 2),
    "take": lambda x: bz.sum(bz.take(x, bz.tensor(np.array([0, 2]))) ** 2),
    "index_array": lambda x: bz.sum(x[np.array([0, 2])] ** 2),
    "mask": lambda x: bz.sum(x[x > 1.5] ** 2),
    "sort": lambda x: bz.sum(bz.sort(x) * bz.tensor(np.array([1.0, 2.0, 3.0]))),
    "linalg.inv": lambda x: bz.sum(bz.linalg.inv(bz.tensor(np.eye(3)) * x)),
    "linalg.det": lambda x: bz.linalg.det(bz.tensor(np.eye(3)) * x),
    "setitem": _setitem_then,
}


@pytest.mark.parametrize("name", sorted(HOST_FUNCTIONS))
def test_host_functions_give_no_silent_zero_gradient(name):
    f = HOST_FUNCTIONS[name]
    a = np.array([2.5, 1.0, 1.8])
    want = finite_difference(lambda b: f(bz.tensor(b)).numpy(), [a])[0]
    try:
        got = bz.grad(f)(bz.tensor(a)).numpy()
    except (ValueError, TypeError) as e:
        assert "gradient" in str(e), str(e)  # an error that says why is fine too
        return
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# --- robustness -------------------------------------------------------------------------------------------


def test_gradient_after_the_forward_is_realized():
    # A node that requires a gradient keeps its inputs when realized: printing
    # the loss (or the forward output of vjp) first does not cut the backward.
    a = np.array([0.5, 1.0, 2.0])
    x = bz.tensor(a).requires_grad_()
    y = bz.sin(x)
    loss = bz.sum(y * y)
    float(loss), y.detach().numpy()  # realizes both (numpy() itself refuses: test_numpy_of_a_variable_refuses)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.sin(a) * np.cos(a), rtol=1e-14)
    out, vjp_fn = bz.vjp(lambda x: bz.exp(x) * 2, bz.tensor(a))
    out.numpy()  # the outermost results carry no gradient
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0].numpy(), 2 * np.exp(a), rtol=1e-14)


def test_numpy_of_a_variable_refuses():
    # As PyTorch's: NumPy would compute without the gradient, silently.
    x = bz.tensor(np.array([1.0, 2.0])).requires_grad_()
    with pytest.raises(ValueError, match="requires a gradient"):
        (x * 2).numpy()
    np.testing.assert_array_equal((x * 2).detach().numpy(), [2.0, 4.0])
    assert float(bz.sum(x)) == 3.0  # one value: item() and float() read it
    _braze_still_works()


def test_gradient_past_the_lazy_depth_limit():
    # 300 ops deep: the recording is cut at 256 (Note [Lazy depth limit]); the backward is not.
    def chain(x):
        for _ in range(300):
            x = x * 1.001
        return bz.sum(x)

    a = np.array([1.0, 2.0])
    np.testing.assert_allclose(bz.grad(chain)(bz.tensor(a)).numpy(), [1.001 ** 300] * 2, rtol=1e-12)
    x = bz.tensor(a).requires_grad_()
    chain(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.001 ** 300] * 2, rtol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [("float16", 4e-3), ("bfloat16", 3e-2)])
def test_half_precision_gradients(dtype, rtol):
    a = np.array([0.5, -1.0, 1.5, 2.0])
    x = bz.tensor(a).astype(getattr(bz, dtype))
    g = bz.grad(lambda x: bz.sum(bz.exp(x) * x + bz.square(x)))(x)
    assert g.dtype == x.dtype
    exact = x.astype(bz.float64).numpy()
    np.testing.assert_allclose(g.numpy().astype(F64), np.exp(exact) * (1 + exact) + 2 * exact, rtol=rtol, atol=rtol)


def test_same_tensor_as_two_arguments():
    a = np.array([1.0, 2.0, 3.0])
    x = bz.tensor(a)
    gp, gq = bz.grad(lambda p, q: bz.sum(p * q * q), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(gp.numpy(), a * a)
    np.testing.assert_array_equal(gq.numpy(), 2 * a * a)


def test_requires_grad_on_a_view():
    base = bz.tensor(np.arange(6.0).reshape(2, 3))
    v = base.T.requires_grad_()
    assert not base.requires_grad
    bz.sum(v * v).backward()
    np.testing.assert_array_equal(v.grad.numpy(), 2 * np.arange(6.0).reshape(2, 3).T)
    assert base.grad is None


def test_grad_under_jit():
    step = bz.jit(bz.grad(lambda x: bz.sum(bz.sin(x) * x)))
    for a in (np.array([0.5, 1.0]), np.array([2.0, -1.0])):
        np.testing.assert_allclose(step(bz.tensor(a)).numpy(), np.sin(a) + a * np.cos(a), rtol=1e-14)


def test_composite_gradients_are_stable():
    big = np.array([[1000.0, 0.0, -1000.0]])
    w = np.array([[1.0, 2.0, 3.0]])
    g = bz.grad(lambda x: bz.sum(bz.softmax(x) * bz.tensor(w)))(bz.tensor(big)).numpy()
    np.testing.assert_allclose(g, [[0.0, 0.0, 0.0]], atol=1e-12)
    g = bz.grad(lambda x: bz.sum(bz.log_softmax(x)))(bz.tensor(big)).numpy()
    np.testing.assert_allclose(g, [[-2.0, 1.0, 1.0]], atol=1e-12)
    g = bz.grad(lambda x: bz.cross_entropy(x, bz.tensor(np.array([1]))))(bz.tensor(big)).numpy()
    np.testing.assert_allclose(g, [[1.0, -1.0, 0.0]], atol=1e-12)
    # logsumexp: an element at -inf gets 0, the others their softmax.
    g = bz.grad(lambda x: bz.logsumexp(x))(bz.tensor(np.array([-np.inf, 0.0, 1.0]))).numpy()
    e = np.exp([0.0, 1.0])
    np.testing.assert_allclose(g, np.concatenate([[0.0], e / e.sum()]), rtol=1e-14)


def test_gradients_on_several_threads():
    results = {}

    def work(i):
        a = np.array([0.5, 1.0, 1.5]) * i
        ok = True
        for _ in range(20):
            g = bz.grad(lambda x: bz.sum(bz.sin(x) * x))(bz.tensor(a)).numpy()
            ok &= np.allclose(g, np.sin(a) + a * np.cos(a), rtol=1e-14)
        results[i] = ok

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {1: True, 2: True, 3: True, 4: True}


# --- the API: bz.grad, value_and_grad, vjp ------------------------------------------------------------


def test_grad_results_are_lazy_values():
    x = bz.tensor(np.array([1.0, 2.0, 3.0]))
    v, g = bz.value_and_grad(lambda x: bz.sum(bz.exp(x)))(x)
    assert not g.is_realized and not v.is_realized
    assert not g.requires_grad and not v.requires_grad
    assert bz.is_grad_enabled()
    np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-15)
    assert float(v.numpy()) == pytest.approx(np.exp([1.0, 2.0, 3.0]).sum(), rel=1e-15)


def test_has_aux():
    x = bz.tensor(np.array([1.0, -2.0]))

    def f(x):
        y = x * 3
        return bz.sum(y * y), {"y": y, "note": "kept"}

    g, aux = bz.grad(f, has_aux=True)(x)
    np.testing.assert_array_equal(g.numpy(), [18.0, -36.0])
    assert aux["note"] == "kept" and not aux["y"].requires_grad
    np.testing.assert_array_equal(aux["y"].numpy(), [3.0, -6.0])
    (value, aux), g = bz.value_and_grad(f, has_aux=True)(x)
    assert float(value.numpy()) == 45.0
    np.testing.assert_array_equal(g.numpy(), [18.0, -36.0])
    out, vjp_fn, aux = bz.vjp(lambda x: (x * x, x + 1), x, has_aux=True)
    np.testing.assert_array_equal(aux.numpy(), [2.0, -1.0])
    np.testing.assert_array_equal(vjp_fn(bz.tensor(np.array([1.0, 1.0])))[0].numpy(), [2.0, -4.0])


def test_argnums():
    a, b, c = (bz.tensor(np.array(v)) for v in (2.0, 3.0, 5.0))
    f = lambda a, b, c: bz.sum(a * b * b * c)  # noqa: E731
    assert float(bz.grad(f)(a, b, c).numpy()) == 45.0
    assert float(bz.grad(f, argnums=1)(a, b, c).numpy()) == 60.0
    assert float(bz.grad(f, argnums=-1)(a, b, c).numpy()) == 18.0
    ga, gc = bz.grad(f, argnums=(0, 2))(a, b, c)
    assert (float(ga.numpy()), float(gc.numpy())) == (45.0, 18.0)
    (gb,) = bz.grad(f, argnums=(1,))(a, b, c)
    assert float(gb.numpy()) == 60.0
    # Keyword arguments pass through, undifferentiated.
    g = bz.grad(lambda x, scale=1.0: bz.sum(x * scale))(a, scale=bz.tensor(np.array(4.0)))
    assert float(g.numpy()) == 4.0


def test_tree_parameters():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 3))
    params = {"w": bz.tensor(rng.standard_normal((3, 2))), "b": bz.tensor(rng.standard_normal(2)),
              "extra": [bz.tensor(np.array(1.5)), (bz.tensor(np.array([2.0, -1.0])),)]}

    def loss(p, x):
        h = x @ p["w"] + p["b"]
        s, (t,) = p["extra"]
        return bz.sum(h * h) * s + bz.sum(t * t)

    g = bz.grad(loss)(params, bz.tensor(x))
    assert set(g) == {"w", "b", "extra"} and isinstance(g["extra"], list) and isinstance(g["extra"][1], tuple)
    w, b = params["w"].numpy(), params["b"].numpy()
    h = x @ w + b
    np.testing.assert_allclose(g["w"].numpy(), 1.5 * 2 * x.T @ h, rtol=1e-12)
    np.testing.assert_allclose(g["b"].numpy(), 1.5 * 2 * h.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(g["extra"][0].numpy(), np.sum(h * h), rtol=1e-12)
    np.testing.assert_array_equal(g["extra"][1][0].numpy(), [4.0, -2.0])
    # A list of parameters, and gradients with respect to two trees at once.
    gl, gx = bz.grad(lambda ps, x: bz.sum(ps[0] * x + ps[1]), argnums=(0, 1))([params["b"], params["b"]], params["b"])
    np.testing.assert_allclose(gl[0].numpy(), b)
    np.testing.assert_array_equal(gl[1].numpy(), [1.0, 1.0])
    np.testing.assert_allclose(gx.numpy(), b)


def test_vjp_of_non_scalar_and_tree_outputs():
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    v = np.random.default_rng(12).standard_normal((2, 3))
    out, vjp_fn = bz.vjp(lambda x: x * bz.sin(x), bz.tensor(a))
    np.testing.assert_allclose(out.numpy(), a * np.sin(a), rtol=1e-15)
    (g,) = vjp_fn(bz.tensor(v))
    np.testing.assert_allclose(g.numpy(), v * (np.sin(a) + a * np.cos(a)), rtol=1e-14)
    (g,) = vjp_fn(v)  # a NumPy cotangent
    np.testing.assert_allclose(g.numpy(), v * (np.sin(a) + a * np.cos(a)), rtol=1e-14)
    # Two primals, outputs in a tree.
    out, vjp_fn = bz.vjp(lambda x, y: {"p": x * y, "s": bz.sum(x)}, bz.tensor(a), bz.tensor(v))
    gx, gy = vjp_fn({"p": bz.tensor(np.ones((2, 3))), "s": bz.tensor(2.0)})
    np.testing.assert_allclose(gx.numpy(), v + 2.0, rtol=1e-15)
    np.testing.assert_allclose(gy.numpy(), a, rtol=1e-15)
    with pytest.raises(ValueError, match=r"vjp: 1 cotangents for 2 outputs"):
        vjp_fn(bz.tensor(np.ones((2, 3))))
    _, vjp_fn = bz.vjp(lambda x: x * 2, bz.tensor(a))
    with pytest.raises(ValueError, match=r"vjp: cotangent 0 has shape \[3\] but its output has shape \[2, 3\]"):
        vjp_fn(bz.tensor(np.ones(3)))


def test_closure_over_the_same_value_is_a_constant():
    # JAX semantics: bz.grad differentiates a fresh copy of its argument; the
    # same tensor captured by the closure is a constant.
    a = np.array([1.0, 2.0, -3.0])
    x = bz.tensor(a)
    np.testing.assert_array_equal(bz.grad(lambda y: bz.sum(y * x))(x).numpy(), a)
    np.testing.assert_array_equal(bz.grad(lambda y: bz.sum(y * y))(x).numpy(), 2 * a)


def test_nested_grad():
    x = bz.tensor(np.array(2.0))
    f = lambda x: x ** 3 + bz.sin(x)  # noqa: E731
    assert float(bz.grad(f)(x).numpy()) == pytest.approx(12 + np.cos(2.0), rel=1e-15)
    assert float(bz.grad(bz.grad(f))(x).numpy()) == pytest.approx(12 - np.sin(2.0), rel=1e-15)
    assert float(bz.grad(bz.grad(bz.grad(f)))(x).numpy()) == pytest.approx(6 - np.cos(2.0), rel=1e-15)

    def outer(x):
        g = bz.grad(f)(x)
        assert g.requires_grad  # inside another bz.grad the result keeps its gradient
        return g * x

    assert float(bz.grad(outer)(x).numpy()) == pytest.approx(12 + np.cos(2.0) + 2 * (12 - np.sin(2.0)), rel=1e-14)
    # An inner grad closing over the outer variable (a mixed partial): d/dy d/dx (x^2 y^3) = 6 x y^2.
    y = bz.tensor(np.array(3.0))
    mixed = bz.grad(lambda y: bz.grad(lambda x: x * x * y * y * y)(x))(y)
    assert float(mixed.numpy()) == pytest.approx(6 * 2 * 9, rel=1e-15)


def test_stop_gradient_and_detach():
    a = np.array([1.0, -2.0, 0.5])
    x = bz.tensor(a)
    for stop in (bz.stop_gradient, bz.autodiff.stop_gradient, lambda t: t.detach()):
        np.testing.assert_array_equal(bz.grad(lambda y: bz.sum(y * stop(y)))(x).numpy(), a)
        np.testing.assert_array_equal(bz.grad(lambda y: bz.sum(stop(y * y)))(x).numpy(), np.zeros(3))
        np.testing.assert_array_equal(stop(x * 2).numpy(), 2 * a)
    v = bz.tensor(a).requires_grad_()
    d = v.detach()
    assert v.requires_grad and not d.requires_grad and not (d * 2).requires_grad


# --- grad mode -------------------------------------------------------------------------------------------


def test_no_grad_and_enable_grad():
    x = bz.tensor(np.array([1.0, 2.0])).requires_grad_()
    assert x.requires_grad and (x * 2).requires_grad and bz.is_grad_enabled()
    with bz.no_grad():
        assert not bz.is_grad_enabled()
        assert not (x * 2).requires_grad
        with bz.enable_grad():
            assert bz.is_grad_enabled() and (x * 2).requires_grad
        assert not bz.is_grad_enabled()
    assert bz.is_grad_enabled()
    with pytest.raises(RuntimeError, match="inside"):
        with bz.no_grad():
            raise RuntimeError("inside")
    assert bz.is_grad_enabled()
    # Inside bz.grad, what no_grad records is a constant.
    a = np.array([1.0, 2.0])

    def f(y):
        with bz.no_grad():
            c = y * 1.0
        return bz.sum(y * c)

    np.testing.assert_array_equal(bz.grad(f)(bz.tensor(a)).numpy(), a)
    # bz.grad records gradients inside even when called under no_grad.
    with bz.no_grad():
        np.testing.assert_array_equal(bz.grad(lambda y: bz.sum(y * y))(bz.tensor(a)).numpy(), 2 * a)


def test_grad_mode_is_per_thread():
    seen = {}

    def other():
        seen["enabled"] = bz.is_grad_enabled()
        seen["g"] = bz.grad(lambda y: bz.sum(y * y))(bz.tensor(np.array([3.0]))).numpy()

    with bz.no_grad():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["enabled"] and seen["g"][0] == 6.0


# --- PyTorch style: requires_grad_, backward, .grad ------------------------------------------------------


def test_backward_accumulates_into_grad():
    a = np.array([1.0, -2.0, 3.0])
    x = bz.tensor(a).requires_grad_()
    assert x.requires_grad and x.grad is None
    bz.sum(x * x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * a)
    assert not x.grad.requires_grad
    bz.sum(x * 3).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * a + 3)
    x.grad = None
    assert x.grad is None
    # A non-scalar output with its cotangent.
    v = np.array([0.5, 1.0, -1.0])
    (x * x).backward(gradient=bz.tensor(v))
    np.testing.assert_array_equal(x.grad.numpy(), 2 * a * v)
    x.grad = bz.zeros_like(x)
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    with pytest.raises(ValueError, match=r"^grad: a gradient of float32\[2\] for a tensor of float64\[3\]"):
        x.grad = bz.zeros((2,), bz.float32)
    # Two variables, one loss; a variable the loss does not use keeps None.
    y, z = bz.tensor(np.array(2.0)).requires_grad_(), bz.tensor(np.array(5.0)).requires_grad_()
    bz.sum(x * y).backward()
    assert float(y.grad.numpy()) == pytest.approx(a.sum())
    assert z.grad is None
    x.requires_grad_(False)
    assert not x.requires_grad and not (x * 2).requires_grad


def test_backward_create_graph():
    a = np.array([1.0, 2.0])
    x = bz.tensor(a).requires_grad_()
    bz.sum(x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    np.testing.assert_array_equal(g.detach().numpy(), 3 * a ** 2)
    x.grad = None
    bz.sum(g).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 6 * a)


def test_no_reference_cycle_holds_a_tensor():
    # A tensor left in a reference cycle counts as held by the user until
    # Python's cyclic collector runs, and a realize keeps the values of
    # held tensors: the training step's program then depended on when the
    # collector ran. The tree walks, pad and multi_dot make no such cycle.
    import gc
    x = np.arange(6.0).reshape(2, 3)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        bz.value_and_grad(lambda p: bz.sum(p["w"] * bz.tensor(x)))({"w": bz.tensor(x)})
        bz.pad(bz.tensor(x), 2, mode="wrap")
        bz.linalg.multi_dot([bz.tensor(x), bz.tensor(x.T), bz.tensor(x), bz.tensor(x.T)])
        gc.collect()
        assert not [o for o in gc.garbage if isinstance(o, bz.Tensor)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_sgd_steps_replay_one_program():
    # An optimizer's update is built from the gradients under no_grad and
    # realized together with the loss; the second step replays the program.
    rng = np.random.default_rng(13)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    w = bz.tensor(np.zeros((3, 1)))
    losses = []
    for step in range(3):
        bz.reset_stats()
        loss, g = bz.value_and_grad(lambda w: bz.mse_loss(bz.tensor(x) @ w, bz.tensor(y)))(w)
        with bz.no_grad():
            w = w - 0.1 * g
        bz.realize(loss, w)
        losses.append(float(loss.numpy()))
        assert not w.requires_grad
        if step and not REFERENCE:
            s = bz.stats()
            assert (s["programs_compiled"], s["programs_replayed"]) == (0, 1), s
    w_np = np.zeros((3, 1))
    for _ in range(3):
        w_np = w_np - 0.1 * (2 / 8 * x.T @ (x @ w_np - y))
    np.testing.assert_allclose(w.numpy(), w_np, rtol=1e-12)
    assert losses[0] > losses[1] > losses[2]


# --- the backward fuses --------------------------------------------------------------------------------

counts_kernels = pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference makes no programs")


def _kernels(*tensors):
    bz.reset_stats()
    bz.realize(*tensors)
    return bz.stats()["kernels_launched"]


@counts_kernels
def test_elementwise_chain_gradient_is_one_kernel():
    x = bz.tensor(np.random.default_rng(14).uniform(0.5, 2, 64))
    loss, g = bz.value_and_grad(lambda x: bz.sum(bz.exp(bz.sin(x)) * bz.log(x) / x))(x)
    assert _kernels(g) == 1
    loss, g = bz.value_and_grad(lambda x: bz.sum(bz.exp(bz.sin(x)) * bz.log(x) / x))(x)
    assert _kernels(loss, g) == 1  # the loss's sum is a second output of the gradient's kernel


@counts_kernels
def test_softmax_loss_gradient_fuses():
    x = bz.tensor(np.random.default_rng(15).standard_normal((4, 16)))
    w = bz.tensor(np.random.default_rng(16).standard_normal((4, 16)))
    loss, g = bz.value_and_grad(lambda x: bz.sum(bz.softmax(x) * w))(x)
    assert _kernels(loss, g) == 2  # as many as the forward alone: the max, then the sums and the gradient
    loss, g = bz.value_and_grad(lambda x: bz.sum(bz.softmax(x) * w))(x)
    assert _kernels(g) == 1  # the gradient alone: one kernel
    labels = bz.tensor(np.array([0, 3, 15, 1]))
    loss, g = bz.value_and_grad(lambda x: bz.cross_entropy(x, labels))(x)
    assert _kernels(loss, g) == 2


@counts_kernels
def test_mlp_gradient_kernel_count():
    rng = np.random.default_rng(17)
    x, y = bz.tensor(rng.standard_normal((8, 5))), bz.tensor(rng.standard_normal((8, 2)))
    params = {"w1": bz.tensor(rng.standard_normal((5, 6))), "w2": bz.tensor(rng.standard_normal((6, 2)))}
    loss, g = bz.value_and_grad(lambda p: bz.mse_loss(bz.relu(x @ p["w1"]) @ p["w2"], y))(params)
    # 5 library calls (2 forward matmuls, 3 backward) and 3 kernels: relu
    # (float64 matmul is a BLAS call, which applies no post-ops), the loss
    # fused with its gradient, and relu's gradient. The dW2 = relu(x w1)^T g
    # matmul reads the forward's relu transposed (Note [Views sink to the
    # leaves]: it no longer recomputes it in a kernel of its own).
    assert _kernels(loss, g["w1"], g["w2"]) == 8


# --- on a device --------------------------------------------------------------------------------------------


def test_gradients_on_cuda_match_the_cpu(cuda_mode):
    # An MLP and a CNN differentiated on the device (host emulation, and a
    # GPU where there is one): generated kernels for the element-wise and
    # reduction rules, cuBLASLt and cuDNN for the matmul and convolution
    # gradients; the CPU's gradients are the reference.
    rng = np.random.default_rng(31)
    x = rng.standard_normal((4, 1, 6, 6)).astype(np.float32)
    labels = rng.integers(0, 3, 4)
    init = {"conv": rng.standard_normal((2, 1, 3, 3)).astype(np.float32) * 0.5,
            "w": rng.standard_normal((2 * 6 * 6, 3)).astype(np.float32) * 0.2,
            "b": np.zeros(3, np.float32)}

    def loss_fn(p, x, labels):
        h = bz.relu(bz.conv2d(x, p["conv"], padding=1))
        return bz.cross_entropy(bz.tanh(h.reshape(4, -1) @ p["w"] + p["b"]), labels)

    def grads(device):
        p = {k: bz.tensor(v, device=device) for k, v in init.items()}
        loss, g = bz.value_and_grad(loss_fn)(p, bz.tensor(x, device=device), bz.tensor(labels, device=device))
        return float(loss), {k: v.numpy() for k, v in g.items()}

    loss_cpu, g_cpu = grads("cpu")
    loss_dev, g_dev = grads("cuda")
    assert loss_dev == pytest.approx(loss_cpu, rel=1e-5)
    for k in init:
        np.testing.assert_allclose(g_dev[k], g_cpu[k], rtol=1e-4, atol=1e-5, err_msg=k)
