"""The inspection worker: one long-lived thread where torch runs the inspections.

Jobs are plain dicts and results plain data (numpy arrays in an `Inspection`); the nets the
worker builds (from a checkpoint, or from a live run's weights copy) stay in its thread. One
job runs at a time; a job sent while one runs waits, and a newer one replaces it (only the
latest question matters).

Job kinds (``what``):

``checkpoint``
    ``run_dir``, ``which`` (best/last), ``text`` (``None``: the held-out snippet), ``steps``.
``weights``
    ``key`` (the run), ``meta`` (``project``, ``data``, ``engines``), ``weights`` (numpy),
    ``probe`` (a `Probe` dict), ``text``, ``step``: a live run's weights at a step.
``parity``
    ``layer`` and either ``run_dir`` (that run's weights) or ``project`` and ``path`` (freshly
    initialised weights): the per-step engine differences of one layer.
"""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from designer.ui.runs.worker import failure, written_for_users


class InspectWorker(QObject):
    """Runs jobs in the service's thread (see the module's docstring)."""

    done = Signal(object)
    failed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self._nets: dict = {}      # the live run: key -> net built once, reloaded each job

    @Slot(object)
    def run(self, job: dict) -> None:
        _one_thread()
        started = time.perf_counter()
        try:
            result = getattr(self, "_" + job["what"])(job)
            result.update(job=job["id"], what=job["what"], run=job.get("run"),
                          seconds=time.perf_counter() - started)
            self.done.emit(result)
        except Exception as e:  # noqa: BLE001 - reported in the view, nothing escapes
            info = failure(e, written_for_users(e)
                           or type(e).__name__ in ("ProbeError", "InspectError"))
            info.update(job=job["id"], what=job["what"], run=job.get("run"))
            self.failed.emit(info)

    def _checkpoint(self, job: dict) -> dict:
        from designer.training.trained.generate import load_trained
        from designer.training.readout.inspect import inspect
        from designer.training.trained.inspect_run import probe_for
        model = load_trained(job["run_dir"], job["which"], "cpu")
        probe = probe_for(model, job.get("text"), job.get("steps") or 100)
        seen = inspect(model.net, probe, parity=job.get("parity", False))
        seen.step = int(model.meta.get("step", 0))
        return {"inspection": seen, "vocab": model.vocab, "kind": model.kind,
                "title": f"{job['which']} checkpoint, step {seen.step:,}"}

    def _weights(self, job: dict) -> dict:
        import torch

        from designer.training.trained.generate import net_for
        from designer.training.readout.inspect import gate_saturation, inspect
        from designer.training.readout.probe import Probe, ProbeError, text_probe
        meta = job["meta"]
        vocab = meta["data"].get("vocab")
        kind = meta["data"].get("kind", "text")
        if not job.get("probe") and not (job.get("text") and kind == "text"):
            raise ProbeError("the run has nothing to inspect it on yet")
        # a sequence run's live view reads the sequence the run picked (its first test one)
        probe = text_probe(job["text"], vocab) if job.get("text") and kind == "text" else \
            Probe.from_dict(job["probe"])
        net = self._nets.get(job["key"])
        if net is None:
            net = net_for(_with_dims(meta, probe), job["weights"], f"run {job['key']}")
            self._nets = {job["key"]: net}  # one live run at a time
        else:
            net.load_state_dict({k: torch.as_tensor(v) for k, v in job["weights"].items()})
        seen = inspect(net, probe)
        seen.step = int(job["step"])
        return {"inspection": seen, "vocab": vocab, "kind": kind,
                "title": f"live, step {seen.step:,}", "gate_saturation": gate_saturation(seen)}

    def _parity(self, job: dict) -> dict:
        from designer.training.readout.inspect import inspect
        layer = job["layer"]
        if job.get("run_dir"):
            from designer.training.trained.generate import load_trained
            from designer.training.trained.inspect_run import run_probe
            model = load_trained(job["run_dir"], job.get("which", "best"), "cpu")
            net, probe = model.net, run_probe(model)
            where = (f"weights of {job.get('run_label', 'the run')} at step "
                     f"{int(model.meta.get('step', 0)):,}")
        else:
            net, probe = _fresh_net(job)
            where = "freshly initialised weights (no run of this net yet)"
        if layer not in net.recurrent:
            raise ValueError(f"{layer} is not a recurrent layer of this net")
        seen = inspect(net, probe, grads=False, parity=True)
        return {"layer": layer, "report": seen.parity[layer],
                "where": f"{where}, on {probe.steps} steps of {probe.origin}"}


