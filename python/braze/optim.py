"""Optimizers over trees of parameters, updated in place as one program.

An optimizer holds ``params`` (nested dicts, lists and tuples of realized
float tensors: a model) and its state (realized tensors allocated once).
``update(params, grads, state)`` records the step as lazy ops and returns
``(new_params, new_state)``; ``step(grads)`` writes them into the
parameters' and the state's storage with one ``bz.assign``. With
``compile_step`` the loss, its gradients and the update are one program,
replayed every step with nothing allocated::

    opt = bz.optim.Adam(model, lr=1e-3)
    step = bz.optim.compile_step(loss_fn, opt)
    for x, y in batches:
        loss = step(x, y)   # loss_fn(model, x, y), realized

The formulas are PyTorch's (torch.optim.SGD, Adam, AdamW).
"""

import math

import numpy as np

from . import _core
from ._core import Tensor
from .autodiff import no_grad, tree_flatten, tree_unflatten, value_and_grad

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "compile_step"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _bz():
    import braze  # the package imports this module first
    return braze


def _paths(tree, prefix="params"):
    """The name of each leaf, in tree_flatten's order: params['w'][0]."""
    if isinstance(tree, dict):
        return [p for k in sorted(tree) for p in _paths(tree[k], f"{prefix}[{k!r}]")]
    if isinstance(tree, (list, tuple)):
        return [p for i, x in enumerate(tree) for p in _paths(x, f"{prefix}[{i}]")]
    return [prefix]


