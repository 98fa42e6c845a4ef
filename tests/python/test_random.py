"""bz.random (python/braze/random.py, docs/random.md): Philox-4x32-10 built
from braze's element-wise int64 ops.

The bits are checked against Random123's known-answer vectors and against
an independent NumPy (uint64) implementation of the stream layout written
here; NumPy's own np.random.Philox is Philox-4x64-10 (64-bit words, other
multipliers), so its raw output is a different generator and not a
reference. The distributions are checked statistically, the fusion by the
kernel count, and reproducibility across ISAs, thread counts and the CUDA
backend (host emulation; a GPU where there is one) bit for bit where the
arithmetic is exact.
"""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import braze as bz

REFERENCE = os.environ.get("BRAZE_BACKEND") == "reference"  # no programs, no kernels to count
counts_kernels = pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference launches no kernels")
BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))
U64 = np.uint64
MASK = U64(0xFFFFFFFF)


# --- an independent reference: Philox-4x32-10 on NumPy uint64 ---------------------------


def np_philox(counter, key):
    """Philox-4x32-10 (Salmon et al. 2011, Random123's philox4x32_R(10)) on
    uint64 arrays holding 32-bit words."""
    c = [np.asarray(w, dtype=U64) & MASK for w in counter]
    k0, k1 = U64(key[0]), U64(key[1])
    for r in range(10):
        if r:
            k0, k1 = (k0 + U64(0x9E3779B9)) & MASK, (k1 + U64(0xBB67AE85)) & MASK
        p0, p1 = c[0] * U64(0xD2511F53), c[2] * U64(0xCD9E8D57)  # < 2**64: exact
        c = [(p1 >> U64(32)) ^ c[1] ^ k0, p1 & MASK, (p0 >> U64(32)) ^ c[3] ^ k1, p0 & MASK]
    return c


def np_stream(key, first_block, n_words, stream=0):
    """Words first_block*4 ... of the stream: block b = philox((b lo, b hi,
    stream lo, stream hi), (key lo, key hi)), its four words in order."""
    nb = -(-n_words // 4)
    b = np.arange(first_block, first_block + nb, dtype=U64)
    words = np_philox([b & MASK, b >> U64(32), np.full(nb, stream & 0xFFFFFFFF, U64), np.full(nb, stream >> 32, U64)],
                      (key & 0xFFFFFFFF, key >> 32))
    return np.stack(words, 1).reshape(-1)[:n_words]


def np_bits53(lo, hi):
    return ((hi << U64(21)) | (lo >> U64(11))).astype(np.float64)


# Random123 kat_vectors, philox4x32 10: counter, key, expected output.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


# --- the generator's bits -------------------------------------------------------------


@pytest.mark.parametrize("counter,key,expected", KAT)
def test_known_answers(counter, key, expected):
    assert tuple(int(w) for w in np_philox(counter, key)) == expected  # the reference is Philox
    assert bz.random.philox4x32(counter, key) == expected  # Python ints fold in Python
    # As tensors: every counter word a tensor, then the key too.
    words = [bz.full([5], w, "int64") for w in counter]
    got = bz.random.philox4x32(words, key)
    assert [w.numpy().tolist() for w in got] == [[e] * 5 for e in expected]
    got = bz.random.philox4x32(words, [bz.full([], k, "int64") for k in key])
    assert [w.numpy().tolist() for w in got] == [[e] * 5 for e in expected]


def test_philox_over_many_counters_matches_the_reference():
    rng = np.random.default_rng(7)
    counter = [rng.integers(0, 2**32, 4099, dtype=np.int64) for _ in range(4)]
    key = (0xDEADBEEF, 0x01234567)
    got = bz.random.philox4x32([bz.tensor(c) for c in counter], key)
    expected = np_philox(counter, key)
    for g, e in zip(got, expected):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g.numpy(), e.astype(np.int64))


def test_numpys_philox_is_another_generator():
    # Why the reference above is ours: np.random.Philox is Philox-4x64-10.
    assert np.random.Philox(key=0).state["state"]["counter"].dtype == np.uint64


