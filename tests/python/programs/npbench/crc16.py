# NPBench's CRC-16 (crc16), verbatim from https://github.com/spcl/npbench
# (commit f2d7f27; BSD-3-Clause, see __init__.py): the kernel file
# npbench/benchmarks/crc16/crc16_numpy.py, then npbench/benchmarks/crc16/crc16.py
# (its initialize, less its own `import numpy as np`).
# --- npbench/benchmarks/crc16/crc16_numpy.py
import numpy as np


# Adapted from https://gist.github.com/oysstu/68072c44c02879a2abf94ef350d1c7c6
def crc16(data, poly=0x8408):
    '''
    CRC-16-CCITT Algorithm
    '''
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)

    return crc & 0xFFFF


# --- npbench/benchmarks/crc16/crc16.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def initialize(N):
    from numpy.random import default_rng
    rng = default_rng(42)
    data = rng.integers(0, 256, size=(N, ), dtype=np.uint8)
    return data
