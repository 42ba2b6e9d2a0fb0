"""Malformed ONNX files, made with onnx.helper: each is refused in one sentence naming the file
and what is wrong with it, before anything of the size it claims is allocated.

Every import runs in one child process whose address space is capped, so that a model that
grows instead fails at once rather than filling the machine."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, numpy_helper  # noqa: E402

from designer.cli import main  # noqa: E402

from tests.exchange.conftest import classes_project, lstm_classifier_onnx  # noqa: E402

ROOT = Path(__file__).parents[3]
CAP = 2 * 2 ** 30  # bytes of address space: torch and onnx need under 1 GiB of it

IMPORT_ALL = """
import contextlib, io, json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from designer.cli import main
said = {}
for case in json.loads(sys.argv[2]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(["import", case["model"], "--out", case["out"]])
        except BaseException:
            code = None
            traceback.print_exc(file=err)
    said[case["model"]] = [code, err.getvalue()]
print(json.dumps(said))
"""


def wide(folder):
    """Inputs of 20,000,000 features, LSTM weights made for 1."""
    return lstm_classifier_onnx(features=20_000_000, weight_features=1)


def vast(folder):
    """Inputs of 10^12 features, LSTM weights made for 1."""
    return lstm_classifier_onnx(features=10 ** 12, weight_features=1)


def overdeclared(folder):
    """An initializer declared (1, 4e9, 1) that holds the 48 numbers of (1, 16, 3)."""
    model = lstm_classifier_onnx()
    w = next(t for t in model.graph.initializer if t.name == "W")
    del w.dims[:]
    w.dims.extend([1, 4_000_000_000, 1])
    return model


def outside(folder):
    """Weights in an external-data file above the model's folder."""
    model = lstm_classifier_onnx()
    w = next(t for t in model.graph.initializer if t.name == "W")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../../../../etc/passwd"), ("offset", "0"),
                       ("length", "192")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return model


def nan(folder):
    """A NaN among the LSTM's input weights."""
    model = lstm_classifier_onnx()
    w = next(t for t in model.graph.initializer if t.name == "W")
    values = numpy_helper.to_array(w).copy()
    values[0, 3, 1] = np.nan
    w.CopyFrom(numpy_helper.from_array(values, "W"))
    return model


def swollen_design(folder):
    """An rnn-designer export whose design says its LSTM holds a million units."""
    classes_project(folder)
    assert main(["export", str(folder / "classes.json"), "--format", "onnx", "--out",
                 str(folder / "export.onnx")]) == 0
    model = onnx.load(str(folder / "export.onnx"))
    prop = next(p for p in model.metadata_props if p.key == "design")
    design = json.loads(prop.value)
    next(la for la in design["graph"]["layers"] if la["name"] == "rnn1")["params"][
        "num_output"] = 1_000_000
    prop.value = json.dumps(design)
    return model


CASES = {
    wide: ("node 'lstm' (LSTM) reads 20,000,000 features a step, but its weights W are made "
           "for 1"),
    vast: ("node 'lstm' (LSTM) reads 1,000,000,000,000 features a step, but its weights W are "
           "made for 1"),
    overdeclared: ("the initializer 'W' is declared (1, 4000000000, 1), 4,000,000,000 "
                   "numbers, but holds 48"),
    outside: ("the weights 'W' are in the external-data file ../../../../etc/passwd, which is "
              "outside the model's folder"),
    nan: "the weights 'W' hold NaN (not a number) in 1 of their 48 values",
    swollen_design: "the design needs 4,000,018,000,002 weights, but the model holds only ",
}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """What ``import`` said of each case, run in one capped child process: case -> (exit
    code, stderr)."""
    folder = tmp_path_factory.mktemp("malformed")
    cases = []
    for make in CASES:
        path = folder / f"{make.__name__}.onnx"
        onnx.save(make(folder), str(path))
        cases.append({"model": str(path), "out": str(folder / f"{make.__name__}.json")})
    child = subprocess.run([sys.executable, "-c", IMPORT_ALL, str(CAP), json.dumps(cases)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                                "RNN_DESIGNER_OFFLINE": "1"})
    assert child.returncode == 0, child.stderr[-2000:]
    said = json.loads(child.stdout.strip().splitlines()[-1])
    return {Path(model).stem: (code, err) for model, (code, err) in said.items()}, folder


@pytest.mark.timeout(150)
@pytest.mark.parametrize("make", list(CASES), ids=lambda f: f.__name__)
def test_a_malformed_model_is_refused_in_one_sentence(refusals, make):
    said, folder = refusals
    code, err = said[make.__name__]
    path = folder / f"{make.__name__}.onnx"
    assert err.startswith(f"rnn-designer: {path}: {CASES[make]}"), err[-1500:]
    assert code == 2 and err.count("\n") == 1
    assert not (folder / f"{make.__name__}.json").exists()
