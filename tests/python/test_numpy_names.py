"""braze in numpy's place (python/braze/_numpy_names.py and
_numpy_protocols.install): NumPy's dtype aliases, its dtype questions and
state, the arrays NumPy makes from no array, fromfunction, angle and
asarray_chkfinite, and every function NumPy's protocols hand to braze
reachable as bz.<name>, each against NumPy."""

import io
import math

import numpy as np
import pytest

import braze as bz

# Names that programs written against numpy use, which braze's namespace
# must answer (by NumPy's meaning); complex, datetime, matrix and
# NumPy's introspection are not among them.
COMMON = ["cumsum", "cumprod", "dot", "around", "unique", "asanyarray", "ascontiguousarray", "shape", "ndim", "size",
          "isscalar", "promote_types", "issubdtype", "broadcast_shapes", "errstate", "seterr", "printoptions",
          "hanning", "hamming", "blackman", "bartlett", "kaiser", "tril_indices", "triu_indices", "diag_indices",
          "fromfunction", "fromiter", "frombuffer", "loadtxt", "genfromtxt", "load", "save", "savez", "savetxt",
          "angle", "asarray_chkfinite", "asfortranarray", "require", "array2string", "array_repr", "array_str",
          "poly", "dtype", "double", "single", "half", "int_", "intp", "intc", "floating", "integer", "number",
          "ndindex", "iterable", "base_repr", "binary_repr", "s_", "index_exp", "testing", "exceptions"]


@pytest.mark.parametrize("name", COMMON)
def test_the_name_is_there(name):
    assert hasattr(bz, name), name


def x34():
    return np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5


@pytest.mark.parametrize("name, call", [
    ("cumsum", lambda m, x: m.cumsum(x, axis=1)),
    ("cumsum flat", lambda m, x: m.cumsum(x)),
    ("cumprod", lambda m, x: m.cumprod(x / 4, axis=0)),
    ("dot", lambda m, x: m.dot(x, x.T)),
    ("dot of a vector", lambda m, x: m.dot(x, x[0])),
    ("around", lambda m, x: m.around(x / 3, 2)),
    ("unique", lambda m, x: m.unique(m.abs(x))),
    ("asanyarray", lambda m, x: m.asanyarray(x)),
    ("ascontiguousarray", lambda m, x: m.ascontiguousarray(x.T)),
])
def test_protocol_functions_by_their_numpy_names(name, call):
    x = x34()
    got = call(bz, bz.asarray(x))
    assert isinstance(got, bz.Tensor), name
    np.testing.assert_allclose(got.numpy(), call(np, x), rtol=1e-6)


def test_facts_about_arrays_take_what_numpy_takes():
    assert bz.shape([[1, 2, 3]]) == (1, 3) and bz.ndim(3.0) == 0 and bz.size([[1, 2], [3, 4]]) == 4
    t = bz.zeros((2, 5))
    assert bz.shape(t) == (2, 5) and bz.ndim(t) == 2 and bz.size(t) == 10 and bz.size(t, 1) == 5


def test_dtype_aliases_are_the_dtypes_numpy_means():
    for name in ["double", "single", "half", "int_", "intp", "intc", "long", "longlong", "byte", "ubyte", "short",
                 "ushort", "uintc"]:
        assert getattr(bz, name) is getattr(np, name), name
        assert bz.zeros(2, dtype=getattr(bz, name)).dtype == np.dtype(getattr(np, name)), name
    assert not hasattr(bz, "uint") and not hasattr(bz, "ulonglong")  # uint64: braze has no such dtype
    assert bz.issubdtype(bz.asarray(x34()).dtype, bz.floating)
    assert not bz.issubdtype(bz.int32, bz.floating) and bz.issubdtype(bz.int32, bz.integer)
    assert bz.dtype("f4") == bz.float32


def test_dtype_names_are_numpys_scalar_types():
    # Note [Dtype names]: bz.float32 is np.float32, so NumPy code that
    # makes scalars with it runs; a tensor's dtype is a dtype object equal to it.
    assert bz.float32 is np.float32 and bz.int64 is np.int64 and bz.bool is np.bool_
    assert bz.float32(0.5) == np.float32(0.5) and type(bz.float64(bz.tensor([1.0, 2.0]).sum())) is np.float64
    assert bz.int64(3) + 1 == 4 and bz.bfloat16(1.5) == 1.5
    t = bz.zeros(2, dtype=bz.float64)
    assert t.dtype == bz.float64 and isinstance(t.dtype, np.dtype) and t.dtype.name == "float64"
    assert bz.tensor([1, 2]).astype(bz.int8).dtype == bz.int8 and bz.finfo(bz.float32).eps == np.finfo(np.float32).eps


