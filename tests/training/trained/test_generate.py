"""Generation from a trained run: seeded, streamed, several streams at once, with the data
layer's defaults, on the device asked for, saying when the output is degenerate."""
from pathlib import Path

import numpy as np
import pytest
import torch

from designer.graph import Graph
from designer.graph.project import Project
from designer.training.data.wavfile import read_wav, write_wav
from designer.training.readout.decode import Sampler
from designer.training.trained.generate import (GenerateError, generate, generate_text, load_trained,
                                        pick_device, wav_paths, write_wavs)
from designer.training.run.loop import RunOptions, train
from designer.training.readout.sampling import pick, sample_window
from tests.training.run.test_loop import tiny_project
from tests.nets import link_all


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("text")
    list(train(tiny_project(tmp, dropout=0.0), RunOptions(out=tmp / "run", steps=20)))
    return tmp / "run"


def audio_project(folder) -> Project:
    t = np.arange(8000) / 8000
    write_wav(folder / "tone.wav", (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 8000)
    g = Graph(project_dir=folder)
    g.add_layer("WavAudio", "data", {"file": "tone.wav", "seq_len": 20, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.add_layer("LSTM", "lstm1", {"num_output": 16})
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "lstm1.x"), ("lstm1.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    p = Project(g, "tone", "", {"max_steps": 6},
                {"log_interval": 2, "eval_interval": 3, "eval_batches": 1,
                 "sample_interval": 0, "device": "cpu"})
    p.save(folder / "tone.json")
    return p


@pytest.fixture(scope="module")
def audio_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audio")
    list(train(audio_project(tmp), RunOptions(out=tmp / "run", steps=6)))
    return tmp / "run"


def test_same_seed_same_text_and_it_streams(run_dir):
    model = load_trained(run_dir)
    seen = []
    a = generate_text(model, "Speak", 50, 1.0, 0, seed=3, on_text=seen.append)
    b = generate_text(model, "Speak", 50, 1.0, 0, seed=3)
    c = generate_text(model, "Speak", 50, 1.0, 0, seed=4)
    assert a == b and len(a) == 50 and "".join(seen) == a and a != c


def test_several_streams_at_once_each_their_own(run_dir):
    model = load_trained(run_dir)
    out = generate(model, 60, "Speak", seed=1, streams=3)
    assert out.kind == "text" and out.streams == 3 and out.symbols.shape == (60, 3)
    assert [len(t) for t in out.texts] == [60] * 3 and len(set(out.texts)) == 3
    assert out.texts == generate(model, 60, "Speak", seed=1, streams=3).texts
    assert out.device == "cpu" and out.graph_note == "eager" and out.per_second > 0


def test_the_defaults_are_the_data_layers(run_dir, audio_run):
    text, audio = load_trained(run_dir), load_trained(audio_run)
    assert (text.defaults.temperature, audio.defaults.temperature) == (0.8, 1.0)
    assert generate(text, 5, "Speak").temperature == 0.8
    assert generate(audio, 5).temperature == 1.0
    assert generate(audio, 5, temperature=0.5, top_k=3).temperature == 0.5


def test_text_in_one_short_loop_gets_a_hint(run_dir):
    model = load_trained(run_dir)
    out = generate(model, 200, "Speak", temperature=0.0)  # argmax: the tiny model loops
    assert out.hint is not None and "over and over; try temperature 0.8" in out.hint
    assert generate(model, 200, "Speak", seed=2).hint is None


def test_audio_streams_become_wav_files_with_their_levels(audio_run, tmp_path):
    model = load_trained(audio_run)
    out = generate(model, 400, seed=0, streams=2)
    assert out.kind == "audio" and out.rate == 8000 and len(out.samples) == 2
    assert all(s.shape == (400,) and np.abs(s).max() <= 1.0 for s in out.samples)
    paths = write_wavs(out, tmp_path / "gen.wav")
    assert paths == [tmp_path / "gen-1.wav", tmp_path / "gen-2.wav"]
    for path, samples, lv in zip(paths, out.samples, out.levels()):
        wav = read_wav(path)
        assert wav.rate == 8000 and np.allclose(wav.samples, samples, atol=1 / 16384)
        assert lv.peak_dbfs <= 0 and lv.rms_dbfs <= lv.peak_dbfs
    assert model.codec["rms"] == pytest.approx(0.5 / np.sqrt(2), rel=1e-3)
    assert wav_paths("x.wav", 1) == [Path("x.wav")]


def test_the_device_is_the_runs_when_present(monkeypatch):
    assert pick_device("auto", "cpu") == torch.device("cpu")
    assert pick_device("auto", None) == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto", "cuda:0") == torch.device("cpu")  # trained on a GPU not here
    with pytest.raises(GenerateError, match="no CUDA GPU is available"):
        pick_device("cuda", "cpu")
    with pytest.raises(GenerateError, match="unknown device 'gpu'"):
        pick_device("gpu", "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert pick_device("auto", "cuda:3") == torch.device("cuda")  # the one GPU there is
    assert pick_device("auto", "cuda:0") == torch.device("cuda:0")
    with pytest.raises(GenerateError, match="there is no GPU 2"):
        pick_device("cuda:2", "cpu")


def test_bad_settings_are_one_sentence(run_dir):
    model = load_trained(run_dir)
    for kw, words in (({"temperature": -1}, "temperature"), ({"top_k": -2}, "top-k"),
                      ({"streams": 0}, "streams")):
        with pytest.raises(GenerateError, match=words):
            generate(model, 5, "Speak", **kw)


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
    from designer.training.run.checkpoint import CheckpointError
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        load_trained(tmp_path)


def test_a_bidirectional_net_cannot_write_one_symbol_after_another(tmp_path):
    from tests.training.run.test_resume_bidirectional import bidirectional_project
    list(train(bidirectional_project(tmp_path, "CUDNN"), RunOptions(out=tmp_path / "run",
                                                                    steps=2)))
    with pytest.raises(GenerateError, match="lstm1 is bidirectional: its backward half reads"):
        generate(load_trained(tmp_path / "run"), 5, "Speak")


def test_audio_generation_continues_a_loud_excerpt_of_the_training_audio():
    """A sample-level model started from silence tends to stay there: the prime kept with the
    run is the first quarter second at least as loud as the whole file, not its silent start."""
    from designer.training.data.audio import prime_excerpt
    from designer.training.data.quantize import Quantizer
    rate = 8000
    t = np.arange(rate) / rate
    samples = np.concatenate([np.zeros(rate), 0.5 * np.sin(2 * np.pi * 440 * t)])
    q = Quantizer.for_samples("mu_law_256", samples)
    classes = q.encode(samples)
    rms = float(np.sqrt(np.mean(samples ** 2)))
    prime = prime_excerpt(samples, classes, rate, rms)
    assert len(prime) == rate // 4
    assert np.sqrt(np.mean(q.decode(np.array(prime)) ** 2)) > 0.3  # the tone, not the silence
