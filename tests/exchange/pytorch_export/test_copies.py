"""The cells' functions an exported model.py holds come from the running code itself: each
cell's arithmetic.py, read as package data (the packaged app, which holds no .py sources for
inspect, ships it as data too), cut into its definitions with ast and written under the cell's
prefix, so that two cells in one model.py keep their own functions."""
import ast
import inspect
import io
import re
import sys
import tokenize
import tomllib
from pathlib import Path

import pytest
import torch

from designer.exchange.pytorch_export.copies import cell_source, prefixed
from designer.exchange.pytorch_export.snippets import CELL_HELPERS, HELPERS, helpers
from designer.exchange.source import ModelSource
from tests.exchange.conftest import classes_project
from tests.exchange.pytorch_export.test_code import imported_packages, load_module

ROOT = Path(__file__).resolve().parents[3]
DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(4))
LENGTHS = torch.tensor([7, 3, 0, 5])


def cell_helpers() -> dict:
    """Helper name -> (the cell's package, its prefix): the helpers the cells copy from their
    arithmetic (a cell's other helpers, fixed text, are left out)."""
    helpers(set())  # the cells' exports registered
    return {name: (made.args[0], made.args[1]) for name, made in CELL_HELPERS.items()
            if getattr(made, "func", None) is cell_source}


def tokens(text: str) -> list:
    """The tokens of ``text``, its comments and strings among them, whatever its spacing."""
    return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]


def test_the_cells_with_a_class_of_their_own_add_their_functions():
    assert {"min_rnn", "mlstm", "slstm"} <= set(cell_helpers())


@pytest.mark.parametrize("name", sorted(cell_helpers()))
def test_each_copied_definition_is_the_running_one_but_for_its_name(name):
    """Renamed back, every function and class model.py holds is the source of the one the app
    runs, and every constant its value."""
    import importlib
    from designer.exchange.pytorch_export.copies import copied_modules
    package, prefix = cell_helpers()[name]
    running_names = {}  # what the cell's arithmetic and the modules it imports from define
    for where in reversed(copied_modules(package)):
        running_names.update(vars(importlib.import_module(where)))
    arithmetic = type(sys)("running")
    vars(arithmetic).update(running_names)
    text = CELL_HELPERS[name]()
    back = {prefixed(n, prefix): n for n in vars(arithmetic) if not n.startswith("__")}
    copied = [n for n in ast.parse(text).body if not isinstance(n, ast.ClassDef)
              or n.name in back]
    assert copied
    lines = text.splitlines()
    for node in copied:
        segment = "\n".join(lines[node.lineno - 1:node.end_lineno])  # a trailing comment too
        if isinstance(node, ast.Assign):
            new = node.targets[0].id
            assert ast.literal_eval(node.value) == getattr(arithmetic, back[new])
            continue
        if node.name not in back:  # the cell's class, written by its exports
            continue
        original = re.sub(r"\b\w+\b", lambda m: back.get(m.group(), m.group()), segment)
        running = inspect.getsource(getattr(arithmetic, back[node.name]))
        assert tokens(original) == tokens(running)  # a continuation line may have moved


def test_the_helpers_of_every_cell_define_each_name_once_and_read_what_model_py_imports():
    every = "\n".join(helpers(set(HELPERS) | set(CELL_HELPERS)))
    tree = ast.parse(every)
    names = [n.name if not isinstance(n, ast.Assign) else n.targets[0].id for n in tree.body]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    from designer.exchange.pytorch_export.copies import free_names
    assert free_names(every) <= {"torch", "nn", "F", "math"}


def test_a_function_that_binds_a_copied_name_for_itself_is_refused(tmp_path, monkeypatch):
    """Every use of a copied name is renamed, so a local of the same name would be renamed
    too: the copy refuses it, naming the function."""
    package = tmp_path / "toycell"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "arithmetic.py").write_text(
        "def terms(x):\n    return x\n\n\ndef layers(x):\n    terms = 2\n    return x * terms\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="layers binds terms for itself"):
        cell_source("toycell", "toy", "\n\nclass Toy:\n    def f(self, x):\n"
                    "        return layers(x)\n")


def shipped(monkeypatch) -> tuple[dict, set]:
    """pyproject's package data (package -> its files) and the PyInstaller spec's datas."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = {package: {p for g in globs
                              for p in ROOT.joinpath(*package.split(".")).glob(g)}
                    for package, globs in data["tool"]["setuptools"]["package-data"].items()}
    hooks = type(sys)("PyInstaller.utils.hooks")
    hooks.collect_submodules = lambda name: []
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, type(sys)(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    spec = (ROOT / "packaging" / "rnn-designer.spec").read_text()
    scope = {"SPECPATH": str(ROOT / "packaging")}
    exec(spec[:spec.index("a = Analysis(")], scope)
    return package_data, {(Path(src), dest) for src, dest in scope["datas"]}


def test_every_cells_arithmetic_ships_with_the_app_as_data(monkeypatch):
    """pyproject's package data and the PyInstaller spec's datas hold each arithmetic.py."""
    package_data, datas = shipped(monkeypatch)
    for package, _ in cell_helpers().values():
        path = ROOT.joinpath(*package.split("."), "arithmetic.py")
        assert path in package_data["designer.cells"]
        assert (path, str(path.parent.relative_to(ROOT))) in datas


def test_what_a_cells_arithmetic_imports_from_the_engines_is_copied_and_shipped(monkeypatch):
    """The MinGRU's arithmetic calls the scan the engines share: model.py holds that too,
    under the cell's prefix, and the app ships its source as data."""
    from designer.exchange.pytorch_export.copies import copied_modules
    assert copied_modules("designer.cells.minimal") == ["designer.cells.minimal.arithmetic",
                                                        "designer.engines.tensors.linear_scan"]
    text = CELL_HELPERS["min_rnn"]()
    defined = [n.name for n in ast.parse(text).body if not isinstance(n, ast.Assign)]
    assert defined.index("min_scan_linear") < defined.index("min_scan_direction")
    assert "MIN_SCAN_CHUNK = 16" in text and "scan_steps(" not in text.replace("min_scan", "")
    package_data, datas = shipped(monkeypatch)
    for package, _ in cell_helpers().values():
        for where in copied_modules(package)[1:]:
            below, _, module = where.rpartition(".")
            path = ROOT.joinpath(*below.split("."), f"{module}.py")
            assert path in package_data[below]
            assert (path, str(path.parent.relative_to(ROOT))) in datas


def test_a_copy_keeps_its_continuation_lines_aligned_with_their_bracket(tmp_path, monkeypatch):
    package = tmp_path / "aligned"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "arithmetic.py").write_text(
        "def scale(x):\n    return 2 * x\n\n\n"
        "def layers(x, levels,\n           more=None):\n"
        "    return scale(x,\n                 ) * levels\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    text = cell_source("aligned", "toy", "\n\nclass Toy:\n    def f(self, x):\n"
                       "        return layers(x, 1)\n")
    assert ("def toy_layers(x, levels,\n"
            "               more=None):\n"
            "    return toy_scale(x,\n"
            "                     ) * levels\n") in text