@pytest.mark.parametrize("key,stream,counter",
                         [(0, 0, 0), (0x123456789ABCDEF0, 7, 5), (2**64 - 1, 2**64 - 1, 2**40 + 3)])
def test_raw_words_are_the_stream(key, stream, counter):
    g = bz.random.Generator(key, stream=stream, counter=counter)
    got = g.random_raw(4 * 251 + 3).numpy()
    np.testing.assert_array_equal(got, np_stream(key, counter, 4 * 251 + 3, stream).astype(np.int64))
    assert g.counter == counter + 252  # whole blocks
    np.testing.assert_array_equal(g.random_raw((2, 3)).numpy().reshape(-1),
                                  np_stream(key, counter + 252, 6, stream).astype(np.int64))


def test_a_draw_does_not_straddle_2_to_32_blocks():
    # It starts at the next multiple instead, so a draw's counter high word is one number.
    g = bz.random.Generator(5, counter=2**32 - 3)
    got = g.random_raw(20).numpy()
    np.testing.assert_array_equal(got, np_stream(5, 2**32, 20).astype(np.int64))
    assert g.counter == 2**32 + 5
    g = bz.random.Generator(5, counter=2**32 - 3)
    np.testing.assert_array_equal(g.random_raw(12).numpy(), np_stream(5, 2**32 - 3, 12).astype(np.int64))


def test_uniform_floats_are_exact_functions_of_the_words():
    key = 0xFEEDFACE12345
    w = np_stream(key, 0, 2000)
    got = bz.random.Generator(key).random(1000)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), (w[:1000] >> U64(8)).astype(np.float32) * np.float32(2.0**-24))
    got = bz.random.Generator(key).random(1000, dtype="float64")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), np_bits53(w[0::2], w[1::2]) * 2.0**-53)
    got = bz.random.Generator(key).random(1000, dtype="float16").numpy()
    np.testing.assert_array_equal(got, ((w[:1000] >> U64(21)).astype(np.float64) * 2.0**-11).astype(np.float16))
    got = bz.random.Generator(key).random(1000, dtype="bfloat16").numpy().astype(np.float64)
    np.testing.assert_array_equal(got, (w[:1000] >> U64(24)).astype(np.float64) * 2.0**-8)


def test_normals_are_box_muller_of_the_words():
    key = 99
    n = 10001
    w = np_stream(key, 0, n + 1).reshape(-1, 2)  # float32: a pair of words a pair of values
    u1 = ((w[:, 0] >> U64(8)).astype(np.float64) + 1) * 2.0**-24
    u2 = (w[:, 1] >> U64(8)).astype(np.float64) * 2.0**-24
    r = np.sqrt(-2 * np.log(u1))
    expected = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], 1).reshape(-1)[:n]
    got = bz.random.Generator(key).standard_normal(n)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=4e-6)
    w = np_stream(key, 0, 2 * (n + 1)).reshape(-1, 4)  # float64: a block a pair of values
    u1 = (np_bits53(w[:, 0], w[:, 1]) + 1) * 2.0**-53
    u2 = np_bits53(w[:, 2], w[:, 3]) * 2.0**-53
    r = np.sqrt(-2 * np.log(u1))
    expected = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], 1).reshape(-1)[:n]
    got = bz.random.Generator(key).standard_normal(n, dtype=np.float64)
    np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 1000003), (0, 2**40 + 17), (3, 3**39), (-2**63, 2**63 - 1), (7, 7)])
def test_integers_are_lemire_of_64_bit_draws(low, high):
    key = 0xC0FFEE
    got = bz.random.Generator(key).integers(low, high, 999, endpoint=True)
    assert got.dtype == np.int64
    w = np_stream(key, 0, 2 * 999)
    x = [int(a) | int(b) << 32 for a, b in zip(w[0::2], w[1::2])]
    r = high - low + 1
    expected = [(low + (v * r >> 64) + 2**63) % 2**64 - 2**63 for v in x]
    assert got.numpy().tolist() == expected


