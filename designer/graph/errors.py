"""Typed errors with messages written for the person using the designer."""
from __future__ import annotations


class GraphError(Exception):
    """Base of every problem the graph model reports; ``str()`` is a sentence for a user."""

    kind = "error"

    def __init__(self, message: str, layer: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.layer = layer
        self.fix = None  # a designer.graph.hints.Fix that mends it, once one is found

    def __str__(self) -> str:
        return self.message

    def copy(self) -> "GraphError":
        """A copy to retell (exceptions with their own ``__init__`` defeat ``copy.copy``)."""
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.args = self.args
        return twin


class CycleError(GraphError):
    kind = "cycle"


class UnconnectedInputError(GraphError):
    kind = "unconnected"


class ShapeError(GraphError):
    """Shapes (or dtypes) that disagree; ``port`` and ``want`` say where and what was needed."""

    kind = "shape"

    def __init__(self, layer: str | None, message: str, port: str | None = None,
                 want: tuple | None = None) -> None:
        super().__init__(message, layer)
        self.port, self.want = port, want
        self.mend = None  # (param, value): the one change its layer's own check knows mends it

    def mended(self, param: str, value) -> "ShapeError":
        """This error with the one parameter change that mends it, which
        ``designer.graph.hints`` tells as its fix (the message need not say it)."""
        self.mend = (param, value)
        return self


class RangeError(ShapeError):
    """Ids or labels that take more values than the layer reading them can hold."""

    kind = "range"

    def __init__(self, layer: str | None, message: str, port: str, size, values,
                 what: str) -> None:
        super().__init__(layer, message, port=port)
        self.size, self.values, self.what = size, values, what


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


class DataFileError(GraphError):
    """A data layer's file is there but can never be read: a named pipe, a device, a socket
    or a folder where a file is wanted."""

    kind = "data"


class GraphWarning(GraphError):
    """Something to look at that does not stop the net from training."""

    kind = "warning"


class DataWarning(GraphWarning):
    """Data a layer names cannot be read yet; shapes that depend on it stay symbolic."""

    kind = "data"


class DesignWarning(GraphWarning):
    """A net that trains but is very likely not what was meant (a softmax before the loss)."""

    kind = "design"
