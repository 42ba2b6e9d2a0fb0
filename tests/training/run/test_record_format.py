"""One formatter reads the training records for the window's log, its status bar and the
command line: each kind has its handler, and each reader takes what it needs from it."""
import math

from designer.training.run.record_format import (ERROR, HANDLERS, HEADING, MUTED, STRONG,
                                                 WARNING, RecordFormatter, engines_text)

START = {"kind": "start", "step": 0, "steps": 6000, "device": "cpu", "device_name": "CPU",
         "run_dir": "/runs/tiny-1", "engines": {"lstm1": "CUDNN"}, "params": 12345,
         "data": "corpus.txt: 1,000 characters", "resumed": False, "memory": 3 * 2**20}
TRAIN = {"kind": "train", "step": 50, "loss": 1.9312, "lr": 0.01, "tokens_per_s": 12345.6,
         "ms_per_step": 20.0, "accuracy": 0.5}


def test_every_kind_the_loop_yields_has_one_handler():
    kinds = {"start", "note", "train", "val", "sample", "probe", "checkpoint", "paused",
             "resumed", "warning", "error", "done"}
    assert kinds <= set(HANDLERS)
    told = RecordFormatter().read({"kind": "weights", "step": 3, "weights": object()})
    assert told.lines == [] and told.status is None and told.message is None


def test_a_run_in_the_window_reads_with_its_number_its_steps_and_the_time_left():
    f = RecordFormatter(number=2, data="text")
    start = f.read(START)
    assert start.begins == (0, 6000) and f.steps == 6000 and f.device == "CPU"
    assert start.lines[0].text == ("CPU, cuDNN, 12,345 parameters, 6,000 steps, about 3.0 MiB "
                                   "of memory") and all(x.detail for x in start.lines)
    told = f.read(TRAIN)
    assert told.progress and told.fields == {"loss": "1.931", "acc": "50.0%",
                                             "tok_s": "12,346"}
    assert told.status == ("Run #2: step 50/6,000  \u00b7  loss 1.931  \u00b7  12,346 tokens/s"
                           "  \u00b7  1 min left")
    assert told.lines[0].text.startswith("#2 step 50: loss 1.9312 nats (2.786 bits), "
                                         "accuracy 50.0%, 12,346 tokens/s")


def test_pausing_says_the_step_it_paused_at_in_the_status_line():
    f = RecordFormatter(number=1, steps=6000)
    told = f.read({"kind": "paused", "step": 53})
    assert told.status == "Run #1: step 53/6,000  \u00b7  paused"
    assert told.lines[0].text == "#1 paused at step 53" and told.lines[0].tone == MUTED


def test_validation_best_is_strong_and_a_forecasters_loss_is_no_cross_entropy():
    f = RecordFormatter(number=1, data="series")
    best = f.read({"kind": "val", "step": 5, "val_loss": 0.25, "val_rmse": 0.5, "best": True})
    assert best.lines[0].text == "#1 step 5: validation loss 0.25, RMSE 0.5  (best)"
    assert best.lines[0].tone == STRONG
    nan = RecordFormatter().read({"kind": "val", "step": 5, "val_loss": math.nan})
    assert nan.lines[0].text == "step 5: validation loss not a number"


def test_samples_come_scored_between_headings():
    told = RecordFormatter(1).read({"kind": "sample", "step": 5, "text": "ab",
                                    "surprise": [1.0, 3.0], "top": [[], []]})
    head, body, tail = told.lines
    assert head.tone == tail.tone == HEADING and "surprise: 2.00 nats" in head.text
    assert body.scored == {"surprise": [1.0, 3.0], "top": [[], []]}


def test_warnings_errors_and_the_end_carry_a_message_or_close_the_bar():
    f = RecordFormatter(number=3, device="CPU")
    warn = f.read({"kind": "warning", "step": 9, "message": "the loss is diverging"})
    assert warn.lines[0].tone == WARNING and warn.message == "Run #3: the loss is diverging"
    err = f.read({"kind": "error", "step": 9, "message": "the loss is not a number"})
    assert err.lines[0].tone == ERROR and err.message.startswith("Training stopped: ")
    done = f.read({"kind": "done", "step": 10, "reason": "early_stop", "time": 1.25,
                   "best_val_loss": None, "run_dir": "/runs/x"})
    assert done.ends and done.lines[0].text == "\u25a0 Run #3 early stop at step 10 after 1.2 s"
    assert done.lines[1].text == "checkpoints in /runs/x  (CPU)"
    cli = RecordFormatter(title="p.json").read({**START, "kind": "start"})
    assert cli.lines[0].text.startswith("training p.json on CPU, cuDNN")
    assert RecordFormatter().read({"kind": "done", "step": 2, "reason": "finished", "time": 1,
                                   "best_val_loss": 1.0, "run_dir": "/r"}).lines[0].text \
        .startswith("finished at step 2 after 1.0 s, best validation loss 1.0000 nats")


def test_engines_are_named_as_people_name_them():
    assert engines_text({"a": "CUDNN", "b": "CUDNN"}) == "cuDNN"
    assert engines_text({"a": "CUDNN", "b": "CAFFE"}) == "a cuDNN, b unrolled"


def test_a_terminal_leaves_out_what_only_a_full_log_wants():
    f = RecordFormatter(number=1)
    assert f.read({"kind": "checkpoint", "step": 5, "pointers": ["best"]}).detail
    assert f.read({"kind": "probe", "step": 5, "loss": 1.0, "text": "ab",
                   "surprise": [1.0, 1.0]}).detail
    assert not f.read({"kind": "note", "step": 0, "message": "hello"}).detail
