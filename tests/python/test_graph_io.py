"""bz.save_graph / bz.load_graph (docs/graph-format.md): a graph that uses
every op of bz.ops() survives the round trip with equal results; the file
has its format and version; malformed files give clear errors."""

import json

import numpy as np
import pytest

import braze as bz
from conftest import values

OPS = bz.ops()


def graph_with_every_op():
    """Lazy tensors whose graph, together, contains every op of the table.
    Element-wise rows are applied from the table itself, so a new row is
    covered without editing this function."""
    x = bz.tensor(values(np.float32, (3, 4), seed=1, specials=False))       # Input
    y = bz.tensor(values(np.float32, (3, 4), seed=2, specials=False))
    cond = bz.tensor(values(np.bool_, (3, 4), seed=3))
    i, j = bz.tensor(values(np.int32, (3, 4), seed=6)), bz.tensor(values(np.int8, (3, 4), seed=7))
    outs = []
    for o in OPS:
        if o["kind"] != "elementwise" or not o["auto"]:
            continue
        fn = getattr(bz, o["api"])
        ints = o["rule"] in ("Bitwise", "Shift")  # the bitwise ops take no floats
        if o["arity"] == 1:
            outs.append(fn(i if ints else x))
        elif o["arity"] == 2:
            outs.append(fn(i, j) if ints else fn(x, y))
        else:
            outs.append(fn(cond, x, y))
    outs.append(x.astype(bz.int32) + bz.full((3, 4), 2, dtype=bz.int32))  # Cast, Const
    outs.append(bz.arange(4, dtype=bz.float32) * x)                       # Arange, broadcasting
    outs.append(bz.broadcast_to(x[1], (2, 3, 4)))                         # Slice, Reshape, Expand
    outs.append(x.T[::-1] + 1.0)                                          # Permute, negative step
    outs.append(bz.pad(x, ((1, 0), (0, 2))) * 2.0)                         # Pad
    outs.append(bz.copy(x.T).reshape(12))                                 # Copy + reshape
    outs += [bz.sum(x, axis=0), bz.prod(x, axis=1), bz.max(x), bz.min(x, axis=-1, keepdims=True),
             bz.argmax(x, axis=0), bz.argmin(x)]
    outs.append(bz.matmul(x, y.T))
    img = bz.tensor(values(np.float32, (1, 2, 5, 5), seed=4, specials=False))
    w = bz.tensor(values(np.float32, (3, 2, 3, 3), seed=5, specials=False))
    outs.append(bz.conv2d(img, w, bias=bz.tensor(np.ones(3, np.float32)), padding=1))
    outs.append(bz.softmax(x * 3.0, axis=-1))
    outs.append(bz.where(x > 0.5, x, np.float32(np.nan)))  # a non-finite constant
    return outs


def saved(tmp_path, outs, **kw):
    path = tmp_path / "graph.json"
    bz.save_graph(outs, path, **kw)
    return path, json.loads(path.read_text())


def test_round_trip_uses_every_op(tmp_path):
    outs = graph_with_every_op()
    path, doc = saved(tmp_path, outs)
    in_file = {n["op"] for n in doc["nodes"]}
    assert {o["name"] for o in OPS} <= in_file, f"ops missing from the graph: {({o['name'] for o in OPS}) - in_file}"
    loaded = bz.load_graph(path)
    assert len(loaded) == len(outs)
    for a, b in zip(outs, loaded):
        assert not b.is_realized
        assert a.shape == b.shape and a.dtype == b.dtype
    bz.realize(*loaded)
    for i, (a, b) in enumerate(zip(outs, loaded)):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"output {i}")


def test_format_and_version(tmp_path):
    x = bz.tensor(np.ones((2, 3), np.float32))
    _, doc = saved(tmp_path, bz.exp(x))
    assert doc["format"] == "braze-graph"
    assert isinstance(doc["version"], int) and doc["version"] >= 1
    assert [n["op"] for n in doc["nodes"]] == ["Input", "Exp"]
    assert doc["nodes"][1]["inputs"] == [0]
    assert doc["outputs"] == [1]
    assert len(doc["input_data"]) == 1


def test_non_finite_constants_are_strings(tmp_path):
    x = bz.tensor(np.ones(3, np.float32))
    outs = [bz.maximum(x, float("nan")), bz.minimum(x, float("inf")), x + float("-inf")]
    path, doc = saved(tmp_path, outs)
    reals = [r for n in doc["nodes"] for r in n["reals"]]
    assert {"nan", "inf", "-inf"} <= set(reals)
    for a, b in zip(outs, bz.load_graph(path)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64",
                                   "uint8", "bool"])
