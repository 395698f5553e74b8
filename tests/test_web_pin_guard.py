"""The table PIN's limits at their thresholds, on an injected clock (issue 17, point 1).

`PinGuard` takes its clock as an argument, so each limit is met exactly and one µs either side:
the per-address lock (MAX_TRIES wrong PINs, LOCK_S seconds), the right PIN resetting the wrong-try
count before any lock, a lock that has run out starting the count afresh, the table-wide budget of
wrong PINs and its refill, the judge's trusted address, and the "someone is guessing" alert.
"""

from __future__ import annotations

import pytest

from referee.scoreboard.pin import (
    ALERT_S,
    FIRST_TRIES,
    FREE_WRONG,
    FRESH,
    FRESH_REFILL_S,
    LOCK_S,
    MAX_TRIES,
    REFILL_S,
    TRUSTED_S,
    PinGuard,
)
from tests.harness import SimClock

PIN = "2468"
WRONG = "1111"
US = 1e-6  # one microsecond, in the guard's seconds


def guard_at(clock: SimClock, **kw: float) -> PinGuard:
    """The per-address lock and the table-wide budget alone (`fresh=0`: no first-try allowance,
    so every guess meets the budget); the networks' first tries have their own tests below."""
    return PinGuard(lambda: PIN, clock=clock, **{"fresh": 0, **kw})  # type: ignore[arg-type]


def wrongs(guard: PinGuard, address: str, n: int) -> list[int]:
    return [guard.check(address, WRONG)[0] for _ in range(n)]


# -- the per-address lock ----------------------------------------------------------------------


@pytest.mark.parametrize(("tries", "locked"), [(MAX_TRIES - 1, False), (MAX_TRIES, True)])
def test_an_address_is_locked_after_exactly_max_tries_wrong_pins(tries: int, locked: bool) -> None:
    guard = guard_at(SimClock.in_seconds())
    assert wrongs(guard, "10.0.0.1", tries) == [401] * tries
    status, wait = guard.check("10.0.0.1", PIN)  # even the right PIN, once locked
    assert (status, wait) == ((429, LOCK_S) if locked else (0, 0.0))
    assert guard.check("10.0.0.2", PIN) == (0, 0.0)  # another address is not locked


@pytest.mark.parametrize(("after", "status"), [(LOCK_S - US, 429), (LOCK_S, 0), (LOCK_S + US, 0)])
def test_a_lock_runs_out_after_exactly_lock_s(after: float, status: int) -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    wrongs(guard, "10.0.0.1", MAX_TRIES)
    clock.advance(s=after)
    got, wait = guard.check("10.0.0.1", PIN)
    assert got == status
    if status == 429:
        assert wait == pytest.approx(LOCK_S - after)  # what Retry-After says


def test_the_lock_length_is_the_guards_own() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock, max_tries=2, lock_s=5.0)
    assert wrongs(guard, "a", 2) == [401, 401]
    clock.advance(s=5.0 - US)
    assert guard.check("a", PIN)[0] == 429
    clock.advance(s=US)
    assert guard.check("a", PIN)[0] == 0


def test_a_lock_that_has_run_out_starts_the_count_afresh() -> None:
    """After the lock, the address has MAX_TRIES wrong PINs again (not one: the old count is
    gone), and the fifth locks it again for a whole LOCK_S."""
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    wrongs(guard, "10.0.0.1", MAX_TRIES)
    clock.advance(s=LOCK_S)
    assert wrongs(guard, "10.0.0.1", MAX_TRIES - 1) == [401] * (MAX_TRIES - 1)
    assert guard.check("10.0.0.1", PIN) == (0, 0.0)  # not locked yet
    assert wrongs(guard, "10.0.0.1", MAX_TRIES) == [401] * MAX_TRIES
    assert guard.check("10.0.0.1", PIN) == (429, LOCK_S)


def test_the_right_pin_resets_the_wrong_count_before_any_lock() -> None:
    """MAX_TRIES - 1 wrong PINs, the right one, MAX_TRIES - 1 wrong again: never locked (a judge
    who mistypes now and then is never shut out); without the right PIN between, it is."""
    guard = guard_at(SimClock.in_seconds())
    assert wrongs(guard, "judge", MAX_TRIES - 1) == [401] * (MAX_TRIES - 1)
    assert guard.check("judge", PIN) == (0, 0.0)
    assert wrongs(guard, "judge", MAX_TRIES - 1) == [401] * (MAX_TRIES - 1)
    assert guard.check("judge", PIN) == (0, 0.0)
    # the sibling: the same wrong PINs with no right one between lock the address
    other = guard_at(SimClock.in_seconds())
    wrongs(other, "judge", 2 * (MAX_TRIES - 1))
    assert other.check("judge", PIN)[0] == 429


