"""Faults in a data-parallel run on GPUs (NCCL): one rank killed (kill -9), one rank hung
(SIGSTOP), each in the middle of a Char-RNN run on every GPU of the machine.

For each fault it prints one JSON line: how long the launcher took to end the run after the
fault, its exit code and its one sentence, the last checkpoint (loaded whole), and whether
``--resume`` continued the run on one GPU.

    RNN_DESIGNER_DATA=<data> python3 tests/benchmarks/gpu_faults.py --out OUT_DIR [--nproc N]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from designer.training.run import checkpoint as C  # noqa: E402


def project_copy(out: Path) -> Path:
    """The Char-RNN example, checkpointing every 50 steps, with no samples or validation to
    wait for, its corpus found through RNN_DESIGNER_DATA as the example's is."""
    d = json.loads((ROOT / "projects" / "char-rnn-shakespeare.json").read_text())
    d["training"].update(checkpoint_interval=50, eval_interval=100000, sample_interval=0)
    path = out / "char-rnn-faults.json"
    path.write_text(json.dumps(d))
    return path


def train(*args) -> list[str]:
    return [sys.executable, "-m", "designer", "train", *map(str, args)]


def worker(launcher: int, rank: int) -> int:
    for child in psutil.Process(launcher).children():
        if child.environ().get("RANK") == str(rank):
            return child.pid
    raise SystemExit(f"no worker of rank {rank}")


def one_fault(project: Path, out: Path, fault: str, nproc: int, hang_s: float) -> dict:
    run = out / f"run-{fault}"
    launcher = subprocess.Popen(
        train(project, "--nproc", nproc, "--device", "cuda", "--steps", 100000, "--out", run,
              "--quiet", "--hang-timeout", hang_s),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 600
    while not (run / "last.json").exists() and launcher.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    if not (run / "last.json").exists():
        launcher.kill()
        return {"fault": fault, "error": launcher.communicate()[1][-2000:]}
    time.sleep(2)  # mid-run: between checkpoints
    rank1 = worker(launcher.pid, 1)
    t0 = time.monotonic()
    os.kill(rank1, getattr(signal, fault))
    try:
        _, err = launcher.communicate(timeout=hang_s + 300)
    except subprocess.TimeoutExpired:
        launcher.kill()
        _, err = launcher.communicate()
    ended_s = time.monotonic() - t0
    if psutil.pid_exists(rank1):
        os.kill(rank1, signal.SIGKILL)
    ck = C.load(run)  # whole, or it raises
    more = subprocess.run(train(project, "--device", "cuda", "--steps", ck.step + 20,
                                "--resume", run, "--quiet"),
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    return {"fault": fault, "gpus": nproc, "ended_after_s": round(ended_s, 1),
            "exit_code": launcher.returncode, "said": err.strip().splitlines(),
            "checkpoint_step": ck.step, "resume_exit_code": more.returncode,
            "resumed_to_step": C.load(run).step, "resume_said": more.stderr.strip()[-500:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--hang-timeout", type=float, default=30.0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    project = project_copy(args.out)
    for fault in ("SIGKILL", "SIGSTOP"):
        print(json.dumps(one_fault(project, args.out, fault, args.nproc, args.hang_timeout)),
              flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
