"""Random numbers generated inside fused kernels: ``bz.random``.

A counter-based generator (Philox-4x32-10, Salmon, Moraes, Dror and Shaw,
"Parallel random numbers: as easy as 1, 2, 3", SC 2011; the generator of
cuRAND's ``curand_init``/``curand`` and Random123's ``philox4x32``): the
n-th random word is a pure function of (key, n). A draw is therefore
ordinary lazy ops over an ``arange`` of counters, with no state to carry
between elements, so it fuses with whatever consumes it (``x *
rng.normal(size=x.shape)`` is one kernel) and gives the same bits on every
backend, ISA and thread count. The words are 32-bit values held in int64
lanes; int64 arithmetic wraps mod 2**64, so the 32x32 -> 64-bit products
Philox needs are one int64 multiply each. docs/random.md has the design,
the stream layout and what is reproducible.

    rng = bz.random.default_rng(42)
    noise = rng.normal(size=(1024, 1024))            # lazy, float32
    y = x + 0.1 * rng.standard_normal(x.shape)        # one kernel with x

The default float dtype is braze's (float32), not NumPy's float64.
"""

import math
import operator

import numpy as np

from . import _core
from ._core import Tensor
from ._numpy_functions import normalized_axis

__all__ = ["Generator", "default_rng", "philox4x32", "seed", "random", "rand", "randn", "uniform", "normal",
           "standard_normal", "integers", "permutation", "choice", "shuffle", "randint"]

_MASK = 0xFFFFFFFF
_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # Philox-4x32's multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # its Weyl key increments
_ROUNDS = 10
_TWO64 = 1 << 64


def _bz():
    import braze  # the package imports this module first
    return braze


def _signed64(v):
    """A value mod 2**64 as the int64 that holds those bits (a scalar slot)."""
    v &= _TWO64 - 1
    return v - _TWO64 if v >> 63 else v


def _lo32(x):
    return x & _MASK


def _hi32(x):
    """Bits 32..63 of an int64 (its high word, unsigned): `>>` is arithmetic."""
    return (x >> 32) & _MASK


def _xor(words, lift=None):
    """The xor of words, the Python ints among them folded first into one
    constant (reduced to 32 bits), which ``lift`` turns into the operand a
    tensor is xored with (Note [Round constants])."""
    const = 0
    out = None
    for w in words:
        if isinstance(w, int):
            const ^= w & _MASK
        else:
            out = w if out is None else out ^ w
    if out is None:
        return const
    return out ^ (const if lift is None else lift(const))


# Note [Dirty words]
# A word is a Python int in [0, 2**32) or an int64 tensor whose low 32 bits
# are the word and whose high 32 bits are whatever the ops left there: the
# product of two clean words is exact mod 2**64, its low half is the lo
# word and `p >> 32` (arithmetic, so sign bits above) its hi word. Only a
# multiply needs its operand clean, so each round masks just the two words
# it multiplies: 10 element-wise ops a round where masking every word would
# take 14. The generated kernel's body is capped at 128 ops
# (fusion/partition.h); Philox-4x32-10 over a draw's counters takes about
# 90, which leaves room for a Box-Muller transform and its consumer in the
# same kernel. Words that are Python ints (the key, the stream, the counter's
# high word) fold in Python: the first two rounds cost 8 ops, not 20.


# Note [Round constants]
# Where a round xors a tensor word with Python ints (its round key, and in
# the first rounds words of the stream and the counter), the ints fold into
# one constant: about 19 of them over ten rounds, a different set for every
# key. As Python numbers each would be a scalar parameter of the kernel
# (Note [Scalar parameters], runtime/lower.h), and the partitioner counts
# those against its 24 inputs a kernel may read (fusion/partition.h), so a
# draw would spill into a second kernel. Instead they are the elements of
# one small realized int64 tensor, read through 0-d views: one input
# however many, and the same program for every key. _philox runs twice:
# once on a stand-in counter (_Sink) that collects the constants, then on
# the counter tensor with each constant read from the table.


