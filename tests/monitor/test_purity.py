"""designer.monitor imports neither torch nor Qt: the panel polls it, the trainer never needs it."""
from tests.purity import HEAVY, imported_after


def test_monitor_package_imports_no_torch_and_no_qt():
    assert imported_after(
        "import designer.monitor, designer.monitor.__main__\n"
        "from designer.monitor import open_monitor, list_devices\n"
        "open_monitor().close(); list_devices()", HEAVY) == []
