"""Training steps (issue 23): the time of one step (forward, gradients, Adam
update, loss) of four models, braze (bz.optim.compile_step: the step is one
program, replayed) beside PyTorch eager, torch.compile and JAX (jax.jit of
the step with optax's Adam) in one process: the same model, initial weights,
batch and optimizer (Adam, lr 1e-3) everywhere.

- mlp: examples/train_mlp.py's 64-128-10 MLP (relu), batch 64;
- mlp_large: 784-512-256-10 (relu), batch 256;
- cnn: examples/train_cnn.py's CNN (conv 3x3 1->16, relu, 2x2 max pool,
  conv 3x3 16->32, relu, pool, linear 128->10) on 8x8 images, batch 64;
- lm: examples/train_lm.py's character transformer (2 pre-norm blocks,
  width 64, 4 heads, MLP 256, context 64, tied embedding), batch 16
  windows of its text.

Data are random from a fixed seed (the lm's are windows of its text), one
batch already in each system's own tensors, so a step is the step alone.
braze's model is the examples' code; each peer's is written here as a user
of that framework writes it (PyTorch: F.max_pool2d, F.embedding, fused Adam,
its fastest on the CPU; torch.compile: the loss function compiled,
backward through AOTAutograd, the same fused Adam; JAX: the whole step
jitted, parameters and optimizer state donated). Every system's loss at
the first step (the same weights and batch) is printed beside braze's: a
difference above float rounding would mean a different model.

Timing: a warm-up of a few steps (compilation: braze's first step,
torch.compile's and jax.jit's are printed), then ROUNDS rounds (BENCH_REPS,
default 7; --quick 3) in turn, each running every system for a few steps
(about 30 ms); ms per step as the best and the median round, and braze's
speedup over each peer from the best. For braze, per step: kernels launched
(fused kernels and library calls: bz.explain of the step's graph says
which are library calls), programs replayed, allocations, and the arena of
the step's program (a step whose graph is deeper than the lazy depth limit
is realized in pieces while it is recorded: the line says so).

braze sets OMP_WAIT_POLICY=PASSIVE at import, which PyTorch's OpenMP
threads in this process obey too; so PyTorch eager is timed once more in a
child process that never imports braze, with the environment as it was
before braze set it (the summary's "torch alone") and once more with
PASSIVE (what the policy alone does), each printed beside the figure taken
here. The child runs after the rounds, not in turn with them: on a busy
machine its figure swings far more than the in-turn ones.

Run: PYTHONPATH=build/python python bench/training.py [--quick] [--models mlp,cnn] [--no-compile] [--no-child]
"""
import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# braze sets OMP_WAIT_POLICY at import when it is unset: the child process
# that times PyTorch alone gets the environment as it was before.
_OMP_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
MODELS = ("mlp", "mlp_large", "cnn", "lm")
LR = 1e-3
TARGET_SECONDS = 0.03  # steps per timed call: enough for about this long


# --- the workloads ------------------------------------------------------------------


def uniform_init(rng, shape, fan_in):
    bound = 1 / math.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def mlp_workload(name, sizes, batch, rng):
    """PyTorch's nn.Linear initialisation, as train_mlp.py's init_params."""
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        params[f"w{i}"] = uniform_init(rng, (n_in, n_out), n_in)
        params[f"b{i}"] = uniform_init(rng, n_out, n_in)
    x = rng.random((batch, sizes[0]), dtype=np.float32)
    y = rng.integers(0, sizes[-1], batch).astype(np.int64)
    title = f"MLP {'-'.join(map(str, sizes))}, batch {batch}"
    return dict(name=name, title=title, params=params, x=x, y=y, meta={})


