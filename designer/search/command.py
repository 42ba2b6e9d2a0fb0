"""``rnn-designer search``: check what was asked, open the study, run the workers, and say
what happened: one line per finished trial and a summary (``--json``: one JSON object per
line: ``study`` first, then ``trial`` for each finished trial, then ``best``).

Exit codes: 0 done, 1 stopped short (its workers kept dying, or stopped on errors), 2 bad
input (the project, the space, the options, the storage); interrupted (Ctrl-C), it raises
``KeyboardInterrupt`` once the workers have stopped, for the command line's 130 (the same
command again resumes the study, as it does after 1).
"""
from __future__ import annotations

import json
import math
import re
import sys
import time
from pathlib import Path

from designer.graph import project as P
from designer.training.data.csv_reader import size_limit

from designer.search.best import check_best_out, ensemble_trials, summary, write_best
from designer.search.design import drawn_values
from designer.search.folds import plan_folds
from designer.search.pick import too_few
from designer.search.runner import Runner, cpu_threads, device_slots
from designer.search.space import SpaceError, parse_space, read_space_file
from designer.search.study import (INTERRUPTED, NEEDS_ACCURACY, SearchError, default_storage,
                                   directions, finished, open_study, owner_gone, parse_objectives,
                                   quiet_optuna, reap, storage_label)
from designer.search.where import storage_url
from designer.search.worker import Plan, trial_event
from designer.search.refit import trains_final


def search(args) -> int:
    """The command (``args`` as ``designer.cli`` parses them)."""
    quiet_optuna()
    try:
        project, space, plan, slots = prepare(args)
        steps_note = space.steps_note(args.steps)
        space = space.trained_for(args.steps)
        study = open_study(plan.storage, plan.study, plan.objectives, plan.space,
                           folds=plan.folds.count)
    except SpaceError as e:
        for line in e.lines():
            print(f"rnn-designer: {line}", file=sys.stderr)
        return 2
    except (SearchError, P.ProjectError) as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return getattr(e, "code", 2)
    for note in (space.adam_l2_note(project.solver_settings()), steps_note):
        if note:
            print(f"rnn-designer: note: {note}", file=sys.stderr)
    few = too_few(plan.folds.fewest, plan.trials) if len(plan.objectives) == 1 and \
        not study.get_trials(deepcopy=False) else ""
    if few:  # no lead could count: the design as drawn is the pick whatever the others score
        plan.trials = 1
        print(f"rnn-designer: note: {few}", file=sys.stderr)
    out = JsonLines() if args.json else Lines(plan.objectives)
    out({"kind": "study", "study": plan.study, "storage": plan.storage, "trials": plan.trials,
         "objectives": list(plan.objectives), "directions": directions(plan.objectives),
         "devices": slots, "runs": plan.runs, "folds": plan.folds.count})
    drawn = drawn_values(project, space) if not study.get_trials(deepcopy=False) else None
    if drawn is not None:  # a new study starts from the design as drawn
        study.enqueue_trial(drawn, user_attrs={"drawn": True})
    for t in reap(study, owner_gone, INTERRUPTED, max_retry=None):  # left by a dead command
        out(trial_event(t))
    out.progress(plan.trials, len(finished(study)))
    runner = Runner(plan, slots, study, out)
    start = time.perf_counter()
    interrupted = runner.run()
    short = runner.short()  # trials of the total left unrun, and why
    best = summary(study)
    best["trial_run_dir"] = best["run_dir"]
    seeds, top = getattr(args, "refit_seeds", 1), getattr(args, "refit_top", 1)
    final = trains_final(project)  # the pick's final model sees every training sequence
    if (plan.folds.count > 1 or seeds > 1 or top > 1 or final) and \
            best["number"] is not None and not interrupted and not short:
        designs = ensemble_trials(study, top) if top > 1 else [best]
        try:
            folders = retrain(project, space, designs, plan, slots[0], out, seeds, final)
            best["run_dir"] = str(folders[0])
            if len(folders) > 1:
                best["run_dirs"] = [str(f) for f in folders]
                best["ensemble"] = {"trials": [d["number"] for d in designs], "seeds": seeds}
        except SearchError as e:
            print(f"rnn-designer: {e}", file=sys.stderr)
            runner.errors.append(str(e))
            if getattr(e, "done", None):
                best["run_dir"] = str(e.done[0])
        except KeyboardInterrupt:
            interrupted = True
    best["seconds"] = round(time.perf_counter() - start, 3)
    best["best_out"] = None
    if args.best_out and best["number"] is not None and not interrupted and not short:
        best["best_out"] = str(write_best(project, space, best, plan.study, args.best_out,
                                          steps=plan.steps))
    out(best)
    out.close()
    if interrupted:  # the command line says so, and exits 130
        raise KeyboardInterrupt("run the same command again to go on")
    if short:
        print(f"rnn-designer: {short}; to go on, run the same command again: "
              f"{same_command(args)}", file=sys.stderr)
        return 1
    if runner.errors and best["complete"] + best["pruned"] + best["failed"] == 0:
        return 1
    return 0


