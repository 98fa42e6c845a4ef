"""Trains a small character-level transformer language model with braze.

A GPT-style decoder: characters embedded by a one-hot matmul (the embedding
tied with the output layer), learned positions, BLOCKS pre-norm blocks of
causal self-attention (HEADS heads, the mask applied with `where`) and a
gelu MLP, a final layer_norm; softmax cross-entropy on the next character,
Adam. The text is the Zen of Python (`this.s`, which ships with Python in
rot13) unless --text names a local file: nothing is downloaded. Each
training step (forward, gradients, Adam update, loss) is one program, made
by bz.optim.compile_step on the first step and replayed on every later
one. Prints the mean loss every --every steps (it starts near ln(vocabulary)
and falls well below it) and, at the end, a continuation of the text's
first CONTEXT characters generated greedily (--temperature > 0 samples);
--torch trains the same model in PyTorch beside it (same initial weights,
same batches) and prints both losses. --checkpoint recomputes each block
in the backward (bz.checkpoint; --checkpoint dots_saveable keeps the
matmuls' results): less memory, the same losses.

    python examples/train_lm.py [--steps N] [--seed S] [--lr LR] [--torch] [--text PATH]
                                [--temperature T] [--device cpu|cuda] [--checkpoint [POLICY]]

The command line's common options, the tensors on the device and the
PyTorch twin's training are examples/training.py's, shared with
train_mlp.py and train_cnn.py.
"""

import codecs
import contextlib
import io
import math
import time

import numpy as np

import training
from harness import bz


CONTEXT, WIDTH, HEADS, BLOCKS = 64, 64, 4, 2  # sequence length, d_model, heads, transformer blocks
HEAD = WIDTH // HEADS
HIDDEN = 4 * WIDTH  # the MLP's width
BATCH = 16  # sequences of CONTEXT characters per step