# --- state: same seed, same stream; draws differ ----------------------------------------


def test_same_seed_same_stream_and_successive_draws_differ():
    a, b = bz.random.default_rng(1234), bz.random.default_rng(1234)
    x1, y1 = a.random(1000).numpy(), b.random(1000).numpy()
    np.testing.assert_array_equal(x1, y1)
    x2 = a.random(1000).numpy()
    assert not np.array_equal(x1, x2) and np.mean(x1 == x2) < 0.01
    c = bz.random.default_rng(1235).random(1000).numpy()
    assert np.mean(x1 == c) < 0.01
    assert not np.array_equal(bz.random.default_rng().random(8).numpy(), bz.random.default_rng().random(8).numpy())


def test_the_state_is_key_stream_and_counter():
    g = bz.random.default_rng(42)
    assert g.state == {"bit_generator": "Philox4x32-10", "key": 42, "stream": 0, "counter": 0}
    g.normal(size=10)  # float32: 10 words, 3 blocks
    g.random(3, dtype=np.float64)  # 6 words, 2 blocks
    g.integers(0, 5, 4)  # 8 words, 2 blocks
    saved = g.state
    assert saved["counter"] == 7
    x = g.standard_normal(100).numpy()
    g.state = saved
    np.testing.assert_array_equal(g.standard_normal(100).numpy(), x)
    # A seed past 64 bits, or a sequence, goes through NumPy's SeedSequence.
    assert bz.random.default_rng(2**70).key == bz.random.default_rng(2**70).key < 2**64
    assert bz.random.default_rng([1, 2, 3]).key != bz.random.default_rng([1, 2, 4]).key
    assert bz.random.default_rng(g) is g


def test_spawned_streams_differ():
    kids = bz.random.default_rng(3).spawn(3)
    draws = [k.random_raw(64).numpy() for k in kids]
    assert len({d.tobytes() for d in draws}) == 3
    np.testing.assert_array_equal(draws[1], np_stream(3, 0, 64, stream=2).astype(np.int64))


def test_values_do_not_depend_on_the_shape():
    # A draw's i-th value is the same whether it is drawn flat, in a shape, or as a prefix.
    for method, kw in [("random", {}), ("standard_normal", {}), ("standard_normal", {"dtype": "float64"}),
                       ("integers", {"low": -3, "high": 1000})]:
        flat = getattr(bz.random.default_rng(8), method)(size=600, **kw).numpy()
        shaped = getattr(bz.random.default_rng(8), method)(size=(20, 30), **kw).numpy()
        prefix = getattr(bz.random.default_rng(8), method)(size=37, **kw).numpy()
        np.testing.assert_array_equal(shaped.reshape(-1), flat, err_msg=method)
        np.testing.assert_array_equal(prefix, flat[:37], err_msg=method)


# --- distributions ----------------------------------------------------------------------

N = 10**6


def ks_statistic(sample, cdf):
    s = np.sort(sample.astype(np.float64))
    f = cdf(s)
    i = np.arange(1, len(s) + 1)
    return max(np.max(i / len(s) - f), np.max(f - (i - 1) / len(s)))


