"""Typed errors with messages written for the person using the designer."""
from __future__ import annotations


class GraphError(Exception):
    """Base of every problem the graph model reports; ``str()`` is a sentence for a user."""

    kind = "error"

    def __init__(self, message: str, layer: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.layer = layer

    def __str__(self) -> str:
        return self.message


class CycleError(GraphError):
    kind = "cycle"


class UnconnectedInputError(GraphError):
    kind = "unconnected"


class ShapeError(GraphError):
    kind = "shape"

    def __init__(self, layer: str | None, message: str) -> None:
        super().__init__(message, layer)


class ParamError(GraphError):
    """A parameter value outside what its spec allows."""

    kind = "param"

    def __init__(self, param: str, value, allowed: str, layer: str | None = None) -> None:
        self.param, self.value, self.allowed = param, value, allowed
        super().__init__(self._text(layer), layer)

    def _text(self, layer: str | None) -> str:
        who = f"{layer}: " if layer else ""
        return f"{who}{self.param} must be {self.allowed}, not {self.value!r}"

    def for_layer(self, layer: str) -> "ParamError":
        return ParamError(self.param, self.value, self.allowed, layer)


class DuplicateNameError(GraphError):
    kind = "duplicate"


class PortError(GraphError):
    """A link to a port that does not exist, or to an input that is already fed."""

    kind = "port"


class UnknownLayerError(GraphError):
    kind = "unknown"


class DataWarning(GraphError):
    """Data a layer names cannot be read yet; shapes that depend on it stay symbolic."""

    kind = "data"
