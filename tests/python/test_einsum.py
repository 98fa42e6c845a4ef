"""einsum, kron and cross (python/braze/_einsum.py) against NumPy: einsum's
subscript grammar (explicit and implicit output, '...', diagonals and
traces, size-1 broadcasting, scalars, 0-size axes) over float32, float64
and int32, on strided and broadcast inputs, by name and through NumPy's
protocol; that a matmul-shaped einsum is one library matmul and nothing
else; its errors; kron and cross with their edge cases."""

import io
import math
import os
import warnings

import numpy as np
import pytest

import braze as bz
from conftest import assert_matches, make_layout, values

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"
DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]

# (subscripts, operand shapes)
CASES = [
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,ij->j", [(3,), (3, 4)]),
    ("i,i", [(7,), (7,)]),
    ("i,i->", [(7,), (7,)]),
    ("i,i->i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)]),
    ("...ij,...jk", [(3, 4), (2, 4, 5)]),
    ("...i,...i", [(2, 3), (4, 1, 3)]),
    ("...i,...i->...", [(2, 3), (4, 1, 3)]),
    ("i...->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("i...i", [(3, 2, 3)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("Ba", [(2, 3)]),
    ("aB", [(2, 3)]),
    ("aB,BC->aC", [(2, 3), (3, 4)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,k,jk->i", [(2, 3), (4,), (3, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("ij,jk->ik", [(2, 3), (1, 4)]),
    ("ij,ij->ij", [(1, 4), (3, 1)]),
    ("ij,i->ij", [(3, 4), (1,)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("ed,dY,Ydd", [(4, 3), (3, 3), (3, 3, 3)]),  # a diagonal under a batched matmul: copied for oneDNN
    ("d,ebY,eYY,XX->be", [(2,), (3, 4, 4), (3, 4, 4), (1, 1)]),
    ("i j , j k", [(3, 4), (4, 5)]),
    ("", [()]),
    ("->", [()]),
    (",", [(), ()]),
    (",i->i", [(), (4,)]),
    ("i,->i", [(4,), ()]),
    ("ij,jk", [(3, 0), (0, 4)]),
    ("ij,jk", [(0, 3), (3, 4)]),
    ("i->", [(0,)]),
    ("ii", [(0, 0)]),
    ("bij,bjk->bik", [(0, 3, 4), (0, 4, 5)]),
]


def operand(dtype, shape, seed):
    return values(dtype, shape, seed=seed, specials=False)


def summed_per_element(subscripts, shapes):
    """How many products each result element sums (the K of the tolerance)."""
    want = np.einsum(subscripts, *[np.ones(s) for s in shapes])
    return max(1.0, float(want.max()) if want.size else 1.0)


def check(got, subscripts, arrays, dtype=None):
    """got equals np.einsum on the same values: exact for integers; for
    floats within eps * K of the sum of the absolute products."""
    want = np.einsum(subscripts, *arrays)
    dtype = np.dtype(dtype if dtype is not None else want.dtype)
    assert isinstance(got, bz.Tensor)
    assert got.dtype == dtype, (subscripts, got.dtype, dtype)
    assert tuple(got.shape) == want.shape, (subscripts, got.shape, want.shape)
    if dtype.kind != "f":
        np.testing.assert_array_equal(got.numpy(), want)
        return
    wide = [np.asarray(a, np.float64) for a in arrays]
    exact = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(a) for a in wide])
    k = summed_per_element(subscripts, [a.shape for a in arrays])
    eps = np.finfo(dtype).eps
    bound = 4 * eps * (k + 2) * magnitude + np.finfo(dtype).tiny
    err = np.abs(got.numpy().astype(np.float64) - exact)
    assert np.all(err <= bound), (subscripts, float(err.max()), float(bound.max()))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[f"{s or 'empty'}:{sh}" for s, sh in CASES])
def test_einsum_matches_numpy(subscripts, shapes, dtype):
    arrays = [operand(dtype, s, seed=n) for n, s in enumerate(shapes)]
    check(bz.einsum(subscripts, *[bz.tensor(a) for a in arrays]), subscripts, arrays)


@pytest.mark.parametrize("subscripts,shapes", CASES[::3], ids=[s or "empty" for s, _ in CASES[::3]])
def test_einsum_through_numpy_protocol(subscripts, shapes):
    arrays = [operand(np.float32, s, seed=n) for n, s in enumerate(shapes)]
    args = [bz.tensor(a) if n == 0 else a for n, a in enumerate(arrays)]  # a tensor beside ndarrays
    got = np.einsum(subscripts, *args)
    assert isinstance(got, bz.Tensor)
    check(got, subscripts, arrays)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "sliced_reversed", "broadcast"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_einsum_on_strided_and_broadcast_inputs(layout, dtype):
    a = values(dtype, (5,), seed=1, specials=False)
    a = np.broadcast_to(a, (3, 5)).copy() if layout == "broadcast" else values(dtype, (3, 5), seed=1, specials=False)
    t = make_layout(layout, a)
    b = operand(dtype, (5, 4), seed=2)
    c = operand(dtype, (3, 5), seed=3)
    for subscripts, others in [("ij,jk->ik", [b]), ("ij,kj->ik", [c]), ("ij,ij->i", [c]), ("ij->ji", []),
                               ("ij->", []), ("ij,ij->j", [c]), ("ji,jk->ik", [c[:, :4].copy()]),
                               ("ij,i->j", [c[:, 0].copy()])]:
        got = bz.einsum(subscripts, t, *[bz.tensor(o) for o in others])
        check(got, subscripts, [a, *others])
    sq = values(dtype, (4, 4), seed=4, specials=False)
    check(bz.einsum("ii->i", bz.tensor(sq.T.copy()).T), "ii->i", [sq])
    check(bz.einsum("ii", bz.tensor(sq)[::-1, ::-1]), "ii", [sq[::-1, ::-1]])
    check(bz.einsum("ij,jk", bz.broadcast_to(bz.tensor(sq[0]), [3, 4]), bz.tensor(sq)), "ij,jk",
          [np.broadcast_to(sq[0], (3, 4)), sq])


def test_einsum_mixed_dtypes_and_dtype_keyword():
    a, b = operand(np.float32, (3, 4), 1), operand(np.float64, (4, 2), 2)
    check(bz.einsum("ij,jk", bz.tensor(a), bz.tensor(b)), "ij,jk", [a, b])
    i = operand(np.int32, (3, 4), 3)
    check(bz.einsum("ij,jk", bz.tensor(i), bz.tensor(b)), "ij,jk", [i, b])
    f = operand(np.float32, (4,), 4)
    got = bz.einsum("i,i", bz.tensor(f), bz.tensor(f), dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), np.einsum("i,i", f, f, dtype=np.float64), rtol=1e-12)
    got = np.einsum("ij,jk", bz.tensor(i), bz.tensor(i.T.copy()), dtype="float64", optimize=True)
    check(got, "ij,jk", [i.astype(np.float64), i.T.astype(np.float64)])
    with pytest.raises(TypeError, match="einsum.*cast"):
        bz.einsum("i,i", bz.tensor(b[0]), bz.tensor(b[0]), dtype=np.float32)
    got = bz.einsum("i,i", bz.tensor(b[0]), bz.tensor(b[0]), dtype=np.float32, casting="same_kind")
    assert got.dtype == np.float32


def test_einsum_bool():
    a = values(np.bool_, (3, 4), seed=5)
    b = values(np.bool_, (4, 5), seed=6)
    for s, ops in [("ij,jk", [a, b]), ("ij->i", [a]), ("ii", [a[:3, :3]]), ("ij,ij->ij", [a, a])]:
        got = bz.einsum(s, *[bz.tensor(x) for x in ops])
        assert_matches(got, np.einsum(s, *ops))


def test_einsum_interleaved_sublists():
    a, b = operand(np.float32, (3, 4), 1), operand(np.float32, (4, 5), 2)
    check(bz.einsum(bz.tensor(a), [0, 1], bz.tensor(b), [1, 2], [0, 2]), "ij,jk->ik", [a, b])
    check(bz.einsum(bz.tensor(a), [0, 1], bz.tensor(b), [1, 2]), "ij,jk", [a, b])
    c = operand(np.float32, (2, 3, 4), 3)
    check(bz.einsum(bz.tensor(c), [Ellipsis, 0], [0, Ellipsis]), "...a->a...", [c])
    check(np.einsum(bz.tensor(c), [Ellipsis, 30, 31], bz.tensor(b), [31, 40]), "...ef,fo", [c, b])


def test_einsum_out():
    a, b = operand(np.float32, (3, 4), 1), operand(np.float32, (4, 5), 2)
    out = bz.zeros([3, 5])
    out.realize()
    r = np.einsum("ij,jk->ik", bz.tensor(a), bz.tensor(b), out=out)
    assert r is out
    check(out, "ij,jk->ik", [a, b])


def random_einsum(rng):
    """Subscripts and shapes: 1 to 4 operands of up to 3 letters (repeats
    and size-1 broadcasts included), an ellipsis in some, output implicit
    or a random explicit one."""
    letters = "abcdXY"
    sizes = {c: int(rng.integers(1, 5)) for c in letters}
    ellipsis = [int(d) for d in rng.integers(1, 4, rng.integers(0, 3))] if rng.random() < 0.3 else None
    terms, shapes = [], []
    for _ in range(rng.integers(1, 5)):
        t = [str(c) for c in rng.choice(list(letters), rng.integers(0, 4))]
        sh = [sizes[c] if rng.random() < 0.85 else 1 for c in t]
        sh = [sh[t.index(c)] for c in t]  # a repeated letter: one size
        if ellipsis is not None and rng.random() < 0.7:
            at, e = int(rng.integers(0, len(t) + 1)), ellipsis[int(rng.integers(0, len(ellipsis) + 1)):]
            t[at:at], sh[at:at] = ["..."], [d if rng.random() < 0.8 else 1 for d in e]
        terms.append("".join(t))
        shapes.append(tuple(sh))
    subscripts = ",".join(terms)
    if rng.random() < 0.5:
        seen = sorted({c for t in terms for c in t if c.isalpha()})
        out = [str(c) for c in rng.permutation(seen)[:rng.integers(0, len(seen) + 1)]]
        if "..." in subscripts:
            out.insert(int(rng.integers(0, len(out) + 1)), "...")
        subscripts += "->" + "".join(out)
    return subscripts, shapes


@pytest.mark.parametrize("seed", range(4))
def test_einsum_random_subscripts(seed):
    rng = np.random.default_rng(seed)
    for n in range(150):
        subscripts, shapes = random_einsum(rng)
        dtype = DTYPES[n % 3]
        arrays = [operand(dtype, s, seed=k) for k, s in enumerate(shapes)]
        try:
            np.einsum(subscripts, *arrays)
        except ValueError:
            with pytest.raises(ValueError, match="einsum"):
                bz.einsum(subscripts, *[bz.tensor(a) for a in arrays])
            continue
        check(bz.einsum(subscripts, *[bz.tensor(a) for a in arrays]), subscripts, arrays)


def plan(*tensors):
    return bz.explain(*tensors, file=io.StringIO())


@pytest.mark.parametrize("subscripts,shapes", [("ij,jk->ik", [(32, 16), (16, 8)]), ("ij,kj", [(32, 16), (8, 16)]),
                                               ("bij,bjk->bik", [(4, 8, 16), (4, 16, 8)]),
                                               ("...ij,...jk", [(4, 8, 16), (4, 16, 8)])])
def test_matmul_shaped_einsum_is_one_library_matmul(subscripts, shapes):
    ts = [bz.tensor(operand(np.float32, s, n)) for n, s in enumerate(shapes)]
    text = plan(bz.einsum(subscripts, *ts))
    assert "1 step(s): 0 fused kernel(s), 1 library call(s)" in text and "library call MatMul" in text, text


def test_contraction_over_two_indices_is_a_matmul():
    a, b = operand(np.float32, (2, 3, 4), 1), operand(np.float32, (3, 4, 5), 2)
    text = plan(bz.einsum("ijk,jkl->il", bz.tensor(a), bz.tensor(b)))
    assert "library call MatMul" in text and "0 fused kernel(s)" in text, text


def test_integer_einsum_multiplies_and_sums():
    a, b = operand(np.int32, (3, 4), 1), operand(np.int32, (4, 5), 2)
    r = bz.einsum("ij,jk", bz.tensor(a), bz.tensor(b))
    assert "MatMul" not in plan(r)
    check(r, "ij,jk", [a, b])


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_einsum_without_contraction_fuses():
    a, b = operand(np.float32, (64,), 1), operand(np.float32, (32,), 2)
    r = bz.einsum("i,j->ij", bz.tensor(a), bz.tensor(b)) * 2.0 + 1.0
    bz.reset_stats()
    r.numpy()
    assert bz.stats()["kernels_launched"] == 1
    np.testing.assert_allclose(r.numpy(), np.einsum("i,j->ij", a, b) * 2 + 1, rtol=1e-6)


def test_einsum_is_lazy():
    a = bz.tensor(operand(np.float32, (3, 4), 1))
    r = bz.einsum("ij,kj->ik", a, a)
    assert not r.is_realized


@pytest.mark.parametrize("subscripts,shapes,match", [
    ("ij,jk", [(3, 4), (5, 6)], "einsum.*'ij,jk'.*sizes 4 and 5"),
    ("i,i", [(3,), (4,)], "einsum.*sizes 3 and 4"),
    ("ijk", [(3, 4)], "einsum.*operand 0 has 2 axes"),
    ("i", [(3, 4)], "einsum.*operand 0 has 2 axes"),
    ("i,j", [(3,)], "einsum.*2 operand\\(s\\), but 1"),
    ("i", [(3,), (3,)], "einsum.*1 operand\\(s\\), but 2"),
    ("i$", [(3, 3)], "einsum.*invalid subscript '\\$'"),
    ("ij->k", [(3, 4)], "einsum.*'k', which no operand has"),
    ("ij->ii", [(3, 4)], "einsum.*'i' more than once"),
    ("i..", [(3, 4)], "einsum.*not part of an ellipsis"),
    ("......", [(3, 4)], "einsum.*more than one ellipsis"),
    ("...i->i", [(2, 3)], "einsum.*no '...'"),
    ("ii", [(3, 4)], "einsum"),
    ("i->i->i", [(3,)], "einsum"),
])
def test_einsum_errors(subscripts, shapes, match):
    ts = [bz.tensor(np.ones(s, np.float32)) for s in shapes]
    with pytest.raises(ValueError, match=match):
        bz.einsum(subscripts, *ts)
    with pytest.raises(ValueError):  # NumPy refuses them too
        np.einsum(subscripts, *[np.ones(s) for s in shapes])


# --- kron ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 2), (3,)), ((), (3,)), ((3,), ()),
                                   ((), ()), ((2, 1, 3), (1, 4)), ((0, 2), (3, 1)), ((4,), (5,))])
