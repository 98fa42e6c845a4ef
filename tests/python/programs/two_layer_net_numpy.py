# Justin Johnson's two_layer_net_numpy.py
# (https://github.com/jcjohnson/pytorch-examples, tensor/two_layer_net_numpy.py,
# commit 1f45934); MIT License, Copyright (c) 2017 Justin Johnson. A NumPy
# program braze did not write: tests/python/test_programs.py runs it on
# braze tensors, unchanged, through NumPy's protocols. The original is a
# script; its training loop is here verbatim as the body of train(), which
# takes the data, the weights and the step count the script made at the top
# level (np.random.randn, 500 steps), and returns the weights and the losses
# instead of printing them (print(t, loss) became losses.append(loss)).
import numpy as np

"""
A fully-connected ReLU network with one hidden layer and no biases, trained to
predict y from x using Euclidean error.

This implementation uses numpy to manually compute the forward pass, loss, and
backward pass.

A numpy array is a generic n-dimensional array; it does not know anything about
deep learning or gradients or computational graphs, and is just a way to perform
generic numeric computations.
"""


def train(x, y, w1, w2, steps, learning_rate=1e-6):
  losses = []
  for t in range(steps):
    # Forward pass: compute predicted y
    h = x.dot(w1)
    h_relu = np.maximum(h, 0)
    y_pred = h_relu.dot(w2)
    
    # Compute and print loss
    loss = np.square(y_pred - y).sum()
    losses.append(loss)
    
    # Backprop to compute gradients of w1 and w2 with respect to loss
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T.dot(grad_y_pred)
    grad_h_relu = grad_y_pred.dot(w2.T)
    grad_h = grad_h_relu.copy()
    grad_h[h < 0] = 0
    grad_w1 = x.T.dot(grad_h)
   
    # Update weights
    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2
  return w1, w2, losses
