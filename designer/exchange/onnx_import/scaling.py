"""What scaling an imported model's data layer gives its inputs, in one line for ``import``.

A model from elsewhere reads its inputs as they are unless ``--normalize`` asks for them to be
z-scored; an rnn-designer export keeps the scaling it was trained with, and its run the
statistics its metadata carries.
"""
from __future__ import annotations


def describe_scaling(result, run_written: bool) -> str | None:
    """The scaling of the data layer of ``result`` (an ``OnnxImport``), or ``None`` when the
    data layer scales nothing (text, audio)."""
    g = result.project.graph
    layer = g.layer(g.sources()[0]) if g.sources() else None
    if layer is None or "normalize" not in layer.effective_params():
        return None
    if not layer.get("normalize"):
        return "the data layer reads the inputs as they are" + (
            ", as the model was trained" if result.own else
            ", as the model was given them (--normalize z-scores them)")
    if result.own and run_written and result.data_meta.get("stats"):
        return ("the data layer z-scores the inputs by the statistics the model was trained "
                "with")
    return ("the data layer z-scores the inputs by the mean and spread of the training part "
            "of its file")
