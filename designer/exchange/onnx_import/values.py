"""What an ONNX value is while a foreign graph is walked.

- :class:`Const`: a constant array (an initializer, a ``Constant``, or glue computed from them);
- :class:`Dims`: a shape vector whose entries are numbers or the letters of dynamic axes (what
  ``Shape``, ``Gather``, ``Concat`` ... make of a tensor's shape in the exporters' glue);
- :class:`Zeros`: a tensor of zeros of a dynamic shape (``ConstantOfShape``), an initial state;
- :class:`Seq`: a tensor a layer of the project makes. ``axes`` names its ONNX axes by letter:
  ``T`` steps, ``N`` sequences, ``C`` features, ``D`` a recurrent op's directions, ``1`` an axis
  of size 1; the layer's blob holds the same numbers with ``T`` (if any) first, then ``N``, then
  ``C`` (a designer layer is time-major), so ``Transpose``, ``Squeeze`` and the like only
  rename the axes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Const:
    array: np.ndarray


@dataclass
class Dims:
    items: list  # ints, or letters of dynamic axes


@dataclass
class Zeros:
    pass


@dataclass
class Seq:
    src: tuple  # (layer, port)
    axes: str
    sizes: dict = field(default_factory=dict)  # letter -> size, for C and D

    @property
    def features(self) -> int:
        return int(self.sizes.get("C", 0))

    def blob_axis(self, letter: str) -> int:
        """Where axis ``letter`` is in the layer's (time-major) blob."""
        order = [a for a in "TNC" if a in self.axes]
        return order.index(letter)

    def like(self, src: tuple, axes: str | None = None, **sizes) -> "Seq":
        return Seq(src, self.axes if axes is None else axes, {**self.sizes, **sizes})


def normal_axes(axes: str, sizes: dict) -> tuple[str, int | None]:
    """The axes without the unit ones, a ``D`` before ``C`` merged into ``C`` (its size then
    ``D * C``)."""
    letters = axes.replace("1", "")
    if "DC" in letters:
        return letters.replace("DC", "C"), sizes.get("D", 1) * sizes.get("C", 0)
    return letters, None


def as_int_list(value) -> list | None:
    if isinstance(value, Const):
        return [int(v) for v in np.asarray(value.array).reshape(-1)]
    if isinstance(value, Dims):
        return list(value.items)
    return None
