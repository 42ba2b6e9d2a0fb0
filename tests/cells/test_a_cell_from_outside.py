"""A recurrent cell written outside the designer, registered through the API the cells in
``designer/cells`` use, is a cell like theirs: it trains from the command line, ``parity``
compares its own engine with its unrolled net, it exports to ONNX (run in ONNX Runtime) and the
window draws its unrolled net.

The cell, ``ToyCell``, is a diagonal linear recurrence with one gate,
``h_t = sigmoid(W_f x_t + b_f) * h_{t-1} + tanh(W_c x_t + b_c)``, in a package the test writes
to a temporary folder and imports from there; everything it registered is taken away after the
tests, and the last check is that no registry of the designer still holds a trace of it.

What a new cell takes (the toy's folder, ``toycell/``: 6 files, counted from :data:`TOY`):

1. ``__init__.py``: registers the spec (``designer.graph.registry.register``), imports its
   pure parts and defers its engines and exports until they are needed
   (``designer.graph.parts.defer``);
2. ``spec.py``: the ``LayerSpec`` with its ``CellSpec`` (gates, states, engines, whose
   tensors each engine holds, its unit node's type); pure;
3. ``expansion.py``: the nodes of one step of its unrolled net (``@chain``) and how its unit
   is drawn (``draw_as``); pure;
4. ``memory.py``: what it keeps for the backward pass (``@memory_rule``; without one a
   generic rule counts it); pure;
5. ``engines.py``: its own engine and its ``@builder``, and its unit's op in the unrolled net
   (``@unit_op``); torch;
6. ``exports.py``: its ONNX forms, as ``Scan`` ops (``FUSED``) and as the unrolled unit
   (``NODES``); onnx;

and its tests. Nothing in ``designer/`` changes. The cells in ``designer/cells`` split
``engines`` and ``exports`` into folders of one module per room and add what they need beyond
the toy: ``arithmetic.py``, ``kernels/``, ``checks.py`` (``@warns``), ``engines/readings.py``
(``@reading`` for inspect, ``parity_pair`` where the defaults do not fit),
``exports/pytorch.py`` (``LAYERS``) and ``exports/caffe.py`` (``PARAMS``).
"""
import contextlib
import importlib
import io
import json
import sys
import textwrap
import types

import numpy as np
import pytest
import torch

from designer.cli import main
from designer.graph import parts, registry
from designer.graph import project as P
from designer.graph.retype import replace_layer
from tests.training.run.test_loop import tiny_project

KIND, UNIT, PACKAGE = "ToyCell", "TOY_CELL_UNIT", "toycell"

