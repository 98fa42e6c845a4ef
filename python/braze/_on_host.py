"""NumPy functions whose answers need work braze has no op for: the set
operations (``intersect1d``, ``setdiff1d``, ``setxor1d``, ``union1d``: a
sort and a compaction whose length only the values decide), the
polynomials (``polyfit`` is a least-squares solve, ``roots`` an
eigenvalue problem, ``polydiv`` a loop of deflations; ``polyadd``,
``polysub``, ``polymul``, ``polyder`` and ``polyint`` come along so that
a polynomial's coefficients keep one home), the histograms
(``histogramdd``, ``histogram_bin_edges``: counting is a scatter) and the
bit packing (``packbits``, ``unpackbits``: bit-level reshuffles of uint8).

They follow python/braze/_gather.py's rule: every tensor among the
operands (inside a list or tuple too: a list of bins, a sequence of
samples) is realized in one program, NumPy computes on the host values,
and the answer comes back as realized tensors (a tuple, or a list, of
them where NumPy returns one), in the dtype NumPy gives, which is the
operand's wherever NumPy keeps it. NumPy's errors keep their type and
name the function. FUNCTIONS lists the NumPy names.
"""

import numpy as np

from ._gather import _as_tensor
from ._more_numpy import _numpy, _values


def _tensor(op, arr, complex_why=None):
    """NumPy's array as a tensor. braze has no complex dtype (nor int16
    and the wider unsigned ints), so such a result is a TypeError naming
    op rather than a cast that would drop values."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        raise TypeError(f"{op}: {complex_why or 'the result is complex'} ({arr.dtype}), and braze has no complex "
                        f"dtype")
    try:
        return _as_tensor(arr)
    except ValueError as e:
        raise TypeError(f"{op}: NumPy's result has dtype {arr.dtype}, which braze has no equivalent for ({e})") \
            from None


def _result(op, out, complex_why=None):
    """NumPy's answer with every array in it a tensor: tuples (named ones
    too) and lists keep their shape; scalars (a rank, an rcond) and a
    poly1d (NumPy's answer when an operand is one) stay as NumPy gave them."""
    if isinstance(out, np.ndarray):
        return _tensor(op, out, complex_why)
    if isinstance(out, list):
        return [_result(op, o, complex_why) for o in out]
    if isinstance(out, tuple):
        parts = [_result(op, o, complex_why) for o in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return out


def _on_host(op, fn, *args, complex_why=None, **kwargs):
    """fn (NumPy's) on the realized values of args and kwargs (one program
    for every tensor among them), its answer as tensors."""
    values = _values(op, *args, *kwargs.values())
    host_args, host_kwargs = values[:len(args)], dict(zip(kwargs, values[len(args):]))
    return _result(op, _numpy(op, fn, *host_args, **host_kwargs), complex_why)


# --- set routines: sorted, unique values (NaNs as np.unique keeps them) ------------------------------------

def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """NumPy's intersect1d: the sorted values in both; with return_indices,
    also where each first occurs in ar1 and ar2 (int64)."""
    return _on_host("intersect1d", np.intersect1d, ar1, ar2, assume_unique=assume_unique,
                    return_indices=return_indices)


def setdiff1d(ar1, ar2, assume_unique=False):
    """NumPy's setdiff1d: the sorted unique values of ar1 not in ar2."""
    return _on_host("setdiff1d", np.setdiff1d, ar1, ar2, assume_unique=assume_unique)


def setxor1d(ar1, ar2, assume_unique=False):
    """NumPy's setxor1d: the sorted values in exactly one of the two."""
    return _on_host("setxor1d", np.setxor1d, ar1, ar2, assume_unique=assume_unique)


def union1d(ar1, ar2):
    """NumPy's union1d: the sorted unique values in either."""
    return _on_host("union1d", np.union1d, ar1, ar2)


# --- polynomials (coefficients, highest power first) --------------------------------------------------------

def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's polyfit (a least-squares solve): the coefficients; with
    full, also (residuals, rank, singular_values, rcond); with cov, the
    coefficients' covariance."""
    return _on_host("polyfit", np.polyfit, x, y, deg, rcond=rcond, full=full, w=w, cov=cov)


def roots(p):
    """NumPy's roots (the companion matrix's eigenvalues). Real roots come
    back as a real tensor, as NumPy returns them; complex ones are a
    TypeError, braze having no complex dtype."""
    return _on_host("roots", np.roots, p, complex_why="the polynomial has complex roots")


def polyder(p, m=1):
    """NumPy's polyder: the m-th derivative."""
    return _on_host("polyder", np.polyder, p, m)


def polyint(p, m=1, k=None):
    """NumPy's polyint: the m-th antiderivative, k its integration constants."""
    return _on_host("polyint", np.polyint, p, m, k)


def polyadd(a1, a2):
    """NumPy's polyadd."""
    return _on_host("polyadd", np.polyadd, a1, a2)


def polysub(a1, a2):
    """NumPy's polysub."""
    return _on_host("polysub", np.polysub, a1, a2)


def polymul(a1, a2):
    """NumPy's polymul (a full convolution of the coefficients)."""
    return _on_host("polymul", np.polymul, a1, a2)


def polydiv(u, v):
    """NumPy's polydiv: (quotient, remainder)."""
    return _on_host("polydiv", np.polydiv, u, v)


# --- histograms ---------------------------------------------------------------------------------------------

def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """NumPy's histogramdd: (H, edges), edges a list of tensors, one per
    dimension. sample is an (N, D) tensor or a sequence of D 1-D ones."""
    return _on_host("histogramdd", np.histogramdd, sample, bins=bins, range=range, density=density,
                    weights=weights)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """NumPy's histogram_bin_edges: the edges histogram would use (a count,
    a sequence of edges, or an estimator's name such as 'auto')."""
    return _on_host("histogram_bin_edges", np.histogram_bin_edges, a, bins=bins, range=range, weights=weights)


# --- bit packing ----------------------------------------------------------------------------------------------

def packbits(a, /, axis=None, bitorder="big"):
    """NumPy's packbits: bools or integers (nonzero is a 1 bit), eight to a
    uint8, along axis (the flattened values by default)."""
    return _on_host("packbits", np.packbits, a, axis=axis, bitorder=bitorder)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """NumPy's unpackbits: each uint8 as eight 0/1 uint8 values."""
    return _on_host("unpackbits", np.unpackbits, a, axis=axis, count=count, bitorder=bitorder)


# Functions NumPy's __array_function__ hands to braze (python/braze/_numpy_protocols.py).
FUNCTIONS = ["intersect1d", "setdiff1d", "setxor1d", "union1d", "polyfit", "roots", "polyder", "polyint", "polyadd",
             "polysub", "polymul", "polydiv", "histogramdd", "histogram_bin_edges", "packbits", "unpackbits"]
UFUNCS = []
__all__ = FUNCTIONS + UFUNCS
