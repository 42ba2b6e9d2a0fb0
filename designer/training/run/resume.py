"""Does a checkpoint fit a project? Refuse with a reason when it does not; convert its weights
between engines when it does; put a run back where the checkpoint left it (`restore`), on one
process or on every rank of a data-parallel run, whatever number made the checkpoint."""
from __future__ import annotations

from dataclasses import dataclass, field

from designer.engines.net.convert import convert_state_dict
from designer.graph import registry
from designer.graph.cell import article

from designer.training.data.errors import DataError
from designer.training.run.checkpoint import Checkpoint, CheckpointError
from designer.training.run.errors import TrainingError

def _structure(graph_dict: dict) -> tuple[dict, set]:
    layers = {lay["name"]: lay["type"] for lay in graph_dict["layers"]}
    links = {(link["from"], link["to"]) for link in graph_dict["links"]}
    return layers, links


def _directions(graph_dict: dict) -> dict:
    """Recurrent layer -> whether it is bidirectional, as a project graph records it."""
    return {lay["name"]: bool((lay.get("params") or {}).get("bidirectional", False))
            for lay in graph_dict["layers"] if lay["type"] in registry.engine_kinds()}


def check_compatible(ck: Checkpoint, graph, source) -> None:
    """Raise ``CheckpointError`` when the checkpoint's net or data differ from the project's."""
    where = ck.path
    try:
        theirs, their_links = _structure(ck.meta["project"]["graph"])
    except (KeyError, TypeError):
        raise CheckpointError(f"{where}/meta.json holds no project graph") from None
    ours = {layer.name: layer.type for layer in graph.layers()}
    missing = sorted(set(ours) - set(theirs))
    extra = sorted(set(theirs) - set(ours))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"the project has {', '.join(missing)}")
        if extra:
            parts.append(f"the checkpoint has {', '.join(extra)}")
        raise CheckpointError(f"{where} was trained with a different graph: "
                              f"{'; '.join(parts)}")
    for name, kind in ours.items():
        if theirs[name] != kind:
            raise CheckpointError(f"{where} was trained with a different graph: {name} is "
                                  f"{article(theirs[name])} there and {article(kind)} in the project")
    their_dirs = _directions(ck.meta["project"]["graph"])
    for name, both in their_dirs.items():
        if both != bool(graph.layer(name).get("bidirectional")):
            said = ("bidirectional", "one-directional")
            raise CheckpointError(f"{where} was trained with a different graph: {name} is "
                                  f"{said[not both]} there and {said[both]} in the project")
    our_links = {(f"{x.src}.{x.src_port}", f"{x.dst}.{x.dst_port}") for x in graph.links()}
    if our_links != their_links:
        diff = sorted(our_links ^ their_links)[0]
        raise CheckpointError(f"{where} was trained with a different graph: the link "
                              f"{diff[0]} -> {diff[1]} is in only one of them")
    data = ck.meta.get("data", {})
    if data.get("kind") != source.kind:
        raise CheckpointError(f"{where} was trained on {data.get('kind')} data, not "
                              f"{source.kind}")
    if source.vocab is not None and data.get("vocab") != source.vocab:
        theirs_v = data.get("vocab") or []
        raise CheckpointError(
            f"{where} was trained on another vocabulary ({len(theirs_v)} characters) than "
            f"{source.path} has ({len(source.vocab)} characters)")
    theirs_c, ours_c = data.get("classes"), getattr(source, "classes", None)
    if ours_c is not None and theirs_c is not None and list(theirs_c) != list(ours_c):
        raise CheckpointError(f"{where} was trained on the classes {', '.join(theirs_c[:9])}, "
                              f"but {source.path} gives {', '.join(ours_c[:9])}")
    if data.get("num_classes") != source.num_classes:
        raise CheckpointError(f"{where} predicts {data.get('num_classes')} classes, but "
                              f"{source.path} gives {source.num_classes}")