def make_workloads(names):
    """{name: workload}: its title, initial parameters, batch (NumPy) and
    meta (what the peers' code needs beyond the shapes)."""
    sys.path.insert(0, EXAMPLES)
    import train_cnn
    import train_lm
    out = {}
    for name in names:
        rng = np.random.default_rng(0)
        if name == "mlp":
            out[name] = mlp_workload(name, (64, 128, 10), 64, rng)
        elif name == "mlp_large":
            out[name] = mlp_workload(name, (784, 512, 256, 10), 256, rng)
        elif name == "cnn":
            x = rng.random((train_cnn.BATCH, 1, train_cnn.SIDE, train_cnn.SIDE), dtype=np.float32)
            y = rng.integers(0, train_cnn.CLASSES, train_cnn.BATCH).astype(np.int64)
            out[name] = dict(name=name, title=f"CNN of train_cnn.py, batch {train_cnn.BATCH}",
                             params=train_cnn.init_params(rng), x=x, y=y, meta={})
        elif name == "lm":
            chars, data = train_lm.encode(train_lm.load_text("zen"))
            x, y = train_lm.sample_batch(rng, data)
            out[name] = dict(name=name, title=(f"transformer LM of train_lm.py, batch {train_lm.BATCH}x"
                                               f"{train_lm.CONTEXT}, vocabulary {len(chars)}"),
                             params=train_lm.init_params(rng, len(chars)), x=x, y=y,
                             meta={"heads": train_lm.HEADS})
        else:
            raise SystemExit(f"error: unknown model {name!r}; the models are {', '.join(MODELS)}")
    return out


def blocks_of(params):
    return len({k.split("_")[0] for k in params if k.startswith("b") and "_" in k and k.split("_")[0][1:].isdigit()})


# --- braze ----------------------------------------------------------------------------


def braze_loss_fn(name):
    import braze as bz
    if name.startswith("mlp"):
        def loss(params, x, labels):
            layers = sum(1 for k in params if k.startswith("w"))
            for i in range(layers):
                x = x @ params[f"w{i}"] + params[f"b{i}"]
                if i + 1 < layers:
                    x = bz.relu(x)
            return bz.cross_entropy(x, labels)
        return loss
    if name == "cnn":
        import train_cnn
        return train_cnn.loss_fn
    import train_lm
    return train_lm.loss_fn


def braze_system(w):
    """(step function, notes): one compile_step of Adam, the batch in two
    fixed tensors."""
    import braze as bz
    params = {k: bz.tensor(v) for k, v in w["params"].items()}
    x, y = bz.tensor(w["x"]), bz.tensor(w["y"])
    loss_fn = braze_loss_fn(w["name"])
    opt = bz.optim.Adam(params, lr=LR)
    step = bz.optim.compile_step(loss_fn, opt)
    return (lambda: step(x, y)), dict(opt=opt, loss_fn=loss_fn, x=x, y=y)


def braze_plan(loss_fn, opt, x, y):
    """(library calls, fused kernels, arena bytes, realizations) of the
    step's graph (the loss, its gradients and Adam's update), as bz.explain
    lists its steps and the memory planner places its buffers, and how many
    realizations recording it took (0 when the step is one graph: a graph
    deeper than the lazy depth limit is realized in pieces while it is
    recorded, Note [Lazy depth limit] in runtime/tensor.h, and bz.explain
    then sees only the last)."""
    import braze as bz
    before = bz.stats()["realizations"]
    loss, grads = bz.value_and_grad(loss_fn)(opt.params, x, y)
    with bz.no_grad():
        new_params, new_state = opt.update(opt.params, grads, opt.state)
    realized = bz.stats()["realizations"] - before
    outputs = [loss] + bz.autodiff.tree_flatten(new_params)[0] + bz.autodiff.tree_flatten(new_state)[0]
    text = bz.explain(*outputs, file=io.StringIO())
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    library = sum(": library call" in line for line in steps)
    return library, sum(": kernel" in line for line in steps), bz._core._plan(outputs)["arena_bytes"], realized


# --- PyTorch ---------------------------------------------------------------------------