def test_kron_matches_numpy(sa, sb, dtype):
    a, b = operand(dtype, sa, 1), operand(dtype, sb, 2)
    assert_matches(bz.kron(bz.tensor(a), bz.tensor(b)), np.kron(a, b))
    got = np.kron(bz.tensor(a), b)
    assert isinstance(got, bz.Tensor)
    assert_matches(got, np.kron(a, b))


def test_kron_strided_and_scalars():
    a = operand(np.float32, (3, 5), 1)
    b = operand(np.float32, (2, 2), 2)
    assert_matches(bz.kron(make_layout("transposed", a), bz.tensor(b)), np.kron(a, b))
    assert_matches(bz.kron(make_layout("sliced_reversed", a), bz.tensor(b)), np.kron(a, b))
    assert_matches(bz.kron(2.0, bz.tensor(b)), np.kron(np.float32(2.0), b))


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_kron_is_one_multiply_fused_with_its_inputs():
    """One kernel multiplies (fused with what made a and b); realizing the
    reshaped result copies it once more (a view of a computed value is
    copied into a buffer of its own: Note [Views])."""
    a, b = operand(np.float32, (8, 8), 1), operand(np.float32, (4, 4), 2)
    r = bz.kron(bz.tensor(a) * 2.0, bz.exp(bz.tensor(b)))
    assert not r.is_realized
    text = plan(r)
    assert "2 step(s): 2 fused kernel(s), 0 library call(s)" in text, text
    bz.reset_stats()
    got = r.numpy()
    assert bz.stats()["kernels_launched"] == 2
    np.testing.assert_allclose(got, np.kron(a * 2, np.exp(b)), rtol=1e-5)


