"""The imported weights as a run folder at step 0, written by the training session itself, so
that it is what ``train --out`` writes: ``generate``, ``evaluate``, ``inspect``, ``export``,
``train --resume`` and the window read it as any run."""
from __future__ import annotations

from pathlib import Path

from designer.exchange.errors import ExchangeError


def write_run(project, weights: dict, run_dir: Path, origin: str,
              data_meta: dict | None = None, named: Path | None = None) -> Path:
    """Open the project's data, build its net on the CPU with ``weights`` and save the
    checkpoint ``last`` and ``best`` of step 0 in ``run_dir``, with a first ``metrics.jsonl``
    record saying where the weights came from.

    ``data_meta``: what the data was when the weights were trained (an rnn-designer export
    carries it): its statistics and classes read the data, whichever file feeds it now.
    ``named``: the folder a refusal names (``run_dir`` is a temporary name for it)."""
    from designer.training.run.distributed import World
    from designer.training.run.errors import TrainingError
    from designer.training.run.options import RunOptions
    from designer.training.run.session import Session
    try:
        session = Session(project, RunOptions(out=run_dir, steps=0, device="cpu",
                                              probe_steps=0, data_meta=_kept(data_meta),
                                              extra_meta={"imported_from": origin}), World())
        session.net.load_state_dict(weights)
        session.save(("last", "best"), {})
        # the run's story starts with where its weights came from (and the window lists it)
        session.run.log({"kind": "imported", "step": 0, "from": origin})
    except TrainingError as e:
        raise ExchangeError(f"{named or run_dir}: the run cannot be written ({e})") from None
    return Path(run_dir)


def _kept(data_meta: dict | None) -> dict | None:
    """The data metadata to read the data by, when it holds the statistics of a trained run
    (an export of a project, never trained, holds none: its data gives them)."""
    return data_meta if data_meta and data_meta.get("stats") else None