def torch_loss(name, meta):
    import torch
    import torch.nn.functional as fn

    if name.startswith("mlp"):
        def loss(p, x, y):
            layers = sum(1 for k in p if k.startswith("w"))
            for i in range(layers):
                x = x @ p[f"w{i}"] + p[f"b{i}"]
                if i + 1 < layers:
                    x = torch.relu(x)
            return fn.cross_entropy(x, y)
        return loss
    if name == "cnn":
        def loss(p, x, y):
            convs = sum(1 for k in p if k.startswith("conv") and k.endswith("_w"))
            for i in range(convs):
                x = fn.max_pool2d(fn.relu(fn.conv2d(x, p[f"conv{i}_w"], p[f"conv{i}_b"], padding=1)), 2)
            return fn.cross_entropy(x.flatten(1) @ p["fc_w"] + p["fc_b"], y)
        return loss
    heads = meta["heads"]

    def loss(p, tokens, targets):
        n, t = tokens.shape
        d = p["embed"].shape[1]
        dh = d // heads
        split = lambda v: v.reshape(n, t, heads, dh).transpose(1, 2)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        x = fn.embedding(tokens, p["embed"]) + p["pos"]
        for i in range(blocks_of(p)):
            q_ = lambda k: p[f"b{i}_{k}"]
            a = fn.layer_norm(x, (d,), q_("ln1_w"), q_("ln1_b"))
            q, k, v = (split(a @ q_("w" + c) + q_("b" + c)) for c in "qkv")
            scores = (q @ k.transpose(-1, -2)) * (1 / math.sqrt(dh))
            att = torch.softmax(scores.masked_fill(~causal, -1e30), -1)
            x = x + ((att @ v).transpose(1, 2).reshape(n, t, d) @ q_("wo") + q_("bo"))
            m = fn.layer_norm(x, (d,), q_("ln2_w"), q_("ln2_b"))
            x = x + (fn.gelu(m @ q_("w1") + q_("b1")) @ q_("w2") + q_("b2"))
        logits = fn.layer_norm(x, (d,), p["ln_f_w"], p["ln_f_b"]) @ p["embed"].T
        return fn.cross_entropy(logits.reshape(n * t, -1), targets.reshape(-1))
    return loss


