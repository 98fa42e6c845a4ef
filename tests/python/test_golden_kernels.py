"""Golden kernels: what BRAZE_DUMP writes is byte-identical from run to run,
and is the code that ran, on a compile and on a cache hit alike (the keys in
BRAZE_LOG=debug's lines name the dumped files), and `braze kernels` on the
saved graph shows the same text: the x86-64 code (fused,asm) and the CUDA
source and PTX (cuda,ptx). Each run is a fresh interpreter: braze reads the
environment once per process."""

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import braze as bz

BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))

# softmax, layer_norm, a broadcast/transpose chain and a column reduction,
# each saved for the CLI, realized once to compile and then again inside a
# different program (realized with another output), where its kernel comes
# from the kernel cache.
PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import braze as bz
    rng = np.random.default_rng(7)
    x = bz.tensor(rng.standard_normal((5, 40), dtype=np.float32))
    t = bz.tensor(rng.standard_normal((40, 5), dtype=np.float32))
    b = bz.tensor(rng.standard_normal(40, dtype=np.float32))
    w = bz.tensor(rng.standard_normal((4, 9)) * 1e10)  # float64 sin past 2^32: a host call
    u = bz.tensor(rng.standard_normal(3, dtype=np.float32))  # nothing to fuse with
    graphs = {
        "softmax": lambda: bz.softmax(x, axis=-1),
        "layer_norm": lambda: bz.layer_norm(x, b, b, 1e-5),
        "chain": lambda: bz.maximum(t.T * 2.0 + b, 0.0) - x,
        "colsum": lambda: (x * x).sum(axis=0),
        "sin64": lambda: bz.sin(w) * 2.0,
    }
    for name, make in graphs.items():
        y = make()
        bz.save_graph(y, f"{sys.argv[1]}/{name}.json")
        print("realize", name, file=sys.stderr, flush=True)
        y.numpy()
        print("again", name, file=sys.stderr, flush=True)
        bz.realize(make(), u + 1.0)
""")


def run_program(tmp_path, dump_dir, dump="fused,asm"):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_DUMP=dump, BRAZE_DUMP_DIR=str(dump_dir), BRAZE_LOG="debug",
               BRAZE_CPU_ISA="avx2", BRAZE_BACKEND="cpu", PYTHONPATH=path)
    r = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stderr


def braze_cli():
    built = pathlib.Path(BRAZE_PATH).parent / "tools" / "braze"
    if built.exists():
        return str(built)
    installed = pathlib.Path(sys.executable).parent / "braze"
    if installed.exists():
        return str(installed)
    pytest.skip("the braze CLI is not built next to this Python package")


def sections(log):
    """The log lines between one 'realize'/'again' marker and the next."""
    out, current = {}, None
    for line in log.splitlines():
        if line.startswith(("realize ", "again ")):
            current = line
            out[current] = []
        elif current:
            out[current].append(line)
    return out


KERNEL_LINE = re.compile(r"braze: kernel ([0-9a-f]{32})/avx2/v\d+: (.*)")


def run_twice(tmp_path, dump="fused,asm"):
    """The dump files, checked byte-identical over two runs, and the first
    run's log by section."""
    first = run_program(tmp_path, tmp_path / "first", dump)
    run_program(tmp_path, tmp_path / "second", dump)
    files = {p.name: p.read_bytes() for p in (tmp_path / "first").iterdir()}
    assert files == {p.name: p.read_bytes() for p in (tmp_path / "second").iterdir()}
    return files, sections(first)


def compiled_then_hit(by_section, name):
    """The key of graph `name`'s one kernel: compiled when first realized,
    a memory cache hit when realized again."""
    compiled = [KERNEL_LINE.match(l) for l in by_section[f"realize {name}"]]
    compiled = [m.group(1) for m in compiled if m and m.group(2).startswith("compiled")]
    assert len(compiled) == 1, (name, by_section[f"realize {name}"])
    hits = [KERNEL_LINE.match(l) for l in by_section[f"again {name}"]]
    assert compiled[0] in {m.group(1) for m in hits if m and m.group(2) == "memory cache hit"}, \
        by_section[f"again {name}"]
    return compiled[0]


