# Nicolas P. Rougier's "100 numpy exercises"
# (https://github.com/rougier/numpy-100, commit 6447594,
# 100_Numpy_exercises_with_solutions.md); MIT License, Copyright (c) 2016
# Nicolas P. Rougier. The solutions, ported as a NumPy user would port them to
# braze: each solution's code is kept as written, but for
#
# - the arrays it makes from nothing (np.zeros, np.arange, np.array of a list,
#   np.random...) pass through `asarray`: np.asarray for the reference run,
#   braze's for the braze run, so that every np.* call after them meets a
#   braze tensor (NumPy's protocols bring it to braze);
# - np.random's global state is the seeded Generator `rng`
#   (np.random.default_rng(0), fresh for each run): np.random.random ->
#   rng.random, randint -> integers, rand -> random, randn -> standard_normal,
#   shuffle/choice/uniform keep their names; sizes are as written, but for
#   exercise 92 (5e7 -> 1000);
# - print(x) becomes out.append(x) (x.copy() where the solution changes x
#   afterwards), and the function returns out, the values the exercise shows;
# - Jupyter magics (%timeit), scipy and pandas lines are left out.
#
# Exercises with nothing to port are not here: tests/python/test_numpy100.py
# lists them. Where a solution has a part that needs what braze lacks
# (complex numbers, uint32, sliding_window_view), that part is an exercise of
# its own, NNb.
import numpy as np
from numpy.lib import stride_tricks
from numpy.lib.stride_tricks import sliding_window_view

EXERCISES = {}


def exercise(f):
    EXERCISES[f.__name__[len("ex_"):]] = f
    return f


# 3. Create a null vector of size 10
@exercise
def ex_03(asarray, rng):
    Z = asarray(np.zeros(10))
    return [Z]


# 6. Create a null vector of size 10 but the fifth value which is 1
@exercise
def ex_06(asarray, rng):
    Z = asarray(np.zeros(10))
    Z[4] = 1
    return [Z]


# 7. Create a vector with values ranging from 10 to 49
@exercise
def ex_07(asarray, rng):
    Z = asarray(np.arange(10, 50))
    return [Z]


# 8. Reverse a vector (first element becomes last)
@exercise
def ex_08(asarray, rng):
    Z = asarray(np.arange(50))
    Z = Z[::-1]
    return [Z]


# 9. Create a 3x3 matrix with values ranging from 0 to 8
@exercise
def ex_09(asarray, rng):
    Z = asarray(np.arange(9)).reshape(3, 3)
    return [Z]


# 10. Find indices of non-zero elements from [1,2,0,0,4,0]
@exercise
def ex_10(asarray, rng):
    nz = np.nonzero(asarray([1, 2, 0, 0, 4, 0]))
    return [nz]


# 11. Create a 3x3 identity matrix
@exercise
def ex_11(asarray, rng):
    Z = asarray(np.eye(3))
    return [Z]


# 13. Create a 10x10 array with random values and find the minimum and maximum values
@exercise
def ex_13(asarray, rng):
    Z = asarray(rng.random((10, 10)))
    Zmin, Zmax = Z.min(), Z.max()
    return [Zmin, Zmax]


# 14. Create a random vector of size 30 and find the mean value
@exercise
def ex_14(asarray, rng):
    Z = asarray(rng.random(30))
    m = Z.mean()
    return [m]


# 15. Create a 2d array with 1 on the border and 0 inside
@exercise
def ex_15(asarray, rng):
    Z = asarray(np.ones((10, 10)))
    Z[1:-1, 1:-1] = 0
    return [Z]


# 16. How to add a border (filled with 0's) around an existing array?
@exercise
def ex_16(asarray, rng):
    out = []
    Z = asarray(np.ones((5, 5)))
    Z = np.pad(Z, pad_width=1, mode='constant', constant_values=0)
    out.append(Z.copy())

    # Using fancy indexing
    Z[:, [0, -1]] = 0
    Z[[0, -1], :] = 0
    out.append(Z)
    return out


# 18. Create a 5x5 matrix with values 1,2,3,4 just below the diagonal
@exercise
def ex_18(asarray, rng):
    Z = np.diag(1 + asarray(np.arange(4)), k=-1)
    return [Z]


# 19. Create a 8x8 matrix and fill it with a checkerboard pattern
@exercise
def ex_19(asarray, rng):
    Z = asarray(np.zeros((8, 8), dtype=int))
    Z[1::2, ::2] = 1
    Z[::2, 1::2] = 1
    return [Z]


# 20. Consider a (6,7,8) shape array, what is the index (x,y,z) of the 100th element?
@exercise
def ex_20(asarray, rng):
    return [np.unravel_index(asarray(99), (6, 7, 8))]


