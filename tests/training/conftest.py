"""Training tests never reach the network: downloads are off unless a test serves its own."""
import pytest

from designer.training.data.download import OFFLINE_ENV


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv(OFFLINE_ENV, "1")
