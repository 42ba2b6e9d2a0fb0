"""A foreign model's graph inputs: the first sequences become the data layer (ids: a CharText,
features: a SequenceClasses), int lengths its ``lengths``, a further float input zeros (an
initial state). The features are read as they are, as the model was given them, unless the
import asks for them to be z-scored (``normalize``). Without ``--data``, the feature count is
pinned from the input's shape (``F``) and the data layer's file is left empty, for the
Problems panel to ask for it.
"""
from __future__ import annotations

from onnx import TensorProto

from designer.exchange.errors import ExchangeError
from designer.exchange.onnx_import.values import Seq, Zeros

INT_TYPES = (TensorProto.INT64, TensorProto.INT32)


def read_input(w, inp) -> None:
    """Give the walker ``w`` the value of the graph input ``inp``."""
    t = inp.type.tensor_type
    dims = [d.dim_param or d.dim_value for d in t.shape.dim]
    if t.elem_type in INT_TYPES and len(dims) == 1 and w.data_layer:
        w.values[inp.name] = Seq((w.data_layer, "lengths"), "N")
        return
    if w.data_layer is not None or len(dims) not in (2, 3):
        if len(dims) == 3 and t.elem_type not in INT_TYPES:
            w.values[inp.name] = Zeros()
            w.notes.append(f"the input '{inp.name}' is read as zeros (a recurrent "
                           "layer starts from a zero state here)")
            return
        raise ExchangeError(f"{w.path}: the input '{inp.name}' of shape {dims} is "
                            "neither sequences nor their lengths")
    named = [str(d).lower() for d in dims[:2]]
    first_n = any(k in named[0] for k in ("batch", "n")) or \
        any(k in named[1] for k in ("seq", "time", "step", "t")) or w.batch_major
    axes = ("NT" if first_n else "TN") + ("C" if len(dims) == 3 else "")
    steps = dims[axes.index("T")]
    batch = dims[axes.index("N")]
    w.data_axes = axes
    w.fixed = {k: v for k, v in (("T", steps), ("N", batch)) if isinstance(v, int)
               and v > 1}
    features = dims[2] if len(dims) == 3 and isinstance(dims[2], int) else None
    if t.elem_type in INT_TYPES:
        w.tokens = True
        params = {"corpus": w.data or "tinyshakespeare"}
        if isinstance(steps, int) and steps > 1:
            params["seq_len"] = steps
        kind = "CharText"
        if w.data is None:
            w.notes.append(f"the input '{inp.name}' (character ids) reads the "
                           "tinyshakespeare corpus; give --data FILE for another")
    else:
        params = {"file": w.data or "", "normalize": w.normalize}
        kind = "SequenceClasses"
        if w.data is None and features:
            w.graph.pin_dims({"F": features})
            w.notes.append(f"the input '{inp.name}' (sequences of {features} features) "
                           "has no data file yet; give --data FILE (labelled sequences, .ts "
                           "or CSV), or pick one in the data layer")
        elif w.data is None:
            raise ExchangeError(f"{w.path}: the input '{inp.name}' has a dynamic number of "
                                "features, so --data FILE must say what feeds it")
    if isinstance(batch, int) and batch > 1:
        params["batch_size"] = batch
    w.data_layer = w.add(kind, "data", params)
    sizes = {"C": features} if features else {}
    w.values[inp.name] = Seq((w.data_layer, "data"), axes, sizes)