def normal_cdf(x):
    from scipy.special import ndtr
    return ndtr(x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_moments_and_distribution(dtype):
    u = bz.random.default_rng(11).random(N, dtype=dtype).numpy().astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)  # var of (u - 1/2)^2 is 1/180
    # KS at the 0.1% level (critical value 1.95 / sqrt(N)).
    assert ks_statistic(u, lambda x: x) * math.sqrt(N) < 1.95
    # A histogram of 100 bins: chi-square, 99 degrees of freedom (0.1%: 148).
    counts = np.histogram(u, bins=100, range=(0, 1))[0]
    e = N / 100
    assert ((counts - e) ** 2 / e).sum() < 148


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_moments_and_distribution(dtype):
    z = bz.random.default_rng(12).standard_normal(N, dtype=dtype).numpy().astype(np.float64)
    assert np.all(np.isfinite(z))
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    assert abs((z**3).mean()) < 5 * math.sqrt(15 / N)
    assert abs((z**4).mean() - 3) < 5 * math.sqrt(96 / N)
    assert ks_statistic(z, normal_cdf) * math.sqrt(N) < 1.95
    edges = np.concatenate([[-np.inf], np.linspace(-4, 4, 81), [np.inf]])
    counts = np.histogram(z, bins=edges)[0]
    e = N * np.diff(normal_cdf(edges))
    assert ((counts - e) ** 2 / e).sum() < 131  # 81 degrees of freedom, 0.1%
    # The even and odd values (cos and sin of one pair) are uncorrelated.
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / math.sqrt(N / 2)


def test_uniform_and_normal_take_parameters():
    g = bz.random.default_rng(13)
    x = g.uniform(-2.0, 3.0, size=200000).numpy()
    assert x.dtype == np.float32 and x.min() >= -2 and x.max() <= 3 and abs(x.mean() - 0.5) < 0.02
    y = g.normal(10.0, 0.5, size=200000, dtype="float64").numpy()
    assert y.dtype == np.float64 and abs(y.mean() - 10) < 0.005 and abs(y.std() - 0.5) < 0.005
    loc = bz.tensor(np.array([0.0, 100.0, -100.0], np.float32))
    scale = bz.tensor(np.array([[1.0], [0.001]], np.float32))
    z = g.normal(loc, scale)  # size: the broadcast shape
    assert z.shape == (2, 3)
    z = z.numpy()
    np.testing.assert_allclose(z[1], [0.0, 100.0, -100.0], atol=0.01)
    assert g.normal(size=()).shape == () and g.random().shape == ()


def test_integers_bounds_and_every_value():
    g = bz.random.default_rng(14)
    x = g.integers(-3, 4, size=70000).numpy()
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 3
    counts = np.bincount(x + 3, minlength=7)
    e = 70000 / 7
    assert ((counts - e) ** 2 / e).sum() < 22.5  # 6 degrees of freedom, 0.1%
    y = g.integers(5, size=1000, endpoint=True).numpy()  # high=None: [0, 5]
    assert set(y.tolist()) == set(range(6))
    for dtype, lo, hi in [("int32", -2**31, 2**31 - 1), ("int8", -128, 127), ("uint8", 0, 255)]:
        z = g.integers(lo, hi, size=20000, dtype=dtype, endpoint=True)
        assert z.dtype == np.dtype(dtype)
        z = z.numpy()
        assert z.min() >= lo and z.max() <= hi
        if dtype != "int32":
            assert len(np.unique(z)) == hi - lo + 1
    big = g.integers(-2**63, 2**63 - 1, size=10000, endpoint=True).numpy()
    assert (big < 0).mean() == pytest.approx(0.5, abs=0.03)
    assert g.integers(7, 8, size=5).numpy().tolist() == [7] * 5


def test_integers_refuse_bad_bounds():
    g = bz.random.default_rng(0)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="out of bounds for uint8"):
        g.integers(-1, 10, dtype="uint8")
    with pytest.raises(ValueError, match="out of bounds for int64"):
        g.integers(0, 2**63 + 1)
    with pytest.raises(ValueError, match="integer dtype"):
        g.integers(0, 5, dtype="float32")
    with pytest.raises(ValueError, match="float dtype"):
        g.random(3, dtype="int64")


# --- permutation and choice -------------------------------------------------------------


def test_permutation_is_a_permutation():
    g = bz.random.default_rng(15)
    p = g.permutation(1000).numpy()
    assert sorted(p.tolist()) == list(range(1000))
    assert not np.array_equal(p, np.arange(1000))
    assert not np.array_equal(p, g.permutation(1000).numpy())
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    px = g.permutation(bz.tensor(x)).numpy()
    assert sorted(px[:, 0].tolist()) == x[:, 0].tolist()
    np.testing.assert_array_equal(px[:, 1] - px[:, 0], 1)
    assert g.permutation(0).numpy().shape == (0,)
    # Every position is uniform over the elements: the first of 4 elements over many draws.
    firsts = np.array([g.permutation(4).numpy()[0] for _ in range(400)])
    assert set(firsts.tolist()) == {0, 1, 2, 3}


