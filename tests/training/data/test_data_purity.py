"""The data sources import no Qt (they run in the headless trainer and its worker thread)."""
import subprocess
import sys


def test_data_sources_import_no_qt():
    code = (
        "import sys\n"
        "import designer.training.data as d\n"
        "from designer.training.data import audio, download, idx, mnist, quantize, text\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
