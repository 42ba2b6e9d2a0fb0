"""designer.graph imports neither torch nor Qt."""
import subprocess
import sys


def test_graph_package_imports_no_torch_and_no_qt():
    code = (
        "import sys\n"
        "import designer.graph, designer.graph.project, designer.graph.registry\n"
        "import designer.graph.validate, designer.graph.commands, designer.graph.datasets\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'PySide6', 'pyqtgraph', 'shiboken6', 'numpy')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_validate_does_not_import_torch():
    code = (
        "import sys\n"
        "from designer import cli\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in ('torch', 'PySide6')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