def test_numpys_wider_signatures():
    # where with the condition alone, round to decimals, argsort's kind,
    # the reductions' initial= and where=, a ufunc's out= and where=.
    x = np.array([[0.125, -1.5, 2.75], [3.0, 0.0, -0.375]], np.float32)
    t = bz.tensor(x)
    for got, want in zip(bz.where(t > 0), np.where(x > 0)):
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(TypeError, match="where: takes a condition alone"):
        bz.where(t > 0, t)
    np.testing.assert_array_equal(bz.round(t, 1).numpy(), np.round(x, 1))
    np.testing.assert_array_equal(bz.round(t).numpy(), np.round(x))
    np.testing.assert_array_equal(bz.argsort(t, 1, kind="stable").numpy(), np.argsort(x, 1, kind="stable"))
    np.testing.assert_array_equal(bz.sort(t, axis=None).numpy(), np.sort(x, axis=None))
    with pytest.raises(TypeError, match="argsort: order="):
        bz.argsort(t, order="f0")
    np.testing.assert_array_equal(bz.max(t, axis=0, initial=1.0).numpy(), np.max(x, axis=0, initial=1.0))
    np.testing.assert_array_equal(t.min(axis=1, initial=-1.0).numpy(), x.min(axis=1, initial=-1.0))
    np.testing.assert_array_equal(bz.sum(t, axis=1, where=t > 0).numpy(), np.sum(x, axis=1, where=x > 0))
    np.testing.assert_array_equal(bz.prod(t, initial=2.0, where=t != 0).numpy(), np.prod(x, initial=2.0, where=x != 0))
    assert bz.max(bz.zeros((0, 3)), axis=0, initial=7.0).numpy().tolist() == [7.0, 7.0, 7.0]
    c = bz.tensor(x)
    r = bz.exp(c, out=c)
    assert r is c
    np.testing.assert_allclose(c.numpy(), np.exp(x), rtol=1e-6)
    d = bz.zeros((2, 3))
    bz.add(t, [1.0, 2.0, 3.0], out=d, where=t > 0)
    np.testing.assert_array_equal(d.numpy(), np.add(x, [1.0, 2.0, 3.0], out=np.zeros((2, 3), np.float32), where=x > 0))
    e = bz.zeros((2, 3))
    assert bz.add(t, 0.5, e) is e and bz.sinh(t, out=bz.zeros((2, 3))).shape == (2, 3)  # a positional out; a composite
    np.testing.assert_array_equal(e.numpy(), np.add(x, 0.5))
    with pytest.raises(TypeError, match="maximum"):
        bz.maximum(t, t, e, e)
    with pytest.raises(TypeError, match="sigmoid: takes 1 tensor argument"):  # an op row with no NumPy ufunc
        bz.sigmoid(t, out=e)
    assert 3.0 in t and 2.0 not in t and (2.75 in t[0]) == (2.75 in x[0])  # ndarray's __contains__
    w = bz.lib.stride_tricks.sliding_window_view(bz.arange(6.0), 3)
    np.testing.assert_array_equal(w.numpy(), np.lib.stride_tricks.sliding_window_view(np.arange(6.0), 3))


def test_dtype_questions_and_state_are_numpys():
    assert bz.promote_types(bz.float32, bz.int16) == np.float32
    assert bz.broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert bz.isscalar(3.0) and not bz.isscalar(bz.ones(3))
    with bz.errstate(divide="ignore"):
        assert np.geterr()["divide"] == "ignore"
    with bz.printoptions(precision=2):
        assert "3.14" in bz.array2string(bz.asarray([math.pi])) and "3.142" not in bz.array2string(bz.asarray([math.pi]))
    assert list(bz.ndindex(2, 2)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    t = bz.asarray(x34())
    assert t[bz.s_[1:, ::2]].numpy().tolist() == x34()[1:, ::2].tolist()
    bz.testing.assert_allclose(t * 2, x34() * 2)
    assert issubclass(bz.exceptions.AxisError, IndexError)  # what braze raises for an axis out of range


@pytest.mark.parametrize("name, args", [
    ("hanning", (7,)), ("hamming", (7,)), ("blackman", (6,)), ("bartlett", (5,)), ("kaiser", (8, 14.0)),
    ("hanning", (0,)), ("tril_indices", (4,)), ("triu_indices", (4, 1)), ("tril_indices", (3, -1, 5)),
    ("diag_indices", (3, 2)), ("poly", ([1.0, 2.0, 3.0],)),
])
def test_arrays_numpy_makes_come_back_as_tensors(name, args):
    got, want = getattr(bz, name)(*args), getattr(np, name)(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, bz.Tensor) and g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w)


