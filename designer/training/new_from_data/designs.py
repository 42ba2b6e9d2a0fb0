"""The nets ``rnn-designer init`` draws, and what a training step of each costs on a CPU.

- A forecaster: data -> LSTM -> SequenceLast -> InnerProduct -> EuclideanLoss.
- A classifier, by default: MiniRocket's 9,996 random convolution features (Dempster et al.,
  2021) of the series beside 9,996 of its first difference (a Difference layer: the view
  MultiRocket adds), joined (``rockets``), and beside them Hydra's 8,192 features of competing
  kernels (Dempster et al., 2023), joined (``features``); fitted from the first training
  batch, under one of two heads that ``init`` cross-validates on the training sequences
  (`head_choice`): an InnerProduct solved in closed form (ridge, as MiniRocket's own
  classifier), or BatchNorm -> InnerProduct learned by Adam at a small learning rate. On
  UCR/UEA sets cut to 2 and 5 training sequences a class the difference's features add 3
  points and Hydra's 1 more (RESULTS.md, "Small labelled sets").
- A classifier with ``--net lstm-fcn``: LSTM-FCN (Karim et al., 2018). A fully convolutional branch (three
  Conv1D -> BatchNorm -> ReLU blocks of 128, 256 and 128 filters, kernels 8, 5 and 3,
  averaged over each sequence's valid steps) beside an LSTM of 8 units read at each
  sequence's last valid step; the two joined, dropped out by half, classified. Every layer
  that can is given the lengths, so padding changes nothing.

Measured on public UCR/UEA sets against a plain LSTM read at its last step and against
MiniRocket: tests/benchmarks/RESULTS.md, "A stronger init".
"""
from __future__ import annotations

import math

from designer.graph.layers.hydra import HYDRA as HYDRA_SPEC
from designer.graph.layers.rocket import REMEMBER_BYTES
from designer.graph.layout import layered_positions
from designer.graph.model import Graph

# the classifiers ``init`` draws (its ``net``, the first by default), in words for a picker
# and the command line's help, and as a sentence names them
NET_WORDS = {"rocket": "MiniRocket features of the series and its difference, and Hydra's -> "
                       "a head cross-validated (closed form or Adam)",
             "lstm-fcn": "LSTM-FCN (convolutions beside an LSTM)"}
NET_NAMES = {"rocket": "MiniRocket's features of the series and of its difference, and "
                       "Hydra's", "lstm-fcn": "an LSTM-FCN"}
# the convolution blocks of the classifier: (filters, kernel)
FCN_BLOCKS = ((128, 8), (256, 5), (128, 3))
FCN_LSTM = 8          # the LSTM beside them: a few units read the order the convolutions miss
FCN_DROPOUT = 0.5
# CPU cost of one training step on one core, ms: per (T x N x H x (H + F)) of an LSTM,
# measured on Japanese Vowels (T 29, N 32, H 100, F 12: 44 ms a step) ...
MS_PER_UNIT = 4.2e-6
# ... and per multiply-add of a convolution (T x N x filters x inputs x kernel), measured
# with the classifier on OSULeaf in frames of 4 (T 107, N 32: about 50 ms a step)
MS_PER_CONV_MAC = 5.3e-8
# MiniRocket: per (T x N x features) of a step, measured on ArrowHead (T 251, N 16, 9,996
# features: about 140 ms a step on 2 cores)
MS_PER_ROCKET_FEATURE = 3.4e-6
ROCKET_FEATURES = 9996  # each MiniRocket's
ROCKET_VIEWS = ("rocket", "rocket_diff")  # a MiniRocket over the series, one over its difference
HYDRA = "hydra"       # Hydra's features beside them
HYDRA_FEATURES = HYDRA_SPEC.defaults()["num_features"]
ROCKET_STEPS = 2000
ROCKET_LR = 1e-4     # its 10,000 features fit a few dozen sequences at once at larger rates
ROCKET_BATCH = 16
MS_PER_HEAD_STEP = 5.0  # a step once the features are remembered: BatchNorm, InnerProduct, Adam