def test_a_missing_pin_is_refused_but_is_no_wrong_try() -> None:
    guard = guard_at(SimClock.in_seconds())
    for given in (None, "") * MAX_TRIES:
        assert guard.check("10.0.0.1", given) == (401, 0.0)
    assert guard.wrong_total == 0
    assert guard.check("10.0.0.1", PIN) == (0, 0.0)


# -- the table-wide budget of wrong PINs -------------------------------------------------------------


@pytest.mark.parametrize(("guesses", "held"), [(FREE_WRONG - 1, False), (FREE_WRONG, True)])
def test_the_whole_table_may_give_exactly_free_wrong_wrong_pins_at_once(
        guesses: int, held: bool) -> None:
    """One wrong PIN from each of many addresses (no address lock trips): the table's budget
    is FREE_WRONG; once it is spent even a stranger with the right PIN waits its turn."""
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    assert [guard.check(f"10.1.0.{i}", WRONG)[0] for i in range(guesses)] == [401] * guesses
    status, wait = guard.check("10.2.0.1", PIN)
    if held:
        assert status == 429 and wait == pytest.approx(REFILL_S)
        assert guard.alert() != ""
    else:
        assert (status, wait) == (0, 0.0)
        assert guard.alert() == ""


@pytest.mark.parametrize(("after", "status"), [(REFILL_S - US, 429), (REFILL_S, 401)])
def test_the_budget_refills_one_wrong_pin_every_refill_s(after: float, status: int) -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]
    clock.advance(s=after)
    got, wait = guard.check("10.3.0.1", WRONG)
    assert got == status
    if status == 429:
        assert wait == pytest.approx(US, abs=1e-9)  # the rest of the refill, not a whole one
    assert guard.check("10.3.0.2", WRONG)[0] == 429  # one guess per refill, table-wide


def test_the_budget_never_refills_beyond_free_wrong() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    clock.advance(s=100 * REFILL_S)  # a long quiet night
    got = [guard.check(f"10.1.0.{i}", WRONG)[0] for i in range(FREE_WRONG + 1)]
    assert got == [401] * FREE_WRONG + [429]


def test_the_budget_is_the_guards_own_setting() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock, free_wrong=3, refill_s=2.0)
    assert [guard.check(f"a{i}", WRONG)[0] for i in range(4)] == [401, 401, 401, 429]
    clock.advance(s=2.0 - US)
    assert guard.check("b", WRONG)[0] == 429
    clock.advance(s=US)
    assert guard.check("b", WRONG)[0] == 401


@pytest.mark.parametrize(("after", "trusted"), [(TRUSTED_S - US, True), (TRUSTED_S, False)])
def test_the_judges_address_is_trusted_for_exactly_trusted_s(after: float, trusted: bool) -> None:
    """An address that gave the right PIN is not held up by strangers' guessing, nor spends the
    table's budget with a typo, for TRUSTED_S."""
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    assert guard.check("judge", PIN) == (0, 0.0)
    clock.advance(s=after)
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]  # the budget is spent
    assert (guard.check("judge", PIN)[0] == 0) is trusted
    if trusted:
        assert guard.check("judge", WRONG)[0] == 401  # a typo: refused, but no budget spent
        clock.advance(s=REFILL_S)
        assert guard.check("10.4.0.1", WRONG)[0] == 401  # the refill is still there


# -- the "someone is guessing" alert -----------------------------------------------------------


@pytest.mark.parametrize(("after", "shown"), [(ALERT_S - US, True), (ALERT_S, False)])
def test_the_alert_shows_for_exactly_alert_s_after_the_budget_ran_out(
        after: float, shown: bool) -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]
    text = guard.alert()
    assert f"({FREE_WRONG} wrong PINs so far)" in text and "guessing the table PIN" in text
    clock.advance(s=after)
    assert (guard.alert() != "") is shown


def test_a_guess_while_held_keeps_the_alert_up() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]
    clock.advance(s=REFILL_S / 2)
    assert guard.check("10.5.0.1", WRONG)[0] == 429  # held: the alert runs from now
    clock.advance(s=ALERT_S - US)
    assert guard.alert() != ""


# -- the tables of addresses are bounded, and a flood of addresses unlocks nobody ----------------


