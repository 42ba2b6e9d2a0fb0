"""A real X server for the window: Xvfb with a screen of a given size and the openbox window
manager (which frames windows, as a laptop's desktop does), started and ended by the caller.

    with x_screen(1366, 768) as env:
        subprocess.run([...], env=env)   # DISPLAY set, QT_QPA_PLATFORM=xcb

Debian packages: xvfb, openbox, xdotool, x11-utils, and the libraries Qt's xcb plugin loads
(libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1); `.ci/run` installs them. `missing()` says
which programs are not here (the tests then skip, saying so).
"""
from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import time

PROGRAMS = ("Xvfb", "openbox", "xdotool", "xprop")
PACKAGES = "xvfb openbox xdotool x11-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"


def missing() -> list[str]:
    """The programs an X screen needs that are not on the PATH."""
    return [p for p in PROGRAMS if shutil.which(p) is None]


def _wait(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up within {timeout:.0f} s")
        time.sleep(0.05)


@contextlib.contextmanager
def x_screen(width: int, height: int, window_manager: bool = True):
    """Xvfb ``width`` x ``height`` (and openbox); yields the environment for a program that
    shows a window there. Both are ended (by their process ids) on leaving."""
    # Xvfb picks a free display itself and writes its number (-displayfd): no race with
    # another X server starting at the same moment
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                               f"{width}x{height}x24", "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    wm = None
    try:
        display = f":{_display_number(read, server)}"
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        env.pop("WAYLAND_DISPLAY", None)
        if window_manager:
            wm = subprocess.Popen(["openbox", "--sm-disable"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait(lambda: _wm_running(env) or wm.poll() is not None, 40, "openbox")
            if wm.poll() is not None:
                raise RuntimeError(f"openbox ended at once (code {wm.returncode})")
        yield env
    finally:
        for proc in (wm, server):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _display_number(read: int, server, timeout: float = 20.0) -> int:
    """The display number Xvfb wrote to the pipe ``read`` once it is ready for clients."""
    said = b""
    deadline = time.monotonic() + timeout
    try:
        while not said.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                raise RuntimeError(f"Xvfb did not come up within {timeout:.0f} s")
            chunk = os.read(read, 16)
            if not chunk:
                raise RuntimeError(f"Xvfb ended at once (code {server.wait()})")
            said += chunk
    finally:
        os.close(read)
    return int(said)


def _wm_running(env: dict) -> bool:
    """The window manager has announced itself on the root window."""
    out = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env,
                         capture_output=True, text=True)
    return "window id" in out.stdout