def _with_dims(meta: dict, probe) -> dict:
    """A live run's meta with the dims its sequence data bound, read off its probe (a row's
    width, a classifier's classes): the net then builds without reading the data again."""
    data = dict(meta["data"])
    width = [None] * int(probe.data.shape[1]) if probe.data.ndim == 2 else None
    if probe.kind == "classes":
        data.setdefault("classes", list(probe.info.get("classes") or []))
        if "features" not in data:
            data.update(features=width, frame=1)  # the probe's rows are whole frames
    elif probe.kind == "series":
        data.setdefault("inputs", width)
    return {**meta, "data": data}


_THREAD = threading.local()


def _one_thread() -> None:
    """Run this thread's torch ops on one core (OpenMP and MKL are set per thread), leaving
    the process default as it was for the threads that train: inspections are small, and a
    second team of OpenMP threads would compete with the training run for every core."""
    if getattr(_THREAD, "single", False):
        return
    import torch
    default = torch.get_num_threads()  # also fixes this thread's count, which we change now
    torch.set_num_threads(1)           # this thread, and the process default...
    helper = threading.Thread(target=torch.set_num_threads, args=(default,))
    helper.start()                     # ...which a helper thread puts back at once
    helper.join()
    _THREAD.single = True


def _fresh_net(job: dict):
    """The document's net with its fillers' weights, and the held-out probe of its data."""
    from pathlib import Path

    import torch

    from designer.engines.net.build import Net
    from designer.graph import project as P
    from designer.training.data import open_source
    from designer.training.readout.probe import held_out_probe
    folder = Path(job["path"]).parent if job.get("path") else None
    project = P.from_dict(job["project"], file=job.get("path"), project_dir=folder)
    graph = project.graph
    if graph.errors():
        raise ValueError(f"the net is not valid yet: {graph.errors()[0]}")
    torch.manual_seed(project.training_settings()["seed"])
    net = Net(graph).eval()
    source = open_source(graph.layer(graph.sources()[0]), folder, None, None, 0)
    return net, held_out_probe(source)


class InspectService(QObject):
    """The worker and its thread, started on the first job and kept until `shutdown`.

    Signals
    -------
    finished(dict)
        A job's result (see `InspectWorker`), with ``job`` (its id) and ``seconds``.
    failed(dict)
        ``{"job", "message", "details"}``.
    """

    finished = Signal(object)
    failed = Signal(object)
    _post = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.thread: QThread | None = None
        self.worker: InspectWorker | None = None
        self.running: dict | None = None
        self.waiting: dict | None = None
        self.closed = False
        self._ids = 0
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def busy(self) -> bool:
        return self.running is not None

    def submit(self, job: dict) -> int:
        """Queue ``job`` (a newer waiting job replaces an older one); returns its id, or -1
        once the service is shut down."""
        if self.closed:
            return -1
        self._ids += 1
        job = {**job, "id": self._ids}
        if self.thread is None:
            self.thread = QThread()
            self.thread.setObjectName("inspect")
            self.worker = InspectWorker()
            self.worker.moveToThread(self.thread)
            self._post.connect(self.worker.run)
            self.worker.done.connect(self._done)
            self.worker.failed.connect(self._failed)
            self.thread.start()
        if self.running is None:
            self.running = job
            self._post.emit(job)
        else:
            self.waiting = job
        return job["id"]

    def _next(self) -> None:
        self.running, self.waiting = self.waiting, None
        if self.running is not None:
            self._post.emit(self.running)

    @Slot(object)
    def _done(self, result: dict) -> None:
        self._next()
        self.finished.emit(result)

    @Slot(object)
    def _failed(self, info: dict) -> None:
        self._next()
        self.failed.emit(info)

    def shutdown(self) -> None:
        """Let the running job end and stop the thread for good (the view is closing)."""
        self.closed = True
        self.waiting = None
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait()
            self.thread = None
