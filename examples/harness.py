"""What every model example shares: the command line (--device, --iterations),
a clear error when the device is missing, and the loop that runs braze and
NumPy (and PyTorch where installed) side by side for a number of inference
iterations, printing per iteration the time of each, braze's kernels
launched, its arena size and allocations, and the largest difference from
NumPy, under a progress bar."""

import argparse
import os
import statistics
import sys
import time

import numpy as np

import braze as bz

try:
    from tqdm import tqdm
except ImportError:  # tqdm is in examples/requirements.txt; without it, no bar
    tqdm = None

try:
    import torch
except ImportError:
    torch = None


def parse_args(description, iterations=20):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--iterations", type=int, default=iterations, help="inference iterations to run")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    check_device(args.device)
    return args


def check_device(name):
    """Exits with a clear message when braze cannot use `name`."""
    try:
        bz.tensor(np.zeros(1, np.float32), device=name).numpy()
    except (RuntimeError, ValueError) as e:
        sys.exit(f"error: --device {name}: {e}")


def replaying(fn, device, *args):
    """`fn(x, *args)` as a function of a NumPy input returning a NumPy
    result, run the way a serving loop should run it: captured once with
    bz.jit (one program); the first call makes the input and output
    tensors, every later one copies its input into the same input tensor
    (bz.copyto) and writes into the same output (out=), so it allocates
    nothing. The returned array is a view of the output: read it before
    the next call."""
    step = bz.jit(fn)
    held = {}

    def run(x):
        if not held:
            held["x"] = bz.tensor(x, device=device)
            held["out"] = step(held["x"], *args)
        else:
            bz.copyto(held["x"], x)
            step(held["x"], *args, out=held["out"])
        return held["out"].numpy()

    return run


def _bar(total, desc):
    if tqdm is None or total < 5:
        return None
    return tqdm(total=total, desc=desc, unit="it", file=sys.stderr, leave=False)


def _say(bar, line):
    (bar.write if bar is not None else print)(line)


def where(device):
    """How the output names the device braze runs on."""
    name = bz._core._device_name(device)
    return "the CPU" if name == "cpu" else name + (" (host emulation)" if os.environ.get("BRAZE_CUDA") == "emulate"
                                                    else "")


def run(name, iterations, make_input, braze_fn, numpy_fn, torch_fn=None, rtol=1e-4, atol=1e-4, device="cpu"):
    """Runs `iterations` inferences. Each makes a fresh input (NumPy arrays),
    runs braze_fn on `device` (returns a realized NumPy array), numpy_fn and,
    with PyTorch installed, torch_fn on the same input (on the CPU), and
    checks braze against NumPy. Returns the per-iteration rows."""
    on_cpu = bz._core._device_name(device) == "cpu"
    peers = "numpy" + (" / torch" + ("" if on_cpu else " (on the CPU)") if torch is not None and torch_fn is not None
                       else "")
    print(f"{name}: {iterations} iteration(s) on {where(device)}; braze beside {peers}")
    print(f"{'iter':>4} {'braze ms':>9} {'numpy ms':>9} {'torch ms':>9} {'kernels':>7} {'arena KB':>9} "
          f"{'allocs':>6} {'max |diff|':>10}")
    rows = []
    bar = _bar(iterations, name)
    for i in range(iterations):
        inputs = make_input(i)
        before = bz.stats()
        t0 = time.perf_counter()
        got = braze_fn(*inputs)
        t_braze = time.perf_counter() - t0
        after = bz.stats()
        t0 = time.perf_counter()
        want = numpy_fn(*inputs)
        t_numpy = time.perf_counter() - t0
        t_torch = None
        if torch is not None and torch_fn is not None:
            with torch.no_grad():
                tin = [torch.from_numpy(a) for a in inputs]
                t0 = time.perf_counter()
                torch_fn(*tin)
                t_torch = time.perf_counter() - t0
        diff = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
        ok = np.allclose(got, want, rtol=rtol, atol=atol)
        row = {
            "braze_ms": t_braze * 1e3,
            "numpy_ms": t_numpy * 1e3,
            "torch_ms": None if t_torch is None else t_torch * 1e3,
            "kernels": after["kernels_launched"] - before["kernels_launched"],
            # Arenas are obtained once per program and kept (docs/programs.md),
            # so the running total is the arena memory the loop holds.
            "arena_kb": after["arena_bytes"] / 1024,
            "allocations": after["allocations"] - before["allocations"],
            "diff": diff,
        }
        rows.append(row)
        torch_text = f"{row['torch_ms']:9.2f}" if row["torch_ms"] is not None else f"{'-':>9}"
        _say(bar, f"{i:4d} {row['braze_ms']:9.2f} {row['numpy_ms']:9.2f} {torch_text} {row['kernels']:7d} "
                  f"{row['arena_kb']:9.1f} {row['allocations']:6d} {diff:10.2e}")
        if not ok:
            sys.exit(f"error: iteration {i}: braze's output differs from NumPy's by up to {diff:.3e} "
                     f"(rtol={rtol}, atol={atol})")
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    summarize(rows, on_cpu)
    return rows


def summarize(rows, on_cpu=True):
    later = rows[1:] or rows
    med = lambda key: statistics.median(r[key] for r in later)
    line = (f"median after the first iteration: braze {med('braze_ms'):.2f} ms, numpy {med('numpy_ms'):.2f} ms "
            f"({med('numpy_ms') / med('braze_ms'):.2f}x)")
    if later[0]["torch_ms"] is not None:
        line += f", torch {med('torch_ms'):.2f} ms"
    print(line)
    made = "code generation, oneDNN primitives" if on_cpu else "NVRTC or the disk cache, cuBLASLt/cuDNN plans"
    print(f"first iteration {rows[0]['braze_ms']:.2f} ms (fusion, {made}); "
          f"{later[-1]['kernels']} kernel(s) and {later[-1]['allocations']} allocation(s) per iteration; "
          f"outputs match NumPy (largest difference {max(r['diff'] for r in rows):.2e})")