def parse_args(argv=None):
    p = training.parser(__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    p.add_argument("--every", type=int, default=50, help="print the mean loss every this many steps (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seeds the initial weights and the batches")
    p.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate (default 0.003)")
    p.add_argument("--text", default="zen", help="'zen' (the Zen of Python, the default) or a local text file")
    p.add_argument("--checkpoint", nargs="?", const="nothing_saveable", default=None, metavar="POLICY",
                   help="recompute each block's activations in the backward instead of keeping them "
                        "(bz.checkpoint; POLICY: nothing_saveable, the default, or dots_saveable: keep the "
                        "matmuls' results)")
    p.add_argument("--generate", type=int, default=200, help="characters to generate at the end (default 200)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="0 (the default) generates greedily; above 0 samples from softmax(logits / T)")
    training.add_torch(p)
    return training.parse(p, argv, "steps", "every")


def load_text(name="zen"):
    """The training text: the Zen of Python, or the contents of a file."""
    if name == "zen":
        with contextlib.redirect_stdout(io.StringIO()):  # importing `this` prints the Zen
            import this
        return codecs.decode(this.s, "rot13")
    with open(name, encoding="utf-8") as f:
        return f.read()


def encode(text):
    """(the characters, sorted: the vocabulary; the text as int64 indices)."""
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    return chars, np.array([lookup[c] for c in text], np.int64)


def init_params(rng, vocab):
    """GPT-2's initialisation: weights N(0, 0.02), biases 0, layer_norm
    scales 1, as NumPy arrays (both frameworks start from these). Linear
    weights are [in, out]. Attention has separate q, k and v weights: the
    gradient of a slice (splitting one qkv product) is not supported yet."""
    normal = lambda *shape: (0.02 * rng.standard_normal(shape)).astype(np.float32)
    zeros = lambda n: np.zeros(n, np.float32)
    ones = lambda n: np.ones(n, np.float32)
    params = {"embed": normal(vocab, WIDTH), "pos": normal(CONTEXT, WIDTH),
              "ln_f_w": ones(WIDTH), "ln_f_b": zeros(WIDTH)}
    for i in range(BLOCKS):
        params.update({
            f"b{i}_ln1_w": ones(WIDTH), f"b{i}_ln1_b": zeros(WIDTH),
            f"b{i}_wq": normal(WIDTH, WIDTH), f"b{i}_bq": zeros(WIDTH),
            f"b{i}_wk": normal(WIDTH, WIDTH), f"b{i}_bk": zeros(WIDTH),
            f"b{i}_wv": normal(WIDTH, WIDTH), f"b{i}_bv": zeros(WIDTH),
            f"b{i}_wo": normal(WIDTH, WIDTH), f"b{i}_bo": zeros(WIDTH),
            f"b{i}_ln2_w": ones(WIDTH), f"b{i}_ln2_b": zeros(WIDTH),
            f"b{i}_w1": normal(WIDTH, HIDDEN), f"b{i}_b1": zeros(HIDDEN),
            f"b{i}_w2": normal(HIDDEN, WIDTH), f"b{i}_b2": zeros(WIDTH),
        })
    return params


BLOCK_PARAMS = ("ln1_w", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln2_w", "ln2_b",
                "w1", "b1", "w2", "b2")


def block(x, p, causal):
    """One pre-norm block on x [n, CONTEXT, WIDTH]; p: its parameters by name."""
    n = x.shape[0]
    heads = lambda t: bz.permute_dims(t.reshape((n, CONTEXT, HEADS, HEAD)), (0, 2, 1, 3))  # [n, H, T, HEAD]
    a = bz.layer_norm(x, p["ln1_w"], p["ln1_b"])
    q, k, v = (heads(a @ p["w" + c] + p["b" + c]) for c in "qkv")
    scores = (q @ k.mT) * (1 / math.sqrt(HEAD))
    attention = bz.softmax(bz.where(causal, scores, -1e30), axis=-1)
    context = bz.permute_dims(attention @ v, (0, 2, 1, 3)).reshape((n, CONTEXT, WIDTH))
    x = x + (context @ p["wo"] + p["bo"])
    m = bz.layer_norm(x, p["ln2_w"], p["ln2_b"])
    return x + (bz.gelu(m @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])


def forward(params, tokens, checkpoint=None):
    """The logits [n, CONTEXT, vocabulary] of the characters tokens [n, CONTEXT]
    (int64). With checkpoint (a bz.checkpoint policy), each block's
    activations are computed again in the backward instead of kept."""
    n = tokens.shape[0]
    vocab = params["embed"].shape[0]
    # The embedding as a one-hot matmul (its gradient is a matmul too); the
    # one-hot and the causal mask come from index comparisons, built in the
    # program itself.
    one_hot = (tokens.reshape((n, CONTEXT, 1)) == bz.arange(vocab)).astype(bz.float32)
    pos = bz.arange(CONTEXT)
    causal = pos.reshape((CONTEXT, 1)) >= pos.reshape((1, CONTEXT))  # query >= key
    x = one_hot @ params["embed"] + params["pos"]
    run_block = bz.checkpoint(block, policy=checkpoint) if checkpoint else block
    for i in range(BLOCKS):
        x = run_block(x, {name: params[f"b{i}_{name}"] for name in BLOCK_PARAMS}, causal)
    return bz.layer_norm(x, params["ln_f_w"], params["ln_f_b"]) @ params["embed"].T


def loss_fn(params, tokens, targets, checkpoint=None):
    return bz.cross_entropy(forward(params, tokens, checkpoint), targets)


def torch_forward(params, tokens):
    """The same model in PyTorch, as a PyTorch user writes it."""
    import torch
    import torch.nn.functional as fn
    n = tokens.shape[0]
    heads = lambda t: t.reshape(n, CONTEXT, HEADS, HEAD).transpose(1, 2)
    causal = torch.ones(CONTEXT, CONTEXT, dtype=torch.bool).tril()
    x = fn.embedding(tokens, params["embed"]) + params["pos"]
    for i in range(BLOCKS):
        p = lambda name: params[f"b{i}_{name}"]
        a = fn.layer_norm(x, (WIDTH,), p("ln1_w"), p("ln1_b"))
        q, k, v = (heads(a @ p("w" + c) + p("b" + c)) for c in "qkv")
        scores = (q @ k.transpose(-1, -2)) * (1 / math.sqrt(HEAD))
        attention = torch.softmax(scores.masked_fill(~causal, -1e30), -1)
        context = (attention @ v).transpose(1, 2).reshape(n, CONTEXT, WIDTH)
        x = x + (context @ p("wo") + p("bo"))
        m = fn.layer_norm(x, (WIDTH,), p("ln2_w"), p("ln2_b"))
        x = x + (fn.gelu(m @ p("w1") + p("b1")) @ p("w2") + p("b2"))
    return fn.layer_norm(x, (WIDTH,), params["ln_f_w"], params["ln_f_b"]) @ params["embed"].T


def torch_loss(params, tokens, targets):
    """The PyTorch twin's loss: cross-entropy over every position."""
    import torch.nn.functional as fn
    logits = torch_forward(params, tokens)
    return fn.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def sample_batch(rng, data):
    """(inputs, targets): BATCH windows of CONTEXT characters at random
    places, and the same windows one character on."""
    starts = rng.integers(0, len(data) - CONTEXT, BATCH)
    windows = starts[:, None] + np.arange(CONTEXT + 1)
    chunk = data[windows]
    return np.ascontiguousarray(chunk[:, :-1]), np.ascontiguousarray(chunk[:, 1:])


def generate(params, prompt, count, temperature, rng, device):
    """`count` indices following `prompt` (CONTEXT indices), each from the
    logits at the last position of the CONTEXT characters before it:
    argmax, or a sample at `temperature`. One program, replayed: the window
    is copied into the same tensor and the logits written into the same
    output every time."""
    run = bz.jit(forward)
    with bz.device(device):
        window = bz.tensor(np.asarray(prompt, np.int64).reshape(1, CONTEXT))
    with bz.no_grad():
        logits = run(params, window)
    out = list(prompt)
    for _ in range(count):
        last = logits.numpy()[0, -1].astype(np.float64)
        if temperature > 0:
            p = np.exp((last - last.max()) / temperature)
            out.append(int(rng.choice(len(p), p=p / p.sum())))
        else:
            out.append(int(np.argmax(last)))
        bz.copyto(window, np.asarray(out[-CONTEXT:], np.int64).reshape(1, CONTEXT))
        with bz.no_grad():
            run(params, window, out=logits)
    return out[CONTEXT:]


def main(argv=None):
    """Trains and reports; returns {"losses": the loss of every step,
    "vocab": the vocabulary's size, "sample": the generated text} (for the
    tests)."""
    args = parse_args(argv)
    text = load_text(args.text)
    chars, data = encode(text)
    if len(data) <= CONTEXT + 1:
        raise SystemExit(f"error: the text has {len(data)} characters; it needs more than {CONTEXT + 1}")
    rng = np.random.default_rng(args.seed)
    init = init_params(rng, len(chars))
    batch_rng = np.random.default_rng(int(rng.integers(2**31)))

    torch_run = training.torch_beside(args, init, torch_forward, torch_loss)
    # The batch lives in two tensors that every step overwrites, so every
    # step replays one program.
    params, (xb, yb) = training.to_device(args.device, init, np.zeros((BATCH, CONTEXT), np.int64),
                                          np.zeros((BATCH, CONTEXT), np.int64))
    opt = bz.optim.Adam(params, lr=args.lr)
    step = bz.optim.compile_step(lambda p, x, y: loss_fn(p, x, y, args.checkpoint), opt)

    count = sum(v.size for v in init.values())
    source = "the Zen of Python" if args.text == "zen" else args.text
    title = (f"character transformer: {BLOCKS} pre-norm blocks, width {WIDTH}, {HEADS} heads, MLP {HIDDEN} (gelu), "
             f"context {CONTEXT}, {count:,} parameters (embedding tied); trained on {source} ({len(text)} characters, "
             f"{len(chars)} distinct: ln {len(chars)} = {math.log(len(chars)):.2f}); Adam lr {args.lr}, batch {BATCH}")
    training.print_head(args.device, title, [("step", 5), ("loss", 8), ("ms/step", 8), ("programs", 8)],
                        [("torch loss", 10), ("torch ms", 8)], torch_run)

    losses, torch_losses = [], []
    braze_seconds = torch_seconds = 0.0
    window_seconds = window_torch = 0.0
    compiled = bz.stats()["programs_compiled"]
    first_step_ms = None
    # The memory plan of the gradient's program (forward and backward),
    # which --checkpoint changes; planned only, nothing runs.
    value, grads = bz.value_and_grad(loss_fn)(params, xb, yb, args.checkpoint)
    arena = bz._core._plan([value, *bz.autodiff.tree_flatten(grads)[0]])["arena_bytes"]
    for i in range(1, args.steps + 1):
        x, y = sample_batch(batch_rng, data)
        t0 = time.perf_counter()
        bz.copyto(xb, x)
        bz.copyto(yb, y)
        losses.append(float(step(xb, yb)))  # read now: the next step overwrites the loss tensor
        seconds = time.perf_counter() - t0
        if i == 1:
            first_step_ms = seconds * 1e3  # fusion, code generation, oneDNN primitives
        braze_seconds += seconds
        window_seconds += seconds
        if torch_run is not None:
            t0 = time.perf_counter()
            torch_losses.append(torch_run.step(x, y))
            window_torch += time.perf_counter() - t0
        if i % args.every == 0 or i == args.steps:
            done = (i - 1) % args.every + 1  # steps since the last line
            line = (f"{i:5d} {np.mean(losses[-done:]):8.4f} {window_seconds / done * 1e3:8.2f} "
                    f"{bz.stats()['programs_compiled'] - compiled:8d}")
            if torch_run is not None:
                line += f" {np.mean(torch_losses[-done:]):10.4f} {window_torch / done * 1e3:8.2f}"
                torch_seconds += window_torch
            print(line)
            compiled = bz.stats()["programs_compiled"]
            window_seconds = window_torch = 0.0
    later = braze_seconds * 1e3 - first_step_ms
    print(f"loss {losses[0]:.3f} at the first step, {np.mean(losses[-args.every:]):.3f} over the last "
          f"{min(args.every, args.steps)}; {braze_seconds:.2f} s of training: the first step {first_step_ms:.0f} ms, "
          f"then {later / max(args.steps - 1, 1):.2f} ms per step; the gradient's arena {arena / 2**20:.2f} MiB"
          + (f" (blocks checkpointed, {args.checkpoint})" if args.checkpoint else ""))
    if torch_run is not None:
        differences = np.abs(np.subtract(losses, torch_losses))
        early = min(100, args.steps)
        # Rounding differences grow as training goes on (the two runs are
        # the same computation in another order), so both figures.
        print(f"PyTorch: {torch_seconds:.2f} s, {torch_seconds / args.steps * 1e3:.2f} ms per step; the largest "
              f"difference between the two losses at one step was {differences.max():.2e} "
              f"({differences[:early].max():.2e} in the first {early} steps)")

    sample = ""
    if args.generate > 0:
        how = "greedily" if args.temperature <= 0 else f"sampled at temperature {args.temperature}"
        prompt = data[:CONTEXT]
        generated = generate(params, prompt, args.generate, args.temperature,
                             np.random.default_rng(args.seed), args.device)
        sample = "".join(chars[i] for i in generated)
        print(f"\n{args.generate} characters after the text's first {CONTEXT}, {how}:\n")
        print("".join(chars[i] for i in prompt) + sample)
    return {"losses": losses, "vocab": len(chars), "sample": sample, "arena_bytes": arena}


if __name__ == "__main__":
    main()
