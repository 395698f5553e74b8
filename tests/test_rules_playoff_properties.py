"""Properties of issue 23's rules over generated table logs (hypothesis), in the style of
`test_rules_properties.py`:

- Never pressing is never a way out: in a race every seat had to press, each seat that never
  pressed takes what the last presser would (Spank the Pig! `stragglers = all-lose`), or nobody
  does (`no-one`); with one seat only able to take it (Pig's Tail's pile), two or more take
  nothing. No ruling on a seat that never pressed has a margin, and no "too close to call" names
  one. Renaming the seats and shifting every time keep the rulings.
- Places after a sudden death are a play-off's: the champion first, then the seats knocked out
  (later ahead of earlier, the same round sharing a place), then the seats that sat it out, by
  score; renaming the seats and shifting every time keep the places.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.store.tablelog import Replay, replay
from tests.harness import examples
from tests.test_rules_properties import renamed

MS = 1000
S = 1_000_000
NAMES = ["Ann", "Bob", "Cy", "Di", "Ed"]
CHECK = settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                 derandomize=True)
GAP_US = st.one_of(st.sampled_from([0, 1, 999, 1000, 1001]), st.integers(0, 300 * MS))


def run(lines: list[dict[str, Any]]) -> Replay:
    return replay([json.dumps(x) for x in lines])


def shifted(log: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    return [{**x, "t_us": x["t_us"] + by} if "t_us" in x else x for x in log]


# -- never pressing is never a way out -----------------------------------------------------------


@st.composite
def spank_race(draw: st.DrawFn) -> tuple[list[dict[str, Any]], frozenset[str], int]:
    """One Spank the Pig! round whose pigs the judge gives (1 or 2): some seats slap (or an
    early slap only), the rest never do. Returns the log, the seats that never slapped in the
    race, and the pigs."""
    seats = NAMES[:draw(st.integers(2, 5))]
    stragglers = draw(st.sampled_from(["all-lose", "no-one"]))
    pigs = draw(st.integers(1, 2))
    cue = 5 * S
    lines: list[dict[str, Any]] = [{"type": "cue", "t_us": cue}]
    slappers = draw(st.lists(st.sampled_from(seats), unique=True))
    t = cue + draw(st.integers(0, 500 * MS))
    for seat in slappers:
        t += draw(GAP_US)
        lines.append({"type": "press", "t_us": t, "seat": seat})
    for seat in draw(st.lists(st.sampled_from(seats), unique=True, max_size=2)):
        lines.append({"type": "press", "t_us": cue - draw(st.integers(1, 900 * MS)),
                      "seat": seat})  # early: does not count as slapping the pig
    game = {"type": "game", "game": "spank-the-pig", "seats": seats,
            "options": {"doubles": "off", "stragglers": stragglers, "tie_us": 1000}}
    return ([game, *lines, {"type": "facts", "round": 1, "pigs": pigs}],
            frozenset(seats) - frozenset(slappers), pigs)


@CHECK
@given(race=spank_race(), shift=st.integers(-4 * S, 10**9),
       new=st.permutations(["Xu", "Yan", "Zoe", "Wim", "Vic"]))
def test_each_seat_that_never_slapped_takes_what_the_last_would(
        race: tuple[list[dict[str, Any]], frozenset[str], int], shift: int,
        new: list[str]) -> None:
    log, never, pigs = race
    out = run(log).lines()
    rulings = [r for r in out if r["type"] == "ruling"]
    last = [r for r in rulings if r["reason"].startswith("last to spank")]
    all_lose = log[0]["options"]["stragglers"] == "all-lose"
    if len(never) >= 2 and all_lose:
        assert sorted((r["seat"], r["delta"]) for r in last) == sorted((s, pigs) for s in never)
    elif len(never) >= 2:
        assert last == [] and any(r["reason"].startswith("unclear: ") for r in rulings)
    elif len(never) == 1:
        assert [(r["seat"], r["delta"]) for r in last] == [(next(iter(never)), pigs)]
    for r in rulings:  # no margin against a seat that never slapped
        assert r["seat"] not in never or r["margin_us"] is None or r["reason"] == "slap too early"
    # renaming the seats and shifting every time keep the rulings
    names = dict(zip(log[0]["seats"], new, strict=False))
    assert run(renamed(log, names)).lines() == renamed(out, names)
    assert run(shifted(log, shift)).lines() == out


@st.composite
def pigs_tail_match(draw: st.DrawFn) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """A Pig's Tail "slowest" table: the second flip matches (the judge says so); some tap."""
    seats = NAMES[:draw(st.integers(2, 5))]
    lines: list[dict[str, Any]] = [{"type": "cue", "t_us": 4 * S, "seat": seats[0]},
                                   {"type": "cue", "t_us": 8 * S, "seat": seats[1]}]
    tappers = draw(st.lists(st.sampled_from(seats), unique=True))
    t = 8 * S + draw(st.integers(0, 500 * MS))
    for seat in tappers:
        t += draw(GAP_US)
        lines.append({"type": "press", "t_us": t, "seat": seat})
    game = {"type": "game", "game": "pigs-tail", "seats": seats, "options": {"take": "slowest"}}
    return ([game, *lines, {"type": "facts", "round": 2, "match": True}],
            frozenset(seats) - frozenset(tappers))


