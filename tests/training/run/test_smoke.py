"""The smoke step: a tiny real batch forward and backward; what fails becomes a sentence about
the layer that raised it, with the traceback kept aside."""
import gzip

import pytest
import torch

from designer.engines.net import build
from designer.training.run import smoke
from designer.training.run.smoke import smoke_step
from tests.newcomer import as_project, char_net, mnist_net, write_corpus


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path)


def test_a_valid_net_runs_a_tiny_real_batch(corpus):
    result = smoke_step(as_project(char_net(corpus), "ok"))
    assert result.status == "ok" and result.layer is None and result.details == ""
    assert "ran forward and backward on a real batch of 2 x 3" in result.message
    assert result.seconds > 0


def test_the_project_itself_is_left_as_it_was(corpus):
    project = as_project(char_net(corpus), "ok")
    before = project.to_dict()
    smoke_step(project)
    assert project.to_dict() == before


def test_a_layer_that_raises_is_named_with_a_sentence_and_details(corpus, monkeypatch):
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("the kernel refused this input\nsecond line of noise")

    real = build.BUILDERS["InnerProduct"]
    monkeypatch.setitem(build.BUILDERS, "InnerProduct", lambda ctx: Broken())
    result = smoke_step(as_project(char_net(corpus), "broken"))
    assert result.status == "failed" and result.layer == "ip"
    assert result.message == ("ip (InnerProduct) failed on a real batch during the forward "
                              "pass: the kernel refused this input")
    assert "Traceback" in result.details and "RuntimeError" in result.details
    monkeypatch.setitem(build.BUILDERS, "InnerProduct", real)


def test_a_label_beyond_the_scores_is_told_in_words(corpus):
    g = char_net(corpus, embed={"input_dim": 64})
    g.pin_dims({"V": 4})  # the scores are sized for 4 symbols, the corpus has more
    result = smoke_step(as_project(g, "pinned"))
    assert result.status == "failed" and result.layer == "loss", result.message
    assert "a label on a real batch is" in result.message
    assert "only 4 class scores" in result.message


def test_a_non_finite_loss_is_a_problem_on_the_loss(corpus, monkeypatch):
    class Infinite(torch.nn.Module):
        def forward(self, logits, label):
            return logits.sum() * 0 + float("inf")

    monkeypatch.setitem(build.BUILDERS, "SoftmaxWithLoss", lambda ctx: Infinite())
    result = smoke_step(as_project(char_net(corpus), "inf"))
    assert result.status == "failed" and result.layer == "loss"
    assert result.message.startswith("loss: the loss on a real batch is inf before any training")


def test_unreadable_data_is_a_sentence_on_the_data_layer(tmp_path):
    folder = tmp_path / "mnist"
    folder.mkdir()
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x03junk"))
    (folder / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x01junk"))
    result = smoke_step(as_project(mnist_net(folder), "junk"))
    assert result.status == "failed" and result.layer == "data"
    assert str(folder) in result.message and "\n" not in result.message


def test_big_nets_are_skipped_with_the_reason(corpus, monkeypatch):
    monkeypatch.setattr(smoke, "MAX_LAYERS", 3)
    result = smoke_step(as_project(char_net(corpus), "big"))
    assert result.status == "skipped"
    assert result.message == "the smoke step is skipped for nets of over 3 layers (this one " \
                             "has 5)"


def test_a_net_that_cannot_fit_the_free_memory_is_never_built(corpus, monkeypatch):
    from designer.monitor import capacity
    monkeypatch.setattr(capacity, "cpu_capacity", lambda: capacity.DeviceMemory(
        "cpu", "the CPU", 1 << 40, "", 1 << 20))  # 1 MiB free
    built = []
    monkeypatch.setattr(build.Net, "__init__", lambda *a, **k: built.append(1))
    # 256 units: about 0.28 M parameters, some 2 MiB with their gradients
    result = smoke_step(as_project(char_net(corpus, lstm={"num_output": 256}), "big"))
    assert result.status == "skipped" and built == []
    assert result.message.startswith("building this net and running a tiny batch needs at "
                                     "least 2.")
    assert result.message.endswith("but the CPU has 1.0 MiB free")


def test_a_net_with_errors_is_not_run(corpus):
    result = smoke_step(as_project(char_net(corpus, ip={"axis": 1}), "bad"))
    assert result.status == "skipped" and "errors" in result.message


def test_ids_beyond_the_embedding_are_told_in_words(corpus):
    g = char_net(corpus)
    g.pin_dims({"V": 4})
    result = smoke_step(as_project(g, "pinned"))
    assert result.status == "failed" and result.layer == "embed"
    assert result.message == ("embed: an id on a real batch is beyond its input_dim (V = 4): "
                              "the data holds more distinct symbols than the net was sized for")
