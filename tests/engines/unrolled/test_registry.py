"""The unrolled net's registries: a cell says how its chain unrolls, and the generic expansion,
executor, module and view do the rest without naming it."""
import dataclasses
import re
from pathlib import Path

import pytest
import torch

from designer.engines.expansion import expand as X
from designer.engines import unrolled as U
from designer.graph import registry
from designer.graph.cell import CellSpec

ROOT = Path(__file__).resolve().parents[3] / "designer"
GENERIC = [*sorted((ROOT / "engines" / "expansion").glob("*.py")),
           *sorted((ROOT / "engines" / "unrolled").glob("*.py")),
           *sorted((ROOT / "ui" / "unrolled").glob("*.py"))]


def test_the_generic_unrolled_modules_name_no_cell():
    kinds = registry.recurrent_kinds()
    assert kinds
    for path in GENERIC:
        text = path.read_text()
        named = [k for k in kinds if re.search(rf"(?<![\w.]){re.escape(k)}(?!\w)", text)]
        assert not named, f"{path.relative_to(ROOT.parent)} names {named}"


@pytest.fixture
def toy(monkeypatch):
    """A cell of one gate whose unit is h = h_conted / 2 + tanh(x), registered as a cell's
    engines register theirs (and taken away after the test)."""
    cell = CellSpec(gates=("a",), unit="TOY_UNIT")
    spec = dataclasses.replace(registry.get("RNN"), id="Toy", cell=cell)
    monkeypatch.setitem(registry._SPECS, "Toy", spec)
    for table, key in ((X.CHAINS, "Toy"), (U.UNIT_OPS, "TOY_UNIT"), (X.DRAWN_AS, "TOY_UNIT")):
        monkeypatch.setitem(table, key, None)  # the decorators below fill it; undone after

    @X.chain("Toy")
    def step(step):
        step.unit("TOY_UNIT", (step.h_conted, step.x), (step.h,))

    @U.unit_op("TOY_UNIT")
    def unit(node, b, run):
        return (b[0] / 2 + torch.tanh(b[1]),)
    return spec


def test_a_cell_registered_from_its_own_module_unrolls_and_runs(toy):
    exp = X.expand_params("Toy", {"num_output": 3, "bidirectional": True}, 4, 2, 5)
    assert [n.type for n in exp.step_nodes(2)] == ["SCALE", "TOY_UNIT"]
    assert exp.weights == {"W_xc": (3, 5), "b_c": (3,), "W_xc_reverse": (3, 5),
                           "b_c_reverse": (3,)}
    assert X.drawn_as("TOY_UNIT") == "UNIT" and "Toy" in X.unrolling_kinds()

    torch.manual_seed(0)
    m = U.UnrolledRecurrent.from_params("Toy", 5, {"num_output": 3}, name="toy")
    assert sorted(dict(m.named_parameters())) == ["W_xc_l0", "b_c_l0"]
    x = torch.randn(4, 2, 5)
    y, (h_last,) = m(x)
    h, want = torch.zeros(2, 3), []
    for t in range(4):  # the step loop, written out
        h = h / 2 + torch.tanh(x[t] @ m.W_xc_l0.T + m.b_c_l0)
        want.append(h)
    assert torch.allclose(y, torch.stack(want), atol=1e-6)
    assert torch.allclose(h_last[0], h, atol=1e-6) and m.ran == U.REFERENCE


def test_a_layer_type_with_no_unrolled_net_is_one_sentence():
    with pytest.raises(ValueError, match=r"^ip \(InnerProduct\) is not a recurrent layer$"):
        X.expand_params("InnerProduct", {"num_output": 3}, 4, 2, 5, "ip")
