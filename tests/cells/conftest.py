"""The cells' tests share the engines' and the exchange's fixtures (a corpus, every layer, a
trained run, and no network while exporting)."""
from tests.engines.conftest import corpus, every_layer  # noqa: F401
from tests.exchange.conftest import _offline, trained_run  # noqa: F401
