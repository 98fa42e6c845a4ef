# The NumPy chapter (notebooks 02.02-02.08) of Jake VanderPlas's "Python Data
# Science Handbook", 2nd edition
# (https://github.com/jakevdp/PythonDataScienceHandbook, commit
# d66231454ef753818dc9213c9b5942e067266966, notebooks/02.0*.ipynb); the code
# is released under the MIT License (LICENSE-CODE, Copyright (c) 2016 Jacob
# VanderPlas). The code cells, ported as a NumPy user would port them to
# braze, one function per section of a notebook, kept as written but for
#
# - the arrays a cell makes from nothing (np.arange, np.array of a list,
#   np.zeros, np.linspace, rng...) or a Python list it hands to a ufunc pass
#   through `asarray`: np.asarray for the reference run, braze's for the braze
#   run, so that every np.* call after them meets a braze tensor;
# - `rng = np.random.default_rng(seed=1701)` (and the unseeded
#   default_rng() of 02.04, np.random.choice of 02.07) is the seeded
#   Generator `rng` (np.random.default_rng(0), fresh for each run);
# - np.empty becomes np.zeros (both runs must start from the same values);
# - a displayed value (a cell's last expression, or print(x)) becomes
#   out.append(x) (x.copy() where the cell changes x afterwards; str() of a
#   dtype the cell prints); a cell the notebook shows raising an error
#   appends the error's name;
# - the data files (president_heights.csv, Seattle rainfall) are seeded
#   random data of the same shape and dtype;
# - cells that only plot, time (%timeit), or read files, and pure-Python
#   cells (sorted(L), bin(42)) are left out; big_array of 02.04 has 10**4
#   elements, not 10**6, as builtin min/max/sum iterate it element by element.
import numpy as np
from scipy import special

SECTIONS = {}


def section(f):
    SECTIONS[f.__name__] = f
    return f


# ---------------------------------------------------------------- 02.02
# The Basics of NumPy Arrays

def _arrays_0202(asarray, rng):
    x1 = asarray(rng.integers(10, size=6))  # one-dimensional array
    x2 = asarray(rng.integers(10, size=(3, 4)))  # two-dimensional array
    x3 = asarray(rng.integers(10, size=(3, 4, 5)))  # three-dimensional array
    return x1, x2, x3