def _difference(names, grads, at="params"):
    """Where grads first differs in structure from params (given as the tree
    of their leaves' names), as a sentence; None if nowhere."""
    def kind(x, leaf):
        return type(x).__name__ if isinstance(x, (dict, list, tuple)) else leaf

    a, b = names, grads
    if isinstance(a, (dict, list, tuple)) or isinstance(b, (dict, list, tuple)):
        if type(a) is not type(b):
            return (f"{at} is a {kind(a, 'tensor')} in params but a {kind(b, type(b).__name__)} in grads")
        if isinstance(a, dict):
            if sorted(a, key=repr) != sorted(b, key=repr):
                missing = sorted(set(a) - set(b), key=repr)
                extra = sorted(set(b) - set(a), key=repr)
                return (f"{at} has keys {sorted(a, key=repr)} in params but {sorted(b, key=repr)} in grads"
                        + (f"; missing {missing}" if missing else "") + (f"; extra {extra}" if extra else ""))
            pairs = [(f"{at}[{k!r}]", a[k], b[k]) for k in sorted(a)]
        else:
            if len(a) != len(b):
                return f"{at} has {len(a)} entries in params but {len(b)} in grads"
            pairs = [(f"{at}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b))]
        for where, x, y in pairs:
            d = _difference(x, y, where)
            if d:
                return d
    return None


def _zeros_like(p):
    return _bz().zeros(p.shape, p.dtype, device=p.device).realize()


def _assign(targets, values):
    """bz.assign(targets, values) as one program, leaving out a value that
    is its own target (nothing to write)."""
    ts, vs = [], []
    for t, v in zip(targets, values):
        if v is not t:
            ts.append(t)
            vs.append(v)
    if ts:
        _core.assign(ts, vs)


class Optimizer:
    """The base of the optimizers: holds ``params`` (a tree of realized
    float tensors, updated in place) and ``state`` (a tree of realized
    tensors), and the learning rate ``lr``.

    A subclass defines ``init_state(params)`` (the initial state, realized)
    and ``update(params, grads, state)`` (lazy ops, no side effects).
    """

    def __init__(self, params, lr):
        bz = _bz()
        leaves, self._structure = tree_flatten(params)
        names = _paths(params)
        if not leaves:
            raise ValueError(f"{type(self).__name__}: params holds no tensors")
        for name, p in zip(names, leaves):
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: {name} is a {type(p).__name__}, not a braze tensor")
            if p.dtype.name not in _FLOATS:
                raise TypeError(f"{type(self).__name__}: {name} is {p.dtype.name}; only float tensors "
                                f"({', '.join(_FLOATS)}) can be optimized")
            if p.device != leaves[0].device:
                raise ValueError(f"{type(self).__name__}: {names[0]} is on {leaves[0].device} but {name} on "
                                 f"{p.device}; one optimizer updates the tensors of one device")
        seen = {}
        for name, p in zip(names, leaves):
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: {seen[id(p)]} and {name} are the same tensor")
            seen[id(p)] = name
        pending = [p for p in leaves if not p.is_realized]
        if pending:
            bz.realize(*pending)
        self.params = params
        self.device = leaves[0].device
        self._names = names
        # The learning rate is a realized 0-d tensor, a program input, and
        # not a Python number: numbers such as 0, 1 and 2 are part of a
        # program's structure (Note [Scalar parameters], runtime/lower.h),
        # so a schedule passing through them would compile new programs.
        # float64, cast to each parameter's dtype where it is used.
        self._lr = bz.asarray(np.float64(0.0), device=self.device)
        self.lr = lr
        self.state = self.init_state(params)
        for t in tree_flatten(self.state)[0]:
            if not t.is_realized:
                t.realize()  # a subclass's lazy state: it needs storage to be written into

    @property
    def lr(self):
        """The learning rate; setting it between steps never recompiles."""
        return self._lr_value

    @lr.setter
    def lr(self, value):
        value = float(value)
        if not value >= 0:
            raise ValueError(f"{type(self).__name__}: invalid learning rate {value}")
        self._lr_value = value
        _bz().copyto(self._lr, np.float64(value))

    def init_state(self, params):
        """The initial state for ``params``: a tree of realized tensors."""
        return {}

    def update(self, params, grads, state):
        """``(new_params, new_state)``: one step as lazy tensors, trees
        shaped like ``params`` and ``state``."""
        raise NotImplementedError

    def step(self, grads):
        """One step in place: ``update`` evaluated into the storage of the
        parameters and the state, as one program."""
        targets, values = self._step_values(grads)
        _assign(targets, values)

    # --- helpers -------------------------------------------------------------------

    def _step_values(self, grads):
        """(targets, values): params and state leaves, and their new values."""
        grads = self._check_grads(grads)
        with no_grad():  # an update is a value, never differentiated
            new_params, new_state = self.update(self.params, grads, self.state)
        targets = tree_flatten(self.params)[0] + tree_flatten(self.state)[0]
        values = tree_flatten(new_params)[0] + tree_flatten(new_state)[0]
        if len(values) != len(targets):
            raise ValueError(f"{type(self).__name__}.update returned {len(values)} tensors for {len(targets)} "
                             "parameters and state tensors")
        return targets, values

    def _check_grads(self, grads):
        """grads as a tree of tensors shaped and typed like the parameters."""
        leaves, structure = tree_flatten(grads)
        if structure != self._structure:
            d = _difference(tree_unflatten(self._structure, self._names), grads)
            raise ValueError(f"{type(self).__name__}: grads do not match params: "
                             f"{d or 'their structures differ'}")
        bz = _bz()
        out = []
        for name, p, g in zip(self._names, tree_flatten(self.params)[0], leaves):
            if g is None:
                raise TypeError(f"{type(self).__name__}: the gradient of {name} is None")
            if not isinstance(g, Tensor):
                g = bz.asarray(g, dtype=p.dtype, device=p.device)
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError(f"{type(self).__name__}: the gradient of {name} has shape {tuple(g.shape)} "
                                 f"but the parameter {tuple(p.shape)}")
            out.append(g if g.dtype == p.dtype else g.astype(p.dtype))
        return tree_unflatten(structure, out)

    def _hyper(self):
        """A function of a dtype giving the learning rate in that dtype, cast
        once per dtype for one update."""
        cache = {}

        def lr(dtype):
            if dtype not in cache:
                cache[dtype] = self._lr if dtype == self._lr.dtype else self._lr.astype(dtype)
            return cache[dtype]

        return lr

    def __repr__(self):
        return f"{type(self).__name__}(lr={self.lr}, {len(self._names)} parameter tensors)"


def _leaves(tree):
    return tree_flatten(tree)[0]


class SGD(Optimizer):
    """Stochastic gradient descent, as torch.optim.SGD with dampening 0::

        g = grad + weight_decay * p
        buf = momentum * buf + g                  (momentum > 0)
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    """

    def __init__(self, params, lr, momentum=0.0, nesterov=False, weight_decay=0.0):
        if not momentum >= 0:
            raise ValueError(f"SGD: invalid momentum {momentum}")
        if not weight_decay >= 0:
            raise ValueError(f"SGD: invalid weight_decay {weight_decay}")
        if nesterov and momentum == 0:
            raise ValueError("SGD: nesterov momentum needs momentum > 0")
        self.momentum, self.nesterov, self.weight_decay = float(momentum), bool(nesterov), float(weight_decay)
        super().__init__(params, lr)

    def init_state(self, params):
        # A zero buffer gives PyTorch's first step (buf = g) exactly, since
        # momentum * 0 + g = g with no dampening.
        if self.momentum == 0:
            return {}
        return {"momentum_buffer": tree_unflatten(tree_flatten(params)[1], [_zeros_like(p) for p in _leaves(params)])}

    def update(self, params, grads, state):
        lr = self._hyper()
        ps, structure = tree_flatten(params)
        gs = _leaves(grads)
        bufs = _leaves(state["momentum_buffer"]) if self.momentum else [None] * len(ps)
        new_ps, new_bufs = [], []
        for p, g, buf in zip(ps, gs, bufs):
            if self.weight_decay:
                g = g + self.weight_decay * p
            if self.momentum:
                buf = self.momentum * buf + g
                new_bufs.append(buf)
                g = g + self.momentum * buf if self.nesterov else buf
            new_ps.append(p - lr(p.dtype) * g)
        new_state = {"momentum_buffer": tree_unflatten(structure, new_bufs)} if self.momentum else {}
        return tree_unflatten(structure, new_ps), new_state


class Adam(Optimizer):
    """Adam (Kingma and Ba), as torch.optim.Adam: weight decay is an L2
    term added to the gradient. With ``t`` the step (from 1)::

        g = grad + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    The state holds ``t`` (a float32 0-d tensor) beside ``exp_avg`` (m) and
    ``exp_avg_sq`` (v), so the bias corrections are computed in the program
    and no step compiles anew.
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        name = type(self).__name__
        beta1, beta2 = (float(b) for b in betas)
        for i, b in enumerate((beta1, beta2)):
            if not 0 <= b < 1:
                raise ValueError(f"{name}: invalid beta parameter at index {i}: {b} (0 <= beta < 1)")
        if not eps >= 0:
            raise ValueError(f"{name}: invalid epsilon {eps}")
        if not weight_decay >= 0:
            raise ValueError(f"{name}: invalid weight_decay {weight_decay}")
        self.betas, self.eps, self.weight_decay = (beta1, beta2), float(eps), float(weight_decay)
        super().__init__(params, lr)

    def init_state(self, params):
        ps, structure = tree_flatten(params)
        # float32 counts steps exactly up to 2**24; by then both bias
        # corrections are 1 to float precision, so a count that stops
        # growing changes nothing.
        return {"t": _bz().asarray(np.float32(0), device=self.device),
                "exp_avg": tree_unflatten(structure, [_zeros_like(p) for p in ps]),
                "exp_avg_sq": tree_unflatten(structure, [_zeros_like(p) for p in ps])}

    def update(self, params, grads, state):
        beta1, beta2 = self.betas
        lr = self._hyper()
        ps, structure = tree_flatten(params)
        gs, ms, vs = _leaves(grads), _leaves(state["exp_avg"]), _leaves(state["exp_avg_sq"])
        t = state["t"] + 1
        factors = {}

        def corrections(dtype):
            # (lr / (1 - beta1**t), sqrt(1 - beta2**t)) in the parameters'
            # dtype. 1 - beta**t is taken as -expm1(t * log(beta)): as
            # written it cancels (in float32, 1 - 0.999 is off by 1e-5
            # relative), while log(beta) is taken in double here and expm1
            # is accurate to rounding. beta = 0: log 0 = -inf, correction 1.
            if dtype not in factors:
                td = t.astype(dtype)
                bc1 = -_bz().expm1(td * _log(beta1))
                bc2 = -_bz().expm1(td * _log(beta2))
                factors[dtype] = (lr(dtype) / bc1, _bz().sqrt(bc2))
            return factors[dtype]

        new_ps, new_ms, new_vs = [], [], []
        for p, g, m, v in zip(ps, gs, ms, vs):
            step_size, bc2_sqrt = corrections(p.dtype)
            if self.weight_decay:
                if self._decoupled:
                    p = p * (1 - lr(p.dtype) * self.weight_decay)
                else:
                    g = g + self.weight_decay * p
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * (g * g)
            new_ps.append(p - step_size * (m / (_bz().sqrt(v) / bc2_sqrt + self.eps)))
            new_ms.append(m)
            new_vs.append(v)
        new_state = {"t": t, "exp_avg": tree_unflatten(structure, new_ms),
                     "exp_avg_sq": tree_unflatten(structure, new_vs)}
        return tree_unflatten(structure, new_ps), new_state


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as
    torch.optim.AdamW: first ``p = p * (1 - lr * weight_decay)``, then
    Adam's step on the plain gradient."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


def _log(beta):
    return math.log(beta) if beta > 0 else -math.inf


def _is_setting(v):
    """A number (or a tuple of them) an optimizer's update is recorded with."""
    if isinstance(v, tuple):
        return all(_is_setting(x) for x in v)
    return isinstance(v, (bool, int, float, str))


def compile_step(loss_fn, optimizer, has_aux=False):
    """A training step as one program: ``step(*batch)`` computes
    ``loss_fn(optimizer.params, *batch)``, its gradient with respect to the
    parameters and the optimizer's update, and writes the new parameters,
    the new state and the loss with a single ``bz.assign``. From the second
    call on (same batch shapes and dtypes) it replays the cached program and
    allocates nothing.

    Returns the loss as a realized tensor: the same buffer every call,
    overwritten by the next one, so read it (``float(loss)``) before the
    next step or copy it. With ``has_aux``, ``loss_fn`` returns ``(loss,
    aux)`` and ``step`` returns ``(loss, aux)``, aux's tensors realized into
    buffers of their own in the same program.

    Tensor arguments still lazy are realized first (as ``bz.jit`` does), so
    the step's program does not depend on how the batch was built.

    Like ``jax.jit``, the step is traced: ``loss_fn`` and the update are
    recorded on the first call, and a later call with the same tensors (new
    values written into them with ``bz.copyto``, as the examples do) and
    the same other arguments evaluates that recording again without calling
    ``loss_fn``, which saves recording the forward, the backward and the
    update in Python every step (half of a small model's step). New tensor
    objects, other arguments or changed optimizer settings record anew.
    """
    vg = value_and_grad(loss_fn, has_aux=has_aux)
    buffers = {}  # position among the loss and aux's leaves -> the realized tensor it is written into
    traced = {}  # "key": what the recording depends on; "targets", "values": what to assign again; "result"

    def buffer(i, value):
        b = buffers.get(i)
        if b is None or b.shape != value.shape or b.dtype != value.dtype or b.device != value.device:
            b = buffers[i] = _bz().asarray(np.zeros(value.shape, value.dtype), device=value.device)
        return b

    def key(batch, kwargs):
        """What a recording depends on, or None if that cannot be told
        (an argument that is not hashable). Tensors count by the value
        recorded in them (x += y rebinds x), kept alive by the recording."""
        def part(a):
            return ("tensor", a._node_id()) if isinstance(a, Tensor) else ("value", type(a), a)
        settings = tuple(sorted((k, v) for k, v in vars(optimizer).items()
                                if k != "_lr_value" and _is_setting(v)))
        k = (tuple(map(part, batch)), tuple(sorted((n, part(a)) for n, a in kwargs.items())), settings,
             tuple(p._node_id() for p in tree_flatten(optimizer.params)[0] + tree_flatten(optimizer.state)[0]))
        try:
            hash(k)
        except TypeError:
            return None
        return k

    def step(*batch, **kwargs):
        pending = [a for a in (*batch, *kwargs.values()) if isinstance(a, Tensor) and not a.is_realized]
        if pending:
            _core.realize(pending)
        k = key(batch, kwargs)
        if k is not None and traced.get("key") == k:
            _assign(traced["targets"], traced["values"])
            return traced["result"]
        traced.clear()
        out, grads = vg(optimizer.params, *batch, **kwargs)
        loss, aux = out if has_aux else (out, None)
        targets, values = optimizer._step_values(grads)
        # Nothing outside the program needs the gradients: let them go
        # before it runs, so it never writes them out as held values
        # (Note [Held values are kept], runtime/lower.h).
        del out, grads
        aux_leaves, aux_structure = tree_flatten(aux)
        outputs = [loss] + aux_leaves
        results = [buffer(i, v) if isinstance(v, Tensor) else v for i, v in enumerate(outputs)]
        for v, r in zip(outputs, results):
            if isinstance(v, Tensor):
                targets.append(r)
                values.append(v)
        _assign(targets, values)
        result = (results[0], tree_unflatten(aux_structure, results[1:])) if has_aux else results[0]
        if k is not None:
            # The arguments stay referenced by the recording, so their ids in the key stay theirs.
            traced.update(key=k, targets=targets, values=values, result=result, arguments=(batch, kwargs))
        return result

    return step