def same_command(args) -> str:
    """The command line that ran this search, as a shell reads it."""
    import shlex
    argv = getattr(args, "argv", None) or ["search", str(args.project)]
    return shlex.join(["rnn-designer", *argv])


def retrain(project, space, designs: list, plan, device: str, out, seeds: int = 1,
            final: bool = False) -> list:
    """`refit.refit_seeds` of each trial in ``designs`` (the kept one first; ``seeds`` runs
    each; without cross-validation, and unless the pick trains a ``final`` model on every
    training sequence, a trial's own run is its first), Ctrl-C ending it after
    the current step (then ``KeyboardInterrupt``: the same command again goes on from its
    last checkpoint). A failed retraining raises `SearchError` whose ``done`` lists the
    folders trained before it."""
    import signal

    from designer.training.run.control import StopToken

    from designer.search.refit import refit_seeds
    token = StopToken()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: token.stop())
    try:
        if device.startswith("cuda"):
            import torch
            torch.cuda.set_device(torch.device(device))
        folders = []
        for i, trial in enumerate(designs):
            try:
                folders += refit_seeds(
                    project, space, trial, plan.study, plan.runs, device, plan.steps,
                    plan.seed, seeds, token, out, kept=i == 0,
                    first=None if plan.folds.count > 1 or final else trial["run_dir"])
            except SearchError as e:
                e.done = folders + list(getattr(e, "done", None) or [])
                raise
            if token.stopped:
                break
    finally:
        signal.signal(signal.SIGINT, previous)
    if token.stopped:
        raise KeyboardInterrupt
    return folders


def prepare(args) -> tuple:
    """``(project, space, plan, device slots)`` from the command line, or `SearchError`,
    `SpaceError` or `ProjectError` in one sentence."""
    project = P.load(args.project)
    if args.space:
        space = parse_space(read_space_file(args.space), project, args.space)
    else:
        space = parse_space(project.search, project, project.path)
    errors = project.graph.errors()
    if errors:
        raise SearchError(f"{project.path}: the net is not valid: {errors[0]}")
    objectives = parse_objectives(args.objective)
    for name in objectives:
        if name in NEEDS_ACCURACY and not any(layer.type == "Accuracy"
                                               for layer in project.graph.layers()):
            raise SearchError(f"{project.path}: {name} needs an Accuracy layer (a "
                              "classifier's), and the net has none")
    if args.trials < 1:
        raise SearchError("--trials must be at least 1")
    if args.steps is not None and args.steps < 1:
        raise SearchError("--steps must be at least 1")
    if args.steps and not len(space.trained_for(args.steps)):
        raise SearchError(f"{project.path}: --steps {args.steps} trains every trial "
                          f"{args.steps} steps, and solver.max_steps is all the space varies; "
                          "leave --steps out, or search something more")
    if args.time_limit is not None and not args.time_limit > 0:
        raise SearchError("--time-limit must be above 0 seconds")
    if getattr(args, "refit_seeds", 1) < 1:
        raise SearchError("--refit-seeds must be at least 1")
    if getattr(args, "refit_top", 1) < 1:
        raise SearchError("--refit-top must be at least 1")
    if getattr(args, "refit_top", 1) > 1 and len(objectives) > 1:
        raise SearchError("--refit-top ranks the trials by one objective; a search of two "
                          "has a Pareto front instead")
    if args.best_out:
        check_best_out(args.best_out, project)
    folds = plan_folds(project, getattr(args, "folds", "auto"))  # reads labelled sequences
    slots = device_slots(args.device, args.gpus, args.per_gpu, args.workers, project,
                         folds.steps)
    storage = storage_url(args.storage or default_storage(project.path))
    name = args.study or project.path.stem
    if not name.strip():
        raise SearchError("--study needs a name")
    folder = Path(project.path).resolve().parent
    runs = folder / "runs" / (re.sub(r"[^A-Za-z0-9_.\-]", "_", name).strip(".") or "study")
    plan = Plan(project_json=project.to_json(), project_path=str(Path(project.path).resolve()),
                space=space.source, storage=storage,
                study=name, objectives=objectives, trials=args.trials, runs=str(runs),
                pruner=args.pruner, steps=args.steps, seed=args.seed,
                deadline=None if args.time_limit is None else time.time() + args.time_limit,
                threads=cpu_threads(len(slots)), salt=(_host(),),
                folds=folds,
                table_limit=size_limit())
    return project, space, plan, slots


def _host() -> str:
    import socket
    return socket.gethostname()


# --------------------------------------------------------------------------------- output --
class JsonLines:
    """Every event as one JSON line on stdout (NaN and infinity as null)."""

    def __call__(self, event: dict) -> None:
        print(json.dumps(_plain(event)), flush=True)

    def progress(self, total: int, done: int) -> None:
        pass

    def close(self) -> None:
        pass


