"""Every example project, and the Char-RNN retyped to each recurrent cell (fused and unrolled),
exports the very ONNX graph and initializers recorded in data/onnx_digests.json: a change
inside the app that should not change an export is held to that. When an export is meant to
change, record the digests again (``python tests/exchange/onnx_digests.py``) in the same
commit and say why."""
import json
from pathlib import Path

import pytest

from tests.conftest import need_data
from tests.exchange.onnx_digests import digests

RECORDED = json.loads((Path(__file__).parent / "data" / "onnx_digests.json").read_text())


@need_data("tinyshakespeare.txt", "speech_8k.wav", "co2_weekly.csv", "mnist",
           "japanese_vowels")
def test_every_example_exports_the_graph_and_weights_recorded():
    pytest.importorskip("onnx")
    now = digests()
    changed = {k: (RECORDED.get(k), v) for k, v in now.items() if RECORDED.get(k) != v}
    assert set(now) == set(RECORDED) and not changed, changed
