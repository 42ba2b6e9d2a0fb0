"""Data sources: character text, WAV audio and MNIST rows.

A source binds the symbolic dims the rest of the net is written in: ``T`` (sequence length),
``N`` (batch) and ``V`` (vocabulary or number of classes).
"""
from __future__ import annotations

from designer.graph import datasets
from designer.graph.spec import (FLOAT, INDEX, GenerationDefaults, LayerSpec, ParamSpec, PortSpec,
                                 TensorInfo)

BATCHING = ParamSpec(
    "batching", "choice", "random",
    "random: independent random windows, state reset every batch (as MyCaffe); stream: "
    "contiguous streams with the state carried across batches (as char-rnn)",
    choices=("random", "stream"),
)
VAL = ParamSpec("val_fraction", "float", 0.1, "the share of the data held out for validation",
                minimum=0.0, maximum=0.5)


def _seq(default: int) -> ParamSpec:
    return ParamSpec("seq_len", "int", default, "time steps per training sequence (T)",
                     minimum=1, maximum=100000)


def _batch(default: int) -> ParamSpec:
    return ParamSpec("batch_size", "int", default, "sequences per batch (N)",
                     minimum=1, maximum=65536)


SEQ_OUTPUTS = (
    PortSpec("data", "the input symbols, (T, N) ids", INDEX),
    PortSpec("cont", "sequence continuation: 0 where a sequence starts, else 1 (T, N)", FLOAT),
    PortSpec("label", "the next symbol to predict, (T, N) ids", INDEX),
)


def _seq_infer(ctx):
    t, n = ctx.params["seq_len"], ctx.params["batch_size"]
    return [TensorInfo((t, n), INDEX, "V", 1), TensorInfo((t, n), FLOAT, None, 1),
            TensorInfo((t, n), INDEX, "V", 1)]


def _text_dims(params: dict, project_dir) -> tuple[dict, str | None]:
    dims = {"T": params["seq_len"], "N": params["batch_size"]}
    name = params["corpus"]
    path = datasets.find_data(name, project_dir)
    if path is None:
        return dims, "vocabulary size V is unknown: corpus " + datasets.not_found_message(
            name, project_dir)
    try:
        dims["V"] = len(datasets.text_vocabulary(path))
    except datasets.DataProblem as e:
        return dims, str(e)
    return dims, None


CHAR_TEXT = LayerSpec(
    id="CharText",
    category="Data",
    caffe_type="INPUT",
    summary="Characters of a text corpus, as ids, with next-character labels",
    help=(
        "Reads a UTF-8 text file (or a named corpus such as tinyshakespeare) and serves "
        "windows of T characters as ids in [0, V), where V is the number of distinct "
        "characters. 'label' is the same window shifted by one character."
    ),
    inputs=(),
    outputs=SEQ_OUTPUTS,
    params=(
        ParamSpec("corpus", "str", "tinyshakespeare",
                  "a named corpus (tinyshakespeare) or the path of a UTF-8 text file"),
        _seq(75), _batch(25), BATCHING, VAL,
    ),
    infer=_seq_infer,
    source_dims=_text_dims,
    generation=GenerationDefaults(
        0.8, why="a little below 1 keeps text on the likelier words without making it repeat "
        "itself"),
)

QUANTIZATIONS = {"mu_law_256": 256, "uniform_128": 128}


def _wav_dims(params: dict, project_dir) -> tuple[dict, str | None]:
    dims = {"T": params["seq_len"], "N": params["batch_size"],
            "V": QUANTIZATIONS[params["quantization"]]}
    if datasets.find_data(params["file"], project_dir) is None:
        return dims, "audio " + datasets.not_found_message(params["file"], project_dir)
    return dims, None


WAV_AUDIO = LayerSpec(
    id="WavAudio",
    category="Data",
    caffe_type="INPUT",
    summary="Samples of a WAV file, quantised to classes, with next-sample labels",
    help=(
        "Reads a WAV file (PCM 8/16/24/32-bit or float, mono or stereo, any rate; stereo is "
        "mixed to mono) and quantises each sample to a class: mu-law to 256 classes, or 128 "
        "uniform buckets between the file's minimum and maximum as MyCaffe does. The net "
        "then learns to predict the next sample's class, as a character-level language model "
        "predicts the next character."
    ),
    inputs=(),
    outputs=SEQ_OUTPUTS,
    params=(
        ParamSpec("file", "str", "speech_8k.wav", "the WAV file (a path, or a name found in "
                  "the data folder)"),
        ParamSpec("quantization", "choice", "mu_law_256",
                  "mu_law_256: mu-law companding to 256 classes; uniform_128: 128 equal "
                  "buckets between the file's min and max (MyCaffe)",
                  choices=tuple(QUANTIZATIONS)),
        _seq(100), _batch(32), BATCHING, VAL,
    ),
    infer=_seq_infer,
    source_dims=_wav_dims,
    generation=GenerationDefaults(
        1.0, why="a model of single audio samples drifts into near-silence below 1, because "
        "the likeliest next sample is always a little nearer to zero"),
)

MNIST_FILES = ("images-idx3-ubyte", "labels-idx1-ubyte")


def _mnist_dims(params: dict, project_dir) -> tuple[dict, str | None]:
    dims = {"T": 28, "N": params["batch_size"], "V": 10}
    folder = datasets.find_data(params["folder"], project_dir)
    if folder is None or not folder.is_dir():
        return dims, "MNIST folder " + datasets.not_found_message(params["folder"], project_dir)
    return dims, None


def _mnist_infer(ctx):
    n = ctx.params["batch_size"]
    first = ctx.params["batch_first"]
    shape = (n, 28, 28) if first else (28, n, 28)
    return [TensorInfo(shape, FLOAT, None, 0 if first else 1), TensorInfo((n,), INDEX, "V", 0)]


MNIST_ROWS = LayerSpec(
    id="MnistRows",
    category="Data",
    caffe_type="INPUT",
    summary="MNIST digits read row by row: 28 steps of 28 pixels",
    help=(
        "Reads the standard MNIST IDX files (gzipped or not) from a folder and serves each "
        "28x28 digit as a sequence of 28 rows of 28 pixels in [0, 1], with its class (0-9) as "
        "the label. 'holdout' images are taken out of training: with the train files "
        "present they validate (and t10k is the test set); with only the t10k files, half "
        "validate and half test."
    ),
    inputs=(),
    outputs=(
        PortSpec("data", "pixel rows: (N, 28, 28), or (28, N, 28) when not batch-first"),
        PortSpec("label", "the digit, (N,) ids", INDEX),
    ),
    params=(
        ParamSpec("folder", "str", "mnist", "the folder that holds the MNIST IDX files"),
        _batch(100),
        ParamSpec("batch_first", "bool", True, "serve (N, 28, 28) rather than (28, N, 28)",
                  shaping=True),
        ParamSpec("holdout", "int", 2000, "images taken out of training: they validate "
                  "(with only the t10k files, half validate and half test)", minimum=1,
                  maximum=59999),
    ),
    infer=_mnist_infer,
    source_dims=_mnist_dims,
)

SPECS = (CHAR_TEXT, WAV_AUDIO, MNIST_ROWS)