# --- cross -----------------------------------------------------------------------------------


def np_cross(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.cross(*args, **kw)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("sa,sb,kw", [
    ((3,), (3,), {}), ((5, 3), (5, 3), {}), ((4, 3), (3,), {}), ((2, 1, 3), (4, 3), {}),
    ((5, 2), (5, 3), {}), ((5, 3), (5, 2), {}), ((3, 5), (5, 3), {"axisa": 0}), ((3, 5), (3, 5), {"axis": 0}),
    ((4, 3), (3, 4), {"axisb": 0, "axisc": 0}), ((2, 3, 4), (3,), {"axisa": 1, "axisc": 1}),
    ((0, 3), (0, 3), {}), ((2, 4), (4, 3), {"axisa": 0}),
])
def test_cross_matches_numpy(sa, sb, kw, dtype):
    a, b = operand(dtype, sa, 1), operand(dtype, sb, 2)
    assert_matches(bz.cross(bz.tensor(a), bz.tensor(b), **kw), np_cross(a, b, **kw))
    got = np.cross(bz.tensor(a), b, **kw)
    assert isinstance(got, bz.Tensor)
    assert_matches(got, np_cross(a, b, **kw))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_cross_of_2_vectors_is_the_z_component(dtype):
    a, b = operand(dtype, (4, 2), 1), operand(dtype, (2,), 2)
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        got = bz.cross(bz.tensor(a), bz.tensor(b))
    assert_matches(got, np_cross(a, b))
    assert got.shape == (4,)


def test_cross_signed_zeros_and_errors():
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 0.0, 1.0], np.float32)
    got, want = bz.cross(bz.tensor(a), bz.tensor(b)).numpy(), np_cross(a, b)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    with pytest.raises(ValueError, match="cross.*dimension must be 2 or 3"):
        bz.cross(bz.ones([4]), bz.ones([3]))
    with pytest.raises(ValueError, match="cross"):
        bz.cross(bz.ones([]), bz.ones([3]))
    with pytest.raises(IndexError):
        bz.cross(bz.ones([3]), bz.ones([3]), axisc=2)


