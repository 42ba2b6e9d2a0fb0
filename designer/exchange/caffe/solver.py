"""``solver.prototxt`` <-> the project's solver and training settings.

Caffe names: ``type`` (or the old ``solver_type``), ``base_lr``, ``momentum``, ``momentum2``,
``rms_decay``, ``weight_decay``, ``lr_policy`` with ``gamma`` and ``stepsize``, ``max_iter``,
``clip_gradients``, ``display``, ``test_interval``, ``test_iter``, ``snapshot`` and
``random_seed``. What Caffe has no field for (the cosine policy, warm-up, patience...) is kept in
the ``#@ rnn_designer`` block, which Caffe reads as a comment.
"""
from __future__ import annotations

from pathlib import Path

from designer.graph import settings
from designer.graph.errors import ParamError

from designer.exchange.errors import ExchangeError
from designer.exchange.caffe.textformat import Enum, Message

HIDDEN = "rnn_designer"
TYPES = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSProp"}
CAFFE_TYPES = {"SGD": "SGD", "Adam": "ADAM", "AdamW": "ADAMW", "RMSProp": "RMSPROP"}
SOLVER_FIELDS = {"base_lr": "base_lr", "momentum": "momentum", "momentum2": "momentum2",
                 "rms_decay": "rms_decay", "weight_decay": "weight_decay", "gamma": "gamma",
                 "stepsize": "stepsize", "max_iter": "max_steps"}
TRAINING_FIELDS = {"display": "log_interval", "test_interval": "eval_interval",
                   "test_iter": "eval_batches", "snapshot": "checkpoint_interval",
                   "random_seed": "seed"}
IGNORED = {"net", "train_net", "test_net", "net_param", "device_id", "solver_mode",
           "snapshot_prefix", "test_initialization", "average_loss", "debug_info",
           "snapshot_after_train", "snapshot_format", "delta", "regularization_type",
           "test_compute_loss", "snapshot_diff", "iter_size", "type", "solver_type",
           "lr_policy", "clip_gradients", HIDDEN}


def solver_settings(msg: Message, path: Path) -> tuple[dict, dict, list[str]]:
    """(solver settings, training settings, notes) read from a solver message."""
    solver, training, notes = {}, {}, []
    kind = str(msg.get("type", msg.get("solver_type", "SGD")))
    if kind.lower() not in TYPES:
        raise ExchangeError(f"{path}: solver type {kind} has no equivalent in rnn-designer "
                            "(SGD, Adam, AdamW, RMSProp)")
    solver["type"] = TYPES[kind.lower()]
    policy = str(msg.get("lr_policy", "fixed")).lower()
    if policy not in ("fixed", "step"):
        raise ExchangeError(f"{path}: lr_policy '{policy}' has no equivalent in rnn-designer "
                            "(fixed, step, cosine)")
    solver["lr_policy"] = policy
    for caffe, ours in SOLVER_FIELDS.items():
        if msg.has(caffe):
            solver[ours] = msg.get(caffe)
    clip = msg.get("clip_gradients")
    solver["clip_gradients"] = float(clip) if clip is not None and float(clip) > 0 else 0.0
    for caffe, ours in TRAINING_FIELDS.items():
        value = msg.get(caffe) if caffe != "test_iter" else (msg.all(caffe) or [None])[0]
        if value is not None and (int(value) > 0 or (caffe == "random_seed" and
                                                     int(value) >= 0)):
            training[ours] = int(value)
    if str(msg.get("regularization_type", "L2")).upper() != "L2":
        notes.append(f"{path.name}: regularization_type {msg.get('regularization_type')} "
                     "becomes L2 weight decay")
    if int(msg.get("iter_size", 1)) != 1:
        notes.append(f"{path.name}: iter_size {msg.get('iter_size')} (gradient accumulation) "
                     "is not supported; each step uses one batch")
    hidden = msg.message(HIDDEN)
    if hidden is not None:  # the exact settings an rnn-designer export kept
        solver, training, notes = {}, {}, []
        for section, target in (("solver", solver), ("training", training)):
            for p in settings.SECTIONS[section]:
                if hidden.has(p.name):
                    target[p.name] = _typed(p, hidden.get(p.name))
    unknown = [n for n in msg.names() if n not in SOLVER_FIELDS and n not in TRAINING_FIELDS
               and n not in IGNORED]
    if unknown:
        notes.append(f"{path.name}: ignored {', '.join(unknown)}")
    for section, target in (("solver", solver), ("training", training)):
        for p in settings.SECTIONS[section]:
            if p.name in target:
                try:
                    target[p.name] = p.check(_typed(p, target[p.name]))
                except ParamError as e:
                    raise ExchangeError(f"{path}: {p.name} must be {e.allowed}, not "
                                        f"{e.value!r}") from None
    return solver, training, notes


def _typed(p, value):
    if p.kind == "int":
        return int(value)
    if p.kind == "float":
        return float(value)
    if p.kind == "bool":
        return str(value).lower() in ("true", "t", "1")
    return str(value)


def solver_message(solver: dict, training: dict, net_file: str,
                   notes: list | None = None) -> Message:
    """A MyCaffe ``solver.prototxt`` for the project's settings (what Caffe cannot say goes
    into ``notes``)."""
    s = settings.effective("solver", solver)
    t = settings.effective("training", training)
    msg = Message()
    msg.add("test_iter", t["eval_batches"]).add("test_interval", t["eval_interval"])
    msg.add("test_initialization", False)
    msg.add("type", Enum(CAFFE_TYPES[s["type"]])).add("net", net_file)
    msg.add("base_lr", s["base_lr"]).add("momentum", s["momentum"])
    if s["type"] in ("Adam", "AdamW"):
        msg.add("momentum2", s["momentum2"])
    if s["type"] == "RMSProp":
        msg.add("rms_decay", s["rms_decay"])
    msg.add("weight_decay", s["weight_decay"])
    policy = s["lr_policy"] if s["lr_policy"] != "cosine" else "fixed"
    if notes is not None and (s["lr_policy"] == "cosine" or s["warmup_steps"]):
        notes.append("solver: Caffe has no cosine schedule or warm-up; solver.prototxt says "
                     f"lr_policy {policy}, and rnn-designer reads the schedule back from its "
                     "#@ line")
    msg.add("lr_policy", policy)
    if policy == "step":
        msg.add("gamma", s["gamma"]).add("stepsize", s["stepsize"])
    if s["clip_gradients"] > 0:
        msg.add("clip_gradients", s["clip_gradients"])
    msg.add("display", t["log_interval"]).add("max_iter", s["max_steps"])
    msg.add("snapshot", t["checkpoint_interval"])
    msg.add("snapshot_prefix", Path(net_file).stem).add("random_seed", t["seed"])
    exact = Message()
    for section, explicit in (("solver", solver), ("training", training)):
        for p in settings.SECTIONS[section]:
            if p.name in explicit:
                exact.add(p.name, explicit[p.name])
    if exact.fields:
        msg.add(HIDDEN, exact, hidden=True)
    return msg
