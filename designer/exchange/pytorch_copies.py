"""The engines' functions an exported ``model.py`` holds, as text shipped with rnn-designer.

``model.py`` needs no rnn-designer, so the layers torch.nn lacks (MinGRU and MinLSTM, the sLSTM,
the mLSTM) come with the functions of the engine that computes them, copied as they are. The
copies are package data, ``model_py/<cell>.py.txt`` for ``designer.cells.<cell>.arithmetic``, not
read from the running functions: the packaged app holds no ``.py`` sources, so
``inspect.getsource`` fails there. ``tests/exchange/test_pytorch_copies.py`` checks that each
file holds its engine's functions as the app runs them.
"""
from __future__ import annotations

from importlib.resources import files
from types import ModuleType

FOLDER = files(__package__) / "model_py"


def copied_functions(engine: ModuleType) -> str:
    """The functions of ``engine`` (a ``designer.engines`` module) that ``model.py`` holds,
    two blank lines apart."""
    name = engine.__name__.split(".")[2]  # designer.cells.<cell>.arithmetic
    return (FOLDER / f"{name}.py.txt").read_text(encoding="utf-8")
