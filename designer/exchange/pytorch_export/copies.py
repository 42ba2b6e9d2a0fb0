"""The functions of a cell's arithmetic an exported ``model.py`` holds, read from the running
code itself.

``model.py`` needs no rnn-designer, so a layer torch.nn lacks comes with its own class (the
cell's ``exports/pytorch.py`` writes it) and the functions of the cell's arithmetic that the
class calls. Their text is the cell's ``arithmetic.py`` as the app runs it, read as package
data (``importlib.resources``: the packaged app holds no ``.py`` sources for ``inspect``, so
``pyproject.toml`` and the PyInstaller spec ship every cell's ``arithmetic.py`` as data too);
``ast`` finds the definitions the class reaches, directly or through one another, and cuts
them out of that text as they are.

Every definition copied is written under its cell's prefix, and every use of it renamed
alike (with the prefix ``toy``: ``terms`` -> ``toy_terms``, ``CHUNK`` -> ``TOY_CHUNK``,
``ReverseValid`` -> ``ToyReverseValid``; a name that already starts with it stays), so that the
functions of two cells in one ``model.py`` never take each other's place.
"""
from __future__ import annotations

import ast
import builtins
import io
import re
import symtable
import tokenize
from functools import lru_cache
from importlib.resources import files

def cell_source(package: str, prefix: str, uses: str, module: str = "arithmetic") -> str:
    """The text ``model.py`` holds for a cell: the constants, functions and classes of
    ``package.module`` that ``uses`` (the text of the cell's class) reaches, in the module's
    order, under the cell's ``prefix``; then ``uses``, its names renamed alike. What those
    definitions import from rnn-designer's own modules (a scan the engines share) is copied
    the same way, before them (:func:`copied_modules`)."""
    where = f"{package}.{module}"
    source = _module_text(package, module)
    tree = ast.parse(source)
    defined = {_name(node): node for node in tree.body if _name(node)}
    reached = _reached(defined, _names(ast.parse(uses)) & set(defined))
    names = {n: prefixed(n, prefix) for n in reached}
    twice = sorted(n for n in set(names.values()) if list(names.values()).count(n) > 1)
    if twice:
        raise ValueError(f"{where}: two definitions become {twice[0]} under the prefix "
                         f"{prefix}")
    _unshadowed(source, where, names)
    _unshadowed(uses, f"{package} (the class model.py holds)", names)
    lines = source.splitlines()
    pieces, last = [], None
    for node in tree.body:
        if _name(node) not in reached:
            continue
        text = _renamed(lines, node, names)
        if pieces:
            pieces.append("\n" if isinstance(node, ast.Assign) and last else "\n\n\n")
        pieces.append(text)
        last = isinstance(node, ast.Assign)
    text = "\n" + "".join(pieces) + "\n" + _renamed_text(uses, names)
    used = set().union(_names(ast.parse(uses)), *(_names(defined[n]) for n in reached))
    for below in sorted({m for n, m in _own_imports(tree).items() if n in used}):
        below_package, _, below_module = below.rpartition(".")
        text = cell_source(below_package, prefix, "\n" + text, below_module)
    return text


def copied_modules(package: str, module: str = "arithmetic") -> list[str]:
    """The modules whose text a cell's copy reads: ``package.module`` and the rnn-designer
    modules it imports from, theirs in turn (the packaged app ships each as data)."""
    out, todo = [], [f"{package}.{module}"]
    while todo:
        where = todo.pop(0)
        if where not in out:
            out.append(where)
            pkg, _, mod = where.rpartition(".")
            todo.extend(sorted(set(_own_imports(ast.parse(_module_text(pkg, mod))).values())))
    return out


def _own_imports(tree) -> dict:
    """Name -> the rnn-designer module a module's top level imports it from (``from
    designer.engines.tensors.linear_scan import scan_steps``)."""
    return {alias.name: node.module for node in tree.body
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("designer.")
            for alias in node.names if alias.asname is None}


def prefixed(name: str, prefix: str) -> str:
    """``name`` under the cell's prefix: ``toy_terms``, ``TOY_CHUNK``, ``ToyReverseValid``
    (leading underscores kept in front; a name that starts with the prefix stays)."""
    bare = name.lstrip("_")
    under = name[:len(name) - len(bare)]
    if bare.isupper():
        head = prefix.upper() + "_"
    elif bare[:1].isupper():
        head = prefix[:1].upper() + prefix[1:]
    else:
        head = prefix + "_"
    return name if bare.startswith(head) else under + head + bare


