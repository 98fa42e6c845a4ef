"""Issue 24's reduction sweep: sum, mean, max, var and argmax over every
axis subset of 2-D, 3-D and 4-D float32 inputs of 16 MB, each contiguous,
reversed (x.T), permuted (axes rotated) and sliced with a step of 2 along
the last axis (a view of 16 MB into 32 MB), braze beside NumPy in one
process. Per case: braze's and NumPy's best times, the ratio (NumPy's time
over braze's: above 1 is faster than NumPy), braze's roofline ratio (bytes
moved / time, over the streaming-copy probe's bandwidth: for the step-2
view, the bytes of the rows it is cut from) and that ratio
over the same reduction's on the contiguous input (issue 24's target: at
least 0.8). argmax, which NumPy takes over one axis or all, runs over each
single axis and over all. The worst cases by ratio are listed last.

Run: PYTHONPATH=build/python .venv/bin/python bench/reductions.py [--mb 16]
"""
import argparse
import itertools
import statistics

import numpy as np

import braze as bz
from timing import best_in_turn

SHAPES = {2: (2048, 2048), 3: (128, 128, 256), 4: (32, 32, 64, 64)}


def layouts(n):
    """The four views of a reduction's input, as functions of its base (the
    same view taken of the NumPy array and of the braze tensor over it);
    each view has the elements of SHAPES[n]."""
    return {
        "contiguous": lambda a: a,
        "reversed": lambda a: a.transpose(tuple(reversed(range(n)))),
        "rotated": lambda a: a.transpose(tuple(range(1, n)) + (0,)),
        "step2": lambda a: a[..., ::2],
    }


def axis_sets(n):
    for k in range(1, n + 1):
        yield from itertools.combinations(range(n), k)


OPS = {
    "sum": (lambda t, a: bz.sum(t, axis=a), lambda x, a: np.sum(x, axis=a)),
    "mean": (lambda t, a: bz.mean(t, axis=a), lambda x, a: np.mean(x, axis=a)),
    "max": (lambda t, a: bz.max(t, axis=a), lambda x, a: np.max(x, axis=a)),
    "var": (lambda t, a: bz.var(t, axis=a), lambda x, a: np.var(x, axis=a)),
    "argmax": (lambda t, a: bz.argmax(t, axis=a), lambda x, a: np.argmax(x, axis=a)),
}


def cases(n):
    for op in OPS:
        sets = [(a,) for a in range(n)] + [None] if op == "argmax" else list(axis_sets(n))
        for axes in sets:
            yield op, axes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=16, help="megabytes per input")
    args = ap.parse_args()
    bw = bz._core._copy_bandwidth()
    scale = args.mb / 16
    print(f"copy probe {bw / 1e9:.1f} GB/s; float32 inputs of {args.mb:g} MB")
    print(f"{'rank':>4} {'op':7} {'axes':12} {'layout':10} {'braze ms':>9} {'numpy ms':>9} {'ratio':>6} "
          f"{'roofline':>8} {'vs contig':>9}")
    rows = []
    for n, shape in SHAPES.items():
        shape = list(shape)
        shape[0] = max(1, int(shape[0] * scale))
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        wide = np.random.default_rng(1).random(shape[:-1] + [2 * shape[-1]], dtype=np.float32)
        bases = {False: (x, bz.asarray(x)), True: (wide, bz.asarray(wide))}
        views, tensors = {}, {}
        for layout, view in layouts(n).items():
            a, t = bases[layout == "step2"]
            views[layout], tensors[layout] = view(a), view(t)
            assert tensors[layout].shape == views[layout].shape
        for op, axes in cases(n):
            bf, nf = OPS[op]
            ax = axes if axes is None or len(axes) > 1 else axes[0]
            contiguous_roofline = None
            for layout, v in views.items():
                t = tensors[layout]
                got = bf(t, ax).numpy()
                want = nf(v, ax)
                if op == "argmax":
                    assert np.array_equal(got, want), (op, axes, layout)
                else:
                    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"{op} {axes} {layout}")
                times = best_in_turn({"braze": lambda: bf(t, ax).numpy(), "numpy": lambda: nf(v, ax)})
                # A step-2 view's rows touch every cache line of the rows
                # it is cut from: the memory moved is twice the view's bytes.
                moved = v.nbytes * (2 if layout == "step2" else 1)
                roofline = moved / bw / times["braze"]
                if layout == "contiguous":
                    contiguous_roofline = roofline
                row = (n, op, str(axes), layout, times["braze"] * 1e3, times["numpy"] * 1e3,
                       times["numpy"] / times["braze"], roofline, roofline / contiguous_roofline)
                rows.append(row)
                print(f"{row[0]:4} {row[1]:7} {row[2]:12} {row[3]:10} {row[4]:9.2f} {row[5]:9.2f} {row[6]:6.2f} "
                      f"{row[7]:8.3f} {row[8]:9.2f}", flush=True)
    ratios = [r[6] for r in rows]
    slower = [r for r in rows if r[6] < 1.0]
    below = [r for r in rows if r[8] < 0.8]
    print(f"\n{len(rows)} cases: median ratio to NumPy {statistics.median(ratios):.2f}, "
          f"{len(slower)} slower than NumPy, {len(below)} below 0.8 of the contiguous roofline")
    print("worst ten by ratio to NumPy:")
    for r in sorted(rows, key=lambda r: r[6])[:10]:
        print(f"  {r[0]}-D {r[1]:7} {r[2]:12} {r[3]:10} ratio {r[6]:5.2f} (braze {r[4]:.2f} ms, NumPy {r[5]:.2f} ms)")
    print("worst ten against the contiguous roofline:")
    for r in sorted(rows, key=lambda r: r[8])[:10]:
        print(f"  {r[0]}-D {r[1]:7} {r[2]:12} {r[3]:10} {r[8]:5.2f} of contiguous (roofline {r[7]:.3f})")


if __name__ == "__main__":
    main()
