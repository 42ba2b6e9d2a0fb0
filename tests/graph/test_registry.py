"""The layer registry: a cell registers its layer type once, and may take it out again (a cell
loaded for a while, as a test loads one), leaving the registry as it found it."""
import dataclasses

import pytest

from designer.graph import registry
from designer.graph.cell import CellSpec
from designer.graph.errors import UnknownLayerError


def a_cell(type_id: str):
    return dataclasses.replace(registry.get("RNN"), id=type_id, cell=CellSpec(gates=("a",)))


def test_a_cell_registered_and_unregistered_leaves_the_registry_as_it_was():
    before = registry.ids()
    spec = a_cell("Passing")
    registry.register(spec)
    assert registry.get("Passing") is spec and "Passing" in registry.recurrent_kinds()
    registry.unregister("Passing")
    assert registry.ids() == before and registry.cell("Passing") is None
    with pytest.raises(UnknownLayerError):
        registry.get("Passing")


def test_a_type_is_registered_once_and_unregistered_only_when_known():
    registry.register(a_cell("Twice"))
    try:
        with pytest.raises(ValueError, match="^the layer type 'Twice' is registered already$"):
            registry.register(a_cell("Twice"))
    finally:
        registry.unregister("Twice")
    with pytest.raises(UnknownLayerError, match="^unknown layer type 'Twice'"):
        registry.unregister("Twice")