class _Sink:
    """A stand-in for a tensor word: every op on it gives it back."""

    def _op(self, other):
        return self

    __mul__ = __rmul__ = __rshift__ = __and__ = __rand__ = __xor__ = __rxor__ = __add__ = __radd__ = _op


def _philox(counter, key, rounds=_ROUNDS, lift=None):
    """Philox-4x32 on dirty words (Note [Dirty words]), Python ints (exact)
    or tensors; the counter's tensor words must be clean (they are
    multiplied in the first round unmasked). Returns dirty words. ``lift``
    maps each folded constant that meets a tensor to its operand (Note
    [Round constants]); None: the int itself."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0, k1 = _lo32(k0 + _W0), _lo32(k1 + _W1)
            c0, c2 = _lo32(c0), _lo32(c2)
        p0, p1 = c0 * _M0, c2 * _M1
        lo0 = _lo32(p0) if isinstance(p0, int) else p0
        lo1 = _lo32(p1) if isinstance(p1, int) else p1
        c0, c1, c2, c3 = _xor((p1 >> 32, c1, k0), lift), lo1, _xor((p0 >> 32, c3, k1), lift), lo0
    return c0, c1, c2, c3


def philox4x32(counter, key, rounds=_ROUNDS):
    """Philox-4x32 with ``rounds`` rounds (10: Philox-4x32-10).

    ``counter`` is four 32-bit words (c0 the least significant), ``key``
    two; each word a Python int or an int64 tensor holding values in
    [0, 2**32) (tensors broadcast). Returns the four output words, int64
    tensors (or Python ints where every input word is one) in [0, 2**32).
    Built from element-wise ops only, so it fuses with its inputs and
    consumers. Random123's known answers (kat_vectors):
    philox4x32((0, 0, 0, 0), (0, 0)) is 0x6627e8d5 0xe169c58d 0xbc57ac4c
    0x9b00dbd8.
    """
    words = []
    for w in (*counter, *key):
        if isinstance(w, Tensor):
            if w.dtype != np.int64:
                raise TypeError(f"philox4x32: tensor words must be int64 (holding 32-bit values), not {w.dtype}")
        else:
            w = operator.index(w)
            if not 0 <= w <= _MASK:
                raise ValueError(f"philox4x32: a word must be in [0, 2**32), not {w!r}")
        words.append(w)
    return tuple(_lo32(w) for w in _philox(words[:4], words[4:], rounds))


def _size_shape(size):
    if size is None:
        return ()
    shape = (operator.index(size),) if isinstance(size, (int, np.integer)) else tuple(operator.index(d) for d in size)
    if any(d < 0 for d in shape):
        raise ValueError(f"random: negative dimensions are not allowed (size={size!r})")
    return shape


def _float_dtype(dtype, what):
    bz = _bz()
    d = bz._as_dtype(bz.float32 if dtype is None else dtype)
    if d.kind != "f" and d != bz.bfloat16:
        raise ValueError(f"{what}: dtype must be a float dtype (float32, float64, float16, bfloat16), not {d.name}")
    return d


def _seed_key(seed):
    """The 64-bit Philox key of a seed: the seed itself for an int in
    [0, 2**64) (cuRAND's curand_init(seed): key = (low word, high word)),
    else 64 bits of NumPy's SeedSequence of it (None: fresh OS entropy)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        s = int(seed)
        if s < 0:
            raise ValueError(f"seed must be non-negative, not {s}")
        if s < _TWO64:
            return s
    words = np.random.SeedSequence(seed).generate_state(2, np.uint32)
    return int(words[0]) | int(words[1]) << 32


class Generator:
    """A Philox-4x32-10 stream: a 64-bit key, a 64-bit stream number and a
    counter (the number of 128-bit blocks used so far).

    Block b of the stream is philox4x32((b low, b high, stream low, stream
    high), (key low, key high)), and the stream's 32-bit words are each
    block's four words in order, blocks in order: the sequence cuRAND's
    ``curand()`` returns after ``curand_init(key, stream, 0)``. Every draw
    takes the next whole blocks (its size times the words each value needs,
    rounded up to a block) and advances ``counter``, so successive draws
    differ and a draw's values depend only on (key, stream, counter at the
    draw, its size, dtype and method). One exception keeps a draw's counter
    high word a constant: a draw that would straddle a multiple of 2**32
    blocks starts at that multiple instead (after 2**34 words). Draws are
    lazy tensors; the generator's state changes when the draw is recorded,
    not when it is realized.

    ``device`` (a braze extension to NumPy's signatures) places a draw's
    counters, so it fuses with tensors there; default: the current default
    device (``bz.device``).
    """

    def __init__(self, key=0, stream=0, counter=0):
        for name, v in (("key", key), ("stream", stream), ("counter", counter)):
            if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v < _TWO64):
                raise ValueError(f"Generator: {name} must be an int in [0, 2**64), not {v!r}")
        self.key, self.stream, self.counter = int(key), int(stream), int(counter)

    def __repr__(self):
        return f"Generator(Philox4x32-10, key={self.key:#x}, stream={self.stream}, counter={self.counter})"

    @property
    def state(self):
        """{"bit_generator", "key", "stream", "counter"}; assignable."""
        return {"bit_generator": "Philox4x32-10", "key": self.key, "stream": self.stream, "counter": self.counter}

    @state.setter
    def state(self, value):
        self.__init__(value["key"], value.get("stream", 0), value.get("counter", 0))

    def spawn(self, n_children):
        """``n_children`` generators with this key, on streams of their own
        (stream * 2**16 + 1 + i, mod 2**64), each at counter 0."""
        return [Generator(self.key, (self.stream * 65536 + 1 + i) % _TWO64) for i in range(n_children)]

    # --- the blocks ------------------------------------------------------

    def _take(self, n_blocks):
        """Reserves the next n_blocks blocks, within one multiple of 2**32
        blocks; returns the first one's number."""
        if n_blocks > 1 << 32:
            raise ValueError(f"a draw of {n_blocks} blocks ({4 * n_blocks} words) is over the 2**32 blocks one "
                             "draw can take; draw in parts")
        first = self.counter
        if (first & _MASK) + n_blocks > 1 << 32:
            first = (first | _MASK) + 1  # the next multiple of 2**32 (the counter's high word changes)
        if first + n_blocks > _TWO64:
            raise OverflowError("Generator: this stream's 2**64 blocks are used up; spawn() a new stream")
        self.counter = first + n_blocks
        return first

    def _blocks(self, n, per_block, device):
        """For a draw of n values, per_block (1, 2 or 4) values to a block:
        the four words of each value's block, dirty int64 tensors of shape
        (n,) (Note [Dirty words]), and the arange of the values."""
        shift = per_block.bit_length() - 1
        first = self._take(-(-n // per_block))
        i = _bz().arange(0, n, 1, "int64", device)
        c0 = (i >> shift) if shift else i
        # c0 + first's low word is below 2**32 (_take). The offset is a scalar
        # parameter, so the next draw replays this program; 2**32 above it
        # (masked off) keeps it from being 0, 1 or 2, which would be part of
        # the program's structure (Note [Scalar parameters], runtime/lower.h).
        c0 = (c0 + ((first & _MASK) + (1 << 32))) & _MASK
        s = self.stream
        counter = [c0, first >> 32, s & _MASK, s >> 32]
        key = (self.key & _MASK, self.key >> 32)
        table = self._round_constants(counter[1:], key, i.device)
        lifted = iter(range(len(table)))
        return _philox(counter, key, lift=lambda v: table[next(lifted)]), i

    def _round_constants(self, words, key, device):
        """The realized table of Note [Round constants] for counters with
        these (Python int) words 1..3 and this key, on `device`; cached."""
        cache_key = (tuple(words), key, device)
        cache = self.__dict__.setdefault("_tables", {})
        table = cache.get(cache_key)
        if table is None:
            consts = []
            _philox([_Sink(), *words], key, lift=lambda v: consts.append(v) or v)
            table = _bz().asarray(np.array(consts, dtype=np.int64), device=device).realize()
            if len(cache) >= 8:
                cache.clear()
            cache[cache_key] = table
        return table

    def _words(self, n, width, device):
        """n values of `width` (1, 2 or 4) consecutive words of the stream
        each: a list of `width` dirty int64 tensors of shape (n,)."""
        (w0, w1, w2, w3), i = self._blocks(n, 4 // width, device)
        if width == 4:
            return [w0, w1, w2, w3]
        if width == 2:
            odd = (i & 1) == 1
            return [_core.where(odd, w2, w0), _core.where(odd, w3, w1)]
        j = i & 3
        return [_core.where(j < 2, _core.where(j == 0, w0, w1), _core.where(j == 2, w2, w3))]

    # --- raw draws -------------------------------------------------------

    def random_raw(self, size=None, device=None):
        """The stream's next 32-bit words, as int64 values in [0, 2**32)."""
        shape = _size_shape(size)
        (w,) = self._words(math.prod(shape), 1, device)
        return _lo32(w).reshape(shape)

    def _uint64(self, n, device):
        """n 64-bit values (two words each, the first the low half) as the
        int64 with those bits."""
        lo, hi = self._words(n, 2, device)
        return _lo32(lo) | (hi << 32)

    # --- floats ----------------------------------------------------------

    def random(self, size=None, dtype=None, device=None):
        """Uniform floats in [0, 1): float32 from a word's top 24 bits times
        2**-24 (one word a value); float64 from 53 bits of two words (the
        second word's 32 above the first's top 21, NumPy's next_double of
        their 64-bit value); float16 and bfloat16 from a word's top 11 and
        8 bits. Every value is exact, so the bits are the same on every
        backend."""
        dtype = _float_dtype(dtype, "random")
        shape = _size_shape(size)
        return self._uniform01(math.prod(shape), dtype, device).reshape(shape)

    def _uniform01(self, n, dtype, device):
        bz = _bz()
        if dtype == bz.float64:
            lo, hi = self._words(n, 2, device)
            return _core.astype(_bits53(lo, hi), "float64") * 2.0 ** -53
        bits = {"float32": 24, "float16": 11}.get(dtype.name, 8)
        (w,) = self._words(n, 1, device)
        u = _core.astype((w >> (32 - bits)) & ((1 << bits) - 1), "float32") * 2.0 ** -bits
        return u if dtype == bz.float32 else _core.astype(u, dtype.name)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None, device=None):
        """low + (high - low) * random(): floats in [low, high) (high itself
        can come out of the rounding, as in NumPy). low and high may be
        tensors; size defaults to their broadcast shape."""
        dtype = _float_dtype(dtype, "uniform")
        shape = self._param_shape(size, low, high)
        u = self._uniform01(math.prod(shape), dtype, device).reshape(shape)
        if _is_number(low, 0.0) and _is_number(high, 1.0):
            return u
        return _core.astype(low + (high - low) * u, dtype.name)

    def standard_normal(self, size=None, dtype=None, device=None):
        """Standard normal floats by Box-Muller: a pair of uniforms u1 in
        (0, 1] and u2 in [0, 1) gives r = sqrt(-2 log u1) and t = 2 pi u2, and
        the pair's two values r cos t and r sin t (the second as r cos(t -
        pi/2), so that each element computes one trigonometric function).
        float32: one word a value (24-bit u1 and u2), |z| < 5.77; float64:
        two words a value (53-bit u1 and u2), |z| < 8.57; float16 and
        bfloat16 are float32's, rounded. The uniforms are exact on every
        backend; log, sqrt and cos are each backend's own, so values agree
        across backends to a few ulps, not bit for bit."""
        dtype = _float_dtype(dtype, "standard_normal")
        shape = _size_shape(size)
        return self._normal01(math.prod(shape), dtype, device).reshape(shape)

    def _normal01(self, n, dtype, device):
        bz = _bz()
        if dtype == bz.float64:
            # Two values to a block: words (0, 1) give u1, (2, 3) u2.
            (w0, w1, w2, w3), i = self._blocks(n, 2, device)
            u1 = (_core.astype(_bits53(w0, w1), "float64") + 1.0) * 2.0 ** -53  # (0, 1]
            quarter = (i & 1) << 51  # the second value's phase, pi / 2: a quarter of 2**53
            t = _core.astype(_bits53(w2, w3) - quarter, "float64") * (2 * math.pi * 2.0 ** -53)
            return _core.sqrt(_core.log(u1) * -2.0) * _core.cos(t)
        # Four values to a block: words (0, 1) give values 0 and 1, (2, 3) values 2 and 3.
        (w0, w1, w2, w3), i = self._blocks(n, 4, device)
        second = (i & 3) >= 2
        a, b = _core.where(second, w2, w0), _core.where(second, w3, w1)
        u1 = (_core.astype((a >> 8) & 0xFFFFFF, "float32") + 1.0) * 2.0 ** -24  # (0, 1]
        quarter = (i & 1) << 22
        t = _core.astype(((b >> 8) & 0xFFFFFF) - quarter, "float32") * (2 * math.pi * 2.0 ** -24)
        z = _core.sqrt(_core.log(u1) * -2.0) * _core.cos(t)
        return z if dtype == bz.float32 else _core.astype(z, dtype.name)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None):
        """loc + scale * standard_normal(); loc and scale may be tensors,
        size defaults to their broadcast shape."""
        dtype = _float_dtype(dtype, "normal")
        shape = self._param_shape(size, loc, scale)
        z = self._normal01(math.prod(shape), dtype, device).reshape(shape)
        if _is_number(loc, 0.0) and _is_number(scale, 1.0):
            return z
        return _core.astype(loc + scale * z, dtype.name)

    @staticmethod
    def _param_shape(size, *params):
        if size is not None:
            return _size_shape(size)
        shapes = [tuple(p.shape) for p in params if isinstance(p, (Tensor, np.ndarray))]
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()

    # --- integers --------------------------------------------------------

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False, device=None):
        """Integers in [low, high) ([low, high] with endpoint=True; high=None
        draws from [0, low)). One 64-bit draw (two words) a value, mapped by
        Lemire's multiply-shift: the high 64 bits of draw * range, computed
        from 32-bit halves. Without rejection it is not exactly uniform:
        each value's probability is within range / 2**64 (relative) of
        1 / range, below 2**-32 for ranges up to 2**32. low and high are
        Python ints (not tensors); dtype any integer dtype (int64 by
        default)."""
        bz = _bz()
        d = bz._as_dtype(dtype)
        if d.kind not in "iu":
            raise ValueError(f"integers: dtype must be an integer dtype, not {d.name}")
        if high is None:
            low, high = 0, low
        if isinstance(low, Tensor) or isinstance(high, Tensor):
            raise TypeError("integers: low and high must be Python ints, not tensors")
        low, high = operator.index(low), operator.index(high)
        top = high if endpoint else high - 1
        info = np.iinfo(d)
        if low > top:
            raise ValueError(f"integers: low >= high ({low} >= {high})" if not endpoint
                             else f"integers: low > high ({low} > {high})")
        if low < info.min or top > info.max:
            raise ValueError(f"integers: [{low}, {top}] is out of bounds for {d.name}")
        shape = _size_shape(size)
        r = top - low + 1  # 1 .. 2**64
        lo, hi = self._words(math.prod(shape), 2, device)
        x = (_lo32(lo) | (hi << 32)) if r == _TWO64 else _mulhi64(_lo32(lo), _lo32(hi), r)
        out = x + _signed64(low)
        return (out if d == bz.int64 else _core.astype(out, d.name)).reshape(shape)

    # --- permutations and choice ----------------------------------------

    def permutation(self, x, device=None):
        """A random permutation of arange(x) (x an int), or of x's rows (axis
        0 of a tensor or array): the argsort of random 64-bit keys. The keys
        are drawn lazily; the argsort realizes them and sorts on the host,
        and picking x's rows realizes x (docs/random.md)."""
        bz = _bz()
        if isinstance(x, (int, np.integer)):
            n = operator.index(x)
            if n < 0:
                raise ValueError("permutation: x must be non-negative")
            return bz.argsort(self._uint64(n, device))
        x = bz.asarray(x)
        if x.ndim == 0:
            raise ValueError("permutation: x must be an int or at least one-dimensional")
        return bz.take(x, self.permutation(x.shape[0], device=x.device), axis=0)

    def shuffle(self, x, axis=0):
        """NumPy's Generator.shuffle: x's slices along axis put in a random
        order, in place (x a tensor: the new values written into it as
        ``x[...] = v`` writes, so its views see them)."""
        bz = _bz()
        if not isinstance(x, Tensor):
            raise TypeError(f"shuffle: x must be a braze tensor, not {type(x).__name__} (NumPy shuffles its own arrays)")
        if x.ndim == 0:
            raise ValueError("shuffle: x must be at least one-dimensional")
        axis = normalized_axis(axis, x.ndim, "shuffle")
        x[...] = bz.take(x, self.permutation(x.shape[axis], device=x.device), axis=axis)

    def choice(self, a, size=None, replace=True, p=None, device=None):
        """Random picks from arange(a) (a an int) or from a's rows.

        replace=True without p: integers(0, n), lazy (picking rows of a
        tensor realizes). With p: float64 uniforms looked up in p's
        cumulative sum (p is read on the host; the lookup realizes the
        uniforms and runs on the host). replace=False: the first picks of a
        permutation; with p, the n keys Exponential(1) / p and the smallest
        of them (Efraimidis-Spirakis; p = 0 is never picked), sorted on the
        host."""
        bz = _bz()
        pop = None
        if isinstance(a, (int, np.integer)):
            n = operator.index(a)
            if n < 0:
                raise ValueError("choice: a must be non-negative")
        else:
            pop = bz.asarray(a)
            if pop.ndim == 0:
                raise ValueError("choice: a must be an int or at least one-dimensional")
            n = pop.shape[0]
            device = pop.device if device is None else device
        shape = _size_shape(size)
        m = math.prod(shape)
        if p is not None:
            pv = np.asarray(p.numpy() if isinstance(p, Tensor) else p, dtype=np.float64)
            if pv.shape != (n,):
                raise ValueError(f"choice: p must have shape ({n},), not {pv.shape}")
            if not (np.all(np.isfinite(pv)) and np.all(pv >= 0)):
                raise ValueError("choice: probabilities must be non-negative and finite")
            if abs(pv.sum() - 1.0) > math.sqrt(np.finfo(np.float64).eps):
                raise ValueError("choice: probabilities do not sum to 1")
        if m and n == 0:
            raise ValueError("choice: a cannot be empty unless no samples are taken")
        if not replace and m > n:
            raise ValueError("choice: cannot take a larger sample than the population when replace=False")
        if m == 0:
            idx = bz.zeros(0, "int64", device)
        elif replace and p is None:
            idx = self.integers(0, n, size=m, device=device)
        elif replace:
            cdf = np.cumsum(pv)
            cdf /= cdf[-1]
            u = self.random(m, dtype="float64", device=device)
            idx = bz.asarray(np.minimum(np.searchsorted(cdf, u.numpy(), side="right"), n - 1), device=device)
        elif p is None:
            idx = self.permutation(n, device=device)[:m]
        else:
            if np.count_nonzero(pv) < m:
                raise ValueError("choice: fewer non-zero entries in p than size")
            lo, hi = self._words(n, 2, device)
            u = (_core.astype(_bits53(lo, hi), "float64") + 1.0) * 2.0 ** -53  # (0, 1]
            keys = -_core.log(u) / bz.asarray(pv, device=device)  # p = 0: +inf, last
            idx = bz.argsort(keys)[:m]
        idx = idx.reshape(shape)
        return idx if pop is None else bz.take(pop, idx, axis=0)


