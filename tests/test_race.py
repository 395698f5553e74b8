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
        # one seat never pressed: it is later than all who did, by the time left to the close
        ({"A": 0, "B": 5000}, "ABC", 9000, TIE, ("C", 4000, False)),
        ({"A": 0, "B": 9000}, "ABC", 9000, TIE, ("C", 0, False)),
        # two never pressed: they tie with each other
        ({"A": 0}, "ABC", 9000, TIE, (None, 0, True)),
        # only one seat in the race
        ({"A": 0}, "A", 9000, TIE, ("A", None, False)),
        ({}, "AB", 9000, TIE, (None, 0, True)),
        # a press by a seat outside the race does not count
        ({"A": 0, "B": 5000, "Z": 8000}, "AB", 9000, TIE, ("B", 5000, False)),
    ],
)
def test_last(presses: dict[str, int], seats: str, close: int, tie: int,
              expect: tuple[str | None, int | None, bool]) -> None:
    got = race.last(presses, tuple(seats), close, tie)
    assert (got.seat, got.margin_us, got.too_close) == expect


@pytest.mark.parametrize(
    ("presses", "tie", "expect"),
    [
        ({"A": 100, "B": 2000}, TIE, ("A", 1900, False)),
        ({"A": 100, "B": 1099}, TIE, (None, 999, True)),
        ({"A": 100, "B": 1100}, TIE, ("A", 1000, False)),
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