def lstm_ms(t: int, batch: int, hidden: int, features: int) -> float:
    """CPU ms of one training step of an LSTM of ``hidden`` units over ``t`` steps."""
    return MS_PER_UNIT * t * batch * hidden * (hidden + features)


def fcn_macs(features: int) -> int:
    """Multiply-adds of the classifier's convolutions per sequence step."""
    total, c = 0, features
    for filters, kernel in FCN_BLOCKS:
        total, c = total + c * filters * kernel, filters
    return total


def classifier_ms(t: int, batch: int, features: int) -> float:
    """CPU ms of one training step of the classifier over ``t`` steps."""
    return MS_PER_CONV_MAC * t * batch * fcn_macs(features) + \
        lstm_ms(t, batch, FCN_LSTM, features)


def classifier(g: Graph, classes: int) -> None:
    """Draw the LSTM-FCN classifier (see the module doc) below the data layer ``data``."""
    prev = "data"
    for i, (filters, kernel) in enumerate(FCN_BLOCKS, 1):
        for kind, name, params in (("Conv1D", f"conv{i}", {"num_output": filters,
                                                            "kernel_size": kernel}),
                                   ("BatchNorm", f"bn{i}", {}), ("ReLU", f"relu{i}", {})):
            g.add_layer(kind, name, params)
            g.connect(prev, "data" if prev == "data" else "y", name, "x")
            if kind != "ReLU":
                g.connect("data", "lengths", name, "lengths")
            prev = name
    g.add_layer("SequencePool", "pool", {"method": "mean"})
    g.connect(prev, "y", "pool", "x")
    g.add_layer("LSTM", "lstm1", {"num_output": FCN_LSTM})
    g.connect("data", "data", "lstm1", "x")
    g.add_layer("SequenceLast", "last", {})
    g.connect("lstm1", "y", "last", "x")
    for name in ("pool", "lstm1", "last"):
        g.connect("data", "lengths", name, "lengths")
    g.add_layer("Concat", "features", {"axis": 1})
    g.connect("pool", "y", "features", "a")
    g.connect("last", "y", "features", "b")
    g.add_layer("Dropout", "drop", {"dropout_ratio": FCN_DROPOUT})
    g.connect("features", "y", "drop", "x")
    _head(g, "drop", {"num_output": classes})


def _head(g: Graph, prev: str, params: dict) -> None:
    """InnerProduct ``ip1`` reading ``prev``, the loss and the accuracy; then the layout."""
    g.add_layer("InnerProduct", "ip1", params)
    g.connect(prev, "y", "ip1", "x")
    for kind, name in (("SoftmaxWithLoss", "loss"), ("Accuracy", "accuracy")):
        g.add_layer(kind, name, {})
        g.connect("ip1", "y", name, "logits")
        g.connect("data", "label", name, "label")
    for name, pos in layered_positions(g).items():
        g.move_layer(name, pos)


def rocket_ms(t: int, batch: int, features: int = ROCKET_FEATURES) -> float:
    """CPU ms of one training step of the MiniRocket classifier over ``t`` steps (each
    MiniRocket's ``features``: both views; Hydra's, a fraction of theirs, left out)."""
    return MS_PER_ROCKET_FEATURE * t * batch * features * len(ROCKET_VIEWS)


def rocket_remembered_ms(t: int, sequences: int, features: int = ROCKET_FEATURES) -> float:
    """CPU ms of the MiniRocket classifier's 2,000 steps when every sequence's features are
    computed once and then remembered (``REMEMBER_BYTES`` a MiniRocket, as the engine keeps
    them); infinite where they would not all fit."""
    if sequences * features * 4 > REMEMBER_BYTES:
        return math.inf
    return rocket_ms(t, sequences, features) + ROCKET_STEPS * MS_PER_HEAD_STEP


