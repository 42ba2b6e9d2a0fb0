"""The engines' functions an exported model.py holds come from text shipped with the app, so that
the packaged app, which holds no .py sources, exports PyTorch code too; that text is the
engines' own functions, as they are."""
import ast
import difflib
import importlib
import inspect
import sys

import pytest
import torch

from designer.exchange.pytorch_copies import FOLDER, copied_functions
from designer.exchange.source import ModelSource
from tests.exchange.conftest import classes_project
from tests.exchange.test_pytorch import imported_packages, load_module

DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(4))
LENGTHS = torch.tensor([7, 3, 0, 5])
COPIES = sorted(p.name for p in FOLDER.iterdir())


def test_every_engine_the_export_copies_has_its_file():
    assert COPIES == ["minimal.py.txt", "mlstm.py.txt", "slstm.py.txt"]


@pytest.mark.parametrize("file", COPIES)
def test_a_copy_holds_its_engines_functions_as_they_are(file):
    """``minimal.py.txt`` holds functions of ``designer.cells.minimal.arithmetic``, each its
    source as the engine runs it, two blank lines apart and nothing else."""
    engine = importlib.import_module(f"designer.cells.{file.removesuffix('.py.txt')}.arithmetic")
    text = copied_functions(engine)
    names = [node.name for node in ast.parse(text).body]
    assert names, f"{file} holds no function"
    expected = "\n\n".join(inspect.getsource(getattr(engine, name)) for name in names)
    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                        f"{engine.__name__} (the engine)", file))
    assert text == expected, (f"copy the engine's functions into designer/exchange/"
                              f"{FOLDER.name}/{file} as they are:\n{diff}")


@pytest.fixture
def frozen(monkeypatch):
    """As in the packaged app, which holds no .py sources: inspect cannot read a function's
    source, and the export's modules are imported afresh under that."""
    def no_source(obj, *args, **kwargs):
        raise OSError("could not get source code")

    for name in ("getsource", "getsourcelines", "findsource"):
        monkeypatch.setattr(inspect, name, no_source)
    for name in [n for n in sys.modules if n.startswith("designer.exchange.pytorch")
                 or (n.startswith("designer.cells.") and n.endswith(".exports.pytorch"))]:
        parent, _, child = name.rpartition(".")
        monkeypatch.delitem(sys.modules, name)
        monkeypatch.delattr(sys.modules[parent], child, raising=False)


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
