"""systemd's service notifications, without a library: READY=1, WATCHDOG=1, STOPPING=1.

Under systemd (``Type=notify``) ``$NOTIFY_SOCKET`` names a datagram socket (a path, or an
abstract one written with a leading "@"); each message is one datagram of ``KEY=value`` lines.
``$WATCHDOG_USEC`` (with ``$WATCHDOG_PID``: this process) says the unit has ``WatchdogSec=``:
unless a ``WATCHDOG=1`` arrives within that time, systemd kills the service and
(``Restart=on-failure``) starts it again. Outside systemd every call does nothing.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping


def notify(message: str, env: Mapping[str, str] | None = None) -> bool:
    """Send `message` to systemd; False when there is no socket or it cannot be reached."""
    env = os.environ if env is None else env
    path = env.get("NOTIFY_SOCKET", "")
    if not path or path[0] not in "/@":
        return False
    address = "\0" + path[1:] if path[0] == "@" else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode())
    except OSError:
        return False
    return True


class Watchdog:
    """Pings systemd's watchdog from whichever thread proves the table alive (the engine's,
    at each turn of its loop: it wakes at least every 0.5 s), at most every quarter of the
    timeout, so a wedged engine is noticed and restarted within ``WatchdogSec=``."""

    def __init__(self, env: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        env = os.environ if env is None else env
        self.env = dict(env)
        self.clock = clock
        self.interval_s: float | None = None
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.interval_s = int(usec) / 1e6 / 4
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.pings = 0

    @property
    def enabled(self) -> bool:
        return self.interval_s is not None

    def beat(self) -> None:
        if self.interval_s is None:
            return
        now = self.clock()
        with self._lock:
            if now - self._last < self.interval_s:
                return
            self._last = now
        if notify("WATCHDOG=1", self.env):
            self.pings += 1

    def ready(self, status: str = "") -> bool:
        """The table plays: start-up is over (``Type=notify``); the watchdog counts from here."""
        return notify("READY=1" + (f"\nSTATUS={status}" if status else ""), self.env)

    def stopping(self) -> bool:
        return notify("STOPPING=1", self.env)