def test_choice():
    g = bz.random.default_rng(16)
    x = g.choice(5, size=1000).numpy()
    assert set(x.tolist()) == set(range(5))
    p = [0.1, 0.0, 0.2, 0.7]
    y = g.choice(4, size=40000, p=p).numpy()
    counts = np.bincount(y, minlength=4)
    assert counts[1] == 0
    np.testing.assert_allclose(counts / 40000, p, atol=0.01)
    z = g.choice(10, size=(2, 5), replace=False).numpy()
    assert z.shape == (2, 5) and sorted(z.reshape(-1).tolist()) == list(range(10))
    w = g.choice(4, size=3, replace=False, p=p).numpy()
    assert sorted(w.tolist()) == [0, 2, 3]  # p = 0 is never picked
    firsts = np.bincount([g.choice(4, size=1, replace=False, p=p).numpy()[0] for _ in range(500)], minlength=4)
    assert firsts[1] == 0 and firsts[3] > firsts[2] > firsts[0]
    rows = g.choice(bz.tensor(np.array([[1, 2], [3, 4], [5, 6]])), size=4).numpy()
    assert rows.shape == (4, 2) and set(map(tuple, rows.tolist())) <= {(1, 2), (3, 4), (5, 6)}
    assert g.choice(3, size=0).numpy().shape == (0,)
    with pytest.raises(ValueError, match="larger sample"):
        g.choice(3, size=4, replace=False)
    with pytest.raises(ValueError, match="do not sum to 1"):
        g.choice(3, p=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="fewer non-zero"):
        g.choice(4, size=4, replace=False, p=p)


def test_module_level_functions():
    bz.random.seed(77)
    a = bz.random.rand(3, 4).numpy()
    b = bz.random.randn(5).numpy()
    bz.random.seed(77)
    np.testing.assert_array_equal(bz.random.rand(3, 4).numpy(), a)
    np.testing.assert_array_equal(bz.random.randn(5).numpy(), b)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert bz.random.uniform(1, 2, size=4).shape == (4,)
    assert bz.random.normal(size=(2, 2)).shape == (2, 2)
    assert bz.random.integers(0, 3, size=6).numpy().max() < 3
    assert bz.random.random(2, dtype="float64").dtype == np.float64
    assert sorted(bz.random.permutation(5).numpy().tolist()) == [0, 1, 2, 3, 4]


# --- fusion -----------------------------------------------------------------------------


def _launched(t):
    bz.reset_stats()
    t.realize()
    return bz.stats()["kernels_launched"]


@counts_kernels
def test_a_draw_fuses_with_its_consumer():
    x = bz.tensor(np.ones((64, 33), np.float32))
    x.realize()
    g = bz.random.default_rng(17)
    cases = {
        "normal": lambda: x * g.normal(size=x.shape),
        "normal float64": lambda: x * g.normal(size=x.shape, dtype="float64"),
        "normal with loc and scale": lambda: x + g.normal(1.0, 0.1, size=x.shape),
        "uniform": lambda: x * g.uniform(-1, 1, x.shape),
        "dropout": lambda: x * (g.random(x.shape) >= 0.1) * (1 / 0.9),
        "integers": lambda: x + g.integers(0, 7, x.shape),
        "wide integers": lambda: x + g.integers(-2**40, 2**62, x.shape),
    }
    for name, make in cases.items():
        assert _launched(make()) == 1, name
        bz.reset_stats()
        make().realize()  # the next draw: another counter, the same program
        s = bz.stats()
        assert s["kernels_launched"] == 1 and s["programs_replayed"] == 1 and s["programs_compiled"] == 0, (name, s)
    # Another seed is the same program too (its round constants are data).
    h = bz.random.default_rng(18)
    h.normal(size=x.shape)
    bz.reset_stats()
    (x * h.normal(size=x.shape)).realize()
    assert bz.stats()["programs_replayed"] == 1


