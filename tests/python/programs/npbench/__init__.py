"""NPBench's NumPy kernels, run on braze tensors by tests/python/test_npbench.py.

NPBench (https://github.com/spcl/npbench, commit f2d7f27), BSD-3-Clause,
Copyright (c) 2021, SPCL (ETH Zurich) and the NPBench authors; some kernels
carry their own authors' notices at their top, kept as they are.

One module per benchmark, named as NPBench's module (bench_info/<name>.json's
"module_name"): the benchmark's NumPy kernel file,
npbench/benchmarks/.../<name>_numpy.py, verbatim, then the file with its
inputs' `initialize`, npbench/benchmarks/.../<name>.py, verbatim except that
its own `import numpy as np` is dropped (the kernel file's is there). braze
did not write these programs: they call np.* and index as NumPy code does,
and NumPy's protocols bring every call on a braze tensor to braze.

NPBench's license:

Copyright (c) 2021, SPCL
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""
