"""A real X server for the window: Xvfb with a screen of a given size and the openbox window
manager (which frames windows, as a laptop's desktop does), started and ended by the caller.

    with x_screen(1366, 768) as env:
        subprocess.run([...], env=env)   # DISPLAY set, QT_QPA_PLATFORM=xcb

Debian packages: xvfb, openbox, xdotool, x11-utils, and the libraries Qt's xcb plugin loads
(libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1); `.ci/run` installs them. `missing()` says
which programs are not here (the tests then skip, saying so); `NoScreen` is raised, with the
program's own words, where they are here but cannot start.
"""
from __future__ import annotations

import contextlib
import os
import random
import select
import shutil
import socket
import subprocess
import tempfile
import time

PROGRAMS = ("Xvfb", "openbox", "xdotool", "xprop")
PACKAGES = "xvfb openbox xdotool x11-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"


class NoScreen(RuntimeError):
    """Xvfb or openbox is installed but does not start here (a test skips, saying why)."""


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
    server, number = _server(width, height)
    wm = None
    try:
        env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
        env.pop("WAYLAND_DISPLAY", None)
        _reachable(env)
        if window_manager:
            wm = _window_manager(env)
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


def _server(width: int, height: int, tries: int = 5) -> tuple[subprocess.Popen, int]:
    """Xvfb on a display number no other X server uses, once it takes clients.

    The number is drawn from a high range and checked free, as the lock file and the abstract
    socket say: X clients try the abstract socket first, and a container that shares the
    machine's network namespace can see another server's socket at :0 that its own /tmp
    knows nothing of. -displayfd says when the server is ready; -ac: no access control on this
    private server (a container whose host name does not resolve would otherwise refuse its
    local clients)."""
    failed: NoScreen | None = None
    numbers = random.Random().sample(range(200, 30000), 40)
    for number in [n for n in numbers if not _taken(n)][:tries]:
        read, write = os.pipe()
        server = subprocess.Popen(["Xvfb", f":{number}", "-displayfd", str(write), "-ac",
                                   "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                                  pass_fds=(write,), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        os.close(write)
        try:
            return server, _display_number(read, server)
        except NoScreen as e:
            failed = e
            if server.poll() is None:
                server.kill()
                server.wait()
    raise failed or NoScreen("no free X display number was found")


def _taken(number: int) -> bool:
    """Whether an X server may hold display ``number``: its lock file or a socket is there."""
    if os.path.exists(f"/tmp/.X{number}-lock") or os.path.exists(f"/tmp/.X11-unix/X{number}"):
        return True
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(f"\0/tmp/.X11-unix/X{number}")
        except OSError:
            return False
    return True


def _reachable(env: dict) -> None:
    """A client can open the display (or `NoScreen`, with what the client said)."""
    out = subprocess.run(["xprop", "-root", "_NET_SUPPORTED"], env=env, capture_output=True,
                         text=True, timeout=20)
    if out.returncode != 0:
        said = "; ".join(out.stderr.strip().splitlines()[-2:]) or f"code {out.returncode}"
        raise NoScreen(f"the X server on {env['DISPLAY']} refuses its clients ({said})")


def _window_manager(env: dict, tries: int = 2) -> subprocess.Popen:
    """openbox on ``env``'s display, once it has announced itself; tried twice, then
    `NoScreen` with what it said."""
    said = ""
    for _ in range(tries):
        with tempfile.TemporaryFile() as err:
            wm = subprocess.Popen(["openbox", "--sm-disable"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=err)
            _wait(lambda: _wm_running(env) or wm.poll() is not None, 40, "openbox")
            if wm.poll() is None:
                return wm
            err.seek(0)
            lines = [line.strip() for line in err.read().decode(errors="replace").splitlines()
                     if line.strip() and "menu file" not in line]
            said = "; ".join(lines[-3:]) or "nothing"
        time.sleep(0.5)
    raise NoScreen(f"openbox ended at once on {env['DISPLAY']} (code {wm.returncode}), "
                   f"saying: {said}")


def _display_number(read: int, server, timeout: float = 20.0) -> int:
    """The display number Xvfb wrote to the pipe ``read`` once it is ready for clients."""
    said = b""
    deadline = time.monotonic() + timeout
    try:
        while not said.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                raise NoScreen(f"Xvfb did not come up within {timeout:.0f} s")
            chunk = os.read(read, 16)
            if not chunk:
                raise NoScreen(f"Xvfb ended at once (code {server.wait()})")
            said += chunk
    finally:
        os.close(read)
    return int(said)


def _wm_running(env: dict) -> bool:
    """The window manager has announced itself on the root window."""
    out = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env,
                         capture_output=True, text=True)
    return "window id" in out.stdout