def _is_number(x, value):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == value


def _bits53(lo, hi):
    """The top 53 bits of the 64-bit value of two dirty words (hi:lo)."""
    return (_lo32(hi) << 21) | (_lo32(lo) >> 11)


def _mulhi64(xl, xh, r):
    """The high 64 bits of the 128-bit product x * r, x given as clean
    32-bit halves (tensors), r a Python int in [1, 2**64); below r. Each
    32x32 product fits 64 bits, wrapping in int64; sums wrap mod 2**64."""
    rl, rh = r & _MASK, r >> 32
    ll, hl = xl * rl, xh * rl
    if rh == 0:
        return _hi32(hl) + ((_hi32(ll) + _lo32(hl)) >> 32)
    lh, hh = xl * rh, xh * rh
    mid = _hi32(ll) + _lo32(hl) + _lo32(lh)  # below 3 * 2**32
    return hh + _hi32(hl) + _hi32(lh) + (mid >> 32)


def default_rng(seed=None):
    """A Generator seeded from ``seed``: an int in [0, 2**64) is the Philox
    key itself (as cuRAND's curand_init(seed, 0, 0)); None takes fresh
    entropy from the OS; anything else NumPy's SeedSequence takes (a larger
    int, a sequence of ints) is hashed by it to a 64-bit key. A Generator
    is returned as it is."""
    if isinstance(seed, Generator):
        return seed
    return Generator(_seed_key(seed))


