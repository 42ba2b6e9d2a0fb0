"""Generation: stateful, seeded, streamed; and the MyCaffe window way for comparison."""
import pytest
import torch

from designer.engines.build import Net
from designer.training.generate import GenerateError, generate_text, load_trained
from designer.training.loop import RunOptions, train
from designer.training.sampling import Sampler, pick, sample_window
from tests.training.test_loop import tiny_project


@pytest.fixture
def run_dir(tmp_path):
    p = tiny_project(tmp_path, dropout=0.0)
    list(train(p, RunOptions(out=tmp_path / "run", steps=20)))
    return tmp_path / "run"


def test_same_seed_same_text_and_it_streams(run_dir):
    model = load_trained(run_dir)
    seen = []
    a = generate_text(model, "Speak", 50, 1.0, 0, seed=3, on_text=seen.append)
    b = generate_text(model, "Speak", 50, 1.0, 0, seed=3)
    c = generate_text(model, "Speak", 50, 1.0, 0, seed=4)
    assert a == b and len(a) == 50 and "".join(seen) == a and a != c


def test_temperature_zero_is_argmax_and_top_k_limits_choices():
    logits = torch.tensor([0.1, 3.0, 2.9, -1.0])
    g = torch.Generator().manual_seed(0)
    assert pick(logits, 0.0, 0, g) == 1
    assert {pick(logits, 5.0, 2, g) for _ in range(200)} == {1, 2}
    assert len({pick(logits, 5.0, 0, g) for _ in range(400)}) == 4


def test_stateful_sampling_equals_rerunning_the_whole_sequence(run_dir):
    """Carrying the state step by step gives the same logits as running the prefix at once."""
    model = load_trained(run_dir)
    ids = model.encode("Before we proceed")
    s = Sampler(model.net)
    for i in ids:
        step_logits = s.feed([i])
    whole = Sampler(model.net).feed(ids)
    assert torch.allclose(step_logits, whole, atol=1e-5)


def test_unknown_prime_characters_are_refused(run_dir):
    model = load_trained(run_dir)
    with pytest.raises(GenerateError, match="never saw"):
        generate_text(model, "Zebra~", 5)


def test_the_window_way_gives_text_too(run_dir):
    model = load_trained(run_dir)
    out = sample_window(model.net, model.encode("Speak"), 5, window=12)
    assert len(out) == 5


def test_generation_from_a_folder_without_checkpoint(tmp_path):
    from designer.training.checkpoint import CheckpointError
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        load_trained(tmp_path)
    assert isinstance(Net, type)