@CHECK
@given(race=pigs_tail_match(), shift=st.integers(-3 * S, 10**9),
       new=st.permutations(["Xu", "Yan", "Zoe", "Wim", "Vic"]))
def test_two_that_never_tapped_take_no_pile_and_one_takes_it(
        race: tuple[list[dict[str, Any]], frozenset[str]], shift: int, new: list[str]) -> None:
    log, never = race
    out = run(log).lines()
    [ruling] = [r for r in out if r["type"] == "ruling" and r["round"] == 2]
    if len(never) >= 2:
        assert (ruling["seat"], ruling["delta"]) == (None, 0)
        assert ruling["reason"] == f"unclear: {len(never)} never tapped"
    elif len(never) == 1:
        assert (ruling["seat"], ruling["delta"], ruling["margin_us"]) == (
            next(iter(never)), 2, None)
    else:
        assert ruling["seat"] is None or ruling["delta"] == 2
    names = dict(zip(log[0]["seats"], new, strict=False))
    assert run(renamed(log, names)).lines() == renamed(out, names)
    assert run(shifted(log, shift)).lines() == out


# -- places after a sudden death are a play-off's --------------------------------------------------


@st.composite
def sudden_deaths(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A Spank the Pig! game of one regular round that often ends tied (every seat slapping a
    pig, the last ones in a photo finish, or the judge giving penalties), then sudden-death
    rounds of random slaps, early slaps and pigs."""
    n = draw(st.integers(3, 5))
    seats = NAMES[:n]
    lines: list[dict[str, Any]] = []
    judge: list[dict[str, Any]] = []
    for k in range(draw(st.integers(1, 6)) + 1):
        cue = (1 + 5 * k) * S
        lines.append({"type": "cue", "t_us": cue})
        t = cue + 100 * MS
        for seat in draw(st.permutations(seats))[: draw(st.integers(0, n))]:
            t += draw(st.sampled_from([200, 600])) if k == 0 else draw(GAP_US)
            lines.append({"type": "press", "t_us": t, "seat": seat})
        if k and draw(st.integers(0, 4)) == 0:
            lines.append({"type": "press", "t_us": cue - 300 * MS,
                          "seat": draw(st.sampled_from(seats))})
        judge.append({"type": "facts", "round": k + 1, "pigs": draw(st.sampled_from([0, 1, 1, 2, 3]))})
    for seat in draw(st.lists(st.sampled_from(seats), max_size=2)):
        judge.append({"type": "penalty", "round": 1, "seat": seat, "count": 1, "reason": "peeked"})
    game = {"type": "game", "game": "spank-the-pig", "seats": seats,
            "options": {"deck": n, "doubles": "off", "tie_us": 1000}}
    return [game, *lines, *judge]


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(log=sudden_deaths(), shift=st.integers(0, 10**9),
       new=st.permutations(["Xu", "Yan", "Zoe", "Wim", "Vic"]))
def test_places_after_a_sudden_death_are_a_play_offs(log: list[dict[str, Any]], shift: int,
                                                      new: list[str]) -> None:
    done = run(log)
    out = done.lines()
    standings = out[-1]
    if standings["final"]:
        state = done.rules.state  # type: ignore[attr-defined]
        knocked: dict[str, int] = dict(state.knocked)
        place = {r["seat"]: r["place"] for r in standings["seats"]}
        score = {r["seat"]: r["score"] for r in standings["seats"]}
        [champion] = standings["winners"]
        assert place[champion] == 1 and list(place.values()).count(1) == 1
        sat_out = [s for s in place if s not in knocked and s != champion]
        for a in knocked:
            assert place[a] > 1
            for b in knocked:  # knocked out later: a better place; the same round: the same
                assert (knocked[a] > knocked[b]) == (place[a] < place[b])
                assert (knocked[a] == knocked[b]) == (place[a] == place[b])
            assert all(place[a] < place[s] for s in sat_out)
        for a in sat_out:
            for b in sat_out:
                assert (score[a] < score[b]) == (place[a] < place[b])
        assert {r["seat"] for r in standings["seats"] if r["out"]} == set(knocked)
    names = dict(zip(log[0]["seats"], new, strict=False))
    assert run(renamed(log, names)).lines() == renamed(out, names)
    assert run(shifted(log, shift)).lines() == out
