"""The parts a graph is made of: layers and the links between their ports."""
from __future__ import annotations

from dataclasses import dataclass, field

from designer.graph import registry
from designer.graph.spec import LayerSpec


@dataclass
class Layer:
    """One layer of the design: its name, type id, explicitly set parameters and position."""

    name: str
    type: str
    params: dict = field(default_factory=dict)
    pos: tuple = (0.0, 0.0)

    @property
    def spec(self) -> LayerSpec:
        return registry.get(self.type)

    def effective_params(self) -> dict:
        """Every parameter: the spec's defaults overlaid with what is set."""
        out = self.spec.defaults()
        out.update(self.params)
        return out

    def get(self, key: str):
        return self.params.get(key, self.spec.param(key).default)


@dataclass(frozen=True)
class Link:
    """A wire from an output port of one layer to an input port of another."""

    src: str
    src_port: str
    dst: str
    dst_port: str

    def __str__(self) -> str:
        return f"{self.src}.{self.src_port} -> {self.dst}.{self.dst_port}"