@pytest.mark.skipif(REFERENCE, reason="the reference backend launches no kernels")
def test_cross_is_one_kernel():
    a, b = operand(np.float32, (64, 3), 1), operand(np.float32, (64, 3), 2)
    r = bz.cross(bz.tensor(a), bz.tensor(b))
    bz.reset_stats()
    r.numpy()
    assert bz.stats()["kernels_launched"] == 1
    np.testing.assert_allclose(r.numpy(), np.cross(a, b), rtol=1e-5, atol=1e-5)


def test_names_are_exported():
    import braze._einsum as mod
    assert mod.__all__ == ["einsum", "kron", "cross"] and mod.FUNCTIONS == mod.__all__
    for name in mod.__all__:
        assert getattr(bz, name) is getattr(mod, name)
    assert math.isclose(float(bz.einsum("i,i", bz.ones([3]), bz.ones([3]))), 3.0)


def test_on_a_cuda_device(cuda_mode):
    """On a CUDA device (host emulation, and the driver where there is one):
    the result stays there, cross's component index included."""
    a, b = operand(np.float32, (4, 3), 1), operand(np.float32, (3, 5), 2)
    sq = operand(np.float32, (3, 3, 3), 3)
    ta, tb, tsq = (bz.tensor(x).to("cuda") for x in (a, b, sq))
    for got, subscripts, arrays in [(bz.einsum("ij,jk", ta, tb), "ij,jk", [a, b]),
                                    (bz.einsum("ed,dY,Ydd", ta[:3], tsq[0], tsq), "ed,dY,Ydd", [a[:3], sq[0], sq]),
                                    (bz.einsum("ii->i", tsq[0]), "ii->i", [sq[0]])]:
        assert got.device.startswith("cuda")
        check(got, subscripts, arrays)
    got = bz.cross(ta, ta[::-1])
    assert got.device.startswith("cuda")
    assert_matches(got, np.cross(a, a[::-1]), rtol=1e-5, atol=1e-5)
    assert_matches(bz.kron(ta, tb), np.kron(a, b))