TOY = {
    "__init__.py": '''
        """ToyCell: a diagonal linear recurrence with one gate, from outside the designer."""
        from designer.graph import parts, registry

        from toycell import expansion, memory, spec  # noqa: F401  (expansion, memory: register)

        registry.register(spec.SPEC)
        parts.defer(parts.ENGINES, "toycell.engines")
        parts.defer(parts.EXPORTS, "toycell.exports")
        ''',
    "spec.py": '''
        """The layer: h_t = sigmoid(W_f x_t + b_f) * h_{t-1} + tanh(W_c x_t + b_c); W_xc holds
        the blocks [f, c] (2H x E), b_c their biases; no recurrent matrix."""
        from designer.graph import dims as D
        from designer.graph.cell import CellSpec
        from designer.graph.layers.common import bias_filler, num_output, weight_filler
        from designer.graph.layers.recurrent import OUTPUTS, SIMPLE_INPUTS, infer
        from designer.graph.spec import LayerSpec, ParamSpec

        CELL = CellSpec(gates=("f", "c"), engines=("LOOP", "CAFFE"), holds={"LOOP": "CAFFE"},
                        fused="LOOP", fused_words="its step loop", unit="TOY_CELL_UNIT",
                        unit_flops=5)


        def count(ctx, outs):
            e, h = ctx.input("x").shape[2], ctx.params["num_output"]
            return 2 * h * e + 2 * h if D.known(e) else None


        SPEC = LayerSpec(
            id="ToyCell", category="Recurrent", caffe_type="TOY_CELL",
            summary="a diagonal linear recurrence with one gate",
            help="h = sigmoid(W_f x + b_f) * h_prev + tanh(W_c x + b_c)",
            inputs=SIMPLE_INPUTS, outputs=OUTPUTS, infer=infer, count_params=count, cell=CELL,
            params=(num_output(16, "hidden units (H)"),
                    ParamSpec("engine", "choice", "LOOP", "LOOP: one step after another over "
                              "the whole input transform; CAFFE: the unrolled net",
                              choices=CELL.engines),
                    weight_filler("uniform"), bias_filler()))
        ''',
    "expansion.py": '''
        """One step of the unrolled net: the chain's SCALE, then the unit of h_conted and the
        step's input transform."""
        from designer.engines.expansion.expand import chain, draw_as

        draw_as("TOY_CELL_UNIT")


        @chain("ToyCell")
        def _step(step):
            step.unit(step.cell.unit, (step.h_conted, step.x), (step.h,))
        ''',
    "memory.py": '''
        """What a ToyCell keeps per step: its gate, its candidate, their product and h."""
        from designer.graph.memory_layers import chains, held, memory_rule, stacked


        @memory_rule("ToyCell")
        def kept(ctx, params):
            c = chains(ctx)
            return stacked(ctx, c, 4.0 * c.seq, 2, held(ctx, c, 2, 1.0, 2.0))
        ''',
    "engines.py": '''
        """The LOOP engine (the input transform once, then one step after another) and the
        unit's op in the unrolled net; both hold W_xc_l0 and b_c_l0."""
        import torch
        import torch.nn.functional as F
        from torch import nn

        from designer.engines.net.builders import build_unrolled, builder
        from designer.engines.tensors.fillers import fill_bias, fill_weight
        from designer.engines.tensors.recurrent_state import time_major
        from designer.engines.unrolled import unit_op


        @unit_op("TOY_CELL_UNIT")
        def _unit(node, b, run):
            h_conted, xw = b
            f, c = xw.chunk(2, -1)
            return (torch.sigmoid(f) * h_conted + torch.tanh(c),)


        class ToyLoop(nn.Module):
            engine_name, kind, levels, directions, state_layers = "LOOP", "ToyCell", 1, 1, 1
            batch_first, ran = False, "the step loop"

            def __init__(self, input_size, hidden, name):
                super().__init__()
                self.input_size, self.hidden, self.name = input_size, hidden, name
                self.W_xc_l0 = nn.Parameter(torch.empty(2 * hidden, input_size))
                self.b_c_l0 = nn.Parameter(torch.zeros(2 * hidden))

            def forward(self, x, cont=None, state=None, lengths=None):
                x, cont, steps, n = time_major(self, x, cont)
                h = x.new_zeros(n, self.hidden) if state is None else state[0][0]
                f, c = F.linear(x, self.W_xc_l0, self.b_c_l0).chunk(2, -1)
                f, c, ys = torch.sigmoid(f), torch.tanh(c), []
                for t in range(steps):
                    if cont is not None:
                        h = h * cont[t].unsqueeze(-1).to(h.dtype)
                    h = torch.addcmul(c[t], f[t], h)
                    ys.append(h)
                return torch.stack(ys), (h.unsqueeze(0),)


        @builder("ToyCell")
        def build(ctx):
            if ctx.params["engine"] == "CAFFE":
                return build_unrolled(ctx)
            m = ToyLoop(ctx.input_size(), ctx.params["num_output"], ctx.name)
            fill_weight(m.W_xc_l0, ctx.params["weight_filler"], m.hidden, 2)
            fill_bias(m.b_c_l0, ctx.params["bias_filler"])
            return m
        ''',
    "exports.py": '''
        """ToyCell in ONNX: the input transform over all steps, then a Scan whose body is one
        step (h = f_t * h + c_t); or, unrolled, its unit node."""
        from onnx import TensorProto, helper

        from designer.exchange.onnx_export.ops import tensor
        from designer.exchange.onnx_export.recurrent import FUSED, NODES


        def _gate_and_candidate(b, hint, xw, hidden):
            f, c = b.op("Split", [xw, b.ints(f"{hint}/blocks", [hidden, hidden])],
                        f"{hint}/block", outputs=2, axis=-1)
            return b.op("Sigmoid", [f], f"{hint}/f"), b.op("Tanh", [c], f"{hint}/c")


        @NODES.register("TOY_CELL_UNIT")
        def unit(layer, node, hint, bot):
            b, (h_conted, xw) = layer.b, bot
            f, c = _gate_and_candidate(b, hint, xw, layer.hidden)
            return [b.op("Add", [b.op("Mul", [f, h_conted], f"{hint}/fh"), c], hint)]


        def _body(b, hint, hidden):
            h, f, c, fh, h_out, y = (b.fresh(f"{hint}/{s}") for s in
                                     ("h", "f_t", "c_t", "fh", "h_out", "y_t"))
            nodes = [helper.make_node("Mul", [f, h], [fh], name=b.fresh(f"{hint}/fh")),
                     helper.make_node("Add", [fh, c], [h_out], name=b.fresh(f"{hint}/h")),
                     helper.make_node("Identity", [h_out], [y], name=b.fresh(f"{hint}/y"))]

            def value(name):
                return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", hidden])
            return helper.make_graph(nodes, hint.replace("/", "_") + "_step",
                                     [value(h), value(f), value(c)], [value(h_out), value(y)])


        @FUSED.register("ToyCell")
        def scan(b, name, module, x, states, lengths=None):
            w = {k: tensor(v) for k, v in module.named_parameters()}
            w_xc = b.const(f"{name}.W_xc_l0", w["W_xc_l0"].T.copy())
            xw = b.op("Add", [b.op("MatMul", [x, w_xc], f"{name}/xw_mm"),
                              b.const(f"{name}.b_c_l0", w["b_c_l0"])], f"{name}/xw")
            f, c = _gate_and_candidate(b, name, xw, module.hidden)
            axis0 = b.ints(f"{name}/axis0", [0])
            h0 = b.op("Squeeze", [states[0], axis0], f"{name}/h0")
            last, hs = b.op("Scan", [h0, f, c], f"{name}/scan", outputs=2, num_scan_inputs=2,
                            body=_body(b, name, module.hidden))
            return hs, [b.op("Unsqueeze", [last, axis0], f"{name}/final")]
        ''',
}


