"""The race helpers as tables of cases: last, first and the first p, right at tie_us.

Times are µs; tie_us is 1000 unless a row says otherwise.
"""

from __future__ import annotations

import pytest

from referee.rules import race

TIE = 1000


@pytest.mark.parametrize(
    ("presses", "seats", "close", "tie", "expect"),
    [
        # all pressed: the last two decide
        ({"A": 0, "B": 5000, "C": 7000}, "ABC", 9000, TIE, ("C", 2000, False)),
        ({"A": 0, "B": 6001, "C": 7000}, "ABC", 9000, TIE, (None, 999, True)),  # just under
        ({"A": 0, "B": 6000, "C": 7000}, "ABC", 9000, TIE, ("C", 1000, False)),  # exactly at
        ({"A": 0, "B": 5999, "C": 7000}, "ABC", 9000, TIE, ("C", 1001, False)),  # just over
        ({"A": 0, "B": 7000, "C": 7000}, "ABC", 9000, 0, (None, 0, True)),  # identical, tie 0
        ({"A": 0, "B": 6999, "C": 7000}, "ABC", 9000, 0, ("C", 1, False)),
        # one seat never pressed: it is later than all who did, with no margin (margins are
        # only ever between seats that pressed)
        ({"A": 0, "B": 5000}, "ABC", 9000, TIE, ("C", None, False)),
        ({"A": 0, "B": 9000}, "ABC", 9000, TIE, ("C", None, False)),
        # two never pressed: stragglers, never too close to call (the game says what they take)
        ({"A": 0}, "ABC", 9000, TIE, (None, None, False)),
        # only one seat in the race
        ({"A": 0}, "A", 9000, TIE, ("A", None, False)),
        ({}, "AB", 9000, TIE, (None, None, False)),
        # a press by a seat outside the race does not count
        ({"A": 0, "B": 5000, "Z": 8000}, "AB", 9000, TIE, ("B", 5000, False)),
        # a tie at the top (the first two) does not stop the last being clear
        ({"A": 0, "B": 0, "C": 7000}, "ABC", 9000, TIE, ("C", 7000, False)),
        # a tie in the middle neither
        ({"A": 0, "B": 3000, "C": 3500, "D": 7000}, "ABCD", 9000, TIE, ("D", 3500, False)),
        # names not in time order, nor the mapping: time decides, never the name or the order
        ({"C": 7000, "B": 0, "A": 5000}, "ABC", 9000, TIE, ("C", 2000, False)),
        ({"Z": 0, "A": 7000, "M": 5000}, "ZAM", 9000, TIE, ("A", 2000, False)),
        ({"Z": 9000, "A": 0}, "AZ", 9000, TIE, ("Z", 9000, False)),
        ({"A": 9000}, "AZ", 9000, TIE, ("Z", None, False)),
        # the only seat in the race never pressed: it is last, with no one to measure against
        ({}, "A", 9000, TIE, ("A", None, False)),
        # nobody in the race at all: nobody is named, and it is not a photo finish
        ({"A": 0}, "", 9000, TIE, (None, None, False)),
    ],
)
def test_last(presses: dict[str, int], seats: str, close: int, tie: int,
              expect: tuple[str | None, int | None, bool]) -> None:
    got = race.last(presses, tuple(seats), tie)
    assert (got.seat, got.margin_us, got.too_close) == expect
    missing = tuple(s for s in seats if s not in presses)
    assert got.stragglers == (missing if len(missing) >= 2 else ())


@pytest.mark.parametrize(
    ("presses", "tie", "expect"),
    [
        ({"A": 100, "B": 2000}, TIE, ("A", 1900, False)),
        ({"A": 100, "B": 1099}, TIE, (None, 999, True)),
        ({"A": 100, "B": 1100}, TIE, ("A", 1000, False)),
        ({"A": 100, "B": 1101}, TIE, ("A", 1001, False)),
        # a tie behind the first does not matter; a tie at the top is too close
        ({"A": 100, "B": 2000, "C": 2000}, TIE, ("A", 1900, False)),
        ({"A": 100, "B": 100, "C": 9000}, TIE, (None, 0, True)),
        # names and mapping order do not decide: time does
        ({"Z": 5000, "B": 100, "A": 3000}, TIE, ("B", 2900, False)),
        ({"B": 3000, "A": 100}, TIE, ("A", 2900, False)),
        ({"A": 100, "B": 100}, 0, (None, 0, True)),  # identical: too close whatever tie_us
        ({"A": 100, "B": 101}, 0, ("A", 1, False)),
        ({"B": 100}, TIE, ("B", None, False)),  # uncontested
        ({}, TIE, (None, None, False)),
    ],
)
def test_first(presses: dict[str, int], tie: int,
               expect: tuple[str | None, int | None, bool]) -> None:
    got = race.first(presses, tie)
    assert (got.seat, got.margin_us, got.too_close) == expect


def test_firsts_keeps_each_seats_first_press_whatever_the_order() -> None:
    assert race.firsts([(500, "A"), (100, "B"), (200, "A"), (100, "B")]) == {"A": 200, "B": 100}


@pytest.mark.parametrize(
    ("presses", "expect"),
    [
        # given every press, each seat counts by its first: A's later press is no margin
        ([(0, "A"), (500, "A"), (5000, "B")], ("A", 5000, False)),
        # B's first press is within tie_us of A's: a photo finish, whatever came after
        ([(2000, "B"), (0, "A"), (300, "B"), (2500, "A")], (None, 300, True)),
        ([(2000, "B"), (0, "A"), (1300, "B")], ("A", 1300, False)),
        ([(700, "B")], ("B", None, False)),
    ],
)
def test_first_of_all_presses_counts_each_seat_by_its_first(
        presses: list[tuple[int, str]], expect: tuple[str | None, int | None, bool]) -> None:
    got = race.first(presses, TIE)
    assert (got.seat, got.margin_us, got.too_close) == expect
    # the same outcome as from each seat's first press
    assert got == race.first(race.firsts(presses), TIE)


