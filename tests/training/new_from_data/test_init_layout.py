"""The projects ``init`` writes open with no two layers drawn over each other."""
import pytest

from designer.graph import project as P
from designer.graph.layout import clashes
from designer.training.new_from_data.init import init_project
from tests.training.data.test_data_classes import ts
from tests.training.data.test_data_series import series


@pytest.mark.parametrize("kind", ["classifier-adam", "classifier-ridge", "forecaster"])
def test_init_places_no_two_layers_over_each_other(tmp_path, kind):
    rows = [(label, [[i, i + 1.0, i + 2.0], [2.0 * i, 1.0, 0.0]])
            for i, label in enumerate("abc" * 6)]
    classify = kind.startswith("classifier")
    data = ts(tmp_path, "t_TRAIN.ts", rows) if classify else series(tmp_path)
    path, _ = init_project(data, out=tmp_path / "p.json",
                           head=kind.split("-")[1] if classify else "auto")
    graph = P.load(path).graph
    positions = {layer.name: layer.pos for layer in graph.layers()}
    assert len(positions) >= 5
    assert clashes(positions) == []
