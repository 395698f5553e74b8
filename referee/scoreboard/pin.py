"""The table PIN: who may change the game.

Every request that changes the game carries the PIN in the `X-Table-Pin` header. It is compared in
constant time (`hmac.compare_digest`). Two limits keep it from being guessed:

- per address: an address that gives a wrong PIN `MAX_TRIES` times in a row is refused (HTTP 429)
  for `LOCK_S` seconds, even with the right PIN;
- table-wide: wrong PINs from *anywhere* spend one budget of `FREE_WRONG` that refills by one every
  `REFILL_S` seconds. Once it is spent, every PIN check from an address that has not given the
  right PIN lately waits its turn (429), so many addresses guess no faster than one. An address that
  gave the right PIN in the last `TRUSTED_S` seconds (the judge's phone) is never held up by it.

While the budget is spent (and for `ALERT_S` after) the pages say someone is guessing.
Addresses are the TCP peer (no proxy headers are trusted); the tables of addresses are bounded so a
flood of addresses cannot fill memory. docs/reliability.md gives the measured brute-force times.
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
FREE_WRONG = 10  # wrong PINs the whole table may give at once...
REFILL_S = 6.0  # ...then one more every REFILL_S seconds
TRUSTED_S = 12 * 3600.0
ALERT_S = 600.0


@dataclass
class _Tries:
    wrong: int = 0
    locked_until: float = 0.0


class PinGuard:
    def __init__(self, pin: Callable[[], str], *, clock: Callable[[], float] = time.monotonic,
                 max_tries: int = MAX_TRIES, lock_s: float = LOCK_S,
                 free_wrong: int = FREE_WRONG, refill_s: float = REFILL_S) -> None:
        self.pin = pin
        self.clock = clock
        self.max_tries = max_tries
        self.lock_s = lock_s
        self.free_wrong = free_wrong
        self.refill_s = refill_s
        self._tries: dict[str, _Tries] = {}
        self._trusted: dict[str, float] = {}  # address -> until when
        self._budget = float(free_wrong)
        self._budget_at = clock()
        self._alert_until = 0.0
        self.wrong_total = 0  # wrong PINs since the referee started
        self._lock = threading.Lock()

    def check(self, address: str, given: str | None) -> tuple[int, float]:
        """(0, 0) if allowed; (401, 0) for a missing or wrong PIN; (429, seconds left) if held."""
        now = self.clock()
        with self._lock:
            tries = self._tries.get(address)
            if tries is not None and tries.locked_until > now:
                return 429, tries.locked_until - now
            if given is None or given == "":
                return 401, 0.0
            trusted = self._trusted.get(address, 0.0) > now
            self._refill(now)
            if not trusted and self._budget < 1.0:  # someone is guessing: everyone waits
                self._alert_until = now + ALERT_S
                return 429, (1.0 - self._budget) * self.refill_s
            expected = self.pin().encode("utf-8")
            if hmac.compare_digest(given.encode("utf-8", "replace"), expected):
                self._tries.pop(address, None)
                if len(self._trusted) >= MAX_ADDRESSES:
                    self._trusted = {a: t for a, t in self._trusted.items() if t > now}
                if len(self._trusted) < MAX_ADDRESSES:
                    self._trusted[address] = now + TRUSTED_S
                return 0, 0.0
            self.wrong_total += 1
            if not trusted:
                self._budget -= 1.0
                if self._budget < 1.0:
                    self._alert_until = now + ALERT_S
            if tries is None or tries.locked_until:  # first wrong try, or a lock that has run out
                self._prune(now)
                tries = self._tries[address] = _Tries()
            tries.wrong += 1
            if tries.wrong >= self.max_tries:
                tries.locked_until = now + self.lock_s
            return 401, 0.0

    def alert(self) -> str:
        """What the pages say while someone is guessing the PIN ("" when nobody is)."""
        if self.clock() >= self._alert_until:
            return ""
        return (f"Someone is guessing the table PIN ({self.wrong_total} wrong PINs so far); "
                f"PIN checks are slowed down. Restart with a new --pin if it goes on.")

    def _refill(self, now: float) -> None:
        self._budget = min(float(self.free_wrong),
                           self._budget + (now - self._budget_at) / self.refill_s)
        self._budget_at = now

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