@pytest.mark.parametrize(
    ("presses", "p", "tie", "named", "unclear"),
    [
        # clear all the way: the first p are in, the rest out
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 105_000}, 3, TIE, "ABC", ""),
        # a photo finish at the p-th place: C and D are neither in nor out
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 100_400}, 3, TIE, "AB", "CD"),
        # B is within tie_us of C, but only 2 others (A, C) are before B or < tie_us after it
        ({"A": 0, "B": 199_500, "C": 200_000, "D": 200_800}, 3, TIE, "AB", "CD"),
        # ... while with D also within tie_us of B, B has 3 others there: unclear too
        ({"A": 0, "B": 199_500, "C": 200_000, "D": 200_400}, 3, TIE, "A", "BCD"),
        # exactly tie_us is clear; one µs under is not
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 101_000}, 3, TIE, "ABC", ""),
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 100_999}, 3, TIE, "AB", "CD"),
        # identical times at the boundary with tie_us = 0
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 100_000}, 3, 0, "AB", "CD"),
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 100_001}, 3, 0, "ABC", ""),
        # fewer pressers than p: all in
        ({"A": 0, "B": 0}, 3, TIE, "AB", ""),
        # a crowd at the front: five within 1 ms, p = 3: none of them is clearly in
        ({"A": 0, "B": 200, "C": 400, "D": 600, "E": 800, "F": 90_000}, 3, TIE, "", "ABCDE"),
        # the last presser as the same rule from the other end: p = seats − 1
        ({"A": 0, "B": 50_000, "C": 100_000, "D": 100_500}, 3, TIE, "AB", "CD"),
    ],
)
def test_group_clear_membership(presses: dict[str, int], p: int, tie: int, named: str,
                                unclear: str) -> None:
    got = race.group(presses, p, tie)
    assert "".join(s for s, _ in got.named) == named
    assert "".join(got.unclear) == unclear


def test_group_margins_say_how_clearly_each_seat_is_in() -> None:
    got = race.group({"A": 0, "B": 50_000, "C": 100_000, "D": 130_000}, 3, TIE)
    assert got.named == (("A", 130_000), ("B", 80_000), ("C", 30_000))
    assert got.margin_us == 30_000
    assert race.group({"A": 0, "B": 10}, 3, TIE).named == (("A", None), ("B", None))


@pytest.mark.parametrize("tie", [0, 1, 999, 1000, 5000])
def test_clear_us_never_lets_identical_times_be_clear(tie: int) -> None:
    assert race.clear_us(tie) >= 1 and race.clear_us(tie) >= tie


@pytest.mark.parametrize(
    ("presses", "p", "expect"),
    [
        # exactly p slappers: all in, nobody else could push them out (no margin to give)
        ({"A": 0, "B": 100_000, "C": 200_000}, 3,
         race.Group((("A", None), ("B", None), ("C", None)), (), None)),
        # p + 1 slappers: the boundary is the gap between the p-th and the next
        ({"A": 0, "B": 100_000, "C": 200_000, "D": 201_000}, 3,
         race.Group((("A", 201_000), ("B", 101_000), ("C", 1000)), (), 1000)),
        ({"A": 0, "B": 100_000, "C": 200_000, "D": 200_999}, 3,
         race.Group((("A", 200_999), ("B", 100_999)), ("C", "D"), 999)),
        ({"A": 0, "B": 100_000, "C": 200_000, "D": 201_001}, 3,
         race.Group((("A", 201_001), ("B", 101_001), ("C", 1001)), (), 1001)),
        # a tie at the top does not matter when both are inside the group
        ({"A": 0, "B": 0, "C": 50_000, "D": 100_000}, 3,
         race.Group((("A", 100_000), ("B", 100_000), ("C", 50_000)), (), 50_000)),
        # ... and makes both unclear when the group is one seat
        ({"A": 0, "B": 500, "C": 50_000}, 1, race.Group((), ("A", "B"), 500)),
        ({"A": 0, "B": 1000, "C": 50_000}, 1, race.Group((("A", 1000),), (), 1000)),
        # a tie in the middle of the group: both in
        ({"A": 0, "B": 50_000, "C": 50_300, "D": 150_000}, 3,
         race.Group((("A", 150_000), ("B", 100_000), ("C", 99_700)), (), 99_700)),
        # a tie across the boundary: the two there are unclear, the rest named or out
        ({"A": 0, "B": 50_000, "C": 50_300, "D": 150_000}, 2,
         race.Group((("A", 50_300),), ("B", "C"), 300)),
        # one seat clearly out behind a tie at the boundary
        ({"A": 0, "B": 50_000, "C": 50_300, "D": 150_000, "E": 150_000}, 2,
         race.Group((("A", 50_300),), ("B", "C"), 300)),
        # names and mapping order never decide
        ({"D": 0, "C": 50_000, "B": 100_000, "A": 105_000}, 3,
         race.Group((("D", 105_000), ("C", 55_000), ("B", 5000)), (), 5000)),
        ({"B": 100_000, "A": 105_000, "D": 0, "C": 50_000}, 3,
         race.Group((("D", 105_000), ("C", 55_000), ("B", 5000)), (), 5000)),
        # nobody pressed
        ({}, 3, race.Group((), (), None)),
    ],
)
def test_group_table(presses: dict[str, int], p: int, expect: race.Group) -> None:
    assert race.group(presses, p, TIE) == expect