def test_readers_give_tensors(tmp_path):
    assert bz.fromiter(iter(range(5)), dtype=np.int32).numpy().tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(bz.frombuffer(np.arange(4, dtype=np.float32).tobytes(), dtype=np.float32).numpy(),
                                  np.arange(4, dtype=np.float32))
    got = bz.loadtxt(io.StringIO("1 2\n3 4\n"))
    assert isinstance(got, bz.Tensor) and got.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert bz.genfromtxt(io.StringIO("1,2\n3,4"), delimiter=",").numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    path = tmp_path / "x.npy"
    bz.save(path, bz.asarray(x34()))
    loaded = bz.load(path)
    assert isinstance(loaded, bz.Tensor)
    np.testing.assert_array_equal(loaded.numpy(), x34())
    with pytest.raises(ValueError, match="loadtxt"):
        bz.loadtxt(io.StringIO("1 2\n3\n"))


def test_fromfunction_records_lazily():
    got = bz.fromfunction(lambda i, j: i * 10 + j, (3, 4))
    assert isinstance(got, bz.Tensor) and got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), np.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    got = bz.fromfunction(lambda i, j: i == j, (3, 3), dtype=int)
    np.testing.assert_array_equal(got.numpy(), np.fromfunction(lambda i, j: i == j, (3, 3), dtype=int))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("deg", [False, True])
def test_angle_of_real_values_is_numpys(dtype, deg):
    x = np.array([-1.0, -0.0, 0.0, 2.5, np.nan, -np.inf, np.inf], dtype=dtype)
    want = np.angle(x, deg=deg)
    for got in (bz.angle(bz.asarray(x), deg=deg), np.angle(bz.asarray(x), deg=deg)):
        assert isinstance(got, bz.Tensor) and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        numbers = ~np.isnan(want)  # a NaN's sign is no part of its value
        assert np.array_equal(np.signbit(got.numpy())[numbers], np.signbit(want)[numbers])


def test_angle_of_integers_and_lists():
    np.testing.assert_allclose(bz.angle([-3, 0, 4]).numpy(), np.angle([-3, 0, 4]), rtol=1e-6)


def test_asarray_chkfinite():
    x = x34()
    np.testing.assert_array_equal(bz.asarray_chkfinite(x).numpy(), x)
    for bad in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y[1, 2] = bad
        with pytest.raises(ValueError, match="asarray_chkfinite: array must not contain infs or NaNs"):
            bz.asarray_chkfinite(bz.asarray(y))
    assert bz.asarray_chkfinite([1, 2]).numpy().tolist() == [1, 2]  # integers are always finite
    assert bz.asarray_chkfinite(bz.ones(2)).numpy().tolist() == [1.0, 1.0]  # braze keeps working


def test_require_and_asfortranarray_keep_values():
    x = x34()
    for got in (bz.require(x, requirements=["C", "A"]), bz.require(x, np.float64, "F"), bz.asfortranarray(x)):
        assert isinstance(got, bz.Tensor)
        np.testing.assert_array_equal(got.numpy(), x)
    assert bz.require(x, np.float64).dtype == np.float64
    with pytest.raises(KeyError, match="require"):
        bz.require(x, requirements="Z")


@pytest.mark.parametrize("expr", ["r_[x[0], x[1]]", "r_[x[0], 1, 2.5]", "r_[0:1:5j]", "r_[x, x]", "r_[3]",
                                  "r_[[1, 2], [3]]", "r_[-1:5:2]", "c_[x[:, 0], x[:, 1]]", "c_[x, x[:, 0]]"])
