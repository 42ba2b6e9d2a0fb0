"""``LAYER.residual``: a search choice that turns a convolution block into a residual block.

A convolution block is a Conv1D whose only reader is a BatchNorm whose only reader is a ReLU
(the blocks of the LSTM-FCN that ``rnn-designer init`` draws). Made residual, as in the
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
"""
from __future__ import annotations

KERNELS = (5, 3)   # the added convolutions' kernels, after the drawn one's (Wang et al.: 8)


def block_of(graph, conv: str) -> tuple[str, str] | None:
    """``(batchnorm, relu)`` of the convolution block that starts at ``conv``, or ``None``
    when ``conv`` is not a Conv1D read by one BatchNorm read by one ReLU."""
    if conv not in graph or graph.layer(conv).type != "Conv1D":
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
