"""A small CNN on synthetic 32x32 RGB images: two conv2d + relu + 2x2 max
pooling stages, then a linear classifier. Pooling is a max over the window
axes of a reshaped view (no pooling op needed). Each conv2d with its bias
and relu is one oneDNN call.

    python examples/cnn.py [--iterations N] [--device cpu|cuda]
"""

import math

import numpy as np

import harness
from harness import bz

N, C, HW, CLASSES = 16, 3, 32, 10
CHANNELS = (16, 32)


def make_weights(rng):
    convs, c_in = [], C
    for c_out in CHANNELS:
        w = (rng.standard_normal((c_out, c_in, 3, 3)) * math.sqrt(2.0 / (c_in * 9))).astype(np.float32)
        convs.append((w, (0.01 * rng.standard_normal(c_out)).astype(np.float32)))
        c_in = c_out
    features = CHANNELS[-1] * (HW // 4) ** 2
    fc = ((rng.standard_normal((features, CLASSES)) / math.sqrt(features)).astype(np.float32),
          np.zeros(CLASSES, np.float32))
    return convs, fc


def braze_pool(x):  # 2x2 max pooling: [n, c, h, w] -> [n, c, h/2, 2, w/2, 2] -> max over the 2s
    n, c, h, w = x.shape
    return bz.max(x.reshape((n, c, h // 2, 2, w // 2, 2)), axis=(3, 5))


def braze_cnn(x, convs, fc):
    for w, b in convs:
        x = braze_pool(bz.relu(bz.conv2d(x, w, b, padding=1)))
    return x.reshape((x.shape[0], -1)) @ fc[0] + fc[1]


def np_conv3x3(x, w, b):  # padding 1, stride 1, as im2col + one matmul
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], axis=2)  # n, c, 9, h, w
    out = np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, 9), optimize=True)
    return out + b.reshape(1, -1, 1, 1)


def numpy_cnn(x, convs, fc):
    for w, b in convs:
        x = np.maximum(np_conv3x3(x, w, b), 0)
        n, c, h, wd = x.shape
        x = x.reshape(n, c, h // 2, 2, wd // 2, 2).max(axis=(3, 5))
    return x.reshape(x.shape[0], -1) @ fc[0] + fc[1]


def torch_cnn(x, convs, fc):
    import torch.nn.functional as fn
    for w, b in convs:
        x = fn.max_pool2d(fn.relu(fn.conv2d(x, w, b, padding=1)), 2)
    return fn.linear(x.flatten(1), fc[0].T, fc[1])


def main():
    args = harness.parse_args(__doc__.splitlines()[0], iterations=20)
    convs, fc = make_weights(np.random.default_rng(args.seed))
    with bz.device(args.device):
        bz_convs = [(bz.tensor(w), bz.tensor(b)) for w, b in convs]
        bz_fc = (bz.tensor(fc[0]), bz.tensor(fc[1]))

    def run_torch(x):
        import torch
        t = lambda a: torch.from_numpy(a)
        return torch_cnn(x, [(t(w), t(b)) for w, b in convs], (t(fc[0]), t(fc[1])))

    print(f"CNN: batch {N}, {C}x{HW}x{HW} images, conv channels {CHANNELS}, {CLASSES} classes; float32")
    harness.run("cnn", args.iterations,
                lambda i: (np.random.default_rng(1000 + i).standard_normal((N, C, HW, HW)).astype(np.float32),),
                harness.replaying(braze_cnn, args.device, bz_convs, bz_fc),
                lambda x: numpy_cnn(x, convs, fc), run_torch, rtol=1e-3, atol=1e-3, device=args.device)


if __name__ == "__main__":
    main()