def test_r_and_c_concatenate_lazily_as_numpy(expr):
    x = x34()
    want = eval("np." + expr, {"np": np, "x": x})
    got = eval("bz." + expr, {"bz": bz, "x": bz.asarray(x)})
    assert isinstance(got, bz.Tensor) and got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_r_refuses_string_directives():
    with pytest.raises(TypeError, match="r_: string directives"):
        bz.r_["0,2", [1, 2], [3, 4]]


def test_vectorize_calls_numpy_on_the_values():
    x = x34()
    got = bz.vectorize(lambda a, b: a * 2 + b if a > 0 else b)(bz.asarray(x), 1.0)
    assert isinstance(got, bz.Tensor)
    np.testing.assert_array_equal(got.numpy(), np.vectorize(lambda a, b: a * 2 + b if a > 0 else b)(x, 1.0))

    @bz.vectorize(otypes=[np.float64])
    def half(a):
        return a / 2

    assert half([1, 2]).dtype == np.float64 and half([1, 2]).numpy().tolist() == [0.5, 1.0]


def test_legacy_random_shuffle_and_randint():
    bz.random.seed(3)
    x = bz.asarray(x34())
    view = x[:, 0]
    bz.random.shuffle(x)
    got = x.numpy()
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, x34().tolist()))  # rows kept, reordered
    np.testing.assert_array_equal(view.numpy(), got[:, 0])  # in place: the view sees it
    bz.random.seed(3)
    again = bz.asarray(x34())
    bz.random.shuffle(again)
    np.testing.assert_array_equal(again.numpy(), got)  # the seed decides
    with pytest.raises(TypeError, match="shuffle: x must be a braze tensor"):
        bz.random.shuffle(x34())
    r = bz.random.randint(2, 9, size=(50,))
    assert r.dtype == np.int64 and 2 <= int(r.min()) and int(r.max()) < 9
    assert bz.random.randint(5, size=3, dtype=np.int32).dtype == np.int32


def test_ndarray_is_the_tensor_type_and_makes_arrays():
    t = bz.asarray(x34())
    assert isinstance(t, bz.ndarray) and not isinstance(x34(), bz.ndarray) and issubclass(bz.Tensor, bz.ndarray)
    made = bz.ndarray((2, 3), dtype=np.float64)
    assert isinstance(made, bz.Tensor) and made.shape == (2, 3) and made.dtype == np.float64
    assert bz.ndarray(4).dtype == np.float64  # NumPy's default
    with pytest.raises(TypeError, match="ndarray: buffer="):
        bz.ndarray((2,), buffer=b"12345678")


def test_ufuncs_carry_numpys_methods():
    x = x34()
    t = bz.asarray(x)
    for got, want in [(bz.minimum.outer(t[0], t[1]), np.minimum.outer(x[0], x[1])),
                      (bz.subtract.outer([1.0, 2.0], t[0]), np.subtract.outer([1.0, 2.0], x[0])),
                      (bz.add.reduce(t, axis=0), np.add.reduce(x, axis=0)),
                      (bz.multiply.reduce(t, axis=1), np.multiply.reduce(x, axis=1)),
                      (bz.maximum.accumulate(t, axis=1), np.maximum.accumulate(x, axis=1)),
                      (bz.add.accumulate(t[0]), np.add.accumulate(x[0])),
                      (bz.add.reduceat(t[0], [0, 2]), np.add.reduceat(x[0], [0, 2]))]:
        assert isinstance(got, bz.Tensor)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    counts = bz.zeros(4)
    bz.add.at(counts, bz.asarray([0, 0, 3]), 1.0)  # repeated indices count twice, as NumPy's
    assert counts.numpy().tolist() == [2.0, 0.0, 0.0, 1.0]
    assert bz.add.nin == 2 and bz.add.identity == 0 and bz.exp.nout == 1
    assert bz.add(t, 1).numpy().tolist() == (x + 1).tolist() and bz.add.__name__ == "add"
    assert repr(bz.maximum) == "<braze ufunc 'maximum'>" and bz.invert(bz.asarray([1])).numpy().tolist() == [-2]


def test_ufuncs_pickle_by_name():
    import pickle
    for f in (bz.exp, bz.add, bz.bitwise_invert, bz.invert):
        assert pickle.loads(pickle.dumps(f)) is f
