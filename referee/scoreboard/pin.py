"""The table PIN: who may change the game.

Every request that changes the game carries the PIN in the `X-Table-Pin` header (or the token of a
device paired at the box, `referee.scoreboard.pairing`). It is compared in constant time
(`hmac.compare_digest`). Three limits keep it from being guessed, and none can lock the judge out:

- per address: an address that gives a wrong PIN `MAX_TRIES` times in a row is refused (HTTP 429)
  for `LOCK_S` seconds, even with the right PIN;
- table-wide: wrong PINs from *anywhere* spend one budget of `FREE_WRONG` that refills by one every
  `REFILL_S` seconds. Once it is spent, an address that has already given `FIRST_TRIES` wrong PINs
  waits its turn (429), so many addresses guess no faster than one;
- an address's first tries (fewer than `FIRST_TRIES` wrong PINs so far) are always checked, from
  its network's own allowance (IPv4 /24, IPv6 /64) of `FRESH` first tries that refills by one every
  `FRESH_REFILL_S` seconds: a guessing flood from one network spends that network's allowance,
  never another's, so a newcomer elsewhere is checked at once however many guesses are made.
  All networks together have `FRESH_TOTAL` first tries (one more every `FRESH_TOTAL_REFILL_S`),
  so an attacker who can send from many networks (loopback, a router) gains no more than that.

An address that gave the right PIN in the last `TRUSTED_S` seconds (the judge's phone) and the
box's own addresses (127.0.0.1, ::1 and the Pi's own: `THIS_MACHINE`, `own_addresses`) are never
held up. While someone is guessing (and for `ALERT_S` after) the pages say so. Addresses are the TCP
peer (no proxy headers are trusted); the tables of addresses and networks are bounded so a flood of
addresses cannot fill memory. docs/reliability.md gives the measured brute-force times.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from referee.scoreboard.live import is_box, network

MAX_TRIES = 5
LOCK_S = 60.0
MAX_ADDRESSES = 4096
FREE_WRONG = 10  # wrong PINs the whole table may give at once...
REFILL_S = 6.0  # ...then one more every REFILL_S seconds
FIRST_TRIES = 3  # an address's wrong PINs that are checked from its network's allowance
FRESH = 16  # first tries a network (/24, /64) may have checked at once...
FRESH_REFILL_S = 30.0  # ...then one more every FRESH_REFILL_S seconds
FRESH_TOTAL = 64  # first tries all networks together may have checked at once...
FRESH_TOTAL_REFILL_S = 15.0  # ...then one more every FRESH_TOTAL_REFILL_S seconds
MAX_NETWORKS = 1024
TRUSTED_S = 12 * 3600.0
ALERT_S = 600.0


@dataclass
class _Tries:
    wrong: int = 0
    locked_until: float = 0.0


class PinGuard:
    def __init__(self, pin: Callable[[], str], *, clock: Callable[[], float] = time.monotonic,
                 max_tries: int = MAX_TRIES, lock_s: float = LOCK_S,
                 free_wrong: int = FREE_WRONG, refill_s: float = REFILL_S,
                 fresh: int = FRESH, fresh_refill_s: float = FRESH_REFILL_S) -> None:
        self.pin = pin
        self.clock = clock
        self.max_tries = max_tries
        self.lock_s = lock_s
        self.free_wrong = free_wrong
        self.refill_s = refill_s
        self.fresh = fresh
        self.fresh_refill_s = fresh_refill_s
        self._fresh: dict[str, tuple[float, float]] = {}  # network -> (allowance, when)
        self._fresh_total = (float(FRESH_TOTAL), clock())  # every network's, together
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
        box = is_box(address)
        with self._lock:
            tries = self._tries.get(address)
            if tries is not None and tries.locked_until > now and not box:
                return 429, tries.locked_until - now
            if given is None or given == "":
                return 401, 0.0
            trusted = box or self._trusted.get(address, 0.0) > now
            self._refill(now)
            first = False
            if not trusted:
                if tries is None or tries.locked_until or tries.wrong < FIRST_TRIES:
                    first = self._take_fresh(network(address), now)
                if not first and self._budget < 1.0:  # someone is guessing: they wait
                    self._alert_until = now + ALERT_S
                    return 429, (1.0 - self._budget) * self.refill_s
            expected = self.pin().encode("utf-8")
            if hmac.compare_digest(given.encode("utf-8", "replace"), expected):
                self._tries.pop(address, None)
                if len(self._trusted) >= MAX_ADDRESSES:
                    self._trusted = {a: t for a, t in self._trusted.items() if t > now}
                if len(self._trusted) < MAX_ADDRESSES and not box:
                    self._trusted[address] = now + TRUSTED_S
                return 0, 0.0
            self.wrong_total += 1
            if not trusted:
                self._budget = max(0.0, self._budget - 1.0) if first else self._budget - 1.0
                if self._budget < 1.0:
                    self._alert_until = now + ALERT_S
            if box:
                return 401, 0.0  # the box's own screen is never locked out
            if tries is None or tries.locked_until:  # first wrong try, or a lock that has run out
                self._prune(now)
                tries = self._tries[address] = _Tries()
            tries.wrong += 1
            if tries.wrong >= self.max_tries:
                tries.locked_until = now + self.lock_s
            return 401, 0.0

    def _take_fresh(self, net: str, now: float) -> bool:
        """One of the network's first tries, if it has one left (refilled by the clock)."""
        if self.fresh <= 0:
            return False
        have, when = self._fresh.get(net, (float(self.fresh), now))
        have = min(float(self.fresh), have + (now - when) / self.fresh_refill_s)
        total, at = self._fresh_total
        total = min(float(FRESH_TOTAL), total + (now - at) / FRESH_TOTAL_REFILL_S)
        self._fresh_total = (total, now)
        if have < 1.0 or total < 1.0:
            self._fresh[net] = (have, now)
            return False
        self._fresh_total = (total - 1.0, now)
        if net not in self._fresh and len(self._fresh) >= MAX_NETWORKS:  # forget a full one
            for old, (left, at) in list(self._fresh.items()):
                if left + (now - at) / self.fresh_refill_s >= self.fresh:
                    del self._fresh[old]
            while len(self._fresh) >= MAX_NETWORKS:
                del self._fresh[next(iter(self._fresh))]
        self._fresh[net] = (have - 1.0, now)
        return True

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