def test_dumped_kernels_are_golden_and_are_what_ran(tmp_path):
    files, by_section = run_twice(tmp_path)
    # The float64 sine calls the C library for lanes past 2^32 (Note [Host
    # calls]): the dump names the function, not its per-run address.
    assert "movabs rax, host_sin_f64" in files[f"{compiled_then_hit(by_section, 'sin64')}.avx2.s"].decode()
    for name in ("softmax", "layer_norm", "chain", "colsum", "sin64"):
        key = compiled_then_hit(by_section, name)
        assert f"{key}.avx2.s" in files and f"{key}.fused.txt" in files, name
        # The CLI on the saved graph: the same canonical text and machine code.
        shown = subprocess.run([braze_cli(), "kernels", str(tmp_path / f"{name}.json"), "--isa", "avx2"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert files[f"{key}.fused.txt"].decode() in shown.stdout, name
        assert files[f"{key}.avx2.s"].decode() in shown.stdout, name


def cuda_dump_words():
    """'cuda,ptx' where NVRTC loads, 'cuda' where only the backend is built."""
    r = subprocess.run([braze_cli(), "doctor", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    if not facts["cuda_backend"]:
        pytest.skip("this braze has no CUDA backend (no CUDA headers at build time)")
    nvrtc = next(lib for lib in facts["cuda"] if lib["library"] == "libnvrtc")
    return "cuda,ptx" if nvrtc["found"] else "cuda"


def test_cuda_dumps_are_golden_and_are_what_braze_kernels_prints(tmp_path):
    words = cuda_dump_words()
    files, by_section = run_twice(tmp_path, words)
    assert not any(n.endswith((".s", ".fused.txt")) for n in files), "only what was asked for"
    for name in ("softmax", "layer_norm", "chain", "colsum"):
        key = compiled_then_hit(by_section, name)
        source = files[f"{key}.cu"].decode()
        assert source.startswith("// kernel bz_") and 'extern "C" __global__' in source, source[:300]
        graph = str(tmp_path / f"{name}.json")
        shown = subprocess.run([braze_cli(), "kernels", "--target", "cuda", graph],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert source in shown.stdout, name
        if "ptx" not in words:
            continue
        ptx = [n for n in files if n.startswith(key) and n.endswith(".ptx")]
        assert len(ptx) == 1, sorted(files)
        arch = ptx[0].split(".")[1]                        # <key>.sm_90.ptx
        text = files[ptx[0]].decode()
        assert f".target {arch}" in text and f"; PTX for {arch} by NVRTC " in text.splitlines()[0], text[:400]
        shown = subprocess.run([braze_cli(), "kernels", "--target", "cuda", "--emit", "ptx", "--arch", arch, graph],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert text in shown.stdout, name


DEVICE_PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import braze as bz
    rng = np.random.default_rng(0)
    with bz.device("cuda"):
        x = bz.tensor(rng.standard_normal((64, 100)).astype(np.float32))
        y = bz.softmax(x * 2.0, axis=-1)
        bz.save_graph(y, f"{sys.argv[1]}/softmax.json")
        y.numpy()
        bz.softmax(x * 2.0, axis=-1).numpy()  # a replay: nothing new to dump
""")


def test_a_cuda_program_dumps_the_kernels_it_loads(tmp_path):
    """On a CUDA device (emulated here) the dumped source is the kernel the
    device program loaded, and what `braze kernels --target cuda` prints."""
    cuda_dump_words()  # skips where braze has no CUDA backend
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_DUMP="cuda", BRAZE_DUMP_DIR=str(tmp_path / "dump"), BRAZE_CUDA="emulate",
               BRAZE_BACKEND="cpu", PYTHONPATH=path)
    r = subprocess.run([sys.executable, "-c", DEVICE_PROGRAM, str(tmp_path)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    files = sorted((tmp_path / "dump").iterdir())
    assert [f.suffix for f in files] == [".cu"], files  # softmax is one kernel
    shown = subprocess.run([braze_cli(), "kernels", "--target", "cuda", str(tmp_path / "softmax.json")],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert files[0].read_text() in shown.stdout
