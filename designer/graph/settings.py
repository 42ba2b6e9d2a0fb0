"""Solver and training settings of a project, described like layer parameters.

The same ``ParamSpec`` rules check them, the property form edits them and the trainer reads them.
"""
from __future__ import annotations

from designer.graph.spec import ParamSpec

SOLVER = (
    ParamSpec("type", "choice", "Adam", "the optimiser", choices=("SGD", "Adam", "AdamW",
                                                                  "RMSProp")),
    ParamSpec("base_lr", "float", 0.002, "the learning rate", minimum=1e-9, maximum=100.0),
    ParamSpec("momentum", "float", 0.9, "SGD and RMSProp momentum; Adam's beta1",
              minimum=0.0, maximum=1.0, below_maximum=True),
    ParamSpec("momentum2", "float", 0.999, "Adam's beta2", minimum=0.0, maximum=1.0,
              below_maximum=True),
    ParamSpec("rms_decay", "float", 0.99, "RMSProp's smoothing constant (alpha)",
              minimum=0.0, maximum=1.0, below_maximum=True),
    ParamSpec("weight_decay", "float", 0.0, "L2 penalty (decoupled for AdamW)", minimum=0.0,
              maximum=10.0),
    ParamSpec("lr_policy", "choice", "fixed",
              "fixed; step: multiply by gamma every stepsize steps; cosine: decay to "
              "min_lr_ratio x base_lr over max_steps after warm-up",
              choices=("fixed", "step", "cosine")),
    ParamSpec("gamma", "float", 0.1, "the factor of the step policy", minimum=0.0,
              maximum=1.0),
    ParamSpec("stepsize", "int", 1000, "steps between drops of the step policy", minimum=1,
              maximum=1 << 30),
    ParamSpec("warmup_steps", "int", 0, "steps of linear warm-up from zero", minimum=0,
              maximum=1 << 30),
    ParamSpec("min_lr_ratio", "float", 0.1, "where the cosine policy ends, as a share of "
              "base_lr", minimum=0.0, maximum=1.0),
    ParamSpec("clip_gradients", "float", 5.0, "clip the global gradient norm to this "
              "(0: off)", minimum=0.0, maximum=1e9),
    ParamSpec("max_steps", "int", 2000, "training steps in a run", minimum=1,
              maximum=1 << 40),
)

TRAINING = (
    ParamSpec("eval_interval", "int", 200, "steps between validation passes", minimum=1,
              maximum=1 << 30),
    ParamSpec("eval_batches", "int", 20, "batches per validation pass", minimum=1,
              maximum=1 << 20),
    ParamSpec("patience", "int", 0, "stop after this many validations without a new best "
              "(0: never)", minimum=0, maximum=1 << 20),
    ParamSpec("log_interval", "int", 10, "steps between metric records", minimum=1,
              maximum=1 << 20),
    ParamSpec("checkpoint_interval", "int", 500, "steps between checkpoints", minimum=1,
              maximum=1 << 30),
    ParamSpec("sample_interval", "int", 500, "steps between generated samples (0: never)",
              minimum=0, maximum=1 << 30),
    ParamSpec("sample_length", "int", 200, "characters (or samples) per generated sample",
              minimum=1, maximum=1 << 20),
    ParamSpec("sample_temperature", "float", 0.8, "the temperature of the samples shown "
              "while training", minimum=0.0, maximum=10.0),
    ParamSpec("refit", "choice", "auto", "labelled sequences: once validation has chosen the "
              "steps, train the final model again on every training sequence (train + "
              "validation) for those steps and score that one: auto (where the training file "
              "holds fewer than 500), on, or off (score the validated model)",
              choices=("auto", "on", "off")),
    ParamSpec("seed", "int", 1, "the random seed", minimum=0, maximum=2**63 - 1),
    ParamSpec("device", "choice", "auto", "auto: CUDA when present, else CPU",
              choices=("auto", "cpu", "cuda")),
    ParamSpec("precision", "choice", "fp32", "fp32, or bf16 autocast on CUDA",
              choices=("fp32", "bf16")),
    ParamSpec("cuda_graphs", "bool", True, "capture the training step in a CUDA graph when "
              "shapes are static"),
    ParamSpec("nan_patience", "int", 5, "stop after this many non-finite losses in a row",
              minimum=1, maximum=1 << 20),
    ParamSpec("divergence_factor", "float", 5.0, "warn when the training loss stays above this "
              "many times its best (0: never)", minimum=0.0, maximum=1e6),
    ParamSpec("divergence_steps", "int", 100, "for at least this many steps", minimum=1,
              maximum=1 << 30),
)

SECTIONS = {"solver": SOLVER, "training": TRAINING}

# Adam with an L2 penalty this large: measured on tinyshakespeare (RESULTS.md, "Adam's weight
# decay"), every recurrent cell stopped learning at 0.01 and at 0.1, where AdamW trained
ADAM_L2_TOO_STRONG = 0.01


def adam_l2_note(solver: dict) -> str | None:
    """A sentence when ``solver`` (effective settings) is Adam with a weight decay of 0.01 or
    more: Adam adds it to the gradient, and its per-weight scaling turns it into a step of
    about the learning rate towards zero on every weight whose own gradient is smaller. The
    caller says where it comes from (a run's notes: "solver: ...")."""
    decay = solver.get("weight_decay") or 0.0
    if solver.get("type") != "Adam" or decay < ADAM_L2_TOO_STRONG:
        return None
    return (f"Adam adds weight_decay {decay:g} x w to every gradient, and its scaling "
            "turns that into a pull of about base_lr a step towards zero that small gradients "
            "cannot outweigh, so the net may stop learning; AdamW decays the weights apart "
            "from the gradient (Fix: set the solver type to AdamW)")


def defaults(section: str) -> dict:
    return {p.name: p.default for p in SECTIONS[section]}


def effective(section: str, explicit: dict) -> dict:
    out = defaults(section)
    out.update(explicit)
    return out
