#!/usr/bin/env bash
# Build rnn-designer as a one-folder app with PyInstaller, then check it.
#
#   bash packaging/build.sh            # -> packaging/dist/rnn-designer/rnn-designer
#
# A clean virtual environment (packaging/build/venv) gets CPU torch, the app with its
# dependencies (PySide6-Essentials, pyqtgraph, ...) and its onnx extra (onnx for the ONNX
# export; ONNX Runtime only checks the exported model in the tests and stays out of the app),
# its docs extra (Sphinx builds the documentation site, which the app ships built; Sphinx
# itself stays out of the app), PyInstaller and pytest; nothing from the environment the script
# is run from goes into the app. Set TORCH_SPEC to another pip requirement for torch (the
# default is the version CI tests), and pip's usual variables (PIP_INDEX_URL,
# PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS) to an index that serves CPU wheels: the script refuses a
# torch built for CUDA, which would add gigabytes.
#
# Then it writes a .desktop entry next to the app, runs tests/packaging against the app, and
# prints the app's size and how long it takes to start. The tests use the app as its users do:
# render the Char-RNN example offscreen to a PNG (also started as the .desktop entry starts
# it); train every example project a few steps headless and through the window; generate from
# a Char-RNN run; make, train, evaluate and use a forecaster for a CSV; export a run as ONNX,
# PyTorch and prototxt, and the cells torch.nn lacks as PyTorch. The data come from
# RNN_DESIGNER_DATA (else ../shared/data beside the checkout); a test whose data file is
# missing is skipped.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
BUILD="$HERE/build"
DIST="$HERE/dist"
APP="$DIST/rnn-designer"
PY="${PYTHON:-python3}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

echo "== a clean environment in $BUILD/venv"
rm -rf "$BUILD/venv"
"$PY" -m venv "$BUILD/venv"
VPY="$BUILD/venv/bin/python"
"$VPY" -m pip install -q --upgrade pip
"$VPY" -m pip install -q "$TORCH_SPEC"
if ! "$VPY" -c "import sys, torch; sys.exit(torch.version.cuda is not None)"; then
    echo "build.sh: pip installed a torch built for CUDA ($("$VPY" -c 'import torch; print(torch.__version__)'));" \
         "point PIP_INDEX_URL or PIP_FIND_LINKS at CPU wheels and run it again" >&2
    exit 2
fi
"$VPY" -m pip install -q "$ROOT[onnx,docs]" pyinstaller pytest

echo "== the documentation"
# the app has no generator to build it with (Sphinx stays out of it): it ships the built site
(cd "$ROOT" && QT_QPA_PLATFORM=offscreen "$VPY" -m designer docs --no-open)

echo "== PyInstaller"
rm -rf "$APP"
(cd "$ROOT" && "$VPY" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$DIST" --workpath "$BUILD/work" "$HERE/rnn-designer.spec")

# PyInstaller leaves out a module it cannot compile (a syntax error) with only a warning, and
# the app then fails on the first command that imports it: refuse such an app here
if grep -E "^(invalid|missing) module named '?designer[.' ]" \
        "$BUILD/work/rnn-designer/warn-rnn-designer.txt" >&2; then
    echo "build.sh: the app lacks the modules above (PyInstaller could not read them)" >&2
    exit 1
fi

echo "== the desktop entry"
sed -e "s|^Exec=.*|Exec=\"$APP/rnn-designer\" %f|" \
    -e "s|^Icon=.*|Icon=$APP/_internal/resources/icons/app.svg|" \
    "$HERE/rnn-designer.desktop" > "$APP/rnn-designer.desktop"
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$APP/rnn-designer.desktop"
fi
echo "install it with: install -Dm644 $APP/rnn-designer.desktop ~/.local/share/applications/rnn-designer.desktop"

echo "== tests/packaging with the built app"
(cd "$ROOT" && RNN_DESIGNER_BUNDLE="$APP" QT_QPA_PLATFORM=offscreen \
    "$VPY" -m pytest -p no:cacheprovider -o addopts="" -q tests/packaging)

echo "== size and start time"
du -sh "$APP"
"$VPY" "$ROOT/tests/packaging/start_time.py" "$APP/rnn-designer"