# 21. Create a checkerboard 8x8 matrix using the tile function
@exercise
def ex_21(asarray, rng):
    Z = np.tile(asarray(np.array([[0, 1], [1, 0]])), (4, 4))
    return [Z]


# 22. Normalize a 5x5 random matrix
@exercise
def ex_22(asarray, rng):
    Z = asarray(rng.random((5, 5)))
    Z = (Z - np.mean (Z)) / (np.std (Z))
    return [Z]


# 24. Multiply a 5x3 matrix by a 3x2 matrix (real matrix product)
@exercise
def ex_24(asarray, rng):
    out = []
    Z = np.matmul(asarray(np.ones((5, 3))), asarray(np.ones((3, 2))))
    out.append(Z)

    # Alternative solution, in Python 3.5 and above
    Z = asarray(np.ones((5, 3))) @ asarray(np.ones((3, 2)))
    out.append(Z)
    return out


# 25. Given a 1D array, negate all elements which are between 3 and 8, in place.
@exercise
def ex_25(asarray, rng):
    # Author: Evgeni Burovski
    Z = asarray(np.arange(11))
    Z[(3 < Z) & (Z < 8)] *= -1
    return [Z]


# 26. What is the output of the following script? (Python's sum, then NumPy's
# after `from numpy import *`; the range is an array here)
@exercise
def ex_26(asarray, rng):
    # Author: Jake VanderPlas
    out = []
    out.append(sum(asarray(range(5)), -1))
    out.append(np.sum(asarray(range(5)), -1))
    return out


# 27. Consider an integer vector Z, which of these expressions are legal?
# (1j*Z is 27b)
@exercise
def ex_27(asarray, rng):
    Z = asarray(np.arange(5))
    out = []
    out.append(Z**Z)
    out.append(2 << Z >> 2)
    out.append(Z <- Z)
    out.append(Z/1/1)
    try:
        Z<Z>Z
    except ValueError as e:  # illegal: the truth value of an array
        out.append(type(e).__name__)
    return out


# 27b. The legal expression 1j*Z of exercise 27
@exercise
def ex_27b(asarray, rng):
    Z = asarray(np.arange(5))
    return [1j*Z]