def write_toy(folder) -> None:
    """The toy's package, ``folder/toycell``, as a user of the designer would write it."""
    package = folder / PACKAGE
    package.mkdir(parents=True)
    for name, source in TOY.items():
        (package / name).write_text(textwrap.dedent(source).lstrip())


def traces() -> list[str]:
    """Where a module of the designer still holds the toy: a module-level table with one of
    its names as a key, or a value made by one of its modules."""
    found, seen = [], set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("designer") or not isinstance(module, types.ModuleType):
            continue
        for attr, table in vars(module).items():
            if not isinstance(table, dict) or id(table) in seen:  # a table imported elsewhere
                continue
            seen.add(id(table))
            for key, value in table.items():
                made = [getattr(v, "__module__", v) for v in
                        (value if isinstance(value, (list, tuple)) else (value,))]
                if key in (KIND, UNIT) or any(str(m).startswith(PACKAGE) for m in made):
                    found.append(f"{name}.{attr}[{key!r}]")
    return found


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy cell, imported from a folder outside the designer as any package is; after the
    module's tests it is taken out of every registry it entered."""
    from designer.engines.expansion import expand as expansion
    from designer.engines.net import builders
    from designer.engines.unrolled import ops
    from designer.graph import memory_layers
    folder = tmp_path_factory.mktemp("outside")
    write_toy(folder)
    sys.path.insert(0, str(folder))
    importlib.import_module(PACKAGE)
    assert "toycell.engines" not in sys.modules  # deferred until an engine is needed
    yield registry.get(KIND)
    parts.need(parts.ENGINES)  # whatever the tests left deferred is imported, then taken away
    parts.need(parts.EXPORTS)
    from designer.exchange.onnx_export import recurrent as onnx_recurrent
    registry.unregister(KIND)
    for table, key in ((expansion.CHAINS, KIND), (expansion.DRAWN_AS, UNIT),
                       (memory_layers.RULES, KIND), (builders.BUILDERS, KIND),
                       (ops.UNIT_OPS, UNIT), (onnx_recurrent.FUSED, KIND),
                       (onnx_recurrent.NODES, UNIT)):
        del table[key]
    sys.path.remove(str(folder))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    assert KIND not in registry.recurrent_kinds()
    assert traces() == []


