"""The Solver tab warns, under its form, when Adam is given a weight decay of 0.01 or more,
and the warning follows edits and undo."""


def test_adam_with_a_strong_decay_is_warned_and_adamw_is_not(tiny):
    w = tiny
    panel = w.properties.solver
    assert w.doc.effective("solver")["type"] == "Adam" and panel.warning.isHidden()
    w.doc.set_setting("solver", "weight_decay", 0.1)
    assert not panel.warning.isHidden()
    assert panel.warning.text().startswith("Adam adds weight_decay 0.1 x w")
    assert "(Fix: set the solver type to AdamW)" in panel.warning.text()
    w.doc.set_setting("solver", "type", "AdamW")
    assert panel.warning.isHidden()
    w.doc.stack.undo()
    assert not panel.warning.isHidden() and w.doc.effective("solver")["type"] == "Adam"
    w.doc.set_setting("solver", "weight_decay", 0.001)
    assert panel.warning.isHidden()
