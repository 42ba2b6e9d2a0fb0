"""What a fresh interpreter has imported after running a few lines: the purity tests ask it
whether a package pulls in torch, Qt or numpy."""
import subprocess
import sys

QT = ("PySide6", "pyqtgraph", "shiboken6")
HEAVY = ("torch", *QT, "numpy")  # what the pure packages never import


def imported_after(lines: str, packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` loaded once ``lines`` have run in a new interpreter."""
    code = (f"import sys\n{lines}\n"
            f"print(','.join(m for m in sys.modules if m.split('.')[0] in {packages!r}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]
