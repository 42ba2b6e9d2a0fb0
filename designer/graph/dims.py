"""Symbolic tensor dimensions.

A dimension is either an ``int`` or a symbolic product written as a string, such as ``"T"``,
``"N"``, ``"V"`` or ``"N*T"``. Symbols are bound to numbers by the data layers (``T`` sequence
length, ``N`` batch, ``V`` vocabulary or classes); what stays unbound is shown by name.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Union

Dim = Union[int, str]
Shape = tuple  # tuple[Dim, ...]


def _factors(d: Dim) -> tuple[int, Counter]:
    if isinstance(d, bool):
        raise TypeError("a dimension cannot be a bool")
    if isinstance(d, int):
        return d, Counter()
    coef, syms = 1, Counter()
    for part in str(d).split("*"):
        part = part.strip()
        if not part:
            raise ValueError(f"bad dimension {d!r}")
        if part.lstrip("-").isdigit():
            coef *= int(part)
        else:
            syms[part] += 1
    return coef, syms


def _build(coef: int, syms: Counter) -> Dim:
    names = sorted(s for s, n in syms.items() for _ in range(n))
    if not names:
        return coef
    body = "*".join(names)
    return body if coef == 1 else f"{coef}*{body}"


def mul(*dims: Dim) -> Dim:
    """Product of dimensions, symbolic where any factor is."""
    coef, syms = 1, Counter()
    for d in dims:
        c, s = _factors(d)
        coef *= c
        syms.update(s)
    if coef == 0:
        return 0
    return _build(coef, syms)


def div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when it divides exactly (symbol by symbol), else ``None``."""
    ca, sa = _factors(a)
    cb, sb = _factors(b)
    if cb == 0 or ca % cb:
        return None
    if any(sa[s] < n for s, n in sb.items()):
        return None
    return _build(ca // cb, sa - sb)


def bind(d: Dim, dims: dict[str, int]) -> Dim:
    """Replace the bound symbols of ``d`` by their values."""
    if isinstance(d, int):
        return d
    coef, syms = _factors(d)
    rest = Counter()
    for s, n in syms.items():
        if s in dims:
            coef *= dims[s] ** n
        else:
            rest[s] = n
    return _build(coef, rest)


def known(d: Dim) -> bool:
    """True when ``d`` is a plain number."""
    return isinstance(d, int) and not isinstance(d, bool)


def count_text(n) -> str:
    """A count as people read it: ``3.21 M``, ``33.3 k``, ``990``; ``?`` when unknown; a
    symbolic count as it is."""
    if n is None:
        return "?"
    if not known(n):
        return str(n)
    for div, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            v = n / div
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return str(n)


def all_known(shape: Iterable[Dim]) -> bool:
    return all(known(d) for d in shape)


def numel(shape: Iterable[Dim]) -> Dim:
    return mul(*shape) if shape else 1


def same(a: Dim, b: Dim) -> bool:
    """Equal as dimensions (``"N*T"`` equals ``"T*N"``)."""
    try:
        return _factors(a) == _factors(b)
    except (TypeError, ValueError):
        return False


def shape_str(shape: Iterable[Dim] | None) -> str:
    """``(75, 25, 512)``; ``()`` for a scalar; ``?`` when unknown."""
    if shape is None:
        return "?"
    items = [str(d) for d in shape]
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"
