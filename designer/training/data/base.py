"""What every data source offers the trainer, the seeding they share, and how a batch is
shared out among the processes of a data-parallel run."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from designer.training.data.errors import DataError

STATE_VERSION = 1


def split_generator(seed: int, split: str) -> torch.Generator:
    """A CPU generator for one split, derived from the run's seed and the split's name.

    Each split draws from its own generator, so drawing validation batches never changes the
    training batches that follow.
    """
    salt = {"train": 0, "val": 1, "test": 2}[split]
    words = np.random.SeedSequence([int(seed) % 2**64, salt]).generate_state(2, np.uint32)
    g = torch.Generator()
    g.manual_seed((int(words[0]) << 32) | int(words[1]))
    return g


class Source:
    """A data source: batches for the data layer's output ports, reproducibly.

    Attributes
    ----------
    kind : str
        ``"text"``, ``"audio"`` or ``"mnist"``.
    path : pathlib.Path
        The file (or, for MNIST, the folder) the data came from.
    vocab : list of str or None
        The characters of a text corpus, sorted (``ids`` index it); ``None`` otherwise.
    num_classes : int
        V: the number of classes the net predicts.
    seq_len, batch_size : int
        T and N of every training batch.
    notes : list of str
        Plain sentences to show the user (a replaced byte, a mixed-down channel, a split).
    splits : tuple of str
        The splits ``next_batch`` and ``eval_batches`` accept.
    carries_state : bool
        Whether the trainer should carry the recurrent state from one training batch to the
        next (stream batching); when false, it resets the state every batch.
    rank, world : int
        This process's share of a data-parallel run (see :meth:`shard`); 0 and 1 alone.

    Sharding
    --------
    In a run over ``world`` processes, every batch is a *global* batch of
    ``global_batch_size = batch_size x world`` rows, laid out and drawn exactly as one
    process with that batch size would draw it (the same windows, streams or images, from
    the same seed on every rank), and each rank keeps only its own rows: ``_mine(rows)``, the
    rank's contiguous block. So the ranks never read the same rows, a stream stays whole on
    one rank (its state carried there), the union of the ranks' batches is the single-process
    batch of ``global_batch_size``, and the data state is the same on every rank, so one
    checkpoint (rank 0's) resumes any number of processes. A source lays its batches out by
    ``global_batch_size`` and passes the rows it picked through ``_mine``; it says so with
    ``shardable = True`` (a source that does not cannot train on several processes, and
    ``shard`` says so in one sentence).
    """

    kind = ""
    carries_state = False
    shardable = False
    rank, world = 0, 1

    def __init__(self, path: Path, num_classes: int, seq_len: int, batch_size: int,
                 seed: int = 0, vocab: list[str] | None = None, notes=()):
        self.path = Path(path)
        self.num_classes = int(num_classes)
        self.seq_len = int(seq_len)
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.vocab = vocab
        self.notes = list(notes)
        self.splits: tuple[str, ...] = ("train", "val")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"

    def describe(self) -> str:
        """One line for the user: the file, its size, the classes and the split sizes."""
        raise NotImplementedError

    @property
    def global_batch_size(self) -> int:
        """Rows in one batch of the whole run: ``batch_size`` on each of ``world`` ranks."""
        return self.batch_size * self.world

    def shard(self, rank: int, world: int) -> None:
        """Serve rank ``rank``'s share of every batch of a run over ``world`` processes.

        Call it before drawing any batch or loading a state. Raises `DataError` when the data
        cannot be shared out (too short for ``world`` times the streams, or a source that
        does not shard).
        """
        if not 0 <= rank < world:
            raise ValueError(f"rank {rank} is not in a world of {world}")
        if world > 1 and not self.shardable:
            raise DataError(f"{self.path} comes from a {type(self).__name__}, which cannot be "
                            f"split across {world} processes; train it on one")
        self.rank, self.world = int(rank), int(world)
        self._sharded()

    def _sharded(self) -> None:
        """Re-check sizes and restart the cursors for the new layout (subclasses)."""

    def _batch_text(self, rest: str = "") -> str:
        """The batch for ``describe``: ``"64 x 100"``, or, over two processes,
        ``"64 x 100 per process (128 x 100 in all)"`` (``rest`` is ``" x 100"``)."""
        if self.world == 1:
            return f"{self.batch_size}{rest}"
        return f"{self.batch_size}{rest} per process ({self.global_batch_size}{rest} in all)"

    def _mine(self, rows):
        """This rank's block of a global batch's rows, a tensor or a numpy array (a final,
        smaller batch is shared out as evenly as it goes, so a rank may get none)."""
        if self.world == 1:
            return rows
        if isinstance(rows, np.ndarray):
            return np.array_split(rows, self.world)[self.rank]
        return torch.tensor_split(rows, self.world)[self.rank]

    def _check_rows_for_ranks(self, what: str) -> None:
        """Refuse a data-parallel run whose training split cannot give every rank at least
        one of its ``what`` (windows, sequences) a step."""
        have = self.split_size("train")
        if self.world > 1 and have < self.world:
            raise DataError(f"{self.path} leaves only {have:,} training {what}, fewer than "
                            f"the {self.world} processes that would share each batch; train "
                            f"it on {max(have, 1)} process{'es' if have > 1 else ''} or on "
                            "more data")

    def split_size(self, split: str = "train") -> int:
        """How many symbols (or images) ``split`` holds; 0 for a split that is not there."""
        raise NotImplementedError

    def next_batch(self, split: str = "train") -> dict[str, torch.Tensor]:
        """The next batch of ``split``, keyed by the data layer's output port names."""
        raise NotImplementedError

    def eval_batches(self, n: int | None = None, split: str = "val") -> Iterator[dict]:
        """A fixed set of batches over a held-out split: the same ones on every call.

        ``n`` caps the number of batches; ``None`` means all the split has to offer.
        """
        raise NotImplementedError

    def eval_size(self, n: int | None = None, split: str = "val") -> int:
        """How many batches ``eval_batches(n, split)`` yields."""
        return sum(1 for _ in self.eval_batches(n, split))

    def state_dict(self) -> dict:
        """Everything a resumed run needs to draw the same batches as an uninterrupted one.

        Only plain Python values and tensors, so ``torch.save`` writes it and
        ``torch.load(..., weights_only=True)`` reads it back.
        """
        raise NotImplementedError

    def load_state_dict(self, state: dict) -> None:
        """Continue from a ``state_dict()``; raises `DataError` when the data has changed."""
        raise NotImplementedError

    # ------------------------------------------------------------------------- helpers --
    def _check_split(self, split: str) -> None:
        if split not in self.splits:
            if split in ("train", "val", "test"):
                raise DataError(f"{self.path} has no {split} split here "
                                f"(it offers {', '.join(self.splits)})")
            raise ValueError(f"unknown split {split!r}; expected one of {self.splits}")

    def _check_state(self, state: dict, expected: dict) -> None:
        """Refuse a saved state made for different data or batching, in one sentence."""
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError("not a data-source state (or one from another version)")
        if state.get("kind") != self.kind:
            raise DataError(f"{self.path} is {self.kind} data, but the checkpoint's data state "
                            f"is for {state.get('kind')} data")
        changed = [f"{key} was {state.get(key)!r}, now {value!r}"
                   for key, value in expected.items() if state.get(key) != value]
        if changed:
            raise DataError(f"{self.path} or its data layer has changed since the checkpoint "
                            f"was made ({'; '.join(changed)})")


def check_eval_count(n: int | None) -> None:
    if n is not None and (not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0):
        raise ValueError(f"the number of evaluation batches must be a whole number >= 0, "
                         f"not {n!r}")


def byte_state(value) -> torch.Tensor:
    """A saved generator state as the CPU byte tensor ``Generator.set_state`` wants (a
    checkpoint may have been loaded onto another device)."""
    return torch.as_tensor(value).to(device="cpu", dtype=torch.uint8)
