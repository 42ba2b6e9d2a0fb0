"""The window's fixtures, for the RG-LRU's tests of the palette and the unrolled view."""
from tests.ui.conftest import _runs_in_tmp, settings, window  # noqa: F401  (fixtures)
