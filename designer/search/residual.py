"""``LAYER.residual``: a search choice that turns a convolution block into a residual block.

A convolution block is a Conv1D whose only reader is a BatchNorm whose only reader is a ReLU
(the blocks ``rnn-designer init --net lstm-fcn`` draws). Made residual, as in the
residual net of Wang, Yan and Oates (2017), the block reads::

    x -> Conv1D (the drawn one) -> BatchNorm -> ReLU
      -> Conv1D (kernel 5) -> BatchNorm -> ReLU -> Conv1D (kernel 3) -> BatchNorm --+
    x -> Conv1D (kernel 1) -> BatchNorm -------------------------------------------- Eltwise SUM
      -> ReLU (the drawn one)

The added convolutions have the drawn Conv1D's filters; every added Conv1D and BatchNorm
reads the ``lengths`` the drawn Conv1D reads, so padding still changes nothing. Everything
is made of the catalogue's own layers, so the design trains, exports and inspects as any
other. The drawn layers keep their names and parameters; the added ones are named after the
Conv1D (``conv1_conv2``, ``conv1_sum`` ...), and the design is laid out again.

A block that already has that shape (whatever its layers are called) is read as residual: the
design as drawn counts as ``true`` for it, ``true`` leaves it as it is, and ``false`` takes the
added layers out again (the drawn ReLU reads the BatchNorm once more).
"""
from __future__ import annotations

KERNELS = (5, 3)   # the added convolutions' kernels, after the drawn one's (Wang et al.: 8)


def block_of(graph, conv: str) -> tuple[str, str] | None:
    """``(batchnorm, relu)`` of the convolution block that starts at ``conv``, or ``None``
    when ``conv`` is not a Conv1D (with its input linked) read by one BatchNorm read by one
    ReLU."""
    if conv not in graph or graph.layer(conv).type != "Conv1D" \
            or graph.link_into(conv, "x") is None:
        return None
    chain, name = [], conv
    for kind in ("BatchNorm", "ReLU"):
        readers = graph.links_out_of(name)
        if len(readers) != 1 or graph.layer(readers[0].dst).type != kind \
                or readers[0].dst_port != "x":
            return None
        name = readers[0].dst
        chain.append(name)
    return chain[0], chain[1]


def _reader(graph, name: str, kind: str) -> str | None:
    """The one layer reading ``name``, when it is of type ``kind``."""
    readers = graph.links_out_of(name)
    if len(readers) != 1 or graph.layer(readers[0].dst).type != kind:
        return None
    return readers[0].dst


def residual_parts(graph, conv: str) -> tuple[list[str], str] | None:
    """``(added layers, the block's last ReLU)`` when the block that starts at ``conv`` is
    residual (the shape of the module doc), else ``None``."""
    block = block_of(graph, conv)
    if block is None:
        return None
    chain, name = [block[1]], block[1]
    for kind in ("Conv1D", "BatchNorm", "ReLU", "Conv1D", "BatchNorm", "Eltwise"):
        name = _reader(graph, name, kind)
        if name is None:
            return None
        chain.append(name)
    total, links = chain[-1], {k.dst_port: k for k in graph.links_into(chain[-1])}
    if graph.layer(total).get("operation") != "SUM" or set(links) != {"a", "b"}:
        return None
    other = next((k.src for k in links.values() if k.src != chain[-2]), None)
    short = graph.link_into(other, "x") if other is not None and \
        graph.layer(other).type == "BatchNorm" else None
    if short is None or graph.layer(short.src).type != "Conv1D" \
            or graph.layer(short.src).get("kernel_size") != 1 \
            or _reader(graph, short.src, "BatchNorm") != other:
        return None
    source, mine = graph.link_into(short.src, "x"), graph.link_into(conv, "x")
    last = _reader(graph, total, "ReLU")
    if last is None or source is None or mine is None or \
            (source.src, source.src_port) != (mine.src, mine.src_port):
        return None
    return chain + [short.src, other], last


def make_plain(graph, conv: str) -> None:
    """Take out the layers `make_residual` added to the block that starts at ``conv``
    (``residual_parts(graph, conv)`` must find them)."""
    added, last = residual_parts(graph, conv)
    bn = block_of(graph, conv)[0]
    for name in added:
        graph.remove_layer(name)
    graph.connect(bn, "y", last, "x")


def make_residual(graph, conv: str) -> None:
    """Rewrite the block that starts at ``conv`` as the residual block of the module doc
    (``block_of(graph, conv)`` must find it)."""
    bn, relu = block_of(graph, conv)
    source = graph.link_into(conv, "x")
    lengths = graph.link_into(conv, "lengths")
    filters = graph.layer(conv).get("num_output")
    graph.disconnect(graph.link_into(relu, "x"))

    def add(kind: str, suffix: str, params: dict, src: tuple, masked: bool = True) -> tuple:
        name = graph.unique_name(f"{conv}_{suffix}")
        graph.add_layer(kind, name, params)
        graph.connect(*src, name, "x")
        if masked and lengths is not None:
            graph.connect(lengths.src, lengths.src_port, name, "lengths")
        return name, "y"

    out = add("ReLU", "relu1", {}, (bn, "y"), masked=False)
    for i, kernel in enumerate(KERNELS, 2):
        out = add("Conv1D", f"conv{i}", {"num_output": filters, "kernel_size": kernel}, out)
        out = add("BatchNorm", f"bn{i}", {}, out)
        if i < 1 + len(KERNELS):
            out = add("ReLU", f"relu{i}", {}, out, masked=False)
    short = add("Conv1D", "shortcut", {"num_output": filters, "kernel_size": 1},
                (source.src, source.src_port))
    short = add("BatchNorm", "shortcut_bn", {}, short)
    total = graph.unique_name(f"{conv}_sum")
    graph.add_layer("Eltwise", total, {"operation": "SUM"})
    graph.connect(*out, total, "a")
    graph.connect(*short, total, "b")
    graph.connect(total, "y", relu, "x")