def torch_system(w, compiled=False):
    """A step function: zero_grad, loss, backward, fused Adam step; with
    `compiled` the loss function is torch.compile'd."""
    import torch
    params = {k: torch.tensor(v, requires_grad=True) for k, v in w["params"].items()}
    x, y = torch.from_numpy(w["x"]), torch.from_numpy(w["y"])
    loss_fn = torch_loss(w["name"], w["meta"])
    if compiled:
        loss_fn = torch.compile(loss_fn)
    try:
        opt = torch.optim.Adam(list(params.values()), lr=LR, fused=True)
    except (RuntimeError, TypeError, ValueError):  # an older PyTorch without the CPU fused Adam
        opt = torch.optim.Adam(list(params.values()), lr=LR)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(params, x, y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


# --- JAX ----------------------------------------------------------------------------------


def jax_loss(name, meta):
    import jax
    import jax.numpy as jnp
    import optax

    def xent(logits, labels):
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    def pool(v):
        n, c, h, wd = v.shape
        return v.reshape(n, c, h // 2, 2, wd // 2, 2).max(axis=(3, 5))

    def layer_norm(v, g, b):
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return (v - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    if name.startswith("mlp"):
        def loss(p, x, y):
            layers = sum(1 for k in p if k.startswith("w"))
            for i in range(layers):
                x = x @ p[f"w{i}"] + p[f"b{i}"]
                if i + 1 < layers:
                    x = jax.nn.relu(x)
            return xent(x, y)
        return loss
    if name == "cnn":
        def loss(p, x, y):
            convs = sum(1 for k in p if k.startswith("conv") and k.endswith("_w"))
            for i in range(convs):
                x = jax.lax.conv_general_dilated(x, p[f"conv{i}_w"], (1, 1), ((1, 1), (1, 1)),
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
                x = pool(jax.nn.relu(x + p[f"conv{i}_b"].reshape(1, -1, 1, 1)))
            return xent(x.reshape(x.shape[0], -1) @ p["fc_w"] + p["fc_b"], y)
        return loss
    heads = meta["heads"]

    def loss(p, tokens, targets):
        n, t = tokens.shape
        d = p["embed"].shape[1]
        dh = d // heads
        split = lambda v: v.reshape(n, t, heads, dh).transpose(0, 2, 1, 3)
        causal = jnp.tril(jnp.ones((t, t), bool))
        x = p["embed"][tokens] + p["pos"]
        for i in range(blocks_of(p)):
            q_ = lambda k: p[f"b{i}_{k}"]
            a = layer_norm(x, q_("ln1_w"), q_("ln1_b"))
            q, k, v = (split(a @ q_("w" + c) + q_("b" + c)) for c in "qkv")
            scores = (q @ k.transpose(0, 1, 3, 2)) * (1 / math.sqrt(dh))
            att = jax.nn.softmax(jnp.where(causal, scores, -1e30), -1)
            x = x + ((att @ v).transpose(0, 2, 1, 3).reshape(n, t, d) @ q_("wo") + q_("bo"))
            m = layer_norm(x, q_("ln2_w"), q_("ln2_b"))
            x = x + (jax.nn.gelu(m @ q_("w1") + q_("b1"), approximate=False) @ q_("w2") + q_("b2"))
        return xent(layer_norm(x, p["ln_f_w"], p["ln_f_b"]) @ p["embed"].T, targets)
    return loss


def jax_system(w):
    """A step function: value_and_grad, optax.adam's update and
    apply_updates, jitted as one; parameters and state donated."""
    import jax
    import jax.numpy as jnp
    import optax
    loss_fn = jax_loss(w["name"], w["meta"])
    tx = optax.adam(LR)  # b1 0.9, b2 0.999, eps 1e-8: PyTorch's defaults

    def train_step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    jitted = jax.jit(train_step, donate_argnums=(0, 1))
    held = {"params": {k: jnp.asarray(v) for k, v in w["params"].items()}}
    held["state"] = tx.init(held["params"])
    x, y = jnp.asarray(w["x"]), jnp.asarray(w["y"])

    def step():
        held["params"], held["state"], loss = jitted(held["params"], held["state"], x, y)
        return loss.block_until_ready()

    return step


# --- timing -----------------------------------------------------------------------------


def warm_up(fn, steps=3):
    """(first loss, first call's seconds, a later step's seconds)."""
    t = time.perf_counter()
    first = float(fn())
    first_s = time.perf_counter() - t
    later = []
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        later.append(time.perf_counter() - t)
    return first, first_s, min(later)


def time_in_turn(systems, rounds):
    """{name: [seconds per step, one per round]}: each round runs every
    system's steps in turn (`systems`: name -> (fn, steps per call)), so a
    busy moment of a shared machine meets all of them."""
    out = {name: [] for name in systems}
    for _ in range(rounds):
        for name, (fn, steps) in systems.items():
            t = time.perf_counter()
            for _ in range(steps):
                fn()
            out[name].append((time.perf_counter() - t) / steps)
    return out


def steps_for(seconds):
    return max(1, min(200, int(TARGET_SECONDS / max(seconds, 1e-6))))


# --- the child: PyTorch eager without braze ------------------------------------------------


def child(path, names, rounds):
    """Times PyTorch eager on the workloads saved at `path`; prints one
    JSON line {name: [best, median] ms}. Never imports braze."""
    saved = np.load(path, allow_pickle=False)
    meta = json.loads(str(saved["meta"]))
    out = {}
    for name in names:
        params = {k.split("/", 2)[2]: saved[k] for k in saved.files if k.startswith(f"{name}/p/")}
        w = dict(name=name, params=params, x=saved[f"{name}/x"], y=saved[f"{name}/y"], meta=meta[name])
        fn = torch_system(w)
        _, _, later = warm_up(fn)
        times = time_in_turn({"torch": (fn, steps_for(later))}, rounds)["torch"]
        out[name] = [min(times) * 1e3, statistics.median(times) * 1e3]
    print(json.dumps(out))


def run_child(workloads, rounds, policy):
    """(PyTorch eager timed in a child process without braze, {name: [best,
    median] ms}, or None; why it failed), OMP_WAIT_POLICY set to `policy`
    there (None: unset)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "workloads.npz")
        arrays = {"meta": np.array(json.dumps({n: w["meta"] for n, w in workloads.items()}))}
        for n, w in workloads.items():
            arrays[f"{n}/x"], arrays[f"{n}/y"] = w["x"], w["y"]
            arrays.update({f"{n}/p/{k}": v for k, v in w["params"].items()})
        np.savez(path, **arrays)
        env = dict(os.environ)
        if policy is None:
            env.pop("OMP_WAIT_POLICY", None)
        else:
            env["OMP_WAIT_POLICY"] = policy
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, "--models",
                            ",".join(workloads), "--rounds", str(rounds)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(r.stdout.strip().splitlines()[-1]), None


# --- main ----------------------------------------------------------------------------------


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="3 rounds instead of BENCH_REPS (default 7)")
    p.add_argument("--models", default=",".join(MODELS), help=f"comma list of {', '.join(MODELS)} (default all)")
    p.add_argument("--no-child", action="store_true", help="skip timing PyTorch eager in a process without braze")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (its compilation takes minutes)")
    p.add_argument("--rounds", type=int, help=argparse.SUPPRESS)
    p.add_argument("--child", metavar="NPZ", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.rounds is None:
        args.rounds = 3 if args.quick else int(os.environ.get("BENCH_REPS", 7))
    return args


def try_import(name):
    try:
        return __import__(name)
    except ImportError as e:
        print(f"{name} is not installed ({e}): its rows are skipped")
        return None


def main():
    args = parse_args()
    if args.child:
        return child(args.child, args.models, args.rounds)

    import braze as bz  # before PyTorch: its OpenMP threads then see OMP_WAIT_POLICY as braze set it
    torch = try_import("torch")
    jax = try_import("jax")
    if jax is not None and try_import("optax") is None:
        jax = None
    workloads = make_workloads(args.models)
    lib = bz._core._library_calls()
    print(f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds in turn; "
          f"{lib['library']} for {lib['isa']}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')} in this process "
          f"({'unset' if _OMP_WAIT_POLICY is None else _OMP_WAIT_POLICY} before braze); "
          f"PyTorch {torch.__version__ if torch else '-'} ({torch.get_num_threads() if torch else '-'} threads), "
          f"JAX {jax.__version__ if jax else '-'}")

    results = {}
    for name, w in workloads.items():
        print(f"\n{name}: {w['title']}; Adam lr {LR}")
        makers = {"braze": None}
        if torch is not None:
            makers["torch"] = lambda w=w: torch_system(w)
            if not args.no_compile:
                makers["torch.compile"] = lambda w=w: torch_system(w, compiled=True)
        if jax is not None:
            makers["jax.jit"] = lambda w=w: jax_system(w)

        systems, firsts, info = {}, {}, {}
        for system, make in makers.items():
            try:
                if system == "braze":
                    fn, notes = braze_system(w)
                else:
                    fn = make()
                loss, first_s, later = warm_up(fn)
            except Exception as e:  # a peer that fails here is reported, not fatal
                if system == "braze":
                    raise
                print(f"  {system}: failed ({type(e).__name__}: {str(e).splitlines()[0][:160]}): skipped")
                continue
            if system == "braze":
                s0 = bz.stats()
                fn()
                s1 = bz.stats()
                info.update({k: s1[k] - s0[k] for k in ("kernels_launched", "programs_replayed", "allocations",
                                                        "programs_compiled")})
                info["library"], info["fused"], info["arena"], info["pieces"] = braze_plan(
                    notes["loss_fn"], notes["opt"], notes["x"], notes["y"])
            systems[system] = (fn, steps_for(later))
            firsts[system] = (loss, first_s)
        times = time_in_turn(systems, args.rounds)

        base = min(times["braze"])
        print(f"  {'system':<14} {'ms/step':>9} {'median':>9} {'braze x':>8} {'first step ms':>13} "
              f"{'step-1 loss':>12} {'vs braze':>9}")
        for system, ts in times.items():
            speedup = "" if system == "braze" else f"{min(ts) / base:8.2f}"
            loss, first_s = firsts[system]
            diff = "" if system == "braze" else f"{abs(loss - firsts['braze'][0]):9.1e}"
            print(f"  {system:<14} {min(ts) * 1e3:9.3f} {statistics.median(ts) * 1e3:9.3f} {speedup:>8} "
                  f"{first_s * 1e3:13.1f} {loss:12.6f} {diff:>9}")
        graph = "the step's graph" if not info["pieces"] else (
            f"recording the step realized {info['pieces']} piece(s) of it (the lazy depth limit); the last piece")
        print(f"  braze per step: {info['kernels_launched']} kernels launched, {info['programs_replayed']} "
              f"program(s) replayed, {info['programs_compiled']} compiled, {info['allocations']} allocation(s); "
              f"{graph} (bz.explain): {info['library']} library calls and {info['fused']} fused kernels, "
              f"arena {info['arena'] / 1024:.0f} KiB")
        results[name] = {s: min(ts) * 1e3 for s, ts in times.items()}

    if torch is not None and not args.no_child:
        # Once with the environment as it was before braze set the policy,
        # and once with braze's PASSIVE: what braze's presence does to
        # PyTorch, and how much of it is the policy alone.
        policies = [_OMP_WAIT_POLICY] + (["PASSIVE"] if _OMP_WAIT_POLICY != "PASSIVE" else [])
        print("\nPyTorch eager in a child process that never imports braze, beside its figure in this process "
              "(ms per step, best round):")
        for policy in policies:
            alone, why = run_child(workloads, args.rounds, policy)
            label = f"OMP_WAIT_POLICY {'unset' if policy is None else policy}"
            if alone is None:
                print(f"  {label}: failed: {why}")
                continue
            if policy == _OMP_WAIT_POLICY:  # PyTorch as it runs without braze: a column of the summary
                for name, (best, median) in alone.items():
                    results[name]["torch alone"] = best
            for name, (best, median) in alone.items():
                here = results[name].get("torch")
                print(f"  {label:<23} {name:<10} alone {best:8.3f} (median {median:8.3f}); here {here:8.3f}; "
                      f"braze {results[name]['braze']:8.3f}: {best / results[name]['braze']:.2f}x the child's")

    print("\nsummary, ms per step (best round) and braze's speedup (torch alone: PyTorch eager in the child "
          "process without braze, timed after the others rather than in turn with them, so a busy minute of the "
          "machine lands on it alone; with OpenMP's threads spinning that can be a slowdown of 100x):")
    peers = [s for s in ("torch", "torch alone", "torch.compile", "jax.jit") if any(s in r for r in results.values())]
    print(f"  {'model':<10} {'braze':>8} " + " ".join(f"{p:>22}" for p in peers))
    for name, r in results.items():
        cells = [f"{r[p]:9.3f} ({r[p] / r['braze']:5.2f}x)" if p in r else "-" for p in peers]
        print(f"  {name:<10} {r['braze']:8.3f} " + " ".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