# NumPy Array Attributes
@section
def basics_attributes(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    out.append(x3.ndim)
    out.append(x3.shape)
    out.append(x3.size)
    out.append(str(x3.dtype))
    return out


# Array Indexing: Accessing Single Elements
@section
def basics_indexing(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    out.append(x1.copy())
    out.append(x1[0])
    out.append(x1[4])
    out.append(x1[-1])
    out.append(x1[-2])
    out.append(x2.copy())
    out.append(x2[0, 0])
    out.append(x2[2, 0])
    out.append(x2[2, -1])
    x2[0, 0] = 12
    out.append(x2)
    x1[0] = 3.14159  # this will be truncated!
    out.append(x1)
    return out


# Array Slicing: One-Dimensional Subarrays
@section
def basics_slicing_1d(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    out.append(x1)
    out.append(x1[:3])  # first three elements
    out.append(x1[3:])  # elements after index 3
    out.append(x1[1:4])  # middle subarray
    out.append(x1[::2])  # every second element
    out.append(x1[1::2])  # every second element, starting at index 1
    out.append(x1[::-1])  # all elements, reversed
    out.append(x1[4::-2])  # every second element from index 4, reversed
    return out


# Array Slicing: Multidimensional Subarrays, Accessing array rows and columns
@section
def basics_slicing_multi(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    out.append(x2)
    out.append(x2[:2, :3])  # first two rows & three columns
    out.append(x2[:3, ::2])  # three rows, every second column
    out.append(x2[::-1, ::-1])  # all rows & columns, reversed
    out.append(x2[:, 0])  # first column of x2
    out.append(x2[0, :])  # first row of x2
    out.append(x2[0])  # equivalent to x2[0, :]
    return out


# Subarrays as No-Copy Views
@section
def basics_views(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    out.append(x2.copy())
    x2_sub = x2[:2, :2]
    out.append(x2_sub.copy())
    x2_sub[0, 0] = 99
    out.append(x2_sub)
    out.append(x2)
    return out


# Creating Copies of Arrays
@section
def basics_copies(asarray, rng):
    out = []
    x1, x2, x3 = _arrays_0202(asarray, rng)
    x2_sub_copy = x2[:2, :2].copy()
    out.append(x2_sub_copy.copy())
    x2_sub_copy[0, 0] = 42
    out.append(x2_sub_copy)
    out.append(x2)
    return out


# Reshaping of Arrays
@section
def basics_reshaping(asarray, rng):
    out = []
    grid = asarray(np.arange(1, 10)).reshape(3, 3)
    out.append(grid)
    x = asarray(np.array([1, 2, 3]))
    out.append(x.reshape((1, 3)))  # row vector via reshape
    out.append(x.reshape((3, 1)))  # column vector via reshape
    out.append(x[np.newaxis, :])  # row vector via newaxis
    out.append(x[:, np.newaxis])  # column vector via newaxis
    return out


# Concatenation of Arrays
@section
def basics_concatenation(asarray, rng):
    out = []
    x = asarray(np.array([1, 2, 3]))
    y = asarray(np.array([3, 2, 1]))
    out.append(np.concatenate([x, y]))
    z = asarray(np.array([99, 99, 99]))
    out.append(np.concatenate([x, y, z]))
    grid = asarray(np.array([[1, 2, 3],
                             [4, 5, 6]]))
    # concatenate along the first axis
    out.append(np.concatenate([grid, grid]))
    # concatenate along the second axis (zero-indexed)
    out.append(np.concatenate([grid, grid], axis=1))
    # vertically stack the arrays
    out.append(np.vstack([x, grid]))
    # horizontally stack the arrays
    y = asarray(np.array([[99],
                          [99]]))
    out.append(np.hstack([grid, y]))
    return out


# Splitting of Arrays
@section
def basics_splitting(asarray, rng):
    out = []
    x = asarray([1, 2, 3, 99, 99, 3, 2, 1])
    x1, x2, x3 = np.split(x, [3, 5])
    out.append([x1, x2, x3])
    grid = asarray(np.arange(16)).reshape((4, 4))
    out.append(grid)
    upper, lower = np.vsplit(grid, [2])
    out.append([upper, lower])
    left, right = np.hsplit(grid, [2])
    out.append([left, right])
    return out


# ---------------------------------------------------------------- 02.03
# Computation on NumPy Arrays: Universal Functions

def compute_reciprocals(values, asarray):
    output = asarray(np.zeros(len(values)))  # np.empty in the notebook
    for i in range(len(values)):
        output[i] = 1.0 / values[i]
    return output


# The Slowness of Loops, Introducing Ufuncs
@section
def ufuncs_introducing(asarray, rng):
    out = []
    values = asarray(rng.integers(1, 10, size=5))
    out.append(compute_reciprocals(values, asarray))
    out.append(1.0 / values)
    out.append(asarray(np.arange(5)) / asarray(np.arange(1, 6)))
    x = asarray(np.arange(9)).reshape((3, 3))
    out.append(2 ** x)
    return out


# Array Arithmetic
@section
def ufuncs_arithmetic(asarray, rng):
    out = []
    x = asarray(np.arange(4))
    out.append(x)
    out.append(x + 5)
    out.append(x - 5)
    out.append(x * 2)
    out.append(x / 2)
    out.append(x // 2)  # floor division
    out.append(-x)
    out.append(x ** 2)
    out.append(x % 2)
    out.append(-(0.5*x + 1) ** 2)
    out.append(np.add(x, 2))
    return out


# Absolute Value
@section
def ufuncs_absolute(asarray, rng):
    out = []
    x = asarray(np.array([-2, -1, 0, 1, 2]))
    out.append(abs(x))
    out.append(np.absolute(x))
    out.append(np.abs(x))
    return out


# Absolute Value (the complex cell)
@section
def ufuncs_absolute_complex(asarray, rng):
    x = asarray(np.array([3 - 4j, 4 - 3j, 2 + 0j, 0 + 1j]))
    return [np.abs(x)]


# Trigonometric Functions
@section
def ufuncs_trigonometric(asarray, rng):
    out = []
    theta = asarray(np.linspace(0, np.pi, 3))
    out.append(theta)
    out.append(np.sin(theta))
    out.append(np.cos(theta))
    out.append(np.tan(theta))
    x = asarray([-1, 0, 1])
    out.append(x)
    out.append(np.arcsin(x))
    out.append(np.arccos(x))
    out.append(np.arctan(x))
    return out


# Exponents and Logarithms
@section
def ufuncs_exponents_logarithms(asarray, rng):
    out = []
    x = asarray([1, 2, 3])
    out.append(x)
    out.append(np.exp(x))
    out.append(np.exp2(x))
    out.append(np.power(3., x))
    x = asarray([1, 2, 4, 10])
    out.append(x)
    out.append(np.log(x))
    out.append(np.log2(x))
    out.append(np.log10(x))
    x = asarray([0, 0.001, 0.01, 0.1])
    out.append(np.expm1(x))
    out.append(np.log1p(x))
    return out


# Specialized Ufuncs (scipy.special)
@section
def ufuncs_specialized(asarray, rng):
    out = []
    # Gamma functions (generalized factorials) and related functions
    x = asarray([1, 5, 10])
    out.append(special.gamma(x))
    out.append(special.gammaln(x))
    out.append(special.beta(x, 2))
    # Error function (integral of Gaussian),
    # its complement, and its inverse
    x = asarray(np.array([0, 0.3, 0.7, 1.0]))
    out.append(special.erf(x))
    out.append(special.erfc(x))
    out.append(special.erfinv(x))
    return out


# Advanced Ufunc Features: Specifying Output
@section
def ufuncs_specifying_output(asarray, rng):
    out = []
    x = asarray(np.arange(5))
    y = asarray(np.zeros(5))  # np.empty in the notebook
    np.multiply(x, 10, out=y)
    out.append(y)
    y = asarray(np.zeros(10))
    np.power(2, x, out=y[::2])
    out.append(y)
    return out


# Advanced Ufunc Features: Aggregations
@section
def ufuncs_aggregations(asarray, rng):
    out = []
    x = asarray(np.arange(1, 6))
    out.append(np.add.reduce(x))
    out.append(np.multiply.reduce(x))
    out.append(np.add.accumulate(x))
    out.append(np.multiply.accumulate(x))
    return out


# Advanced Ufunc Features: Outer Products
@section
def ufuncs_outer(asarray, rng):
    x = asarray(np.arange(1, 6))
    return [np.multiply.outer(x, x)]


# ---------------------------------------------------------------- 02.04
# Aggregations: min, max, and Everything in Between

# Summing the Values in an Array
@section
def aggregates_summing(asarray, rng):
    out = []
    L = asarray(rng.random(100))
    out.append(sum(L))
    out.append(np.sum(L))
    return out


# Minimum and Maximum
@section
def aggregates_min_max(asarray, rng):
    out = []
    big_array = asarray(rng.random(10000))  # 1000000 in the notebook
    out.append((min(big_array), max(big_array)))
    out.append((np.min(big_array), np.max(big_array)))
    out.append([big_array.min(), big_array.max(), big_array.sum()])
    return out


# Multidimensional Aggregates
@section
def aggregates_multidimensional(asarray, rng):
    out = []
    M = asarray(rng.integers(0, 10, (3, 4)))
    out.append(M)
    out.append(M.sum())
    out.append(M.min(axis=0))
    out.append(M.max(axis=1))
    return out


# Example: What Is the Average Height of US Presidents?
@section
def aggregates_president_heights(asarray, rng):
    out = []
    # data/president_heights.csv: 42 heights in whole centimetres
    heights = asarray(rng.integers(163, 194, size=42))
    out.append(heights)
    out.append(heights.mean())
    out.append(heights.std())
    out.append(heights.min())
    out.append(heights.max())
    out.append(np.percentile(heights, 25))
    out.append(np.median(heights))
    out.append(np.percentile(heights, 75))
    return out


# ---------------------------------------------------------------- 02.05
# Computation on Arrays: Broadcasting

# Introducing Broadcasting
@section
def broadcasting_introducing(asarray, rng):
    out = []
    a = asarray(np.array([0, 1, 2]))
    b = asarray(np.array([5, 5, 5]))
    out.append(a + b)
    out.append(a + 5)
    M = asarray(np.ones((3, 3)))
    out.append(M)
    out.append(M + a)
    a = asarray(np.arange(3))
    b = asarray(np.arange(3))[:, np.newaxis]
    out.append(a)
    out.append(b)
    out.append(a + b)
    return out


# Broadcasting Example 1
@section
def broadcasting_example_1(asarray, rng):
    M = asarray(np.ones((2, 3)))
    a = asarray(np.arange(3))
    return [M + a]


# Broadcasting Example 2
@section
def broadcasting_example_2(asarray, rng):
    a = asarray(np.arange(3)).reshape((3, 1))
    b = asarray(np.arange(3))
    return [a + b]


# Broadcasting Example 3
@section
def broadcasting_example_3(asarray, rng):
    out = []
    M = asarray(np.ones((3, 2)))
    a = asarray(np.arange(3))
    try:
        M + a
    except ValueError as e:  # operands could not be broadcast together
        out.append(type(e).__name__)
    out.append(a[:, np.newaxis].shape)
    out.append(M + a[:, np.newaxis])
    out.append(np.logaddexp(M, a[:, np.newaxis]))
    return out


# Broadcasting in Practice: Centering an Array
@section
def broadcasting_centering(asarray, rng):
    out = []
    X = asarray(rng.random((10, 3)))
    Xmean = X.mean(0)
    out.append(Xmean)
    X_centered = X - Xmean
    out.append(X_centered.mean(0))
    return out


# Broadcasting in Practice: Plotting a Two-Dimensional Function
@section
def broadcasting_two_dimensional_function(asarray, rng):
    # x and y have 50 steps from 0 to 5
    x = asarray(np.linspace(0, 5, 50))
    y = asarray(np.linspace(0, 5, 50))[:, np.newaxis]

    z = np.sin(x) ** 10 + np.cos(10 + y * x) * np.cos(x)
    return [z]  # what plt.imshow shows


# ---------------------------------------------------------------- 02.06
# Comparisons, Masks, and Boolean Logic

def _rainfall(asarray, rng):
    # Seattle's 2015 daily precipitation (vega_datasets): 365 floats in mm,
    # about half of them 0, to one decimal
    rain = np.round(rng.exponential(6.0, 365), 1) * (rng.random(365) < 0.45)
    return asarray(rain)


# Example: Counting Rainy Days
@section
def masks_rainy_days(asarray, rng):
    rainfall_mm = _rainfall(asarray, rng)
    return [len(rainfall_mm)]


# Comparison Operators as Ufuncs
@section
def masks_comparison_operators(asarray, rng):
    out = []
    x = asarray(np.array([1, 2, 3, 4, 5]))
    out.append(x < 3)  # less than
    out.append(x > 3)  # greater than
    out.append(x <= 3)  # less than or equal
    out.append(x >= 3)  # greater than or equal
    out.append(x != 3)  # not equal
    out.append(x == 3)  # equal
    out.append((2 * x) == (x ** 2))
    x = asarray(rng.integers(10, size=(3, 4)))
    out.append(x)
    out.append(x < 6)
    return out


# Working with Boolean Arrays: Counting Entries
@section
def masks_counting_entries(asarray, rng):
    out = []
    x = asarray(rng.integers(10, size=(3, 4)))
    # how many values less than 6?
    out.append(np.count_nonzero(x < 6))
    out.append(np.sum(x < 6))
    # how many values less than 6 in each row?
    out.append(np.sum(x < 6, axis=1))
    # are there any values greater than 8?
    out.append(np.any(x > 8))
    # are there any values less than zero?
    out.append(np.any(x < 0))
    # are all values less than 10?
    out.append(np.all(x < 10))
    # are all values equal to 6?
    out.append(np.all(x == 6))
    # are all values in each row less than 8?
    out.append(np.all(x < 8, axis=1))
    return out


# Working with Boolean Arrays: Boolean Operators
@section
def masks_boolean_operators(asarray, rng):
    out = []
    rainfall_mm = _rainfall(asarray, rng)
    out.append(np.sum((rainfall_mm > 10) & (rainfall_mm < 20)))
    out.append(np.sum(~( (rainfall_mm <= 10) | (rainfall_mm >= 20) )))
    out.append(np.sum(rainfall_mm == 0))
    out.append(np.sum(rainfall_mm != 0))
    out.append(np.sum(rainfall_mm > 10))
    out.append(np.sum((rainfall_mm > 0) &
                      (rainfall_mm < 5)))
    return out


# Boolean Arrays as Masks
@section
def masks_as_masks(asarray, rng):
    out = []
    rainfall_mm = _rainfall(asarray, rng)
    x = asarray(rng.integers(10, size=(3, 4)))
    out.append(x < 5)
    out.append(x[x < 5])
    # construct a mask of all rainy days
    rainy = (rainfall_mm > 0)

    # construct a mask of all summer days (June 21st is the 172nd day)
    days = asarray(np.arange(365))
    summer = (days > 172) & (days < 262)

    out.append(np.median(rainfall_mm[rainy]))
    out.append(np.median(rainfall_mm[summer]))
    out.append(np.max(rainfall_mm[summer]))
    out.append(np.median(rainfall_mm[rainy & ~summer]))
    return out


# Using the Keywords and/or Versus the Operators &/|
@section
def masks_and_or_keywords(asarray, rng):
    out = []
    A = asarray(np.array([1, 0, 1, 0, 1, 0], dtype=bool))
    B = asarray(np.array([1, 1, 1, 0, 1, 1], dtype=bool))
    out.append(A | B)
    try:
        A or B
    except ValueError as e:  # the truth value of an array ... is ambiguous
        out.append(type(e).__name__)
    x = asarray(np.arange(10))
    out.append((x > 4) & (x < 8))
    try:
        (x > 4) and (x < 8)
    except ValueError as e:
        out.append(type(e).__name__)
    return out


# ---------------------------------------------------------------- 02.07
# Fancy Indexing

# Exploring Fancy Indexing
@section
def fancy_exploring(asarray, rng):
    out = []
    x = asarray(rng.integers(100, size=10))
    out.append(x)
    out.append([x[3], x[7], x[2]])
    ind = [3, 7, 4]
    out.append(x[ind])
    ind = asarray(np.array([[3, 7],
                            [4, 5]]))
    out.append(x[ind])
    X = asarray(np.arange(12)).reshape((3, 4))
    out.append(X)
    row = asarray(np.array([0, 1, 2]))
    col = asarray(np.array([2, 1, 3]))
    out.append(X[row, col])
    out.append(X[row[:, np.newaxis], col])
    out.append(row[:, np.newaxis] * col)
    return out


# Combined Indexing
@section
def fancy_combined(asarray, rng):
    out = []
    X = asarray(np.arange(12)).reshape((3, 4))
    row = asarray(np.array([0, 1, 2]))
    out.append(X[2, [2, 0, 1]])
    out.append(X[1:, [2, 0, 1]])
    mask = asarray(np.array([True, False, True, False]))
    out.append(X[row[:, np.newaxis], mask])
    return out


# Example: Selecting Random Points
@section
def fancy_random_points(asarray, rng):
    out = []
    mean = [0, 0]
    cov = [[1, 2],
           [2, 5]]
    X = asarray(rng.multivariate_normal(mean, cov, 100))
    out.append(X.shape)
    indices = asarray(rng.choice(X.shape[0], 20, replace=False))
    out.append(indices)
    selection = X[indices]  # fancy indexing here
    out.append(selection.shape)
    out.append(selection)  # what the scatter plot shows
    return out


# Modifying Values with Fancy Indexing
@section
def fancy_modifying_values(asarray, rng):
    out = []
    x = asarray(np.arange(10))
    i = asarray(np.array([2, 1, 8, 4]))
    x[i] = 99
    out.append(x.copy())
    x[i] -= 10
    out.append(x)
    x = asarray(np.zeros(10))
    x[[0, 0]] = [4, 6]
    out.append(x.copy())
    i = [2, 3, 3, 4, 4, 4]
    x[i] += 1
    out.append(x)
    x = asarray(np.zeros(10))
    np.add.at(x, i, 1)
    out.append(x)
    return out


# Example: Binning Data
@section
def fancy_binning(asarray, rng):
    x = asarray(rng.normal(size=100))

    # compute a histogram by hand
    bins = asarray(np.linspace(-5, 5, 20))
    counts = np.zeros_like(bins)

    # find the appropriate bin for each x
    i = np.searchsorted(bins, x)

    # add 1 to each of these bins
    np.add.at(counts, i, 1)
    return [i, counts]  # what plt.plot(bins, counts) shows


# ---------------------------------------------------------------- 02.08
# Sorting Arrays

# Fast Sorting in NumPy: np.sort and np.argsort
@section
def sorting_sort_argsort(asarray, rng):
    out = []
    x = asarray(np.array([2, 1, 4, 3, 5]))
    out.append(np.sort(x))
    x.sort()
    out.append(x)
    x = asarray(np.array([2, 1, 4, 3, 5]))
    i = np.argsort(x)
    out.append(i)
    out.append(x[i])
    return out


# Sorting Along Rows or Columns
@section
def sorting_rows_columns(asarray, rng):
    out = []
    X = asarray(rng.integers(0, 10, (4, 6)))
    out.append(X)
    # sort each column of X
    out.append(np.sort(X, axis=0))
    # sort each row of X
    out.append(np.sort(X, axis=1))
    return out


# Partial Sorts: Partitioning
@section
def sorting_partitioning(asarray, rng):
    out = []
    X = asarray(rng.integers(0, 10, (4, 6)))
    x = asarray(np.array([7, 2, 3, 1, 6, 5, 4]))
    out.append(np.partition(x, 3))
    out.append(np.partition(X, 2, axis=1))
    return out


# Example: k-Nearest Neighbors
@section
def sorting_knn(asarray, rng):
    out = []
    X = asarray(rng.random((10, 2)))
    dist_sq = np.sum((X[:, np.newaxis] - X[np.newaxis, :]) ** 2, axis=-1)
    out.append(dist_sq)
    # for each pair of points, compute differences in their coordinates
    differences = X[:, np.newaxis] - X[np.newaxis, :]
    out.append(differences.shape)
    # square the coordinate differences
    sq_differences = differences ** 2
    out.append(sq_differences.shape)
    # sum the coordinate differences to get the squared distance
    dist_sq = sq_differences.sum(-1)
    out.append(dist_sq.shape)
    out.append(dist_sq.diagonal())
    nearest = np.argsort(dist_sq, axis=1)
    out.append(nearest)
    K = 2
    nearest_partition = np.argpartition(dist_sq, K + 1, axis=1)
    out.append(nearest_partition)
    return out