def test_a_flood_of_addresses_never_forgets_a_locked_one_and_stays_bounded() -> None:
    """The guesser locked first (the oldest entry), then MAX_ADDRESSES + 100 others give one
    wrong PIN each: the guesser is still locked, and the guard remembers at most MAX_ADDRESSES."""
    from referee.scoreboard.pin import MAX_ADDRESSES

    clock = SimClock.in_seconds()
    guard = guard_at(clock, free_wrong=10**9)  # no table-wide budget in the way here
    wrongs(guard, "guesser", MAX_TRIES)
    for i in range(MAX_ADDRESSES + 100):
        assert guard.check(f"10.{i // 250}.{i % 250}.1", WRONG)[0] == 401
        assert len(guard._tries) <= MAX_ADDRESSES
    assert guard.check("guesser", PIN)[0] == 429
    # an address that made MAX_TRIES - 1 wrong guesses lately is still counted
    wrongs(guard, "typist", MAX_TRIES - 1)
    assert guard.check(f"10.99.0.{1}", WRONG)[0] == 401
    assert wrongs(guard, "typist", 1) == [401] and guard.check("typist", PIN)[0] == 429


def test_with_every_remembered_address_locked_the_oldest_lock_makes_room() -> None:
    from referee.scoreboard.pin import MAX_ADDRESSES

    clock = SimClock.in_seconds()
    guard = guard_at(clock, free_wrong=10**9, max_tries=1)  # one wrong PIN locks
    for i in range(MAX_ADDRESSES):
        guard.check(f"a{i}", WRONG)
    assert guard.check("a0", PIN)[0] == 429 and len(guard._tries) == MAX_ADDRESSES
    assert guard.check("newcomer", WRONG)[0] == 401
    assert len(guard._tries) <= MAX_ADDRESSES
    assert guard.check("newcomer", PIN)[0] == 429  # the newcomer's own lock is kept
    assert guard.check("a0", PIN) == (0, 0.0)  # the oldest made room
    assert guard.check(f"a{MAX_ADDRESSES - 1}", PIN)[0] == 429  # the others stay locked


def test_run_out_locks_are_forgotten_first() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock, free_wrong=10**9)
    wrongs(guard, "old", MAX_TRIES)
    wrongs(guard, "late", MAX_TRIES - 1)
    clock.advance(s=LOCK_S)
    wrongs(guard, "new", 1)  # a new address: run-out locks are dropped, counts are kept
    assert "old" not in guard._tries
    assert wrongs(guard, "late", 1) == [401] and guard.check("late", PIN)[0] == 429


def test_the_trusted_addresses_are_bounded_and_run_out_ones_make_room() -> None:
    from referee.scoreboard.pin import MAX_ADDRESSES

    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    for i in range(MAX_ADDRESSES + 10):
        assert guard.check(f"p{i}", PIN) == (0, 0.0)
        assert len(guard._trusted) <= MAX_ADDRESSES
    clock.advance(s=TRUSTED_S)  # every one of them has run out exactly now
    assert guard.check("judge", PIN) == (0, 0.0)
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]  # the budget is spent
    assert guard.check("judge", PIN) == (0, 0.0)  # the judge was trusted: room was made


def test_a_guard_whose_clock_starts_at_zero() -> None:
    """An injected clock may start at 0 (a Pi's monotonic clock starts at boot): no alert is up
    and no stranger is trusted at the start."""
    clock = SimClock.in_seconds(0.0)
    guard = guard_at(clock)
    assert guard.alert() == ""
    [guard.check(f"10.1.0.{i}", WRONG) for i in range(FREE_WRONG)]
    assert guard.check("stranger", PIN)[0] == 429


def test_a_pin_that_cannot_be_encoded_is_just_wrong() -> None:
    guard = guard_at(SimClock.in_seconds())
    assert guard.check("10.0.0.1", "\ud800") == (401, 0.0)  # a lone surrogate: no exception
    assert guard.wrong_total == 1


# -- issue 24: first tries a guessing flood cannot starve --------------------------------------------


def flooded(clock: SimClock, network: str = "10.1.0", n: int = 200) -> PinGuard:
    """A default guard after `n` wrong PINs, one from each address of one /24."""
    guard = PinGuard(lambda: PIN, clock=clock)
    for i in range(n):
        guard.check(f"{network}.{i % 250 + 1}" if n <= 250 else f"{network}.{i}", WRONG)
    return guard


def test_a_newcomer_from_another_network_is_checked_at_once_during_a_flood() -> None:
    clock = SimClock.in_seconds()
    guard = flooded(clock)
    assert guard.alert() != ""  # the flood is seen...
    assert guard.check("10.1.0.251", PIN)[0] == 429  # ...and its own network waits
    assert guard.check("10.2.0.1", PIN) == (0, 0.0)  # a newcomer elsewhere gets in at once
    assert guard.check("10.3.0.1", WRONG)[0] == 401  # and a typo there is checked too