def free_names(text: str) -> set[str]:
    """The names ``text`` (Python) reads but neither defines nor gets from Python itself:
    the modules it needs imported (``torch``, ``F``, ``math``...)."""
    table = symtable.symtable(text, "<model.py>", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    out = set()
    stack = [table]
    while stack:
        t = stack.pop()
        stack.extend(t.get_children())
        for s in t.get_symbols():
            if (s.is_global() or t is table) and s.is_referenced():
                out.add(s.get_name())
    return {n for n in out - defined if not hasattr(builtins, n)}


@lru_cache(maxsize=None)
def _module_text(package: str, module: str) -> str:
    return (files(package) / f"{module}.py").read_text(encoding="utf-8")


def _name(node) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _reached(defined: dict, roots: set) -> set:
    """The definitions ``roots`` use, directly or through one another."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_names(defined[name]) & set(defined) - seen)
    return seen


def _unshadowed(text: str, where: str, names: dict) -> None:
    """Every use of a copied name in ``text`` is the definition's: no function binds one of
    them for itself (a parameter or a local of the same name), so renaming every use is
    right."""
    stack = list(symtable.symtable(text, where, "exec").get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for s in table.get_symbols():
            if s.get_name() in names and not s.is_global() and \
                    (s.is_local() or s.is_parameter() or s.is_free()):
                raise ValueError(f"{where}: {table.get_name()} binds {s.get_name()} for "
                                 "itself, which model.py renames; give it another name")


def _renamed(lines: list[str], node, names: dict) -> str:
    """The node's lines (decorators and a trailing comment included), every copied name in
    them renamed."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    spots = [(n.lineno, n.col_offset, n.end_col_offset, names[n.id]) for n in ast.walk(node)
             if isinstance(n, ast.Name) and n.id in names]
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        line = lines[node.lineno - 1]
        found = re.search(rf"\b(def|class)\s+({node.name})\b", line)
        start = len(line[:found.start(2)].encode("utf-8"))
        spots.append((node.lineno, start, start + len(node.name.encode("utf-8")),
                      names[node.name]))
    return _apply(lines[first - 1:node.end_lineno], first, spots)


def _renamed_text(text: str, names: dict) -> str:
    spots = [(n.lineno, n.col_offset, n.end_col_offset, names[n.id])
             for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name) and n.id in names]
    return _apply(text.split("\n"), 1, spots)


def _apply(lines: list[str], first: int, spots: list) -> str:
    """``lines`` (the first numbered ``first``) with each spot (line, start and end column in
    UTF-8 bytes, as ``ast`` counts them) replaced, from the right of each line; a line aligned
    with an opening bracket (PEP 8's visual indent) moves along with it."""
    raw = [line.encode("utf-8") for line in lines]
    grown: dict = {}  # line -> [(byte column, bytes added there)]
    for line, start, end, new in spots:
        grown.setdefault(line - first, []).append((start, len(new.encode("utf-8")) - end + start))
    shift = _visual_shifts(lines, grown)
    for line, start, end, new in sorted(spots, reverse=True):
        i = line - first
        raw[i] = raw[i][:start] + new.encode("utf-8") + raw[i][end:]
    return "\n".join(" " * shift.get(i, 0) + r.decode("utf-8") for i, r in enumerate(raw))


def _visual_shifts(lines: list[str], grown: dict) -> dict:
    """Line -> the spaces it moves right by: a continuation line that starts one column after
    the bracket it is in moves as far as that bracket does (the names grown before it on its
    line, and its own line's move)."""
    shift: dict = {}
    opened: list = []  # (line, byte column) of each bracket open
    started: set = set()
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    for tok in tokens:
        i = tok.start[0] - 1
        col = len(lines[i][:tok.start[1]].encode("utf-8")) if i < len(lines) else 0
        if tok.type not in skip and i not in started:
            started.add(i)
            if opened and opened[-1][0] < i and col == opened[-1][1] + 1:
                at, bracket = opened[-1]
                shift[i] = shift.get(at, 0) + sum(g for c, g in grown.get(at, ()) if c < bracket)
        if tok.type == tokenize.OP and tok.string in "([{":
            opened.append((i, col))
        elif tok.type == tokenize.OP and tok.string in ")]}":
            opened.pop()
    return shift
