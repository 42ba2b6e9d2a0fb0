"""A real Optuna study in a real SQLite file, as ``rnn-designer search`` leaves one, for the
Experiments view's tests and its screenshot: a tiny project with a ``search`` section, trials
made by ``study.optimize`` on a cheap function of the parameters (some pruned, one failed), each
with a run folder ``runs/<study>/trial-<n>`` holding a few metric records and the user
attributes the search sets (run_dir, device, seconds, ms_per_step, reason).

``python tests/ui/experiments_fakes.py search PROJECT --json --trials N`` plays the search's
command line: it adds N such trials to the project's study and prints the JSON lines. With
``FAKE_SEARCH=fail`` it says one sentence on stderr and exits 2; ``FAKE_SEARCH=slow`` waits
between trials and, on SIGINT, ends after the trial at hand.
"""
from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
import warnings
from pathlib import Path

SEARCH = {"lstm1.num_output": {"int": [8, 128], "log": True},
          "embed.num_output": {"choice": [8, 16, 32]},
          "solver.base_lr": {"float": [1e-4, 0.1], "log": True},
          "solver.type": {"choice": ["Adam", "SGD"]}}


def search_project(folder: Path, name: str = "tiny", search: dict | None = None) -> Path:
    """The tests' tiny Char-RNN with a ``search`` section, saved in ``folder``."""
    from designer.graph.project import load
    from tests.ui.conftest import tiny_project
    path = tiny_project(folder, name)
    project = load(path)
    project.search = {k: dict(v) for k, v in (search or SEARCH).items()}
    return project.save(path)


def _suggest(trial, search: dict) -> dict:
    out = {}
    for name, entry in search.items():
        if "choice" in entry:
            out[name] = trial.suggest_categorical(name, entry["choice"])
        elif "int" in entry:
            lo, hi = entry["int"]
            out[name] = trial.suggest_int(name, lo, hi, log=entry.get("log", False),
                                          step=int(entry.get("step", 1)))
        else:
            lo, hi = entry["float"]
            out[name] = trial.suggest_float(name, lo, hi, log=entry.get("log", False))
    return out


def _scores(p: dict) -> dict:
    """A made-up, smooth response: more units and a learning rate near 0.01 help."""
    lr = p.get("solver.base_lr", 0.01)
    units = p.get("lstm1.num_output", 32)
    loss = 1.2 + 0.5 * abs(math.log10(lr) + 2) + 16.0 / units \
        + (0.15 if p.get("solver.type") == "SGD" else 0.0) + 0.002 * p.get("embed.num_output", 8)
    return {"val_loss": round(loss, 4), "val_accuracy": round(1.0 / (1.0 + loss), 4),
            "ms_per_step": round(2.0 + 0.09 * units + 0.05 * p.get("embed.num_output", 8), 3),
            "params": int(units * units * 4 + 1000)}


def fake_run(folder: Path, project: dict, loss: float, steps: int = 40) -> Path:
    """A run folder the charts can read: project.json and a few metric records."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project.json").write_text(json.dumps(project))
    lines = []
    for step in range(0, steps + 1, 10):
        value = loss + 2.5 * math.exp(-step / 12)
        lines.append({"kind": "train", "step": step, "time": step * 0.01, "loss": value,
                      "lr": 0.01, "tokens_per_s": 5000.0})
        if step and step % 20 == 0:
            lines.append({"kind": "val", "step": step, "time": step * 0.01, "val_loss": value})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def make_study(project_path: Path, trials: int = 12, objectives=("val_loss",),
               seed: int = 0, on_trial=None, fail: tuple = (5,), prune: tuple = (3, 8)):
    """Add ``trials`` trials to the project's study (made if new); ``on_trial(event)`` hears
    each finished trial as the JSON line the search prints. Returns the study."""
    import optuna

    from designer.graph.project import load
    from designer.search import analysis as A
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    project = load(project_path)
    storage = A.default_storage(project_path)
    A.storage_file(storage).parent.mkdir(parents=True, exist_ok=True)
    study = optuna.create_study(
        study_name=A.default_study(project_path), storage=storage, load_if_exists=True,
        directions=[A.DIRECTIONS[o] for o in objectives],
        sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # set_metric_names is experimental in Optuna
        study.set_metric_names(list(objectives))
    root = Path(project_path).parent / "runs" / study.study_name

    def objective(trial):
        started = time.perf_counter()
        params = _suggest(trial, project.search)
        scores = _scores(params)
        run = fake_run(root / f"trial-{trial.number}", project.to_dict(), scores["val_loss"])
        for key, value in (("run_dir", str(run)), ("device", "cpu"),
                           ("ms_per_step", scores["ms_per_step"])):
            trial.set_user_attr(key, value)
        trial.set_user_attr("seconds", round(time.perf_counter() - started + 1.5, 3))
        if trial.number in fail:
            trial.set_user_attr("reason", "lstm1 ran out of memory on cpu")
            raise RuntimeError("lstm1 ran out of memory on cpu")
        if trial.number in prune:
            if len(objectives) == 1:  # Optuna prunes on one objective only
                trial.report(scores["val_loss"] + 1.0, 20)
            trial.set_user_attr("reason", "pruned at step 20: val_loss behind the median")
            raise optuna.TrialPruned()
        return tuple(scores[o] for o in objectives)

    def heard(study, frozen):
        if on_trial is not None:
            on_trial(trial_event(frozen, list(objectives)))

    study.optimize(objective, n_trials=trials, catch=(RuntimeError,), callbacks=[heard])
    return study


def trial_event(t, objectives: list) -> dict:
    ua = t.user_attrs
    return {"kind": "trial", "number": t.number, "state": t.state.name,
            "params": dict(t.params), "values": list(t.values) if t.values else None,
            "run_dir": ua.get("run_dir"), "device": ua.get("device"),
            "seconds": ua.get("seconds"), "ms_per_step": ua.get("ms_per_step"),
            "reason": ua.get("reason", "")}


def main(argv: list[str]) -> int:
    """The fake ``rnn-designer search`` (see the module's docstring)."""
    from designer.search import analysis as A
    project = Path(argv[1]).resolve()
    trials = int(argv[argv.index("--trials") + 1]) if "--trials" in argv else 5
    objectives = argv[argv.index("--objective") + 1].split(",") if "--objective" in argv \
        else ["val_loss"]
    mode = os.environ.get("FAKE_SEARCH", "")
    if mode == "fail":
        print(f"rnn-designer: {project}: lstm1.num_output is searched from 8 to 4; the low end "
              "must not exceed the high end", file=sys.stderr)
        return 2
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    def say(event: dict) -> None:
        print(json.dumps(event), flush=True)

    make_study(project, 0, objectives)  # opened before it is announced, as the search does
    say({"kind": "study", "study": A.default_study(project),
         "storage": A.default_storage(project), "trials": trials, "objectives": objectives,
         "directions": [A.DIRECTIONS[o] for o in objectives]})
    for _ in range(trials):
        if stop:
            break
        make_study(project, 1, objectives, seed=None, on_trial=say, fail=(), prune=())
        if mode == "slow":
            for _ in range(50):
                if stop:
                    break
                time.sleep(0.1)
    say({"kind": "best", "stopped": bool(stop)})
    return 0


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    sys.exit(main(sys.argv[1:]))
