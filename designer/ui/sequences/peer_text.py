"""The non-deep peer (MiniRocket, AutoETS) in a result's headline: its score, or the one line
saying how to install it or why it failed. `designer.training.trained.peers` (and numpy with
it) is imported when a result is shown, never at start-up."""
from __future__ import annotations

from html import escape


def peer_html(peer: dict | None, task: str) -> str:
    """`` · non-deep peer MiniRocket 99.33% · 0.94× the peer's accuracy`` (rich text: the
    model's score over the peer's), or ``""``."""
    if not peer:
        return ""
    from designer.training.trained.peers import peer_words
    if "missing" in peer or "error" in peer:
        return f"<br><small>{escape(peer_words(peer, task))}</small>"
    ratio = peer.get("ratio")
    told = "" if ratio is None else (
        f" \u00b7 <b>{ratio:.2f}\u00d7</b> the peer's "
        f"{'accuracy' if task == 'classify' else 'error'}")
    return f" \u00b7 non-deep peer {escape(peer_words(peer, task))}{told}"


def peer_status(peer: dict | None, task: str) -> str:
    """The peer for the panel's status line: ``; MiniRocket 99.33%`` (or ``""``)."""
    if not peer:
        return ""
    from designer.training.trained.peers import peer_words
    return f"; {peer_words(peer, task)}"
