"""The Problems panel: problems told on their cause with a one-click, undoable Fix; the smoke
step after each edit, its failure on the layer that raised it, and Train held back by it."""
import pytest
import torch

from designer.engines.net import build
from tests.conftest import need_data
from tests.ui.conftest import snapshot

pytestmark = need_data("tinyshakespeare.txt")


def rows(panel) -> list[tuple[str, str]]:
    return [(panel.topLevelItem(i).text(0), panel.topLevelItem(i).text(1))
            for i in range(panel.topLevelItemCount())]


def fix_button(panel, row: int = 0):
    return panel.itemWidget(panel.topLevelItem(row), 2)


def test_a_problem_is_told_on_its_cause_and_fixed_in_one_undoable_click(char_rnn, qtbot):
    w = char_rnn
    before = snapshot(w.doc.graph)
    w.doc.set_param("ip1", "num_output", 10)
    qtbot.waitUntil(lambda: rows(w.problems)[0][0] == "ip1")
    assert rows(w.problems) == [("ip1", "ip1 has 10 outputs, but the labels take 65 values: "
                                        "set ip1's num_output to V (65)")]
    assert w.scene.node("ip1").error.startswith("ip1 has 10 outputs")
    assert w.scene.node("loss").error == ""
    assert not w.act.train.isEnabled() and "ip1 has 10 outputs" in w.act.train.toolTip()
    button = fix_button(w.problems)
    assert button.toolTip() == "Set ip1's num_output to V (65) (undoable)"
    count = w.doc.stack.count()
    button.click()
    assert w.doc.graph.errors() == [] and w.doc.graph.layer("ip1").get("num_output") == "V"
    assert w.doc.stack.count() == count + 1
    qtbot.waitUntil(lambda: w.act.train.isEnabled())
    w.doc.stack.undo()
    assert w.doc.graph.layer("ip1").get("num_output") == 10
    w.doc.stack.undo()
    assert snapshot(w.doc.graph) == before


def test_a_missing_embed_is_inserted_by_the_fix(char_rnn, qtbot):
    w = char_rnn
    g = w.doc.graph
    before = snapshot(g)
    w.doc.remove(["embed"])
    w.doc.connect("data", "data", "lstm1", "x")
    qtbot.waitUntil(lambda: bool(rows(w.problems)) and rows(w.problems)[0][0] == "lstm1")
    assert "insert an Embed layer between data and lstm1" in rows(w.problems)[0][1]
    fix_button(w.problems).click()
    assert g.errors() == [] and g.layer("embed").type == "Embed"
    assert [str(k) for k in g.links_into("lstm1")] == ["embed.y -> lstm1.x"]
    w.doc.stack.undo()
    assert [str(k) for k in g.links_into("lstm1")] == ["data.data -> lstm1.x"]
    w.doc.stack.undo()
    w.doc.stack.undo()
    assert snapshot(g) == before


@pytest.fixture
def smoked(char_rnn, qtbot):
    """The Char-RNN window with the smoke step on, its first step done."""
    char_rnn.set_smoke_step(True)
    result = char_rnn.smoke.wait()
    assert result is not None and result["status"] == "ok", result
    return char_rnn


def test_the_smoke_step_reports_a_real_batch_when_all_is_well(smoked, qtbot):
    w = smoked
    qtbot.waitUntil(lambda: "real batch" in rows(w.problems)[0][1])
    (row,) = rows(w.problems)
    assert row[1].startswith("No problems: the net is valid, and the net ran forward and "
                             "backward on a real batch of 2 x 3")
    assert w.act.train.isEnabled()


def test_a_failure_on_a_real_batch_is_a_problem_on_its_layer_and_holds_train(smoked, qtbot,
                                                                             monkeypatch):
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("no kernel for this input")

    w = smoked
    monkeypatch.setitem(build.BUILDERS, "InnerProduct", lambda ctx: Broken())
    w.doc.set_param("lstm1", "dropout_ratio", 0.25)  # any edit runs the step again
    assert w.smoke.result is None  # the old result is forgotten at once
    result = w.smoke.wait()
    assert result["status"] == "failed" and result["layer"] == "ip1"
    qtbot.waitUntil(lambda: rows(w.problems)[0][0] == "ip1")
    layer, text = rows(w.problems)[0]
    assert text.startswith("Ip1 (InnerProduct) failed on a real batch during the forward pass: "
                           "no kernel for this input")
    details = w.problems.topLevelItem(0).child(0)
    assert details.text(1) == "Details" and "RuntimeError" in details.child(0).text(1)
    assert not w.act.train.isEnabled()
    assert w.act.train.toolTip().startswith("The net cannot train yet: ip1 (InnerProduct)")
    qtbot.waitUntil(lambda: w.scene.node("ip1").error.startswith("ip1 (InnerProduct) failed"))
    assert w.training.train() is None  # F5 is refused the same way
    monkeypatch.setitem(build.BUILDERS, "InnerProduct", build.BUILDERS["InnerProduct"])


def test_edits_in_a_burst_run_one_step_and_the_switch_is_remembered(smoked, qtbot, settings):
    w = smoked
    started = []
    w.smoke.changed.connect(lambda r: started.append(r))
    for ratio in (0.1, 0.2, 0.3, 0.4):
        w.doc.set_param("lstm1", "dropout_ratio", ratio)
    w.smoke.wait()
    assert [r for r in started if r is not None] == [w.smoke.result]  # one report
    w.act.smoke.setChecked(False)
    assert settings.value("problems/smoke_step", type=bool) is False
    assert w.smoke.result is None and not w.problems.smoke_enabled