@pytest.fixture(scope="module")
def project(toy, tmp_path_factory):
    """The training tests' tiny Char-RNN (embed -> LSTM -> classifier, T=12, N=4) with its
    LSTM retyped to the toy, saved."""
    folder = tmp_path_factory.mktemp("project")
    p = tiny_project(folder, dropout=0.0)
    replace_layer(p.graph, "lstm1", KIND, {"num_output": 16})
    assert p.graph.layer("lstm1").type == KIND and p.graph.errors() == []
    p.save(folder / "tiny.json")
    return folder / "tiny.json"


@pytest.fixture(scope="module")
def run(project):
    """The toy project trained for 6 steps on the CPU by ``rnn-designer train``: its run
    folder and the records it printed."""
    out, printed = project.parent / "run", io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["train", str(project), "--steps", "6", "--device", "cpu", "--out",
                     str(out), "--quiet", "--jsonl"]) == 0
    return out, [json.loads(line) for line in printed.getvalue().splitlines()]


def test_it_trains_from_the_command_line_on_its_own_engine(run):
    folder, records = run
    assert records[0]["engines"] == {"lstm1": "LOOP"} and records[-1]["reason"] == "finished"
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 3 and all(np.isfinite(losses))
    assert P.load(folder / "project.json").graph.layer("lstm1").type == KIND


def test_parity_holds_between_its_engine_and_its_unrolled_net(project, capsys):
    capsys.readouterr()
    assert main(["parity", str(project), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["layers"]
    assert row["type"] == KIND and row["ok"], row["diffs"]
    assert row["max_abs"] > 0  # two different computations, which round differently
    assert row["compared"][0] == "LOOP: the step loop"
    assert row["compared"][1].startswith("CAFFE: the reference executor")


@pytest.mark.parametrize("unrolled", [False, True])
def test_its_onnx_export_runs_in_onnx_runtime_as_the_trained_net(run, tmp_path, unrolled):
    ort = pytest.importorskip("onnxruntime")
    from designer.exchange.source import load_source
    folder, out = run[0], tmp_path / "toy.onnx"
    assert main(["export", str(folder), "--format", "onnx", "--out", str(out),
                 "--checkpoint", "last"] + ["--unrolled"] * unrolled) == 0
    net = load_source(folder, "last").build_net()
    tokens = torch.randint(0, 10, (12, 3), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        want = net({"data.data": tokens}, want=("ip1",)).blobs[("ip1", 0)].numpy()
    got = ort.InferenceSession(str(out)).run(["logits"], {"tokens": tokens.numpy()})[0]
    assert np.abs(got - want).max() < 1e-4


def test_the_window_draws_its_unrolled_net(project, qtbot):
    from designer.ui.editor.document import Document
    from designer.ui.unrolled.items import UnrolledNode
    from designer.ui.unrolled.view import UnrolledView
    view = UnrolledView(Document(P.load(project)), "lstm1", steps=3)
    qtbot.addWidget(view)
    types_drawn = [i.node_type for i in view.scene.items()
                   if isinstance(i, UnrolledNode) and i.kind == "node"]
    assert types_drawn.count(UNIT) == 3 and types_drawn.count("SCALE") == 3
    assert UNIT in view.tooltip("unit_2")
    assert not view.grab().isNull()


def test_a_process_of_its_own_loads_it_from_the_environment(project, tmp_path):
    """``rnn-designer`` started in a process of its own (as a search worker or ``train
    --nproc`` is) loads the cells named in ``RNN_DESIGNER_CELLS``; a name that cannot be
    imported is one sentence and exit code 2."""
    import os
    import subprocess
    from pathlib import Path
    write_toy(tmp_path)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)]),
           "RNN_DESIGNER_CELLS": PACKAGE}
    ran = subprocess.run([sys.executable, "-m", "designer", "validate", str(project)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    env["RNN_DESIGNER_CELLS"] = "no_such_cell_module"
    ran = subprocess.run([sys.executable, "-m", "designer", "validate", str(project)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr.strip().splitlines() == [
        "rnn-designer: RNN_DESIGNER_CELLS names the cell module 'no_such_cell_module', which "
        "cannot be imported (No module named 'no_such_cell_module')"]