def test_input_data_round_trip_every_dtype(tmp_path, dtype):
    a = values(np.dtype(bz.bfloat16) if dtype == "bfloat16" else np.dtype(dtype), (3, 5), seed=1)
    t = bz.tensor(a)
    path, _ = saved(tmp_path, bz.copy(t))
    (back,) = bz.load_graph(path)
    assert back.dtype == t.dtype
    np.testing.assert_array_equal(back.numpy().view(np.uint8), a.view(np.uint8))  # bit-exact, NaN included


def test_saving_without_data(tmp_path):
    x = bz.tensor(np.ones(3, np.float32))
    path, doc = saved(tmp_path, bz.exp(x), with_data=False)
    assert "input_data" not in doc or not doc["input_data"]
    with pytest.raises(ValueError, match=r"load_graph: the graph reads 1 inputs but 0 arrays were given"):
        bz.load_graph(path)


def test_saving_a_realized_tensor_saves_its_value(tmp_path):
    x = bz.tensor(np.arange(4, dtype=np.float32))
    y = (x * 2.0).realize()
    path, doc = saved(tmp_path, y)
    assert [n["op"] for n in doc["nodes"]] == ["Input"]
    np.testing.assert_array_equal(bz.load_graph(path)[0].numpy(), [0, 2, 4, 6])


def test_several_outputs_share_nodes(tmp_path):
    x = bz.tensor(np.ones((2, 2), np.float32))
    e = bz.exp(x)
    path, doc = saved(tmp_path, [e + 1.0, e * 2.0])
    assert sum(n["op"] == "Exp" for n in doc["nodes"]) == 1
    a, b = bz.load_graph(path)
    np.testing.assert_allclose(a.numpy(), np.e + 1, rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), 2 * np.e, rtol=1e-6)


# --- malformed files -------------------------------------------------------------


def write(tmp_path, text):
    p = tmp_path / "bad.json"
    p.write_text(text)
    return p


def good_doc(tmp_path):
    x = bz.tensor(np.ones((2, 3), np.float32))
    return saved(tmp_path, bz.exp(x))[1]


def mutate(doc, fn):
    doc = json.loads(json.dumps(doc))
    fn(doc)
    return json.dumps(doc)


MALFORMED = [
    ("not_json", lambda d: "{ this is not json", r"^load_graph: not valid JSON"),
    ("empty", lambda d: "", r"^load_graph: not valid JSON"),
    ("wrong_format", lambda d: mutate(d, lambda x: x.update(format="onnx")), r"^load_graph: not a braze graph"),
    ("future_version", lambda d: mutate(d, lambda x: x.update(version=999)), r"^load_graph: format version 999 is not supported"),
    ("missing_nodes", lambda d: mutate(d, lambda x: x.pop("nodes")), r"^load_graph: .*nodes"),
    ("unknown_op", lambda d: mutate(d, lambda x: x["nodes"][1].update(op="Frobnicate")), r"^load_graph: unknown op 'Frobnicate'"),
    ("unknown_dtype", lambda d: mutate(d, lambda x: x["nodes"][1].update(dtype="uint64")), r"uint64"),
    ("forward_input", lambda d: mutate(d, lambda x: x["nodes"][1].update(inputs=[5])), r"node 1 reads node 5, which does not come before it"),
    ("wrong_shape", lambda d: mutate(d, lambda x: x["nodes"][1].update(shape=[3, 2])), r"^exp: recorded type float32\[3, 2\] differs"),
    ("bad_output", lambda d: mutate(d, lambda x: x.update(outputs=[7])), r"^load_graph: output 7 is not a node"),
    ("bad_base64", lambda d: mutate(d, lambda x: x.update(input_data=["@@@"])), r"^load_graph: input data is not base64"),
    ("short_data", lambda d: mutate(d, lambda x: x.update(input_data=["AAAA"])), r"^load_graph: input 0 has 3 bytes of data, expected 24"),
]


@pytest.mark.parametrize("make,match", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_file_gives_clear_error(tmp_path, make, match):
    path = write(tmp_path, make(good_doc(tmp_path)))
    with pytest.raises(ValueError, match=match) as info:
        bz.load_graph(path)
    assert str(info.value)  # a message, not an empty exception


def test_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"^load_graph: cannot open .*missing.json"):
        bz.load_graph(tmp_path / "missing.json")
