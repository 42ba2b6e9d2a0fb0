"""Character text: a UTF-8 file (or a named corpus) as ids over its sorted distinct characters."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import torch

from designer.graph import datasets

from designer.training.data.errors import DataError
from designer.training.data.sequence import SequenceSource

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def load_text(path: Path) -> tuple[str, list[str]]:
    """Read a corpus as text, with notes for the user.

    Invalid UTF-8 is decoded with replacement (U+FFFD) and a note when it is rare, and refused
    when it is common; an empty, binary or UTF-16 file is refused.

    Raises
    ------
    DataError
        One sentence naming the file and the problem.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    if head[:2] in _UTF16_BOMS:
        raise DataError(f"{path} is UTF-16 text, not UTF-8; save it as UTF-8")
    try:
        text, replaced = datasets.read_text(path)
    except datasets.DataProblem as e:
        raise DataError(str(e)) from None
    notes = []
    if replaced:
        bad = text.count("\ufffd")
        notes.append(f"{path} is not all valid UTF-8: {bad:,} undecodable "
                     f"byte{'s' if bad != 1 else ''} were decoded as U+FFFD")
    return text, notes


def encode_array(text: str, vocab: list[str]) -> np.ndarray | None:
    """The ids of every character of ``text`` over ``vocab`` (sorted), or ``None`` when a
    character is missing from it. Fast: one searchsorted over the code points."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    table = np.array([ord(c) for c in vocab], dtype=np.uint32)
    ids = np.searchsorted(table, points)
    if len(table) == 0 or ids.max(initial=0) >= len(table):
        return None
    if not np.array_equal(table[ids], points):
        return None
    return ids.astype(np.uint8 if len(vocab) <= 256 else np.int32)


class TextSource(SequenceSource):
    """Characters of a text corpus as ids in ``[0, V)``, V = ``len(vocab)``.

    ``vocab`` is exactly ``designer.graph.datasets.text_vocabulary(path)``, the sorted
    distinct characters, so V matches what the graph reports.
    """

    kind = "text"

    def __init__(self, path: Path, params: dict, seed: int = 0):
        text, notes = load_text(path)
        try:
            vocab = datasets.text_vocabulary(path)
        except datasets.DataProblem as e:
            raise DataError(str(e)) from None
        ids = encode_array(text, vocab)
        if ids is None:  # the file changed between the two reads: trust the text we hold
            vocab = sorted(set(text))
            ids = encode_array(text, vocab)
        self.chars = len(text)
        self.file_bytes = path.stat().st_size
        self._index = {c: i for i, c in enumerate(vocab)}
        super().__init__(path, ids, len(vocab), params, seed, "characters", vocab, notes)

    def describe(self) -> str:
        return (f"{self.path}: {self.chars:,} characters, {self.num_classes} distinct; "
                f"{self.split_text()}; {self.batching} batches of "
                f"{self._batch_text(f' x {self.seq_len}')}")

    def encode(self, text: str, errors: str = "strict") -> list[int]:
        """The ids of ``text``'s characters.

        Parameters
        ----------
        text : str
        errors : {"strict", "skip"}
            What to do with a character the corpus does not hold: raise `DataError`
            ("strict") or leave it out ("skip").
        """
        if errors not in ("strict", "skip"):
            raise ValueError(f"errors must be 'strict' or 'skip', not {errors!r}")
        index = self._index
        missing = sorted({c for c in text if c not in index})
        if missing and errors == "strict":
            shown = ", ".join(repr(c) for c in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise DataError(f"{shown} {'does' if len(missing) == 1 else 'do'} not occur in "
                            f"{self.path} (its {self.num_classes} characters are the "
                            f"vocabulary), so the text cannot be encoded")
        return [index[c] for c in text if c in index]

    def decode(self, ids: Iterable[int] | torch.Tensor | np.ndarray) -> str:
        """The characters of ``ids`` (a list, array or tensor of ids in ``[0, V)``)."""
        if isinstance(ids, torch.Tensor):
            ids = ids.reshape(-1).tolist()
        elif isinstance(ids, np.ndarray):
            ids = ids.reshape(-1).tolist()
        vocab, v = self.vocab, self.num_classes
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < v:
                raise ValueError(f"id {i} is outside the vocabulary [0, {v})")
            out.append(vocab[i])
        return "".join(out)