@pytest.fixture
def frozen(monkeypatch):
    """As in the packaged app, which holds no .py sources: inspect cannot read a function's
    source."""
    def no_source(obj, *args, **kwargs):
        raise OSError("could not get source code")

    for name in ("getsource", "getsourcelines", "findsource"):
        monkeypatch.setattr(inspect, name, no_source)
    from designer.exchange.pytorch_export import snippets as pytorch_snippets
    monkeypatch.setattr(pytorch_snippets, "_texts", {})  # each cell's text made afresh


@pytest.mark.parametrize("kind, engine", [("MinGRU", "SCAN"), ("sLSTM", "FUSED"),
                                          ("mLSTM", "CHUNK")])
def test_the_packaged_app_exports_model_py_that_matches_our_net(frozen, tmp_path, kind,
                                                                 engine):
    from designer.exchange.commands import export_source
    project = classes_project(tmp_path, kind, engine, extra={"num_output": 6, "num_heads": 2}
                              if kind != "MinGRU" else None)
    source = ModelSource(project, tmp_path)
    out = tmp_path / "export"
    export_source(source, "pytorch", out)
    assert imported_packages(out) <= {"math", "pathlib", "torch", "safetensors"}
    model = load_module(out, f"frozen_{kind}").load(out)
    net = source.build_net()
    with torch.no_grad():
        theirs, _ = model(DATA, LENGTHS)
        ours = net({"data.data": DATA, "data.lengths": LENGTHS}, want=("ip1",))
    assert (theirs - ours.blobs[("ip1", 0)]).abs().max() < 1e-6


def every_cell_project(folder):
    """Labelled sequences through a MinGRU, an mLSTM and an sLSTM, one after another: every
    cell whose functions model.py holds, in one file."""
    from designer.graph import Graph
    from designer.graph.project import Project
    from tests.exchange.conftest import classes_project, link_all
    classes_project(folder)  # writes seqs.csv
    g = Graph(project_dir=folder)
    g.add_layer("SequenceClasses", "data", {"file": "seqs.csv", "batch_size": 4})
    g.add_layer("MinGRU", "min1", {"num_output": 6})
    g.add_layer("mLSTM", "m1", {"num_output": 6, "num_heads": 2})
    g.add_layer("sLSTM", "s1", {"num_output": 6, "num_heads": 2})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip1", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "min1.x"), ("min1.y", "m1.x"), ("m1.y", "s1.x"),
                 ("s1.y", "last.x"), ("data.lengths", "min1.lengths"),
                 ("data.lengths", "m1.lengths"), ("data.lengths", "s1.lengths"),
                 ("data.lengths", "last.lengths"), ("last.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    assert g.errors() == []
    return Project(g, "cells")


def test_a_net_of_every_cell_exports_model_py_that_matches_our_net(tmp_path):
    """Each cell's functions keep their own names in model.py: the MinGRU's helpers and the
    mLSTM's (both had a ``terms``) no longer overwrite one another."""
    from designer.exchange.pytorch_export.code import export_pytorch
    source = ModelSource(every_cell_project(tmp_path), tmp_path)
    out = tmp_path / "export"
    export_pytorch(source, out)
    tree = ast.parse((out / "model.py").read_text())
    names = [n.name if not isinstance(n, ast.Assign) else n.targets[0].id for n in tree.body
             if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign))]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    model = load_module(out, "every_cell").load(out)
    net = source.build_net()
    with torch.no_grad():
        theirs, _ = model(DATA, LENGTHS)
        ours = net({"data.data": DATA, "data.lengths": LENGTHS}, want=("ip1",))
    assert (theirs - ours.blobs[("ip1", 0)]).abs().max() < 1e-5