@pytest.mark.parametrize(("tries", "checked"), [(FRESH, True), (FRESH + 1, False)])
def test_a_network_has_exactly_fresh_first_tries_at_once(tries: int, checked: bool) -> None:
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0)  # the table-wide budget is spent
    got = [guard.check(f"10.1.0.{i + 1}", WRONG)[0] for i in range(tries - 1)]
    assert got == [401] * (tries - 1)
    assert (guard.check("10.1.0.250", PIN)[0] == 0) is checked


@pytest.mark.parametrize(("after", "checked"), [(FRESH_REFILL_S - US, False), (FRESH_REFILL_S, True)])
def test_a_networks_first_tries_refill_one_every_fresh_refill_s(after: float, checked: bool) -> None:
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0)
    [guard.check(f"10.1.0.{i + 1}", WRONG) for i in range(FRESH)]
    clock.advance(s=after)
    assert (guard.check("10.1.0.250", PIN)[0] == 0) is checked


@pytest.mark.parametrize(("wrong", "checked"), [(FIRST_TRIES - 1, True), (FIRST_TRIES, False)])
def test_an_address_has_exactly_first_tries_first_tries(wrong: int, checked: bool) -> None:
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0)
    assert wrongs(guard, "10.1.0.1", wrong) == [401] * wrong
    assert (guard.check("10.1.0.1", PIN)[0] == 0) is checked


@pytest.mark.parametrize("box", ["127.0.0.1", "::1", "::ffff:127.0.0.1"])
def test_the_box_itself_is_never_held_or_locked(box: str) -> None:
    clock = SimClock.in_seconds()
    guard = flooded(clock)
    assert wrongs(guard, box, 3 * MAX_TRIES) == [401] * (3 * MAX_TRIES)
    assert guard.check(box, PIN) == (0, 0.0)


def test_other_loopback_addresses_are_guests() -> None:
    clock = SimClock.in_seconds()
    guard = guard_at(clock)
    assert wrongs(guard, "127.0.5.1", MAX_TRIES + 1)[-1] == 429


def test_all_networks_together_have_fresh_total_first_tries() -> None:
    """An attacker who can send from many networks gains FRESH_TOTAL first tries, no more."""
    from referee.scoreboard.pin import FRESH_TOTAL

    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0)
    got = [guard.check(f"10.{i // 250}.{i % 250}.1", WRONG)[0] for i in range(FRESH_TOTAL + 20)]
    assert got == [401] * FRESH_TOTAL + [429] * 20


def test_a_spent_network_is_not_forgotten_while_the_networks_it_shares_room_with_try_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With every remembered network's room taken, a network already remembered that tries
    again makes no room: the network whose first tries are spent stays spent (forgetting it
    would give it FRESH more, and an attacker would cycle networks to keep guessing)."""
    from referee.scoreboard import pin

    monkeypatch.setattr(pin, "MAX_NETWORKS", 3)
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0, fresh=2)

    def guess(net: int, host: int) -> int:
        return guard.check(f"10.{net}.0.{host}", WRONG)[0]

    assert [guess(1, 1), guess(1, 2), guess(1, 3)] == [401, 401, 429]  # network 1: spent
    assert [guess(2, 1), guess(3, 1)] == [401, 401]  # the room is full: 1, 2 and 3
    assert guess(3, 2) == 401  # network 3 again, its second first try
    assert guess(1, 4) == 429  # network 1 is still spent


def test_room_for_a_new_network_is_made_by_forgetting_a_refilled_one_not_a_spent_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A network whose first tries have all come back is the same as one never seen: that is
    the one forgotten to make room, not the network still spent (the oldest)."""
    from referee.scoreboard import pin

    monkeypatch.setattr(pin, "MAX_NETWORKS", 2)
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock, free_wrong=0, fresh=2)

    def guess(net: int, host: int) -> int:
        return guard.check(f"10.{net}.0.{host}", WRONG)[0]

    assert [guess(1, 1), guess(1, 2), guess(1, 3), guess(2, 1)] == [401, 401, 429, 401]
    clock.advance(s=FRESH_REFILL_S)  # network 2 is whole again; network 1 has one try back
    assert guess(3, 1) == 401  # a new network: room is made
    assert [guess(1, 4), guess(1, 5)] == [401, 429]  # network 1 kept its count: one try
