"""``rnn-designer train`` and ``generate`` from the command line."""
import json
import signal
import subprocess
import sys

import pytest

from tests.conftest import PROJECTS, need_data, widened_char_rnn


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "designer", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
@need_data("tinyshakespeare.txt")
def test_the_char_rnn_trains_30_steps_and_generates_repeatably(tmp_path):
    run = tmp_path / "RUN"
    out = cli("train", PROJECTS / "char-rnn-shakespeare.json", "--steps", "30", "--device",
              "cpu", "--out", run, "--seed", "1", "--quiet")
    assert out.returncode == 0, out.stderr
    records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert (run / "last.json").exists() and (run / "best.json").exists()
    gen = cli("generate", run, "--prime", "ROMEO:", "-n", "200", "--seed", "1")
    assert gen.returncode == 0, gen.stderr
    text = gen.stdout.rstrip("\n")
    assert text.startswith("ROMEO:") and len(text) == len("ROMEO:") + 200
    again = cli("generate", run, "--prime", "ROMEO:", "-n", "200", "--seed", "1")
    assert again.stdout == gen.stdout


def test_bad_corpus_exits_2_with_one_line_and_writes_nothing(tmp_path):
    binary = tmp_path / "blob.txt"
    binary.write_bytes(bytes(range(256)) * 10)
    out = cli("train", PROJECTS / "char-rnn-shakespeare.json", "--steps", "2", "--device",
              "cpu", "--out", tmp_path / "run", "--corpus", binary, "--quiet")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and str(binary) in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "run").exists()


def test_generate_from_a_non_run_folder_exits_2(tmp_path):
    out = cli("generate", tmp_path, "-n", "5")
    assert out.returncode == 2 and "holds no checkpoint" in out.stderr
    assert "Traceback" not in out.stderr


def test_broken_project_exits_2(tmp_path):
    f = tmp_path / "p.json"
    f.write_text("{")
    out = cli("train", f, "--steps", "1")
    assert out.returncode == 2 and "not valid JSON" in out.stderr


def _limit_address_space():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (16 * 2**30, 16 * 2**30))  # ulimit -v 16 GB


@need_data("tinyshakespeare.txt")
def test_an_lstm_of_200000_units_is_refused_before_anything_is_built(tmp_path):
    big = widened_char_rnn(tmp_path, 200_000)
    out = subprocess.run([sys.executable, "-m", "designer", "train", str(big), "--steps", "1",
                          "--device", "cpu", "--out", str(tmp_path / "run"), "--quiet"],
                         capture_output=True, text=True, preexec_fn=_limit_address_space)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert out.stderr.startswith("rnn-designer: training this net needs about 8.7 TiB")
    assert "but the CPU (limited by ulimit -v) has" in out.stderr
    assert not (tmp_path / "run").exists()  # nothing written either


def test_generate_help_lists_streams_and_the_data_defaults():
    out = cli("generate", "--help")
    assert out.returncode == 0
    words = " ".join(out.stdout.split())  # argparse wraps the lines
    assert "--streams K" in words and "0.8 for text and 1.0 for audio" in words


def test_audio_streams_are_written_at_the_audio_default_and_have_sound(tmp_path):
    import numpy as np

    from designer.training.data.wavfile import read_wav
    from designer.training.run.loop import RunOptions, train
    from tests.training.trained.test_generate import audio_project
    list(train(audio_project(tmp_path), RunOptions(out=tmp_path / "run", steps=6)))
    out = cli("generate", tmp_path / "run", "--seconds", "0.1", "--wav", tmp_path / "g.wav",
              "--streams", "2", "--seed", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"wrote 0.10 s of audio to {tmp_path / 'g-1.wav'} (peak ")
    assert lines[1].startswith(f"wrote 0.10 s of audio to {tmp_path / 'g-2.wav'} (peak ")
    assert lines[2] == "the training audio: RMS -9.0 dBFS"  # the 0.5 sine
    assert "generated 800 samples x 2 streams in " in out.stderr
    for k in (1, 2):  # temperature 1.0: sound, not the near-silence of a colder sample
        samples = read_wav(tmp_path / f"g-{k}.wav").samples
        assert len(samples) == 800 and np.sqrt(np.mean(samples ** 2)) >= 0.05 * 0.5 / np.sqrt(2)
    bad = cli("generate", tmp_path / "run", "--seconds", "0.1", "--wav", tmp_path / "g.wav",
              "--device", "gpu")
    assert bad.returncode == 2 and bad.stderr.strip() == ("rnn-designer: unknown device 'gpu' "
                                                          "(use auto, cpu, cuda or cuda:N)")


def _ignoring_sigint() -> None:
    """What a shell does to a script's background job (``cmd &``, no job control): the
    command starts with SIGINT ignored, and must still stop on Ctrl-C (``kill -INT``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_ctrl_c_stops_train_after_the_step_and_saves_also_as_a_background_job(tmp_path):
    from designer.training.run import checkpoint
    from tests.training.run.test_loop import tiny_project
    project = tiny_project(tmp_path, training={"log_interval": 1})
    run = tmp_path / "RUN"
    proc = subprocess.Popen(
        [sys.executable, "-m", "designer", "train", str(project.path), "--device", "cpu",
         "--steps", "100000", "--out", str(run), "--jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ignoring_sigint)
    try:
        for line in proc.stdout:  # until it has trained a step
            if json.loads(line)["kind"] == "train":
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err  # the shell's code for a command ended by Ctrl-C
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    done = json.loads(out.splitlines()[-1])
    assert (done["kind"], done["reason"]) == ("done", "stopped")
    assert checkpoint.load(run).step == done["step"]  # saved: --resume goes on from here
    assert err.strip().splitlines()[-1] == (
        f"rnn-designer: interrupted; the last checkpoint, step {done['step']:,}, is intact in "
        f"{run} (continue with --resume {run})")


@pytest.mark.slow
def test_a_stop_asked_on_stdin_ends_train_normally(tmp_path):
    from tests.training.run.test_loop import tiny_project
    project = tiny_project(tmp_path, training={"log_interval": 1})
    proc = subprocess.Popen(
        [sys.executable, "-m", "designer", "train", str(project.path), "--device", "cpu",
         "--steps", "100000", "--out", str(tmp_path / "RUN"), "--jsonl", "--stdin-commands"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:  # until it has trained a step
            if json.loads(line)["kind"] == "train":
                break
        proc.stdin.write("stop\n")  # the window's Stop
        proc.stdin.flush()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["reason"] == "stopped"


@pytest.mark.slow
def test_ctrl_c_stops_generate_in_one_line_also_as_a_background_job(tmp_path):
    from designer.training.run.loop import RunOptions, train
    from tests.training.run.test_loop import tiny_project
    list(train(tiny_project(tmp_path), RunOptions(out=tmp_path / "RUN", device="cpu", steps=2)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "designer", "generate", str(tmp_path / "RUN"), "-n", "100000000",
         "--device", "cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ignoring_sigint)
    try:
        assert proc.stdout.read(1)  # it is writing
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.strip() == "rnn-designer: interrupted"