def convert_for(ck: Checkpoint, graph, net) -> dict:
    """The checkpoint's weights in the engines ``net`` runs, checked key by key and shape by
    shape against ``net``."""
    layers = {n: (graph.layer(n).type, graph.layer(n).get("num_layers"))
              for n in net.recurrent if graph.layer(n).type in registry.engine_kinds()}
    src = {n: ck.meta.get("engines", {}).get(n, net.engines[n]) for n in layers}
    dst = {n: net.engines[n] for n in layers}
    weights = convert_state_dict(ck.weights, layers, src, dst)
    want = net.state_dict()
    missing = sorted(set(want) - set(weights))
    extra = sorted(set(weights) - set(want))
    if missing or extra:
        key = (missing or extra)[0]
        side = "the project's net needs" if missing else "the checkpoint holds"
        raise CheckpointError(f"{ck.path} does not fit the project: {side} "
                              f"'{key.removeprefix('layers.')}' that the other lacks")
    for key, value in want.items():
        if tuple(weights[key].shape) != tuple(value.shape):
            raise CheckpointError(
                f"{ck.path} does not fit the project: {key.removeprefix('layers.')} is "
                f"{tuple(weights[key].shape)} in the checkpoint but {tuple(value.shape)} in "
                "the project")
    return weights


@dataclass
class Restored:
    """Where a resumed run goes on from: its step, best validation loss, the recurrent state
    this rank carries (``None``: start the streams from zeros), the layers whose engine
    changed (name -> engine) and the notes to tell the user (a conversion among them)."""

    step: int
    best: float
    carry: dict | None
    switched: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def restore(ck: Checkpoint, graph, net, opt, source, world, seed: int, device) -> Restored:
    """Load checkpoint ``ck`` into ``net``, ``opt`` and ``source`` on this rank of ``world``
    (a `designer.training.run.distributed.World`; ``World()`` alone).

    The weights are converted when an engine changed, and the optimizer then starts afresh
    (its moments belong to the other engine's tensors) unless every changed engine holds the
    same tensors as before (PERSIST and CUDNN; SCAN and CAFFE). The random streams and the carried
    state go on where they were when the checkpoint was made by as many processes; otherwise
    each rank's stream restarts from the seed and the streams from a zero state, with a note.
    Raises `TrainingError` (code 2, shared by every rank) when the checkpoint does not fit.
    """
    with world.together():
        try:
            check_compatible(ck, graph, source)
            net.load_state_dict(convert_for(ck, graph, net))
            before = ck.meta.get("engines", {})
            switched = {n: e for n, e in net.engines.items() if before.get(n, e) != e}
            if all(registry.weight_layout(before[n]) == registry.weight_layout(e)
                   for n, e in switched.items()):
                # no tensor changed (engines that hold the same tensors): the moments still fit
                switched = {}
                opt.load_state_dict(ck.state["optimizer"])
            source.load_state_dict(ck.state["data"])
        except (CheckpointError, DataError) as e:
            raise TrainingError(str(e), 2) from None
    notes = [n for n in [world.restore_rng(ck.state, seed, ck.step)] if n]
    if switched:
        notes.append("the weights were converted to the " + ", ".join(
            f"{n} {e}" for n, e in switched.items()) + " engine; the optimizer starts afresh, "
            "since its moments belong to the other engine's tensors")
    carry = world.local_carry(ck.state.get("carry"), source.batch_size, device)
    if ck.state.get("carry") and carry is None:
        notes.append(f"the streams are cut anew for {world.size} process"
                     f"{'es' if world.size > 1 else ''} (the checkpoint was made by "
                     f"{ck.meta.get('world_size', 1)}): each goes on from the same place in "
                     f"the pass, from a zero state")
    best = ck.meta.get("best_val_loss")
    return Restored(ck.step, float("inf") if best is None else best, carry, switched, notes)
