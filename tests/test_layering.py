"""The layering in .importlinter holds, and no package reaches into another's private names."""
import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "designer"


def test_import_contracts_are_kept():
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    code = ("import sys\n"
            "from importlinter.cli import lint_imports\n"
            "sys.exit(lint_imports(config_filename='.importlinter', no_cache=True,"
            " no_logo=True))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_module_imports_a_private_name_from_another_package():
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported_from(node, module, path.name == "__init__.py")
            if not source.startswith("designer"):
                continue
            source_package = source.rpartition(".")[0]
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and source_package != package and source != package:
                    offences.append(f"{path.relative_to(ROOT)}:{node.lineno} imports "
                                    f"{alias.name} from {source}")
    assert not offences, "\n".join(offences)
