"""Adam with a weight decay of 0.01 or more: a note when a run starts, and once when a search
whose space can pair them starts; AdamW, or a small decay, says nothing."""
import pytest

from designer.graph.settings import adam_l2_note, effective
from designer.training.run.loop import RunOptions, train
from tests.training.run.test_loop import tiny_project


@pytest.mark.parametrize("solver, says", [
    ({"type": "Adam", "weight_decay": 0.1}, True),
    ({"type": "Adam", "weight_decay": 0.01}, True),
    ({"type": "Adam", "weight_decay": 0.001}, False),
    ({"type": "Adam"}, False),
    ({"type": "AdamW", "weight_decay": 0.1}, False),
    ({"type": "SGD", "weight_decay": 0.1}, False),
])
def test_the_note_is_said_for_adam_with_a_decay_of_a_hundredth_or_more(solver, says):
    note = adam_l2_note(effective("solver", solver))
    assert (note is not None) == says
    if says:
        assert f"weight_decay {solver['weight_decay']:g}" in note
        assert "(Fix: set the solver type to AdamW)" in note


def notes_of(tmp_path, solver):
    records = train(tiny_project(tmp_path, solver={"max_steps": 2, **solver}),
                    RunOptions(out=str(tmp_path / "run"), device="cpu"))
    return [r["message"] for r in records if r["kind"] == "note"]


def test_a_run_with_adam_and_a_strong_decay_starts_with_the_note(tmp_path):
    notes = notes_of(tmp_path, {"type": "Adam", "weight_decay": 0.05})
    assert sum(n.startswith("solver: Adam adds weight_decay 0.05") for n in notes) == 1


def test_the_same_run_on_adamw_has_no_such_note(tmp_path):
    notes = notes_of(tmp_path, {"type": "AdamW", "weight_decay": 0.05})
    assert not any("Adam adds" in n for n in notes)