def rocket_classifier(g: Graph, classes: int, head: str = "adam") -> None:
    """Draw, below the data layer ``data``, a MiniRocket over the series and one over its
    first difference (Difference), joined (Concat ``rockets``), beside Hydra over the series,
    joined (Concat ``features``), -> BatchNorm -> InnerProduct; or with ``head`` ``ridge``
    the joined features -> InnerProduct solved in closed form."""
    series, difference = ROCKET_VIEWS
    g.add_layer("Difference", "diff", {})
    for name, source in ((series, ("data", "data")), (difference, ("diff", "y"))):
        g.add_layer("MiniRocket", name, {})
        g.connect(*source, name, "x")
    g.add_layer("Hydra", HYDRA, {})
    g.connect("data", "data", HYDRA, "x")
    for name in ("diff", series, difference, HYDRA):
        g.connect("data", "lengths", name, "lengths")
    g.connect("data", "data", "diff", "x")
    g.add_layer("Concat", "rockets", {"axis": 1})
    g.connect(series, "y", "rockets", "a")
    g.connect(difference, "y", "rockets", "b")
    g.add_layer("Concat", "features", {"axis": 1})
    g.connect("rockets", "y", "features", "a")
    g.connect(HYDRA, "y", "features", "b")
    if head == "ridge":  # it scales its inputs itself: nothing between
        _head(g, "features", {"num_output": classes, "solve": "ridge"})
        return
    g.add_layer("BatchNorm", "bn", {})
    g.connect("features", "y", "bn", "x")
    # its weights start at zero: 10,000 features times random weights start it far from
    # neutral (measured: 0.88 against 0.85 on ArrowHead, RESULTS.md)
    _head(g, "bn", {"num_output": classes, "weight_filler": "zero"})


def rocket_words(classes: int, head: str = "adam") -> str:
    """The MiniRocket classifier in one line, for init's report."""
    views = (f"MiniRocket ({ROCKET_FEATURES:,} random convolution features) of the series and "
             f"of its Difference, and Hydra ({HYDRA_FEATURES:,}) of the series, joined")
    if head == "ridge":
        return (f"{views} -> InnerProduct {classes} solved in closed form (ridge) -> "
                "SoftmaxWithLoss, Accuracy")
    return f"{views} -> BatchNorm -> InnerProduct {classes} -> SoftmaxWithLoss, Accuracy"


def classifier_words(classes: int) -> str:
    """The classifier in one line, for init's report."""
    filters = ", ".join(str(f) for f, _ in FCN_BLOCKS)
    kernels = ", ".join(str(k) for _, k in FCN_BLOCKS)
    return (f"LSTM-FCN: Conv1D {filters} (kernels {kernels}) -> BatchNorm -> ReLU, mean over "
            f"time, beside LSTM {FCN_LSTM} -> SequenceLast; Concat -> Dropout {FCN_DROPOUT} "
            f"-> InnerProduct {classes} -> SoftmaxWithLoss, Accuracy")


def forecaster_words(g: Graph, outputs: int) -> str:
    """The forecaster drawn in ``g`` in one line, for init's report: its recurrent layer's
    type and size as drawn, and its ``outputs`` forecasts."""
    rnn = g.layer("lstm1")
    return (f"{rnn.type} {rnn.params['num_output']} -> SequenceLast -> InnerProduct {outputs} "
            "-> EuclideanLoss")


def forecaster(g: Graph, hidden: int, outputs) -> None:
    """LSTM -> SequenceLast -> InnerProduct -> EuclideanLoss below the data layer."""
    g.add_layer("LSTM", "lstm1", {"num_output": hidden}, (0, 110))
    g.add_layer("SequenceLast", "last", {}, (0, 220))
    g.add_layer("InnerProduct", "ip1", {"num_output": outputs}, (0, 330))
    g.connect("data", "data", "lstm1", "x")
    g.connect("lstm1", "y", "last", "x")
    g.connect("last", "y", "ip1", "x")
    g.add_layer("EuclideanLoss", "loss", {}, (0, 440))
    g.connect("ip1", "y", "loss", "pred")
    g.connect("data", "label", "loss", "label")


