# The part of benchpress's benchmarks/util.py Benchmark
# (https://github.com/bh107/benchpress, commit e1dcda4; Apache License 2.0,
# Copyright the benchpress authors) that its python_numpy benchmarks call
# inside their kernels: do_while as it runs without Bohrium (the loop body
# until it returns False or niters runs), and no-op plotting and flushing.
# Its argument parsing, timing and data files are left out.


class Benchmark:
    def __init__(self, description, size_pattern):
        self.description = description

    def do_while(self, func, niters, *args, **kwargs):
        """Implements `bohrium.do_while()` for regular NumPy"""
        i = 0
        while niters is None or i < niters:
            cond = func(*args, **kwargs)
            if cond is not None and not cond:
                break
            i += 1
        return i

    def plot_surface(self, *args, **kwargs):
        pass

    def flush(self):
        pass
