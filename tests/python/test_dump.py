"""BRAZE_DUMP=fused,asm,graph,plan with BRAZE_DUMP_DIR, and BRAZE_LOG (Note [Dump files] in
runtime/dump.h). braze reads the environment once per process, so each
case runs in a fresh interpreter."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import braze as bz

# The child finds the same braze this test imported, whatever the cwd.
BRAZE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(bz.__file__)))

PROGRAM = textwrap.dedent("""
    import numpy as np
    import braze as bz
    x = bz.tensor(np.arange(48, dtype=np.float32).reshape(3, 16) / 7)
    bz.softmax(x, axis=-1).numpy()
    f = bz.arange(2**33, dtype="float64")[::2**32] * 3  # read 2**32 apart (a lazy arange: no memory)
    f.numpy()                               # strides past 32 bits run on the interpreter
    # Both kernels again, in a new program (a replayed one would not look
    # them up): cache hits, written once.
    bz.realize(bz.softmax(x, axis=-1), bz.arange(2**33, dtype="float64")[::2**32] * 3)
    bz.softmax(x, axis=-1).numpy()          # the first program, replayed
""")


def run(tmp_path, dump, dump_dir, program=PROGRAM, env=None):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(env or os.environ, BRAZE_DUMP_DIR=str(dump_dir), BRAZE_BACKEND="cpu", PYTHONPATH=path)
    env.pop("BRAZE_DUMP", None)
    if dump is not None:
        env["BRAZE_DUMP"] = dump
    return subprocess.run([sys.executable, "-c", program], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def test_dump_writes_fused_text_and_assembly_per_kernel(tmp_path):
    out = tmp_path / "dump"
    r = run(tmp_path, "fused,asm", out)
    assert r.returncode == 0, r.stderr
    # Only the slow path said once (Note [No silent slow paths]): the dump writes nothing on stderr.
    assert r.stderr.splitlines() == ["braze: warning: a fused kernel over [2] runs on the reference interpreter, not "
                                     "generated code (the CPU code generator does not emit strides past 32 bits yet); "
                                     "said once per kind; BRAZE_STRICT=1 makes it an error"], r.stderr
    fused = sorted(out.glob("*.fused.txt"))
    asm = sorted(out.glob("*.s"))
    assert len(fused) == 2 and len(asm) == 2, sorted(p.name for p in out.iterdir())
    assert {p.name.split(".")[0] for p in fused} == {p.name.split(".")[0] for p in asm}
    assert all(p.name.split(".")[1] in ("avx512", "avx2") for p in asm)

    texts = [p.read_text() for p in asm]
    generated = [t for t in texts if "runs on the spec interpreter" not in t]
    interpreted = [t for t in texts if "runs on the spec interpreter" in t]
    assert len(generated) == 1 and len(interpreted) == 1, texts
    assert "# constant pool\n" in generated[0]
    if "built without Zydis" in generated[0]:     # Zydis is optional at configure time
        assert "# the instructions' bytes\n" in generated[0]
    else:
        assert "vmaxps" in generated[0] and "vfmadd" in generated[0] and ": ret\n" in generated[0]
    assert "strides past 32 bits" in interpreted[0], interpreted[0]

    softmax = next(p.read_text() for p in fused if "Exp#" in p.read_text())
    key = softmax.split()[1]
    assert softmax.startswith(f"kernel {key} fusing ")
    assert "Sum#" in softmax and "Max#" in softmax, softmax
    assert "in0 buffer float32 full shape=[3, 16] strides=[16, 1]" in softmax, softmax
    assert "runs as generated" in softmax


def test_dump_dir_defaults_to_braze_dump_in_the_working_directory(tmp_path):
    r = run(tmp_path, "asm", "")
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "braze_dump").glob("*.s"))) == 2
    assert not list((tmp_path / "braze_dump").glob("*.fused.txt"))


def test_unknown_dump_word_is_an_error_listing_the_known_ones(tmp_path):
    out = tmp_path / "dump"
    r = run(tmp_path, "fused,bogus", out)
    assert r.returncode != 0
    assert "ValueError: BRAZE_DUMP: 'bogus' is not something braze can dump" in r.stderr, r.stderr
    assert "fused, asm, graph, plan, cuda, ptx" in r.stderr, r.stderr
    assert not out.exists()


def test_ptx_without_nvrtc_is_a_one_line_error_naming_the_library(tmp_path):
    out = tmp_path / "dump"
    env = dict(os.environ, BRAZE_LIBNVRTC=str(tmp_path / "missing" / "libnvrtc.so"))
    r = run(tmp_path, "ptx", out, env=env)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    if "which this build lacks" in last:  # a build without the CUDA headers says that instead
        assert "BRAZE_DUMP: 'ptx' needs braze's CUDA backend" in last, r.stderr
    else:
        assert last == ("ValueError: BRAZE_DUMP: 'ptx' needs NVRTC, and libnvrtc cannot be loaded (set "
                        "BRAZE_LIBNVRTC to its path; `braze doctor` lists where it was looked for)"), r.stderr
    assert not out.exists()


def test_cuda_source_needs_no_nvrtc(tmp_path):
    out = tmp_path / "dump"
    env = dict(os.environ, BRAZE_LIBNVRTC=str(tmp_path / "missing" / "libnvrtc.so"))
    r = run(tmp_path, "cuda", out, env=env)
    if "which this build lacks" in r.stderr:  # a build without the CUDA headers
        assert "BRAZE_DUMP: 'cuda' needs braze's CUDA backend" in r.stderr
        return
    assert r.returncode == 0, r.stderr
    # softmax and f (which the CPU interprets; CUDA renders it all the same)
    sources = sorted(out.glob("*.cu"))
    assert len(sources) == 2, sorted(p.name for p in out.iterdir())
    assert all('extern "C" __global__' in p.read_text() for p in sources)


def run_logged(tmp_path, level):
    path = os.pathsep.join(p for p in (BRAZE_PATH, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BRAZE_LOG=level, BRAZE_BACKEND="cpu", PYTHONPATH=path)
    env.pop("BRAZE_DUMP", None)
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def test_braze_log_info_names_each_compile_once_and_debug_adds_the_hits(tmp_path):
    info = run_logged(tmp_path, "info")
    assert info.returncode == 0, info.stderr
    compiles = [line for line in info.stderr.splitlines() if line.startswith("braze: kernel ")]
    # softmax and f: each compiled (or sent to the interpreter) once;
    # the second softmax is a hit, which info does not show.
    assert len(compiles) == 2, info.stderr
    assert any(": compiled, " in line for line in compiles), info.stderr
    assert "cache hit" not in info.stderr
    # Three structures, each compiled once, saying what their inputs are;
    # the last softmax replays the first, which only debug shows.
    programs = [line for line in info.stderr.splitlines() if line.startswith("braze: program ")]
    assert len(programs) == 3 and all(": compiled (" in line for line in programs), info.stderr
    assert "inputs float32[3, 16]; 0 scalar parameter(s)" in programs[0], programs
    assert "replayed" not in info.stderr
    debug = run_logged(tmp_path, "debug")
    assert debug.returncode == 0, debug.stderr
    assert debug.stderr.count(": memory cache hit") >= 1, debug.stderr
    first = programs[0].split(": compiled")[0]  # "braze: program <hash>"
    assert f"{first}: replayed" in debug.stderr, debug.stderr


def test_braze_log_rejects_an_unknown_level(tmp_path):
    r = run_logged(tmp_path, "loud")
    assert r.returncode != 0
    assert "BRAZE_LOG='loud' is not a log level; expected info or debug" in r.stderr, r.stderr


def test_same_program_gives_the_same_files_in_every_run(tmp_path):
    contents = []
    for name in ("first", "second"):
        r = run(tmp_path, "fused,asm", tmp_path / name)
        assert r.returncode == 0, r.stderr
        contents.append({p.name: p.read_text() for p in (tmp_path / name).iterdir()})
    assert len(contents[0]) == 4
    assert contents[0] == contents[1]


def test_nothing_is_written_when_braze_dump_is_unset(tmp_path):
    for dump in (None, ""):
        r = run(tmp_path, dump, tmp_path / "dump")
        assert r.returncode == 0, r.stderr
        assert not (tmp_path / "dump").exists()
        assert not (tmp_path / "braze_dump").exists()


# Three realizes of one structure: one program, made once, replayed twice.
MLP = textwrap.dedent("""
    import numpy as np
    import braze as bz
    x = bz.tensor(np.full((64, 128), 0.5, dtype=np.float32))
    w = bz.tensor(np.full((128, 128), 0.01, dtype=np.float32))
    for _ in range(3):
        (bz.exp(bz.exp(x) @ w) @ w).numpy()
