"""A cell is spoken of in its own folder: outside it, the name of a recurrent layer type appears,
as a word, in at most two modules of the designer. Generic modules say "a recurrent layer" or
read the names from the registry; another cell's paper is described in words. The importers of
foreign ONNX and Caffe files do not count: there LSTM, GRU and RNN are the formats' operator
and type names."""
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "designer"
CELLS = PACKAGE / "cells"
FOREIGN_NAMES = (PACKAGE / "exchange" / "onnx_import", PACKAGE / "exchange" / "caffe")
MOST = 2


def cell_names() -> list[tuple[str, Path]]:
    """Each recurrent layer type of the designer's cell families, with its family's folder."""
    out = []
    for folder in sorted(p for p in CELLS.iterdir() if (p / "__init__.py").exists()):
        spec = importlib.import_module(f"designer.cells.{folder.name}.spec")
        out += [(s.id, folder) for s in spec.SPECS if s.cell is not None]
    return out


@pytest.mark.parametrize("name,home", cell_names(), ids=lambda v: getattr(v, "name", v))
def test_a_cells_name_is_said_in_at_most_two_modules_outside_its_folder(name, home):
    word = re.compile(rf"\b{re.escape(name)}\b")
    skipped = (home, *FOREIGN_NAMES)
    naming = sorted(str(path.relative_to(PACKAGE.parent)) for path in PACKAGE.rglob("*.py")
                    if not any(path.is_relative_to(p) for p in skipped)
                    and word.search(path.read_text(encoding="utf-8")))
    assert len(naming) <= MOST, f"{name} is named in {len(naming)} modules: {naming}"