class Lines:
    """One line per finished trial and a summary, with a progress bar on stderr."""

    def __init__(self, objectives):
        self.objectives, self.bar = objectives, None

    def progress(self, total: int, done: int) -> None:
        from tqdm import tqdm
        self.bar = tqdm(total=total, initial=min(done, total), unit="trial",
                        dynamic_ncols=True, file=sys.stderr, desc="search")

    def write(self, text: str, err: bool = False) -> None:
        stream = sys.stderr if err else sys.stdout
        if self.bar is not None:
            self.bar.write(text, file=stream)
        else:
            print(text, file=stream, flush=True)

    def __call__(self, event: dict) -> None:
        kind = event["kind"]
        if kind == "study":
            self.write(f"study {event['study']} in {storage_label(event['storage'])}: "
                       f"{event['trials']} trials, {', '.join(self._goal())}, on "
                       f"{_devices(event['devices'])}; runs in {event['runs']}")
        elif kind == "trial":
            self.write(self.trial_line(event))
            if self.bar is not None and not (event["state"] == "FAIL" and
                                             event["reason"] == INTERRUPTED):
                self.bar.update(1)
        elif kind == "refit":
            self.close()
            self.write(event["message"])
        elif kind == "best":
            self.close()
            if event.get("note"):
                self.write(event["note"][:1].upper() + event["note"][1:])
            for line in self.best_lines(event):
                self.write(line)
        else:  # error, worker, stopping
            self.write(event.get("message", ""), err=True)

    def _goal(self) -> list[str]:
        return [f"{'minimising' if d == 'minimize' else 'maximising'} {o}"
                for o, d in zip(self.objectives, directions(self.objectives))]

    def trial_line(self, e: dict) -> str:
        parts = [f"trial {e['number']:<4}", f"{e['state']:<8}"]
        if e["values"] is not None:
            parts.append("  ".join(f"{o} {_num(v)}" for o, v in zip(self.objectives,
                                                                      e["values"])))
        parts.append(_params(e["params"]))
        if e["seconds"] is not None:
            parts.append(f"{e['seconds']:.1f} s")
        line = "  ".join(p for p in parts if p)
        if e["retry_of"] is not None:
            line += f"  (retry of trial {e['retry_of']})"
        return line + (f": {e['reason']}" if e["reason"] and e["state"] != "COMPLETE" else "")

    def best_lines(self, e: dict) -> list[str]:
        lines = [f"{e['complete']} complete, {e['pruned']} pruned, {e['failed']} failed "
                 f"in {e['seconds']:.0f} s"]
        if e["number"] is None:
            return lines + ["no trial completed, so there is no best one yet"]
        if len(self.objectives) == 1:
            lines.append(f"best: trial {e['number']}, {self.objectives[0]} "
                         f"{_num(e['values'][0])}: {_params(e['params'])}")
            lines.append(f"  run folder: {e['run_dir']}")
            if e.get("trial_run_dir") not in (None, e["run_dir"]):
                lines.append(f"  (trained again on the project's own split; the trial's "
                             f"first fold is {e['trial_run_dir']})")
            if e.get("run_dirs"):
                lines += ensemble_lines(e["run_dirs"], e.get("ensemble"))
        else:
            lines.append(f"Pareto front ({', '.join(self.objectives)}):")
            for t in e["pareto"]:
                values = ", ".join(f"{o} {_num(v)}" for o, v in zip(self.objectives,
                                                                    t["values"]))
                lines.append(f"  trial {t['number']}: {values}: {_params(t['params'])}; "
                             f"{t['run_dir']}")
        if e.get("best_out"):
            lines.append(f"wrote {e['best_out']} (trial {e['number']}'s design)")
        return lines

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def ensemble_lines(run_dirs: list[str], ensemble: dict | None = None) -> list[str]:
    """The ensemble of ``--refit-seeds`` / ``--refit-top``: its runs and the command that
    scores it."""
    import shlex
    trials = (ensemble or {}).get("trials") or []
    if len(trials) > 1:
        seeds = (ensemble or {}).get("seeds", 1)
        what = (f"  the designs of trials {', '.join(map(str, trials))}"
                + (f", each with {seeds} seeds" if seeds > 1 else "") + ", an ensemble: ")
    else:
        what = f"  the same design trained with {len(run_dirs)} seeds, a seed ensemble: "
    return [what + ", ".join(run_dirs),
            f"  score it with: rnn-designer evaluate {shlex.join(run_dirs)}"]


def _num(value) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _params(params: dict | None) -> str:
    return " ".join(f"{k}={_value(v)}" for k, v in (params or {}).items())


def _value(v) -> str:
    if isinstance(v, bool):
        return json.dumps(v)
    return _num(v) if isinstance(v, float) else str(v)


def _devices(slots: list[str]) -> str:
    counts: dict[str, int] = {}
    for s in slots:
        counts[s] = counts.get(s, 0) + 1
    return ", ".join(f"{n} worker{'s' if n > 1 else ''} on {d}" for d, n in counts.items())


def _plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