""")


def test_graph_dump_writes_each_new_programs_lowered_graph_once(tmp_path):
    out = tmp_path / "dump"
    r = run(tmp_path, "graph", out, MLP)
    assert r.returncode == 0, r.stderr
    files = list(out.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".graph.json"), files
    saved = json.loads(files[0].read_text())   # docs/graph-format.md, structure only
    assert [n["op"] for n in saved["nodes"]].count("MatMul") == 2
    assert [n["op"] for n in saved["nodes"]].count("Input") == 2
    assert len(saved["outputs"]) == 1

    # PROGRAM makes three programs (softmax, f, both at once).
    r = run(tmp_path, "graph", tmp_path / "three")
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "three").glob("*.graph.json"))) == 3


def test_plan_dump_is_what_braze_plan_prints(tmp_path):
    out = tmp_path / "dump"
    r = run(tmp_path, "plan,graph", out, MLP)
    assert r.returncode == 0, r.stderr
    plans = list(out.glob("*.plan.txt"))
    graphs = list(out.glob("*.graph.json"))
    assert len(plans) == 1 and len(graphs) == 1
    assert plans[0].name.split(".")[0] == graphs[0].name.split(".")[0]
    plan = plans[0].read_text()
    assert plan.startswith("4 step(s):\n  step 0: Exp#"), plan
    # Three 32 KB values, two alive at once, and each matmul's (steps 1 and 3)
    # workspace, alive during its step only: what oneDNN's kernels for this CPU
    # ask for (AVX2's gemm nothing, AVX-512's brgemm a scratchpad). The
    # figures follow from those sizes.
    workspaces = re.findall(r" workspace  steps (\d+)\.\.(\d+)  (\d+) B", plan)
    assert len(workspaces) == plan.count(" workspace "), plan
    assert all(first == last and first in "13" for first, last, _ in workspaces), plan
    size = {int(step): -(-int(b) // 64) * 64 for step, _, b in workspaces}
    w1, w3 = size.get(1, 0), size.get(3, 0)
    bound = max(2 * 32768 + w1, 32768 + w3)  # at step 1 (two values and its workspace) or 3
    assert f"{3 + len(workspaces)} scratch buffer(s) over 4 step(s)" in plan, plan
    assert f"arena {bound} B, lower bound {bound} B, no reuse {3 * 32768 + w1 + w3} B" in plan, plan
    cli = shutil.which("braze") or os.path.join(os.path.dirname(BRAZE_PATH), "tools", "braze")
    if os.path.exists(cli):                     # beside the build, or installed with the package
        printed = subprocess.run([cli, "plan", str(graphs[0])], capture_output=True, text=True, timeout=60)
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == plan


# Note [One schedule] (runtime/lower.h): bz.explain shows the kernels realize
# compiles, key for key, for graphs with scalars (parameters in realize),
# library calls with epilogues, reductions of permuted views, and random
# expressions.
AGREEMENT = textwrap.dedent("""
    import re, numpy as np
    import braze as bz
    rng = np.random.default_rng(0)
    x = bz.tensor(rng.random((8, 16), dtype=np.float32))
    w = bz.tensor(rng.random((16, 16), dtype=np.float32))
    y = bz.tensor(rng.random((4, 6, 5), dtype=np.float32))
    cases = [lambda: bz.softmax(x * 0.3 + 1.0, axis=-1), lambda: bz.gelu(x @ w * 0.25 + 1.5),
             lambda: bz.sum(y.transpose(1, 2, 0), axis=0) * 2.0, lambda: bz.layer_norm(x - 3.0) / 7.0,
             lambda: bz.var(y.transpose(2, 0, 1), axis=(0, 2)), lambda: bz.where(x > 0.5, x, -x) ** 2.0,
             lambda: x + bz.full((), 0.3) * 1.5]  # constants fold in explain's graph, parameters do not
    ops = [bz.exp, bz.tanh, bz.abs, bz.sqrt, lambda t: t * 1.7, lambda t: t + 0.5, lambda t: t.T,
           lambda t: bz.max(t, axis=0, keepdims=True) - t, lambda t: bz.sum(t, axis=1, keepdims=True) * t]
    for seed in range(40):
        picks = np.random.default_rng(seed).integers(0, len(ops), 4)
        def chain(picks=picks):
            t = x
            for p in picks:
                t = ops[p](t)
            return t
        cases.append(chain)
    for f in cases:
        shown = re.findall(r"kernel ([0-9a-f]{32}) fusing", bz.explain(f(), file=open("/dev/null", "w")))
        print("EXPLAIN", " ".join(sorted(shown)))
        f().numpy()
""")


def test_explain_shows_the_kernels_realize_compiles(tmp_path):
    out = tmp_path / "dump"
    r = run(tmp_path, "fused", out, program=AGREEMENT)
    assert r.returncode == 0, r.stderr
    shown = {k for line in r.stdout.splitlines() if line.startswith("EXPLAIN") for k in line.split()[1:]}
    compiled = {p.name.split(".")[0] for p in out.glob("*.fused.txt")}
    assert len(shown) > 40
    assert shown == compiled, (sorted(shown - compiled), sorted(compiled - shown))
