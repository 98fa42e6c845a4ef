# benchpress's heat equation benchmark
# (https://github.com/bh107/benchpress, commit e1dcda4,
# benchpress/benchmarks/heat_equation/python_numpy/heat_equation.py);
# Apache License 2.0, Copyright the benchpress authors (Mads R. B. Kristensen
# et al., Niels Bohr Institute). A NumPy program braze did not write:
# tests/python/test_programs.py runs it on braze tensors, unchanged, through
# NumPy's protocols. init_grid and jacobi are verbatim; main() (command line,
# timing, data files) is left out, and `bench` is the stand-in of
# programs/_benchpress.py for benchpress's util.Benchmark.
import numpy as np
from programs import _benchpress as util

bench = util.Benchmark("Solving the heat equation using the jacobi method", "height*width*iterations")


def init_grid(height, width, dtype=np.float32):
    grid = np.zeros((height + 2, width + 2), dtype=dtype)
    grid[:, 0] = dtype(-273.15)
    grid[:, -1] = dtype(-273.15)
    grid[-1, :] = dtype(-273.15)
    grid[0, :] = dtype(40.0)
    return grid


def jacobi(grid, epsilon=0.005, max_iterations=None):
    def loop_body(grid):
        center = grid[1:-1, 1:-1]
        north = grid[0:-2, 1:-1]
        east = grid[1:-1, 2:]
        west = grid[1:-1, 0:-2]
        south = grid[2:, 1:-1]
        work = 0.2 * (center + north + east + west + south)
        delta = np.sum(np.absolute(work - center))
        center[:] = work
        bench.plot_surface(grid, "2d", 0, 200, -200)
        return delta > epsilon

    bench.do_while(loop_body, max_iterations, grid)
    return grid
