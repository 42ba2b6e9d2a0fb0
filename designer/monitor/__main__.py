"""``python -m designer.monitor``: print live samples, a quick check on a GPU machine.

    python -m designer.monitor                  # one line a second until Ctrl-C
    python -m designer.monitor --count 5 --json # five JSON lines (one object per sample)
    python -m designer.monitor --list           # the GPUs NVML sees

Ctrl-C ends the run quietly, with exit status 0.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import threading
import time

from designer.monitor import list_devices, open_monitor


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m designer.monitor",
                                description="Print GPU (NVML) or CPU (psutil) samples.")
    p.add_argument("--count", type=int, default=0, metavar="N",
                   help="stop after N samples (default: run until Ctrl-C)")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds between samples (default: 1)")
    p.add_argument("--device", type=int, default=None, metavar="INDEX",
                   help="the NVML index of the GPU (default: the one CUDA calls cuda:0)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--list", action="store_true", help="list the GPUs and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Ctrl-C must stop it even when it was started with SIGINT ignored (a script's background
    # job): Python then installs no KeyboardInterrupt of its own, so install it here.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.interval < 0 or args.count < 0:
        print("--count and --interval must not be negative.", file=sys.stderr)
        return 2
    try:
        if args.list:
            return _list(args.json)
        return _watch(args)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # piped into head: stop without a traceback
        sys.stderr.close()
        return 0


def _list(as_json: bool) -> int:
    devices = list_devices()
    for d in devices:
        print(json.dumps(dataclasses.asdict(d)) if as_json else d)
    if not devices and not as_json:
        print("No NVIDIA GPU found.")
    return 0


def _watch(args) -> int:
    with open_monitor(args.device) as monitor:
        # In JSON mode stdout carries only samples; the header goes to stderr.
        header = sys.stderr if args.json else sys.stdout
        print(monitor.reason or f"Watching {monitor.device} (GPU {monitor.index}) through NVML.",
              file=header, flush=True)
        reason, start, taken = monitor.reason, time.monotonic(), 0
        while True:
            sample = monitor.poll()
            if monitor.reason != reason:  # the GPU stopped answering
                reason = monitor.reason
                print(reason, file=header, flush=True)
            if args.json:
                print(json.dumps(sample.to_dict()), flush=True)
            else:
                print(f"{sample.time - start:7.1f}s  {sample.summary()}", flush=True)
            taken += 1
            if args.count and taken >= args.count:
                return 0
            # Sleep to the next tick, so printing does not make the period drift.
            time.sleep(max(0.0, start + taken * args.interval - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main())