# --- the module-level generator ---------------------------------------------

_global = None


def _rng():
    global _global
    if _global is None:
        _global = default_rng()
    return _global


def seed(seed=None):
    """Reseeds the generator behind the module-level functions."""
    global _global
    _global = default_rng(seed)


def random(size=None, dtype=None, device=None):
    return _rng().random(size, dtype, device)


def rand(*shape, dtype=None, device=None):
    """Uniform [0, 1) of shape ``shape`` (NumPy's legacy spelling)."""
    return _rng().random(shape, dtype, device)


def randn(*shape, dtype=None, device=None):
    """Standard normals of shape ``shape`` (NumPy's legacy spelling)."""
    return _rng().standard_normal(shape, dtype, device)


def uniform(low=0.0, high=1.0, size=None, dtype=None, device=None):
    return _rng().uniform(low, high, size, dtype, device)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, device=None):
    return _rng().normal(loc, scale, size, dtype, device)


def standard_normal(size=None, dtype=None, device=None):
    return _rng().standard_normal(size, dtype, device)


def integers(low, high=None, size=None, dtype="int64", endpoint=False, device=None):
    return _rng().integers(low, high, size, dtype, endpoint, device)


def permutation(x, device=None):
    return _rng().permutation(x, device)


def choice(a, size=None, replace=True, p=None, device=None):
    return _rng().choice(a, size, replace, p, device)


def shuffle(x):
    """NumPy's legacy shuffle: x's rows in a random order, in place."""
    _rng().shuffle(x)


def randint(low, high=None, size=None, dtype=int, device=None):
    """NumPy's legacy randint: integers in [low, high) (in [0, low) without
    high), int64 unless dtype says otherwise."""
    return _rng().integers(low, high, size, "int64" if dtype is int else dtype, False, device)
