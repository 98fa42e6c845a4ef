"""braze tensors as the chunks of Dask arrays (issue 27; docs/distributed.md).

``import braze`` never imports Dask; ``import braze.dask`` registers braze's
Tensor with it:

- as a Dask array chunk type (``dask.array.chunk_types``), with Dask's
  dispatch tables (concatenate, tensordot, take, numel, to_numpy) and
  ``dask.sizeof``, so Dask's ordinary API (element-wise ufuncs, broadcasting,
  the tree reductions, matmul, where, concatenate, rechunk, slicing) runs
  braze's ops on each chunk, lazily: a chain of blockwise steps that Dask
  fuses into one task is one braze kernel per chunk;
- with distributed's "dask" serialization family (tensors in a task graph,
  as ``da.from_array(tensor)`` puts them, go by braze's own pickling):
  Note [Chunks travel realized].

Every process that holds braze chunks must import this module: the client
does by using it, workers by ``setup(client)`` (a worker plugin that also
reaches workers started later, a restarted one included) or by
``dask worker --preload braze.dask``.
"""

import dask
import dask.array as da
import numpy as np
from dask.array import dispatch as _dispatch
from dask.array.backends import _numel_arraylike
from dask.array.chunk_types import register_chunk_type
from dask.sizeof import sizeof as _sizeof

import braze as bz

__all__ = ["from_dask", "from_array", "to_numpy", "meta", "setup", "stats", "reset_stats"]


def meta(dtype=bz.float32, ndim=0):
    """The ``_meta`` of a Dask array of braze chunks: an empty tensor."""
    return bz.zeros([0] * ndim, dtype)


def _to_tensor(block):
    return bz.asarray(block)


def from_dask(arr):
    """``arr`` (a Dask array of any chunk type braze reads: NumPy, braze)
    with braze tensors as its chunks. Each chunk is converted inside the
    task that makes it, so what follows fuses with the conversion."""
    dtype = bz._as_dtype(arr.dtype)  # a ValueError naming braze's dtypes where it has not this one
    return arr.map_blocks(_to_tensor, dtype=dtype, meta=meta(dtype, arr.ndim))


def from_array(x, chunks="auto", name=None):
    """A Dask array of braze chunks holding ``x`` (a braze tensor, or what
    ``bz.asarray`` takes). A tensor goes into the task graph as its realized
    values (it is shipped to a worker once); each chunk is a view of it."""
    x = bz.asarray(x)
    return da.from_array(x, chunks=chunks, name=name, asarray=False, meta=meta(x.dtype, x.ndim))


def to_numpy(arr):
    """``arr`` (braze chunks) with writable NumPy arrays as its chunks
    (``arr.to_backend("numpy")`` does the same)."""
    return arr.map_blocks(np.array, meta=np.empty((0,) * arr.ndim, arr.dtype))


# --- Dask's registries ----------------------------------------------------


register_chunk_type(bz.Tensor)
_dispatch.concatenate_lookup.register(bz.Tensor, bz.concatenate)
_dispatch.tensordot_lookup.register(bz.Tensor, bz.tensordot)
_dispatch.take_lookup.register(bz.Tensor, bz.take)
_dispatch.numel_lookup.register(bz.Tensor, _numel_arraylike)  # np.full_like(chunk, shape=...), as for CuPy
_dispatch.to_numpy_dispatch.register(bz.Tensor, lambda x, **kwargs: np.array(x))
_sizeof.register(bz.Tensor, lambda t: t.size * t.dtype.itemsize)


@dask.base.normalize_token.register(bz.Tensor)
def _tokenize(t):
    """A tensor in a task graph is named by its values, as an ndarray is."""
    return "braze.Tensor", t.device, dask.base.normalize_token(t.numpy())


# --- Serialization --------------------------------------------------------

# Note [Chunks travel realized]
# A tensor leaves its process as values, never as the lazy graph that
# computes it: the graph would drag its inputs along and be computed again
# on the other side. The sender realizes the tensor and hands its buffer to
# distributed as one frame, in place (``t.numpy()`` is braze's own storage,
# read-only, in C order; a transposed or sliced view is realized into its
# own storage first); the header carries braze's dtype name (bfloat16
# included), the shape and the device. The receiver copies the frame into
# braze's memory (bz.asarray copies all data from outside braze), on the
# device the tensor came from. Pickle (Tensor.__reduce__, in
# python/braze/__init__.py) sends the same realized values as an ndarray,
# which pickle protocol 5 passes out of band.


def _serialize(t):
    header = {"dtype": t.dtype.name, "shape": list(t.shape), "device": t.device}
    return header, [memoryview(t.numpy().reshape(-1).view(np.uint8))]


def _deserialize(header, frames):
    data = frames[0] if len(frames) == 1 else b"".join(frames)
    values = np.frombuffer(data, dtype=bz._as_dtype(header["dtype"])).reshape(header["shape"])
    return bz.asarray(values, device=header["device"])


try:
    from distributed.diagnostics.plugin import WorkerPlugin
    from distributed.protocol import dask_deserialize, dask_serialize
except ImportError:  # dask.array without distributed: its local schedulers need none of this
    WorkerPlugin = None
else:
    dask_serialize.register(bz.Tensor)(_serialize)
    dask_deserialize.register(bz.Tensor)(_deserialize)

    class _Registration(WorkerPlugin):
        """Unpickling this plugin on a worker imports braze.dask there,
        which is all the registration a worker needs."""

        name = "braze"


def setup(client):
    """Registers braze on ``client``'s workers, now and later ones (a
    worker the nanny restarts after a crash too). Returns ``client``."""
    if WorkerPlugin is None:
        raise ImportError("braze.dask.setup needs dask.distributed (pip install distributed)")
    client.register_plugin(_Registration(), name="braze")
    return client


def stats(client):
    """``bz.stats()`` of each of ``client``'s workers, by worker address."""
    return client.run(bz.stats)


def reset_stats(client):
    client.run(bz.reset_stats)