# --- reproducibility across ISAs, thread counts and devices -----------------------------

PROGRAM = textwrap.dedent("""
    import json
    import numpy as np
    import braze as bz
    g = bz.random.default_rng(2024)
    out = {
        "raw": g.random_raw(1003).numpy().tolist(),
        "f32": g.random(1003).numpy().view(np.uint32).tolist(),
        "f64": g.random(1003, dtype="float64").numpy().tolist(),
        "int": g.integers(-10**12, 10**15, size=1003).numpy().tolist(),
        "n32": g.standard_normal(1003).numpy().astype(float).tolist(),
        "n64": g.standard_normal(1003, dtype="float64").numpy().tolist(),
    }
    print(json.dumps(out))
""")


def draws_in(**env_vars):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path)
    env.update(env_vars)
    r = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def assert_same_draws(got, want, what):
    for k in ("raw", "f32", "f64", "int"):  # exact arithmetic: the same bits
        assert got[k] == want[k], (what, k)
    # log, sqrt and cos are each backend's own: within a few ulps.
    np.testing.assert_allclose(got["n32"], want["n32"], rtol=0, atol=2e-6, err_msg=what)
    np.testing.assert_allclose(got["n64"], want["n64"], rtol=0, atol=1e-14, err_msg=what)


def test_the_same_draws_on_every_isa_thread_count_and_backend():
    base = draws_in(BRAZE_BACKEND="cpu")
    g = bz.random.default_rng(2024)  # this process's backend
    assert g.random_raw(1003).numpy().tolist() == base["raw"]
    settings = [{"BRAZE_BACKEND": "cpu", "BRAZE_NUM_THREADS": "1"}, {"BRAZE_BACKEND": "cpu", "BRAZE_NUM_THREADS": "3"},
                {"BRAZE_BACKEND": "reference"}]
    if "avx512f" in open("/proc/cpuinfo").read():
        settings.append({"BRAZE_BACKEND": "cpu", "BRAZE_CPU_ISA": "avx2"})
    for env in settings:
        assert_same_draws(draws_in(**env), base, env)


@pytest.mark.skipif(REFERENCE, reason="BRAZE_BACKEND=reference runs no device programs")
def test_the_same_draws_on_cuda(cuda_mode):
    g = bz.random.default_rng(2024)
    with bz.device("cuda"):
        h = bz.random.default_rng(2024)
        got = {"raw": h.random_raw(1003), "f32": h.random(1003), "f64": h.random(1003, dtype="float64"),
               "int": h.integers(-10**12, 10**15, size=1003), "n32": h.standard_normal(1003),
               "n64": h.standard_normal(1003, dtype="float64")}
    assert got["raw"].device.startswith("cuda")
    want = {"raw": g.random_raw(1003), "f32": g.random(1003), "f64": g.random(1003, dtype="float64"),
            "int": g.integers(-10**12, 10**15, size=1003), "n32": g.standard_normal(1003),
            "n64": g.standard_normal(1003, dtype="float64")}
    as_lists = lambda d: {k: (v.numpy().view(np.uint32) if k == "f32" else v.numpy()).tolist() for k, v in d.items()}
    assert_same_draws(as_lists(got), as_lists(want), "cuda")
    # Fused with a device tensor: one kernel there.
    x = bz.tensor(np.full(1003, 2.0, np.float32), device="cuda")
    y = x * bz.random.default_rng(2024).normal(size=1003, device="cuda")
    bz.reset_stats()
    y = y.numpy()
    assert bz.stats()["kernels_launched"] == 1
    np.testing.assert_allclose(y, 2 * bz.random.default_rng(2024).normal(size=1003).numpy(), rtol=0, atol=4e-6)
