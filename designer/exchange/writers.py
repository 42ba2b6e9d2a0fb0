"""Per type, its writer for one exchange format: the registries a cell fills from its
``exports`` folder (``designer/cells/<cell>/exports/``), read by the generic exporters.

Each registry maps a layer type (or a node type of the unrolled net, or a Caffe type) to the
function that writes (or reads) it; a cell registers its own with :meth:`Writers.register`,
used as a decorator. A look-up first imports the exports the cells defer
(:func:`designer.graph.parts.need`), and a type nothing registered is one sentence naming it.
"""
from __future__ import annotations

from typing import Callable

from designer.graph import parts
from designer.graph.cell import article
from designer.graph.once import origin

from designer.exchange.errors import ExchangeError


class Writers(dict):
    """Type -> its writer; ``what`` says what a writer makes ("ONNX form", "PyTorch form")."""

    def __init__(self, what: str, of: str = "layer"):
        super().__init__()
        self.what, self.of = what, of

    def register(self, *types: str) -> Callable:
        """Decorator: the function writes each of ``types``; a type has one writer."""
        def add(writer: Callable) -> Callable:
            for kind in types:
                known = self.get(kind)
                if known is not None and origin(known) != origin(writer):
                    raise ValueError(f"the {self.what} of {article(kind)} {self.of} is "
                                     "registered already")
                self[kind] = writer
            return writer
        return add

    def known(self) -> "Writers":
        """This registry with every cell's writers in it."""
        parts.need(parts.EXPORTS)
        return self

    def of_type(self, kind: str, name: str) -> Callable:
        """The writer of ``kind``; ``ExchangeError`` naming ``name`` (the layer whose type it
        is) when it has none."""
        writer = self.known().get(kind)
        if writer is None:
            raise ExchangeError(f"{name}: {article(kind)} {self.of} has no {self.what} yet")
        return writer
