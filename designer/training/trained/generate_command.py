"""``rnn-designer generate``: text to stdout, audio to WAV files, a summary and any hint on
stderr."""
from __future__ import annotations

import sys

from designer.training.trained import quality
from designer.training.trained.generate import (Generated, GenerateError, generate, load_trained,
                                                write_wavs)


def _summary(out: Generated, unit: str) -> str:
    streams = f" x {out.streams} streams" if out.streams > 1 else ""
    where = "CPU" if out.device == "cpu" else out.device
    how = f", {out.graph_note}" if out.graph_note and out.graph_note != "eager" else ""
    stopped = " (stopped)" if out.stopped else ""
    return (f"generated {out.symbols.shape[0]:,} {unit}{streams} in {out.seconds:.2f} s on "
            f"{where}: {out.per_second:,.0f} {unit}/s{how}{stopped}")


def generate_from_run(args) -> int:
    """The ``generate`` command (see ``rnn-designer generate --help``)."""
    if args.n < 0:
        raise GenerateError("-n must be 0 or more")
    if args.temperature is not None and args.temperature < 0:
        raise GenerateError("--temperature must be 0 (most likely symbol) or more")
    if args.top_k is not None and args.top_k < 0:
        raise GenerateError("--top-k must be 0 (off) or more")
    if args.streams < 1:
        raise GenerateError("--streams must be at least 1")
    if args.seconds is not None and args.seconds <= 0:
        raise GenerateError("--seconds must be more than 0")
    model = load_trained(args.run_dir, args.checkpoint, args.device)
    settings = dict(temperature=args.temperature, top_k=args.top_k, seed=args.seed,
                    streams=args.streams, graphs=not args.no_cuda_graphs)
    if model.kind == "text":
        if args.wav:
            raise GenerateError(f"{model.path} is a text model; --wav is for audio runs")
        return _text(model, args, settings)
    if model.kind == "audio":
        if not args.wav:
            raise GenerateError(f"{model.path} is an audio model: give --wav OUT.wav (and "
                                "--seconds)")
        return _audio(model, args, settings)
    raise GenerateError(f"{model.path} was trained on {model.kind} data; generation is for text "
                        "and audio runs")


def _text(model, args, settings: dict) -> int:
    if args.streams == 1:  # the text streams to the terminal as it is written
        sys.stdout.write(args.prime)
        sys.stdout.flush()

        def emit(pieces: list[str]) -> None:
            sys.stdout.write(pieces[0])
            sys.stdout.flush()

        out = generate(model, args.n, args.prime, on_chunk=emit, **settings)
        sys.stdout.write("\n")
    else:
        bar = _bar(args.n, "char")
        out = generate(model, args.n, args.prime, on_chunk=lambda p: bar.update(len(p[0])),
                       **settings)
        bar.close()
        for k, text in enumerate(out.texts):
            sys.stdout.write(f"--- stream {k + 1} of {out.streams} ---\n{args.prime}{text}\n")
    sys.stdout.flush()
    print(_summary(out, "characters"), file=sys.stderr)
    if out.hint:
        print(f"hint: {out.hint}", file=sys.stderr)
    return 0


def _audio(model, args, settings: dict) -> int:
    rate = int(model.codec["sample_rate"])
    seconds = args.seconds if args.seconds else args.n / rate
    n = max(1, int(round(seconds * rate)))
    bar = _bar(n, "sample")
    out = generate(model, n, on_chunk=lambda p: bar.update(len(p[0])), **settings)
    bar.close()
    for path, level in zip(write_wavs(out, args.wav), out.levels()):
        print(f"wrote {len(out.samples[0]) / rate:.2f} s of audio to {path} ({level})")
    reference = model.codec.get("rms")
    if reference:
        print(f"the training audio: RMS {quality.dbfs_text(quality.dbfs(reference))}")
    print(_summary(out, "samples"), file=sys.stderr)
    if out.hint:
        print(f"hint: {out.hint}", file=sys.stderr)
    return 0


def _bar(total: int, unit: str):
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                disable=None)  # no bar when stderr is not a terminal
