"""Pairing at the box: a device asks to judge, the judge's YES lets it in for the evening.

A smart-home hub's link button, for the table. The flow:

1. a device asks (`POST /api/pair`, no PIN): it gets a short `code` to show and a long secret
   `token` only it knows; the table page shows the same code;
2. the judge looks at the device, sees the same code on the table page, and presses YES on the
   keypad (`approve_single`) or taps the code on the box's own screen (`approve(code)`, taken only
   from the box's own addresses);
3. the device's token now opens every judge action (`X-Table-Token`) until `EVENING_S` has passed
   or the referee restarts.

Why a guest cannot pair itself: approving takes the keypad (a hand at the box) or a request from
the box's own address (loopback or the Pi's own, which no other machine can send from: the kernel
drops a packet from outside that claims one of them, and TCP needs the answer back). The keypad
approves only while exactly one device is waiting, so the code on the table page is the one YES
lets in: a guest who asks at the same moment as the judge makes two codes show, and YES then
approves nobody (the page says so; the box's screen can still pick the right code). The token is
`TOKEN_BYTES` random bytes, looked up by its hash; the code is only what the judge compares by eye
and opens nothing by itself.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from referee.scoreboard.live import network

CODE_DIGITS = 4
TOKEN_BYTES = 24
WAIT_S = 120.0  # a request waits this long for the judge's YES
EVENING_S = 12 * 3600.0  # a paired device judges this long (or until the referee restarts)
MAX_WAITING = 8  # devices waiting at once, table-wide...
PER_NETWORK = 2  # ...and from one network (/24, /64): a flood cannot fill the table page
MAX_PAIRED = 64


@dataclass
class _Request:
    code: str
    address: str
    until: float  # when it is forgotten (waiting) or runs out (paired)
    paired: bool = False


def _key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class Pairing:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._requests: dict[str, _Request] = {}  # token hash -> request
        self._lock = threading.Lock()

    def ask(self, address: str) -> tuple[str, str] | None:
        """A new request from `address`: (code, token), or None while too many are waiting. An
        address's earlier waiting request is replaced (a page reloaded asks again)."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            for key, req in list(self._requests.items()):
                if req.address == address and not req.paired:
                    del self._requests[key]
            waiting = [r for r in self._requests.values() if not r.paired]
            net = network(address)
            if (len(waiting) >= MAX_WAITING
                    or sum(1 for r in waiting if network(r.address) == net) >= PER_NETWORK):
                return None
            taken = {r.code for r in waiting}
            code = ""
            while not code or code in taken:
                code = f"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}"
            token = secrets.token_urlsafe(TOKEN_BYTES)
            self._requests[_key(token)] = _Request(code, address, now + WAIT_S)
        return code, token

    def waiting(self) -> list[str]:
        """The codes waiting for the judge, oldest first (the table page shows them)."""
        now = self.clock()
        with self._lock:
            return [r.code for r in self._requests.values() if not r.paired and r.until > now]

    def approve_single(self) -> bool:
        """The keypad's YES: approves the one device waiting. True if any device was waiting
        (the YES was about pairing, even when two or more waiting means nobody is approved)."""
        codes = self.waiting()
        if not codes:
            return False
        if len(codes) == 1:
            self.approve(codes[0])
        return True

    def approve(self, code: str) -> bool:
        """Let the device showing `code` in for the evening (the box's screen picks it)."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            found = [r for r in self._requests.values() if not r.paired and r.code == code]
            if not found or sum(1 for r in self._requests.values() if r.paired) >= MAX_PAIRED:
                return False
            found[0].paired, found[0].until = True, now + EVENING_S
        return True

    def status(self, token: str | None) -> str:
        """"paired", "waiting" or "unknown" (never asked, run out, or the referee restarted)."""
        if not token:
            return "unknown"
        now = self.clock()
        with self._lock:
            req = self._requests.get(_key(token))
            if req is None or req.until <= now:
                return "unknown"
            return "paired" if req.paired else "waiting"

    def paired(self, token: str | None) -> bool:
        return self.status(token) == "paired"

    def paired_addresses(self) -> frozenset[str]:
        """Where the paired devices are (their connections are kept slots at the door)."""
        now = self.clock()
        with self._lock:
            return frozenset(r.address for r in self._requests.values()
                             if r.paired and r.until > now)

    def _expire(self, now: float) -> None:
        for key in [k for k, r in self._requests.items() if r.until <= now]:
            del self._requests[key]