# ----------------------------------------------------------- what `rnn-designer search` varies --
def classifier_search(steps: int, frame: int) -> dict:
    """The classifier's ``search`` section: the learning rate and weight decay, the filters
    of each convolution, the LSTM's type, size and direction, how the convolutions are read
    over time, the dropout, the LSTM branch on or off, the steps, and (for sequences read in
    frames) a frame twice as long."""
    space = {
        "solver.base_lr": {"float": [1e-4, 1e-2], "log": True},
        "solver.weight_decay": {"choice": [0.0, 0.01, 0.05, 0.1]},
        "solver.max_steps": {"choice": sorted({max(100, steps // 20 * 10), steps})},
        "drop.dropout_ratio": {"float": [0.0, 0.6]},
        "pool.method": {"choice": ["mean", "max", "attention"]},
        "lstm1.type": {"choice": ["LSTM", "GRU"]},
        "lstm1.num_output": {"int": [8, 64], "step": 8},
        "lstm1.bidirectional": {"choice": [False, True]},
        "features.inputs": {"choice": ["both", "pool"]},
        "ip1.solve": {"choice": ["gradient", "ridge"]},  # or over the trained net's features
    }
    for i, (filters, _) in enumerate(FCN_BLOCKS, 1):
        space[f"conv{i}.num_output"] = {"choice": [filters // 2, filters]}
    if frame > 1:
        space["data.frame"] = {"choice": [frame, 2 * frame]}
    return space


def rocket_search(steps: int, head: str = "adam") -> dict:
    """The MiniRocket classifier's ``search`` section: the learning rate, the steps, the
    batch, how many features each view makes and from which random kernels, and which views
    (the series, its difference or both; with Hydra's or without) the head reads (a head solved in
    closed form has no steps to vary: the features, the kernels and their dilations)."""
    series, difference = ROCKET_VIEWS
    # Hydra's features may go, never stay alone: on ArrowHead and ACSF1 cut to 5 a class,
    # searches that read Hydra's alone scored best over the folds by their loss and tested
    # 0.554 where the design as drawn tested 0.754 (RESULTS.md)
    views = {"rockets.inputs": {"choice": ["both", series, difference]},
             "features.inputs": {"choice": ["both", "rockets"]}}
    features = {f"{v}.num_features": {"choice": [4956, ROCKET_FEATURES, 2 * ROCKET_FEATURES]}
                for v in ROCKET_VIEWS}
    features[f"{HYDRA}.num_features"] = {"choice": [HYDRA_FEATURES // 2, HYDRA_FEATURES,
                                                    2 * HYDRA_FEATURES]}
    seeds = {f"{v}.seed": {"choice": [0, 1, 2, 3, 4]} for v in ROCKET_VIEWS + (HYDRA,)}
    if head == "ridge":
        return {**views, **features, f"{series}.max_dilations": {"choice": [16, 32]},
                f"{difference}.max_dilations": {"choice": [16, 32]}, **seeds}
    return {
        "solver.base_lr": {"float": [3e-5, 1e-3], "log": True},
        "solver.max_steps": {"choice": sorted({max(100, steps // 20 * 10), steps,
                                               max(2 * steps, ROCKET_STEPS)})},
        "data.batch_size": {"choice": [8, 16, 32]},
        **views, **features, **seeds,
    }


def forecaster_search(seq_len: int, longest: int) -> dict:
    """The forecaster's ``search`` section: the learning rate, the LSTM's type and size, and
    the window (half, the same, twice as long, within what the file leaves room for)."""
    windows = sorted({w for w in (seq_len // 2, seq_len, 2 * seq_len) if 2 <= w <= longest})
    space = {
        "solver.base_lr": {"float": [3e-4, 1e-2], "log": True},
        "lstm1.type": {"choice": ["LSTM", "GRU"]},
        "lstm1.num_output": {"int": [16, 128], "step": 16},
    }
    if len(windows) > 1:
        space["data.seq_len"] = {"choice": windows}
    return space
