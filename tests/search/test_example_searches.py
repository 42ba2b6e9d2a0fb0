"""Every example project ships a search section that fits it: a search of two trials of two
steps each completes on each, run as a user runs it (`rnn-designer search`), its runs in a
copy's folder, never beside the examples.

The two trials are queued in the study before the search starts, as the search itself queues
the design as drawn: that design, and the section's first corner (every range at its low end,
every choice at its first). Left to the sampler, a trial of the Char-RNN's section can draw
three levels of 2,048 units, minutes of a CPU for two steps. The copies of the text and audio
examples read the first part of their data, and validate on two batches: a search that varies
how the data is batched validates every trial on its whole validation split, which for all of
Tiny Shakespeare takes minutes on a CPU."""
import json
import subprocess
import sys
import wave

import pytest

from tests.conftest import DATA, PROJECTS, ROOT

EXAMPLES = sorted(PROJECTS.glob("*.json"))
STEPS = 2
# the data each example reads (the data folder's names)
NEEDS = {"char-rnn-audio": "speech_8k.wav", "co2-dilated-conv-lstm": "co2_weekly.csv",
         "co2-forecast": "co2_weekly.csv", "japanese-vowels": "japanese_vowels",
         "japanese-vowels-attention": "japanese_vowels", "mnist-lstm": "mnist",
         "char-rnn-shakespeare": "tinyshakespeare.txt",
         "char-rnn-shakespeare-unrolled": "tinyshakespeare.txt",
         "hawk-shakespeare": "tinyshakespeare.txt"}

pytestmark = pytest.mark.slow


def test_every_example_has_a_search_section_that_its_design_lies_in():
    from designer.graph.project import load
    from designer.search.design import drawn_values
    from designer.search.space import parse_space
    assert {p.stem for p in EXAMPLES} == set(NEEDS)
    for path in EXAMPLES:
        project = load(path)
        assert project.search, f"{path.name} has no search section"
        space = parse_space(project.search, project, path)
        assert drawn_values(project, space) is not None, f"{path.name}: the design as drawn " \
                                                         "lies outside its section"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_a_search_of_two_short_trials_completes(path, tmp_path):
    if not (DATA / NEEDS[path.stem]).exists():
        pytest.skip(f"{NEEDS[path.stem]} is not in {DATA}")
    copy = shortened(path, tmp_path)
    queue_two_trials(copy)
    out = subprocess.run([sys.executable, "-m", "designer", "search", str(copy), "--trials",
                          "2", "--steps", str(STEPS), "--device", "cpu", "--folds", "1",
                          "--json"], cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr[-2000:]
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    trials = [e for e in events if e["kind"] == "trial"]
    assert [t["state"] for t in trials] == ["COMPLETE", "COMPLETE"], out.stderr[-2000:]
    assert all(t["steps"] == STEPS and t["max_steps"] == STEPS for t in trials)
    assert events[-1]["kind"] == "best" and events[-1]["number"] is not None
    assert (tmp_path / "runs").is_dir() and not (PROJECTS / "runs").exists()


def shortened(path, folder):
    """A copy of the example in ``folder`` that validates on two batches; a text or audio
    example reads the first part of its data there (40,000 characters; 30 seconds)."""
    from designer.graph.project import load
    project = load(path)
    project.training["eval_batches"] = 2
    data = project.graph.layer("data")
    if data.type == "CharText":
        text = (DATA / "tinyshakespeare.txt").read_text(encoding="utf-8")[:40_000]
        (folder / "corpus.txt").write_text(text, encoding="utf-8")
        project.graph.set_param("data", "corpus", "corpus.txt")
    elif data.type == "WavAudio":
        with wave.open(str(DATA / data.params["file"]), "rb") as src, \
                wave.open(str(folder / "speech.wav"), "wb") as dst:
            dst.setparams(src.getparams())
            dst.writeframes(src.readframes(30 * src.getframerate()))
        project.graph.set_param("data", "file", "speech.wav")
    return project.save(folder / path.name)


def queue_two_trials(path) -> None:
    """The project's study, made as the search makes it, with the design as drawn and the
    section's first corner queued (a search with --steps leaves solver.max_steps out)."""
    from designer.graph.project import load
    from designer.search.design import drawn_values
    from designer.search.space import parse_space
    from designer.search.study import open_study, quiet_optuna
    from designer.search.where import default_storage, default_study
    quiet_optuna()
    project = load(path)
    space = parse_space(project.search, project, path)
    storage = default_storage(path)
    (path.parent / "runs").mkdir()
    study = open_study(storage, default_study(path), ["val_loss"], space.source, folds=1)
    space = space.trained_for(STEPS)
    drawn = drawn_values(project, space)
    corner = {d.key: d.choices[0] if d.kind == "choice" else d.low for d in space.dims}
    study.enqueue_trial(drawn, user_attrs={"drawn": True})
    study.enqueue_trial(corner)
