"""The table PIN: who may change the game.

Every request that changes the game carries the PIN in the `X-Table-Pin` header. It is compared in
constant time (`hmac.compare_digest`), and an address that gives a wrong PIN `MAX_TRIES` times in a
row is refused (HTTP 429) for `LOCK_S` seconds, even with the right PIN, so four digits cannot be
guessed by trying them all. Addresses are the TCP peer (no proxy headers are trusted); the table of
addresses is bounded so a flood of addresses cannot fill memory.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_TRIES = 5
LOCK_S = 60.0
MAX_ADDRESSES = 4096


@dataclass
class _Tries:
    wrong: int = 0
    locked_until: float = 0.0


class PinGuard:
    def __init__(self, pin: Callable[[], str], *, clock: Callable[[], float] = time.monotonic,
                 max_tries: int = MAX_TRIES, lock_s: float = LOCK_S) -> None:
        self.pin = pin
        self.clock = clock
        self.max_tries = max_tries
        self.lock_s = lock_s
        self._tries: dict[str, _Tries] = {}
        self._lock = threading.Lock()

    def check(self, address: str, given: str | None) -> tuple[int, float]:
        """(0, 0) if allowed; (401, 0) for a missing or wrong PIN; (429, seconds left) if locked."""
        now = self.clock()
        with self._lock:
            tries = self._tries.get(address)
            if tries is not None and tries.locked_until > now:
                return 429, tries.locked_until - now
            if given is None or given == "":
                return 401, 0.0
            expected = self.pin().encode("utf-8")
            if hmac.compare_digest(given.encode("utf-8", "replace"), expected):
                self._tries.pop(address, None)
                return 0, 0.0
            if tries is None or tries.locked_until:  # first wrong try, or a lock that has run out
                self._prune(now)
                tries = self._tries[address] = _Tries()
            tries.wrong += 1
            if tries.wrong >= self.max_tries:
                tries.locked_until = now + self.lock_s
            return 401, 0.0

    def _prune(self, now: float) -> None:
        for addr in [a for a, t in self._tries.items() if t.locked_until and t.locked_until <= now]:
            del self._tries[addr]
        if len(self._tries) >= MAX_ADDRESSES:  # forget unlocked addresses first, oldest first
            for addr in [a for a, t in self._tries.items() if not t.locked_until]:
                if len(self._tries) < MAX_ADDRESSES:
                    break
                del self._tries[addr]
        while len(self._tries) >= MAX_ADDRESSES:
            del self._tries[next(iter(self._tries))]
