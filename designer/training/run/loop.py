"""The training loop: a plain generator that reads top to bottom and yields plain records.

    for record in train(project, RunOptions(out="runs/x"), token):
        print(record)            # {"kind": "train", "step": 10, "loss": 3.2, ...}

Each step: check the stop/pause token -> set the learning rate -> take a batch -> one
optimisation step (``designer.engines.train_step.step.TrainStep``: eager, or replayed from a CUDA graph)
-> every ``log_interval`` steps, read the losses back and yield a record -> validate, sample and
checkpoint on their intervals. A small set of labelled sequences then trains its final model
again on every training sequence (`designer.training.run.final`). Only plain data (numbers, strings) leaves the loop, never live
tensors, so a Qt worker can pass the records across threads as they are. Each of those steps
is a method of `designer.training.run.session.Session`, which holds what the run set up.

In a data-parallel run (``RunOptions.world``, `designer.training.run.distributed`) every
process runs this same loop on its own share of each batch, and they agree on every decision
(stop, skip, validate, save) at the same step; rank 0 alone writes the run folder, samples and
inspects, so its records are the run's.
"""
from __future__ import annotations

from typing import Iterator

from designer.graph.project import Project

from designer.training.run.control import StopToken
from designer.training.run.distributed import World
from designer.training.run.errors import TrainingError
from designer.training.run.options import RunOptions, resolve_device
from designer.training.run.session import ENDED_BY, Session
from designer.training.run.validation import evaluate
from designer.training.run.final import final_fit

__all__ = ["RunOptions", "TrainingError", "evaluate", "resolve_device", "train"]


def train(project: Project, opts: RunOptions, token: StopToken | None = None
          ) -> Iterator[dict]:
    """Train ``project``; yields plain records until the run ends (see the module doc)."""
    token = token or StopToken()
    run = Session(project, opts, opts.world or World())  # data, net, optimizer, run folder
    yield from run.start()
    if run.heads.only and run.step == 0 and not opts.resume:  # closed-form heads alone
        yield from run.solve_only()
    while run.step < run.stop_at:
        action = yield from run.control(token)  # a pause waits in here
        if action in ENDED_BY:
            run.reason = ENDED_BY[action]
            break
        yield from run.optimise()
        if run.due("log_interval") and not (yield from run.report()):
            break  # the loss was not finite for too long
        if run.due("eval_interval") and not (yield from run.validate()):
            break  # no better validation for `patience` evaluations
        if run.due("checkpoint_interval", at_end=False):
            yield from run.checkpoint()
        if run.sampling_due():
            yield from run.sample()
    yield from run.end()
    if run.trains_final():  # small labelled sets: the final model sees every sequence
        run.reason = yield from final_fit(run, project, opts, token, train)
    yield run.done()
