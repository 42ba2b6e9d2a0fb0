"""The dims the data layers bind (T, N, V...), with a note for each that cannot be bound."""
from __future__ import annotations

from designer.graph import datasets
from designer.graph.errors import DataFileError, DataWarning, GraphError

FILE_PARAMS = ("file", "corpus", "folder")  # what a data layer reads, by parameter name
NO_FILE = "no data file yet: pick the file this model was trained on"


def missing_file(layer) -> str | None:
    """The parameter naming what ``layer`` reads when it is left empty (an imported model's
    data layer, before its data is chosen), else ``None``."""
    names = {p.name for p in layer.spec.params}
    return next((k for k in FILE_PARAMS if k in names and layer.get(k) == ""), None)


def _no_file_note(name: str, param: str) -> DataWarning:
    return _pick(DataWarning(f"{name}: {NO_FILE}", name), param)


def _pick(note: GraphError, param: str) -> GraphError:
    from designer.graph.hints import Fix
    note.fix = Fix("pick_data", note.layer, f"pick the data file of {note.layer}", param=param)
    return note


def not_a_file(layer, project_dir) -> GraphError | None:
    """The error for a data layer whose file is there but is no regular file (a named pipe,
    a device, a socket, a folder): it can never be read, and is never opened to find out."""
    names = {p.name for p in layer.spec.params}
    param = next((k for k in ("file", "corpus") if k in names), None)
    path = datasets.find_data(str(layer.get(param)), project_dir) if param else None
    problem = datasets.not_regular(path) if path is not None else None
    return _pick(DataFileError(f"{layer.name}: {problem}", layer.name), param) \
        if problem else None


def bind_dims(graph) -> tuple[dict[str, int], list[GraphError]]:
    """What the graph's data layers (and the dims pinned from outside) bind, and the notes.

    A data layer that cannot read its data binds what it can and says why (a warning); two
    data layers that bind one dim differently are told; a pinned dim (a checkpoint's V) wins
    over what the data says, and is told when they differ.
    """
    dims: dict[str, int] = {}
    notes: list[GraphError] = []
    for name in graph.sources():
        layer = graph.layer(name)
        empty = missing_file(layer)
        if empty:
            notes.append(_no_file_note(name, empty))
            continue
        refused = not_a_file(layer, graph.project_dir)
        found, warning = layer.spec.source_dims(layer.effective_params(), graph.project_dir)
        if refused is not None:  # what the data layer could not read says the same
            notes.append(refused)
        elif warning:
            notes.append(DataWarning(f"{name}: {warning}", name))
        for k, v in found.items():
            if k in dims and dims[k] != v:
                notes.append(DataWarning(
                    f"{name}: binds {k} = {v} but another data layer binds {k} = {dims[k]}",
                    name))
                continue
            dims[k] = v
    pinned = graph._pinned
    for k, v in pinned.items():
        if k in dims and dims[k] != v:
            notes.append(DataWarning(f"the data now gives {k} = {dims[k]}, but {k} is "
                                     f"fixed at {v}"))
        dims[k] = v
    if pinned:  # what the data could not say is known now: drop those notes
        notes = [n for n in notes if "is unknown" not in str(n) or "V" not in pinned]
    return dims, notes