# 28. What are the result of the following expressions?
@exercise
def ex_28(asarray, rng):
    out = []
    with np.errstate(all="ignore"):  # NumPy warns
        out.append(asarray(np.array(0)) / asarray(np.array(0)))
        out.append(asarray(np.array(0)) // asarray(np.array(0)))
        out.append(asarray(np.array([np.nan])).astype(int).astype(float))
    return out


# 29. How to round away from zero a float array ?
@exercise
def ex_29(asarray, rng):
    # Author: Charles R Harris
    out = []
    Z = asarray(rng.uniform(-10, +10, 10))
    out.append(np.copysign(np.ceil(np.abs(Z)), Z))

    # More readable but less efficient
    out.append(np.where(Z > 0, np.ceil(Z), np.floor(Z)))
    return out


# 30. How to find common values between two arrays?
@exercise
def ex_30(asarray, rng):
    Z1 = asarray(rng.integers(0, 10, 10))
    Z2 = asarray(rng.integers(0, 10, 10))
    return [np.intersect1d(Z1, Z2)]


# 35. How to compute ((A+B)*(-A/2)) in place (without copy)?
@exercise
def ex_35(asarray, rng):
    A = asarray(np.ones(3))*1
    B = asarray(np.ones(3))*2
    np.add(A, B, out=B)
    np.divide(A, 2, out=A)
    np.negative(A, out=A)
    np.multiply(A, B, out=A)
    return [A, B]


# 36. Extract the integer part of a random array of positive numbers using 4 different methods
@exercise
def ex_36(asarray, rng):
    out = []
    Z = asarray(rng.uniform(0, 10, 10))

    out.append(Z - Z % 1)
    out.append(Z // 1)
    out.append(np.floor(Z))
    out.append(Z.astype(int))
    out.append(np.trunc(Z))
    return out


# 37. Create a 5x5 matrix with row values ranging from 0 to 4
@exercise
def ex_37(asarray, rng):
    out = []
    Z = asarray(np.zeros((5, 5)))
    Z += asarray(np.arange(5))
    out.append(Z)

    # without broadcasting
    Z = np.tile(asarray(np.arange(0, 5)), (5, 1))
    out.append(Z)
    return out


# 39. Create a vector of size 10 with values ranging from 0 to 1, both excluded
# (the ends are 0-d arrays here)
@exercise
def ex_39(asarray, rng):
    Z = np.linspace(asarray(0), asarray(1), 11, endpoint=False)[1:]
    return [Z]


# 40. Create a random vector of size 10 and sort it
@exercise
def ex_40(asarray, rng):
    Z = asarray(rng.random(10))
    Z.sort()
    return [Z]


# 41. How to sum a small array faster than np.sum?
@exercise
def ex_41(asarray, rng):
    # Author: Evgeni Burovski
    Z = asarray(np.arange(10))
    return [np.add.reduce(Z)]


# 42. Consider two random arrays A and B, check if they are equal
@exercise
def ex_42(asarray, rng):
    out = []
    A = asarray(rng.integers(0, 2, 5))
    B = asarray(rng.integers(0, 2, 5))

    # Assuming identical shape of the arrays and a tolerance for the comparison of values
    equal = np.allclose(A, B)
    out.append(equal)

    # Checking both the shape and the element values, no tolerance (values have to be exactly equal)
    equal = np.array_equal(A, B)
    out.append(equal)

    # and an array against itself
    out.append(np.allclose(A, A))
    out.append(np.array_equal(A, A))
    return out


# 43. Make an array immutable (read-only)
@exercise
def ex_43(asarray, rng):
    out = []
    Z = asarray(np.zeros(10))
    Z.flags.writeable = False
    try:
        Z[0] = 1
    except ValueError as e:  # assignment destination is read-only
        out.append(type(e).__name__)
    out.append(Z)
    return out


# 44. Consider a random 10x2 matrix representing cartesian coordinates, convert them to polar coordinates
@exercise
def ex_44(asarray, rng):
    Z = asarray(rng.random((10, 2)))
    X, Y = Z[:, 0], Z[:, 1]
    R = np.sqrt(X**2+Y**2)
    T = np.arctan2(Y, X)
    return [R, T]


# 45. Create random vector of size 10 and replace the maximum value by 0
@exercise
def ex_45(asarray, rng):
    Z = asarray(rng.random(10))
    Z[Z.argmax()] = 0
    return [Z]


# 47. Given two arrays, X and Y, construct the Cauchy matrix C (Cij =1/(xi - yj))
@exercise
def ex_47(asarray, rng):
    # Author: Evgeni Burovski
    X = asarray(np.arange(8))
    Y = X + 0.5
    C = 1.0 / np.subtract.outer(X, Y)
    return [np.linalg.det(C)]


# 50. How to find the closest value (to a given scalar) in a vector?
@exercise
def ex_50(asarray, rng):
    Z = asarray(np.arange(100))
    v = rng.uniform(0, 100)
    index = (np.abs(Z-v)).argmin()
    return [Z[index]]


# 52. Consider a random vector with shape (100,2) representing coordinates, find point by point distances
# (the scipy solution is left out)
@exercise
def ex_52(asarray, rng):
    Z = asarray(rng.random((10, 2)))
    X, Y = np.atleast_2d(Z[:, 0], Z[:, 1])
    D = np.sqrt( (X-X.T)**2 + (Y-Y.T)**2)
    return [D]


# 53. How to convert a float (32 bits) array into an integer (32 bits) array in place?
@exercise
def ex_53(asarray, rng):
    # Thanks Vikas (https://stackoverflow.com/a/10622758/5989906)
    # & unutbu (https://stackoverflow.com/a/4396247/5989906)
    Z = asarray((rng.random(10)*100).astype(np.float32))
    Y = Z.view(np.int32)
    Y[:] = Z
    return [Y]


# 56. Generate a generic 2D Gaussian-like array
@exercise
def ex_56(asarray, rng):
    X, Y = np.meshgrid(asarray(np.linspace(-1, 1, 10)), asarray(np.linspace(-1, 1, 10)))
    D = np.sqrt(X*X+Y*Y)
    sigma, mu = 1.0, 0.0
    G = np.exp(-( (D-mu)**2 / ( 2.0 * sigma**2 ) ) )
    return [G]


# 57. How to randomly place p elements in a 2D array?
@exercise
def ex_57(asarray, rng):
    # Author: Divakar
    n = 10
    p = 3
    Z = asarray(np.zeros((n, n)))
    np.put(Z, asarray(rng.choice(range(n*n), p, replace=False)), 1)
    return [Z]


# 58. Subtract the mean of each row of a matrix
@exercise
def ex_58(asarray, rng):
    # Author: Warren Weckesser
    out = []
    X = asarray(rng.random((5, 10)))

    # Recent versions of numpy
    Y = X - X.mean(axis=1, keepdims=True)
    out.append(Y)

    # Older versions of numpy
    Y = X - X.mean(axis=1).reshape(-1, 1)
    out.append(Y)
    return out


# 59. How to sort an array by the nth column?
@exercise
def ex_59(asarray, rng):
    # Author: Steve Tjoa
    Z = asarray(rng.integers(0, 10, (3, 3)))
    return [Z, Z[Z[:, 1].argsort()]]


# 60. How to tell if a given 2D array has null columns?
@exercise
def ex_60(asarray, rng):
    # Author: Warren Weckesser
    out = []
    # null : 0
    Z = asarray(rng.integers(0, 3, (3, 10)))
    out.append((~Z.any(axis=0)).any())

    # null : np.nan
    Z = asarray(np.array([
        [0, 1, np.nan],
        [1, 2, np.nan],
        [4, 5, np.nan]
    ]))
    out.append(np.isnan(Z).all(axis=0))
    return out


# 61. Find the nearest value from a given value in an array
@exercise
def ex_61(asarray, rng):
    Z = asarray(rng.uniform(0, 1, 10))
    z = 0.5
    m = Z.flat[np.abs(Z - z).argmin()]
    return [m]


# 64. Consider a given vector, how to add 1 to each element indexed by a second vector
# (be careful with repeated indices)?
@exercise
def ex_64(asarray, rng):
    # Author: Brett Olsen
    out = []
    Z = asarray(np.ones(10))
    I = asarray(rng.integers(0, len(Z), 20))
    Z += np.bincount(I, minlength=len(Z))
    out.append(Z.copy())

    # Another solution
    # Author: Bartosz Telenczuk
    np.add.at(Z, I, 1)
    out.append(Z)
    return out


# 65. How to accumulate elements of a vector (X) to an array (F) based on an index list (I)?
@exercise
def ex_65(asarray, rng):
    # Author: Alan G Isaac
    X = asarray([1, 2, 3, 4, 5, 6])
    I = asarray([1, 3, 9, 3, 4, 1])
    F = np.bincount(I, X)
    return [F]


# 66. Considering a (w,h,3) image of (dtype=ubyte), compute the number of unique colors
# (the faster version, through uint32, is 66b)
@exercise
def ex_66(asarray, rng):
    # Author: Fisher Wang
    w, h = 256, 256
    I = asarray(rng.integers(0, 4, (h, w, 3)).astype(np.ubyte))
    colors = np.unique(I.reshape(-1, 3), axis=0)
    n = len(colors)
    return [colors, n]


# 66b. The faster version of exercise 66
@exercise
def ex_66b(asarray, rng):
    # Author: Mark Setchell
    # https://stackoverflow.com/a/59671950/2836621
    w, h = 256, 256
    I = asarray(rng.integers(0, 4, (h, w, 3), dtype=np.uint8))

    # View each pixel as a single 24-bit integer, rather than three 8-bit bytes
    I24 = np.dot(I.astype(np.uint32), [1, 256, 65536])

    # Count unique colours
    n = len(np.unique(I24))
    return [n]


# 67. Considering a four dimensions array, how to get sum over the last two axis at once?
@exercise
def ex_67(asarray, rng):
    out = []
    A = asarray(rng.integers(0, 10, (3, 4, 3, 4)))
    # solution by passing a tuple of axes (introduced in numpy 1.7.0)
    sum = A.sum(axis=(-2, -1))
    out.append(sum)
    # solution by flattening the last two dimensions into one
    # (useful for functions that don't accept tuples for axis argument)
    sum = A.reshape(A.shape[:-2] + (-1,)).sum(axis=-1)
    out.append(sum)
    return out


# 68. Considering a one-dimensional vector D, how to compute means of subsets of D using a vector S
# of same size describing subset indices? (the pandas solution is left out)
@exercise
def ex_68(asarray, rng):
    # Author: Jaime Fernández del Río
    D = asarray(rng.uniform(0, 1, 100))
    S = asarray(rng.integers(0, 10, 100))
    D_sums = np.bincount(S, weights=D)
    D_counts = np.bincount(S)
    D_means = D_sums / D_counts
    return [D_means]


# 69. How to get the diagonal of a dot product?
@exercise
def ex_69(asarray, rng):
    # Author: Mathieu Blondel
    out = []
    A = asarray(rng.uniform(0, 1, (5, 5)))
    B = asarray(rng.uniform(0, 1, (5, 5)))

    # Slow version
    out.append(np.diag(np.dot(A, B)))

    # Fast version
    out.append(np.sum(A * B.T, axis=1))

    # Faster version
    out.append(np.einsum("ij,ji->i", A, B))
    return out


# 70. Consider the vector [1, 2, 3, 4, 5], how to build a new vector with 3 consecutive zeros
# interleaved between each value?
@exercise
def ex_70(asarray, rng):
    # Author: Warren Weckesser
    Z = asarray(np.array([1, 2, 3, 4, 5]))
    nz = 3
    Z0 = asarray(np.zeros(len(Z) + (len(Z)-1)*(nz)))
    Z0[::nz+1] = Z
    return [Z0]


# 71. Consider an array of dimension (5,5,3), how to multiply it by an array with dimensions (5,5)?
@exercise
def ex_71(asarray, rng):
    A = asarray(np.ones((5, 5, 3)))
    B = 2*asarray(np.ones((5, 5)))
    return [A * B[:, :, None]]


# 72. How to swap two rows of an array?
@exercise
def ex_72(asarray, rng):
    # Author: Eelco Hoogendoorn
    A = asarray(np.arange(25)).reshape(5, 5)
    A[[0, 1]] = A[[1, 0]]
    return [A]


# 74. Given a sorted array C that corresponds to a bincount, how to produce an array A such that
# np.bincount(A) == C?
@exercise
def ex_74(asarray, rng):
    # Author: Jaime Fernández del Río
    C = np.bincount(asarray([1, 1, 2, 3, 4, 4, 6]))
    A = np.repeat(asarray(np.arange(len(C))), C)
    return [A]


# 75. How to compute averages using a sliding window over an array?
# (the sliding_window_view solution is 75b)
@exercise
def ex_75(asarray, rng):
    # Author: Jaime Fernández del Río
    def moving_average(a, n=3) :
        ret = np.cumsum(a, dtype=float)
        ret[n:] = ret[n:] - ret[:-n]
        return ret[n - 1:] / n
    Z = asarray(np.arange(20))
    return [moving_average(Z, n=3)]


# 75b. The sliding_window_view solution of exercise 75
@exercise
def ex_75b(asarray, rng):
    # Author: Jeff Luo (@Jeff1999)
    # make sure your NumPy >= 1.20.0
    Z = asarray(np.arange(20))
    return [sliding_window_view(Z, window_shape=3).mean(axis=-1)]


# 76. Consider a one-dimensional array Z, build a two-dimensional array whose first row is
# (Z[0],Z[1],Z[2]) and each subsequent row is shifted by 1 (last row should be (Z[-3],Z[-2],Z[-1])
# (the sliding_window_view solution is 76b)
@exercise
def ex_76(asarray, rng):
    # Author: Joe Kington / Erik Rigtorp
    def rolling(a, window):
        shape = (a.size - window + 1, window)
        strides = (a.strides[0], a.strides[0])
        return stride_tricks.as_strided(a, shape=shape, strides=strides)
    Z = rolling(asarray(np.arange(10)), 3)
    return [Z]


# 76b. The sliding_window_view solution of exercise 76
@exercise
def ex_76b(asarray, rng):
    # Author: Jeff Luo (@Jeff1999)
    Z = asarray(np.arange(10))
    return [sliding_window_view(Z, window_shape=3)]


# 77. How to negate a boolean, or to change the sign of a float inplace?
@exercise
def ex_77(asarray, rng):
    # Author: Nathaniel J. Smith
    out = []
    Z = asarray(rng.integers(0, 2, 100))
    np.logical_not(Z, out=Z)
    out.append(Z)

    Z = asarray(rng.uniform(-1.0, 1.0, 100))
    np.negative(Z, out=Z)
    out.append(Z)
    return out


# 78. Consider 2 sets of points P0,P1 describing lines (2d) and a point p, how to compute distance
# from p to each line i (P0[i],P1[i])?
@exercise
def ex_78(asarray, rng):
    out = []
    P0 = asarray(rng.uniform(-10, 10, (10, 2)))
    P1 = asarray(rng.uniform(-10, 10, (10, 2)))
    p  = asarray(rng.uniform(-10, 10, ( 1, 2)))

    def distance_faster(P0, P1, p):
        # Author: Hemanth Pasupuleti
        # Reference: https://mathworld.wolfram.com/Point-LineDistance2-Dimensional.html

        v = P1- P0
        v[:, [0, 1]] = v[:, [1, 0]]
        v[:, 1] *= -1
        norm = np.linalg.norm(v, axis=1)
        r = P0 - p
        d = np.abs(np.einsum("ij,ij->i", r, v)) / norm

        return d

    out.append(distance_faster(P0, P1, p))

    # --------------- OR --------------- #
    def distance_slower(P0, P1, p):
        T = P1 - P0
        L = (T**2).sum(axis=1)
        U = -((P0[:, 0]-p[..., 0])*T[:, 0] + (P0[:, 1]-p[..., 1])*T[:, 1]) / L
        U = U.reshape(len(U), 1)
        D = P0 + U*T - p
        return np.sqrt((D**2).sum(axis=1))

    out.append(distance_slower(P0, P1, p))
    return out


# 79. Consider 2 sets of points P0,P1 describing lines (2d) and a set of points P, how to compute
# distance from each point j (P[j]) to each line i (P0[i],P1[i])? (the first solution calls a
# `distance` it does not define; the broadcasting one is here)
@exercise
def ex_79(asarray, rng):
    P0 = asarray(rng.uniform(-10, 10, (10, 2)))
    P1 = asarray(rng.uniform(-10, 10, (10, 2)))
    p = asarray(rng.uniform(-10, 10, (10, 2)))

    # Author: Yang Wu (Broadcasting)
    def distance_points_to_lines(p: np.ndarray, p_1: np.ndarray, p_2: np.ndarray) -> np.ndarray:
        x_0, y_0 = p.T  # Shape -> (n points, )
        x_1, y_1 = p_1.T  # Shape -> (n lines, )
        x_2, y_2 = p_2.T  # Shape -> (n lines, )

        # Displacement vector coordinates from p_1 -> p_2
        dx = x_2 - x_1  # Shape -> (n lines, )
        dy = y_2 - y_1  # Shape -> (n lines, )

        # The 'cross product' term
        cross_term = x_2 * y_1 - y_2 * x_1  # Shape -> (n lines, )

        # Broadcast x_0, y_0 (n points, 1) and dx, dy, cross_term (1, n lines) -> (n points, n lines)
        numerator = np.abs(
            dy[np.newaxis, :] * x_0[:, np.newaxis]
            - dx[np.newaxis, :] * y_0[:, np.newaxis]
            + cross_term[np.newaxis, :]
        )
        denominator = np.sqrt(dx**2 + dy**2)  # Shape -> (n lines, )

        # Shape (n points, n lines) / (1, n_lines) -> (n points, n lines)
        return numerator / denominator[np.newaxis, :]

    return [distance_points_to_lines(p, P0, P1)]


# 80. Consider an arbitrary array, write a function that extracts a subpart with a fixed shape and
# centered on a given element (pad with a `fill` value when necessary)
@exercise
def ex_80(asarray, rng):
    # Author: Nicolas Rougier
    Z = asarray(rng.integers(0, 10, (10, 10)))
    shape = (5, 5)
    fill  = 0
    position = (1, 1)

    R = asarray(np.ones(shape, dtype=Z.dtype))*fill
    P  = asarray(np.array(list(position))).astype(int)
    Rs = asarray(np.array(list(R.shape))).astype(int)
    Zs = asarray(np.array(list(Z.shape))).astype(int)

    R_start = asarray(np.zeros((len(shape),))).astype(int)
    R_stop  = asarray(np.array(list(shape))).astype(int)
    Z_start = (P-Rs//2)
    Z_stop  = (P+Rs//2)+Rs%2

    R_start = (R_start - np.minimum(Z_start, 0)).tolist()
    Z_start = (np.maximum(Z_start, 0)).tolist()
    R_stop = np.maximum(R_start, (R_stop - np.maximum(Z_stop-Zs, 0))).tolist()
    Z_stop = (np.minimum(Z_stop, Zs)).tolist()

    r = tuple([slice(start, stop) for start, stop in zip(R_start, R_stop)])
    z = tuple([slice(start, stop) for start, stop in zip(Z_start, Z_stop)])
    R[r] = Z[z]
    return [Z, R]


# 81. Consider an array Z = [1,2,3,4,5,6,7,8,9,10,11,12,13,14], how to generate an array
# R = [[1,2,3,4], [2,3,4,5], [3,4,5,6], ..., [11,12,13,14]]?
@exercise
def ex_81(asarray, rng):
    out = []
    # Author: Stefan van der Walt
    Z = asarray(np.arange(1, 15, dtype=np.uint32))
    R = stride_tricks.as_strided(Z, (11, 4), (4, 4))
    out.append(R)

    # Author: Jeff Luo (@Jeff1999)
    Z = asarray(np.arange(1, 15, dtype=np.uint32))
    out.append(sliding_window_view(Z, window_shape=4))
    return out


# 82. Compute a matrix rank
@exercise
def ex_82(asarray, rng):
    # Author: Stefan van der Walt
    out = []
    Z = asarray(rng.uniform(0, 1, (10, 10)))
    U, S, V = np.linalg.svd(Z)  # Singular Value Decomposition
    threshold = len(S) * S.max() * np.finfo(S.dtype).eps
    rank = np.sum(S > threshold)
    out.append(rank)
    out.append(S)

    # alternative solution:
    # Author: Jeff Luo (@Jeff1999)
    rank = np.linalg.matrix_rank(Z)
    out.append(rank)
    return out


# 83. How to find the most frequent value in an array?
@exercise
def ex_83(asarray, rng):
    Z = asarray(rng.integers(0, 10, 50))
    return [np.bincount(Z).argmax()]


# 84. Extract all the contiguous 3x3 blocks from a random 10x10 matrix
# (the sliding_window_view solution is 84b)
@exercise
def ex_84(asarray, rng):
    # Author: Chris Barker
    Z = asarray(rng.integers(0, 5, (10, 10)))
    n = 3
    i = 1 + (Z.shape[0]-3)
    j = 1 + (Z.shape[1]-3)
    C = stride_tricks.as_strided(Z, shape=(i, j, n, n), strides=Z.strides + Z.strides)
    return [C]


# 84b. The sliding_window_view solution of exercise 84
@exercise
def ex_84b(asarray, rng):
    # Author: Jeff Luo (@Jeff1999)
    Z = asarray(rng.integers(0, 5, (10, 10)))
    return [sliding_window_view(Z, window_shape=(3, 3))]


# 86. Consider a set of p matrices with shape (n,n) and a set of p vectors with shape (n,1). How to
# compute the sum of of the p matrix products at once? (result has shape (n,1))
@exercise
def ex_86(asarray, rng):
    # Author: Stefan van der Walt
    p, n = 10, 20
    M = asarray(np.ones((p, n, n)))
    V = asarray(np.ones((p, n, 1)))
    S = np.tensordot(M, V, axes=[[0, 2], [0, 1]])
    return [S]


# 87. Consider a 16x16 array, how to get the block-sum (block size is 4x4)?
# (the sliding_window_view solution is 87b)
@exercise
def ex_87(asarray, rng):
    # Author: Robert Kern
    out = []
    Z = asarray(np.ones((16, 16)))
    k = 4
    S = np.add.reduceat(np.add.reduceat(Z, asarray(np.arange(0, Z.shape[0], k)), axis=0),
                        asarray(np.arange(0, Z.shape[1], k)), axis=1)
    out.append(S)

    # alternative solution (by @Gattocrucco)
    S = Z.reshape(4, 4, 4, 4).sum((1, 3))
    out.append(S)
    return out


# 87b. The sliding_window_view solution of exercise 87
@exercise
def ex_87b(asarray, rng):
    # alternative solution:
    # Author: Sebastian Wallkötter (@FirefoxMetzger)
    Z = asarray(np.ones((16, 16)))
    k = 4

    windows = np.lib.stride_tricks.sliding_window_view(Z, (k, k))
    S = windows[::k, ::k, ...].sum(axis=(-2, -1))
    return [S]


# 88. How to implement the Game of Life using numpy arrays?
@exercise
def ex_88(asarray, rng):
    # Author: Nicolas Rougier
    def iterate(Z):
        # Count neighbours
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +
             Z[1:-1, 0:-2]                 + Z[1:-1, 2:] +
             Z[2:  , 0:-2] + Z[2:  , 1:-1] + Z[2:  , 2:])

        # Apply rules
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
        return Z

    Z = asarray(rng.integers(0, 2, (50, 50)))
    for i in range(100): Z = iterate(Z)
    return [Z]


# 89. How to get the n largest values of an array
@exercise
def ex_89(asarray, rng):
    out = []
    Z = np.arange(10000)
    rng.shuffle(Z)
    Z = asarray(Z)
    n = 5

    # Slow
    out.append(Z[np.argsort(Z)[-n:]])

    # Fast
    out.append(Z[np.argpartition(-Z, n)[:n]])
    return out


# 90. Given an arbitrary number of vectors, build the cartesian product (every combination of every
# item)
@exercise
def ex_90(asarray, rng):
    # Author: Stefan Van der Walt
    def cartesian(arrays):
        arrays = [asarray(a) for a in arrays]
        shape = (len(x) for x in arrays)

        ix = asarray(np.indices(shape, dtype=int))
        ix = ix.reshape(len(arrays), -1).T

        for n, arr in enumerate(arrays):
            ix[:, n] = arrays[n][ix[:, n]]

        return ix

    return [cartesian(([1, 2, 3], [4, 5], [6, 7]))]


# 92. Consider a large vector Z, compute Z to the power of 3 using 3 different methods
@exercise
def ex_92(asarray, rng):
    # Author: Ryan G.
    x = asarray(rng.random(int(1e3)))

    return [np.power(x, 3), x*x*x, np.einsum('i,i,i->i', x, x, x)]


# 93. Consider two arrays A and B of shape (8,3) and (2,2). How to find rows of A that contain
# elements of each row of B regardless of the order of the elements in B?
@exercise
def ex_93(asarray, rng):
    # Author: Gabe Schwartz
    A = asarray(rng.integers(0, 5, (8, 3)))
    B = asarray(rng.integers(0, 5, (2, 2)))

    C = (A[..., np.newaxis, np.newaxis] == B)
    rows = np.where(C.any((3, 1)).all(1))[0]
    return [rows]


# 94. Considering a 10x3 matrix, extract rows with unequal values (e.g. [2,2,3])
@exercise
def ex_94(asarray, rng):
    # Author: Robert Kern
    out = []
    Z = asarray(rng.integers(0, 5, (10, 3)))
    out.append(Z)
    # solution for arrays of all dtypes (including string arrays and record arrays)
    E = np.all(Z[:, 1:] == Z[:, :-1], axis=1)
    U = Z[~E]
    out.append(U)
    # soluiton for numerical arrays only, will work for any number of columns in Z
    U = Z[Z.max(axis=1) != Z.min(axis=1), :]
    out.append(U)
    return out


# 95. Convert a vector of ints into a matrix binary representation
@exercise
def ex_95(asarray, rng):
    # Author: Warren Weckesser
    out = []
    I = asarray(np.array([0, 1, 2, 3, 15, 16, 32, 64, 128]))
    B = ((I.reshape(-1, 1) & (2**asarray(np.arange(8)))) != 0).astype(int)
    out.append(B[:, ::-1])

    # Author: Daniel T. McDonald
    I = asarray(np.array([0, 1, 2, 3, 15, 16, 32, 64, 128], dtype=np.uint8))
    out.append(np.unpackbits(I[:, np.newaxis], axis=1))
    return out


# 96. Given a two dimensional array, how to extract unique rows? (the first solution views the
# rows as np.void scalars, a structured dtype: left out)
@exercise
def ex_96(asarray, rng):
    Z = asarray(rng.integers(0, 2, (6, 3)))

    # Author: Andreas Kouzelis
    # NumPy >= 1.13
    uZ = np.unique(Z, axis=0)
    return [uZ]


# 97. Considering 2 vectors A & B, write the einsum equivalent of inner, outer, sum, and mul function
@exercise
def ex_97(asarray, rng):
    # Author: Alex Riley
    # Make sure to read: http://ajcr.net/Basic-guide-to-einsum/
    A = asarray(rng.uniform(0, 1, 10))
    B = asarray(rng.uniform(0, 1, 10))

    return [
        np.einsum('i->', A),       # np.sum(A)
        np.einsum('i,i->i', A, B),  # A * B
        np.einsum('i,i', A, B),    # np.inner(A, B)
        np.einsum('i,j->ij', A, B),    # np.outer(A, B)
    ]


# 98. Considering a path described by two vectors (X,Y), how to sample it using equidistant samples?
@exercise
def ex_98(asarray, rng):
    # Author: Bas Swinckels
    phi = asarray(np.arange(0, 10*np.pi, 0.1))
    a = 1
    x = a*phi*np.cos(phi)
    y = a*phi*np.sin(phi)

    dr = (np.diff(x)**2 + np.diff(y)**2)**.5  # segment lengths
    r = np.zeros_like(x)
    r[1:] = np.cumsum(dr)                # integrate path
    r_int = np.linspace(0, r.max(), 200)  # regular spaced path
    x_int = np.interp(r_int, r, x)       # integrate path
    y_int = np.interp(r_int, r, y)
    return [x_int, y_int]


# 99. Given an integer n and a 2D array X, select from X the rows which can be interpreted as draws
# from a multinomial distribution with n degrees, i.e., the rows which only contain integers and
# which sum to n.
@exercise
def ex_99(asarray, rng):
    # Author: Evgeni Burovski
    X = asarray([[1.0, 0.0, 3.0, 8.0],
                 [2.0, 0.0, 1.0, 1.0],
                 [1.5, 2.5, 1.0, 0.0]])
    n = 4
    M = np.logical_and.reduce(np.mod(X, 1) == 0, axis=-1)
    M &= (X.sum(axis=-1) == n)
    return [X[M]]


# 100. Compute bootstrapped 95% confidence intervals for the mean of a 1D array X (i.e., resample the
# elements of an array with replacement N times, compute the mean of each sample, and then compute
# percentiles over the means).
@exercise
def ex_100(asarray, rng):
    # Author: Jessica B. Hamrick
    X = asarray(rng.standard_normal(100))  # random 1D array
    N = 1000  # number of bootstrap samples
    idx = asarray(rng.integers(0, X.size, (N, X.size)))
    means = X[idx].mean(axis=1)
    confint = np.percentile(means, [2.5, 97.5])
    return [confint]
