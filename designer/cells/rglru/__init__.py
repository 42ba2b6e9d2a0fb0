"""The RG-LRU of Hawk and Griffin: a gated diagonal linear recurrence whose gates read only the
input."""
from designer.cells.rglru import expansion, memory, spec  # noqa: F401  (each registers)
from designer.graph import parts, registry

registry.register(*spec.SPECS)
parts.defer(parts.ENGINES, "designer.cells.rglru.engines")
parts.defer(parts.EXPORTS, "designer.cells.rglru.exports")
