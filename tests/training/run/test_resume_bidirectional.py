"""A net with a bidirectional layer trains, resumes exactly and switches engines like any other;
a checkpoint whose layer reads the other number of directions is refused in words."""
import pytest

from designer.training.run.loop import TrainingError
from tests.training.run.test_loop import run_all, tiny_project, train_losses


def bidirectional_project(tmp_path, engine):
    p = tiny_project(tmp_path, engine, dropout=0.0)
    p.graph.disconnect(p.graph.link_into("lstm1", "cont"))  # a bidirectional layer takes none
    p.graph.set_param("lstm1", "bidirectional", True)
    assert p.graph.errors() == []
    p.save(tmp_path / "tiny.json")
    return p


@pytest.mark.parametrize("engine", ["CUDNN", "CAFFE"])
def test_a_bidirectional_run_resumes_exactly(tmp_path, engine):
    p = bidirectional_project(tmp_path, engine)
    straight = run_all(p, out=tmp_path / "a", steps=8)
    first = run_all(p, out=tmp_path / "b", steps=4)
    second = run_all(p, out=tmp_path / "b", resume=True, steps=8)
    assert train_losses(first) + train_losses(second) == train_losses(straight)


def test_a_bidirectional_checkpoint_converts_to_the_other_engine(tmp_path):
    p = bidirectional_project(tmp_path, "CUDNN")
    run_all(p, out=tmp_path / "run", steps=4)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=6, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"
    back = run_all(p, out=tmp_path / "run", resume=True, steps=8, engine="cudnn")
    assert back[-1]["reason"] == "finished"


def test_a_checkpoint_with_the_other_number_of_directions_is_refused(tmp_path):
    p = bidirectional_project(tmp_path, "CUDNN")
    run_all(p, out=tmp_path / "run", steps=2)
    p.graph.set_param("lstm1", "bidirectional", False)
    with pytest.raises(TrainingError, match="lstm1 is bidirectional there and one-directional "
                                            "in the project"):
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
