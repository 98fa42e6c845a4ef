# The vectorized losses and naive layers of Stanford's CS231n assignments 1
# and 2 (cs231n.github.io): linear_svm.py's svm_loss_vectorized,
# softmax.py's softmax_loss_vectorized, k_nearest_neighbor.py's
# compute_distances_no_loops and predict_labels, layers.py's
# batchnorm_forward, conv_forward_naive and max_pool_forward_naive, in the
# assignments' signatures. Written by us from the assignments'
# instructions, the way the many published solutions write them (not
# copied from one): NumPy code as a student writes it, with fancy-index
# reads and writes, masks assigned, Python loops filling preallocated
# arrays, np.pad, np.tensordot and np.bincount. tests/python/test_programs.py
# runs it on braze tensors through NumPy's protocols and with this module's
# np rebound to braze.
import numpy as np


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct_class_scores = scores[np.arange(num_train), y].reshape(-1, 1)
    margins = np.maximum(0, scores - correct_class_scores + 1)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train
    loss += reg * np.sum(W * W)
    binary = margins
    binary[margins > 0] = 1
    row_sum = np.sum(binary, axis=1)
    binary[np.arange(num_train), y] = -row_sum.T
    dW = X.T.dot(binary) / num_train + 2 * reg * W
    return loss, dW


def softmax_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    loss = -np.sum(np.log(probs[np.arange(num_train), y])) / num_train + reg * np.sum(W * W)
    dscores = probs.copy()
    dscores[np.arange(num_train), y] -= 1
    dW = X.T.dot(dscores) / num_train + 2 * reg * W
    return loss, dW


def compute_distances_no_loops(X_train, X):
    return np.sqrt(np.sum(X ** 2, axis=1, keepdims=True) + np.sum(X_train ** 2, axis=1) - 2 * X.dot(X_train.T))


def predict_labels(dists, y_train, k=1):
    num_test = dists.shape[0]
    y_pred = np.zeros(num_test)
    for i in range(num_test):
        closest_y = y_train[np.argsort(dists[i])[:k]]
        y_pred[i] = np.argmax(np.bincount(closest_y))
    return y_pred


def batchnorm_forward(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=0)
    xmu = x - mu
    var = np.mean(xmu ** 2, axis=0)
    ivar = 1.0 / np.sqrt(var + eps)
    xhat = xmu * ivar
    return gamma * xhat + beta


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    out = np.zeros((N, F, H_out, W_out))
    for i in range(H_out):
        for j in range(W_out):
            patch = x_pad[:, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return out


def max_pool_forward_naive(x, pool_param):
    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    H_out, W_out = (H - ph) // stride + 1, (W - pw) // stride + 1
    out = np.zeros((N, C, H_out, W_out))
    for i in range(H_out):
        for j in range(W_out):
            out[:, :, i, j] = np.max(x[:, :, i * stride:i * stride + ph, j * stride:j * stride + pw], axis=(2, 3))
    return out
