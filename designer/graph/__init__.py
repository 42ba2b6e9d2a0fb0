"""The pure heart of rnn-designer: layer specs, the graph model, shapes, validation, projects.

Imports neither torch nor Qt (a test checks ``sys.modules``).
"""
from designer.graph.errors import (CycleError, DataWarning, DesignWarning, DuplicateNameError,
                                   GraphError, GraphWarning, ParamError, PortError, RangeError,
                                   ShapeError, UnconnectedInputError, UnknownLayerError)
from designer.graph.model import Graph, Layer, LayerInfo, Link
from designer.graph.spec import LayerSpec, ParamSpec, PortSpec, TensorInfo

__all__ = [
    "CycleError", "DataWarning", "DesignWarning", "DuplicateNameError", "Graph", "GraphError",
    "GraphWarning", "Layer", "RangeError",
    "LayerInfo", "LayerSpec", "Link", "ParamError", "ParamSpec", "PortError", "PortSpec",
    "ShapeError", "TensorInfo", "UnconnectedInputError", "UnknownLayerError",
]
