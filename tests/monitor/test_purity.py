"""designer.monitor imports neither torch nor Qt: the panel polls it, the trainer never needs it."""
import subprocess
import sys


def test_monitor_package_imports_no_torch_and_no_qt():
    code = (
        "import sys\n"
        "import designer.monitor, designer.monitor.__main__\n"
        "from designer.monitor import open_monitor, list_devices\n"
        "open_monitor().close(); list_devices()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'PySide6', 'pyqtgraph', 'shiboken6', 'numpy')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
