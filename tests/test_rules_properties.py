"""Properties of the rules over generated games of every game (hypothesis): the registered ones
and those made up in tests/.

Each game is a table log: the game line, cues and presses crowded round every threshold (tie_us,
the early window, the window's end, photo finishes, identical instants), then judge lines (and,
for a game drawn from its declarations, often the rest of the game played out: every question
answered, the rounds its rules call, to the end). A game not over is ended by the judge. For
every such log: the order of the press lines, a shift of every time, and consistent new seat
names change nothing but the names; a press after the game is over changes nothing; no score is
ever negative; `final` never comes with an open question; and the same events played live
through the engine (delivered late, judged while play goes on) export a log that replays to the
live rulings.
"""

from __future__ import annotations

import io
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.engine.commands import Feed, Request
from referee.engine.loop import Engine, open_game
from referee.events import Cue, Facts, GameStart
from referee.rules.base import Rules
from referee.rules.declare import Fact
from referee.rules.turns import TurnRules
from referee.store.database import Store, connect, export_lines
from referee.store.tablelog import LogError, event_from_json, replay
from referee.voice.announce import PrintAnnouncer
from tests.harness import every_game, examples, made_up, register_game

MS = 1000
NAMES = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
BASE_US = 10_000 * MS
FAST = settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)
SLOW = settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)

# a gap between two presses: mostly around the thresholds, sometimes anything
GAP_US = st.one_of(st.sampled_from([0, 1, 400, 999, 1000, 1001, 2500]),
                   st.integers(0, 400 * MS))


@st.composite
def spank_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(2, 4))
    seats = NAMES[:n]
    rounds = draw(st.integers(1, 3))
    tempo = draw(st.sampled_from([100, 200]))
    window = draw(st.sampled_from([200, 500, 1000]))
    options = {"deck": n * rounds, "tempo_ms": tempo, "window_ms": window,
               "tie_us": draw(st.sampled_from([0, 1000, 3000])),
               "doubles": draw(st.sampled_from(["off", "buttons", "judge"]))}
    early = 2 * tempo * MS
    cues, t = [], BASE_US
    for _ in range(draw(st.integers(1, rounds + 3))):
        t += draw(st.one_of(st.sampled_from([early, early + window * MS, 100 * MS]),
                            st.integers(300 * MS, 2500 * MS)))
        cues.append(t)
    lines: list[dict[str, Any]] = [{"type": "cue", "t_us": c} for c in cues]
    for cue in cues:
        anchor = cue + draw(st.integers(-early - 50 * MS, window * MS + 100 * MS))
        for seat in draw(st.lists(st.sampled_from(seats), max_size=2 * n)):
            anchor += draw(GAP_US)
            button = draw(st.sampled_from(["slap", "slap", "double"]))
            lines.append({"type": "press", "t_us": anchor, "seat": seat, "button": button})
    judge = draw(judge_lines(seats, len(cues), {"pigs": st.integers(0, 4),
                                                "doubles": st.lists(st.sampled_from(["cow", "bean"]),
                                                                    max_size=2)}))
    return [{"type": "game", "game": "spank-the-pig", "seats": seats, "options": options},
            *lines, *judge]


@st.composite
def pig_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(3, 5))
    seats = NAMES[:n]
    window = draw(st.sampled_from([1000, 2000]))
    options = {"window_ms": window, "lives": draw(st.sampled_from([1, 3])),
               "tie_us": draw(st.sampled_from([0, 1000, 3000])),
               "stragglers": draw(st.sampled_from(["no-one", "all-lose"])),
               "false_claim": draw(st.sampled_from(["lose-life", "nothing"]))}
    lines: list[dict[str, Any]] = []
    t = BASE_US
    claims = draw(st.integers(1, 6))
    for _ in range(claims):
        t += draw(st.one_of(st.just(window * MS), st.integers(window * MS // 2, 3 * window * MS)))
        at = t
        for seat in draw(st.permutations(seats)).copy()[: draw(st.integers(1, n))]:
            lines.append({"type": "press", "t_us": at, "seat": seat, "button": "slap"})
            at += draw(GAP_US)
        if draw(st.booleans()):
            lines.append({"type": "press", "t_us": at, "seat": draw(st.sampled_from(seats)),
                          "button": draw(st.sampled_from(["slap", "double"]))})
    judge = draw(judge_lines(seats, claims, {"claim": st.booleans()}))
    return [{"type": "game", "game": "pig", "seats": seats, "options": options}, *lines, *judge]


@st.composite
def pigs_tail_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(2, 4))
    seats = NAMES[:n]
    window = draw(st.sampled_from([300, 1000]))
    options = {"take": draw(st.sampled_from(["flipper", "slowest"])), "window_ms": window,
               "tie_us": draw(st.sampled_from([0, 1000, 3000]))}
    whole = draw(st.booleans())  # all 52 cards: a finished game
    count = 52 if whole else draw(st.integers(1, 8))
    lines: list[dict[str, Any]] = []
    t = BASE_US
    for k in range(count):
        t += draw(st.sampled_from([window * MS, window * MS + 500 * MS, 2 * window * MS]))
        lines.append({"type": "cue", "t_us": t, "seat": seats[k % n]})
        if whole and k % 6:
            continue  # a whole game is mostly quiet, to stay quick
        at = t + draw(st.integers(-200 * MS, window * MS + 100 * MS))
        for seat in draw(st.lists(st.sampled_from(seats), max_size=n + 1)):
            at += draw(GAP_US)
            lines.append({"type": "press", "t_us": at, "seat": seat, "button": "slap"})
    judge = draw(judge_lines(seats, count, {"match": st.booleans()}))
    return [{"type": "game", "game": "pigs-tail", "seats": seats, "options": options},
            *lines, *judge]


@st.composite
def judge_lines(draw: st.DrawFn, seats: list[str], rounds: int,
                facts: dict[str, st.SearchStrategy[Any]],
                reason: str = "slapped the hippo") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    open_actions = 0
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["facts", "facts", "penalty", "undo", "void"]))
        number = draw(st.integers(1, rounds))
        if kind == "undo" and open_actions:
            out.append({"type": "undo"})
            open_actions -= 1
        elif kind == "penalty":
            out.append({"type": "penalty", "round": number, "seat": draw(st.sampled_from(seats)),
                        "count": draw(st.integers(1, 2)), "reason": reason})
            open_actions += 1
        elif kind == "void":
            out.append({"type": "facts", "round": number, "void": True})
            open_actions += 1
        elif kind == "facts" and facts:
            key = draw(st.sampled_from(sorted(facts)))
            out.append({"type": "facts", "round": number, key: draw(facts[key])})
            open_actions += 1
    return out


def fact_values(fact: Fact, seats: list[str]) -> st.SearchStrategy[Any] | None:
    """The values a judge may give `fact`, as it declares them (None: none to draw)."""
    if fact.kind == "flag":
        return st.booleans()
    if fact.kind == "count":
        return st.integers(0, min(fact.most, 4))
    if fact.kind == "seat":
        return st.sampled_from([*seats, None])
    if fact.choices:
        return st.lists(st.sampled_from([v for v, _ in fact.choices]), max_size=2)
    if fact.what == "seat":  # seats named (who answered wrong)
        return st.lists(st.sampled_from(seats), max_size=2, unique=True)
    return None


def settle(draw: st.DrawFn, rules: Rules) -> list[dict[str, Any]]:
    """The judge answers every question the rules ask, one after the other, as a judge would:
    the keypad's YES or NO, or values of the facts asked of the judge's own; the facts lines,
    fed to `rules` too."""
    facts = {f.name: f for f in rules.facts()}
    out: list[dict[str, Any]] = []
    for _ in range(4 * len(rules.seats) * max(1, rules.round_count())):
        ask = rules.status().awaiting
        if ask is None:
            break
        own = {name: fact_values(facts[name], list(rules.seats)) for name in ask.need}
        choices = [st.sampled_from([rules.keypad(ask, "yes"), rules.keypad(ask, "no")])]
        if all(v is not None for v in own.values()):
            choices.append(st.fixed_dictionaries(own))  # type: ignore[arg-type]
        values = draw(st.one_of(choices))
        rules.feed(Facts(ask.round, values))
        out.append({"type": "facts", "round": ask.round, **values})
    return out


def play_out(draw: st.DrawFn, rules: Rules, log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rest of the game `log` plays, from `rules` that replayed it (every race closed, as at
    a log's end): the judge answers what it asks, and quiet rounds are called as its rules call
    them (naming the flipper they name), at one pace, until it is over."""
    t = max(x.get("t_us", BASE_US) for x in log)
    pace = draw(st.sampled_from([300 * MS, 2000 * MS]))
    out: list[dict[str, Any]] = []
    for _ in range(300):
        out += settle(draw, rules)
        call = rules.next_call()
        if rules.status().over or call is None:
            break
        t += pace
        rules.advance(t)
        rules.feed(Cue(t, call.seat))
        out.append({"type": "cue", "t_us": t, **({"seat": call.seat} if call.seat else {})})
    return out


@st.composite
def declared_logs(draw: st.DrawFn, cls: type[Rules]) -> list[dict[str, Any]]:
    """A log of any game, built from what it declares: seats within its SEATS, each choice option
    drawn (numbers at the game's default), cues for a game whose rounds are its cues (naming the
    flipper in turn for a turn game) spaced round its race window, or presses alone for one whose
    rounds are claims, presses of its buttons (and one it does not use) around each, judge
    lines of its own facts, and often the game played out: every question answered, quiet
    rounds called until it is over."""
    lo, hi = cls.SEATS
    n = draw(st.integers(lo, min(hi, lo + 2)))
    seats = NAMES[:n]
    options = {o.name: draw(st.sampled_from(o.choices)) for o in cls.OPTIONS if o.kind == "choice"}
    defaults = {name: o.default for name, o in cls.known_options().items()}
    window = int(defaults.get("window_ms") or 1000) * MS  # its race window, and early window
    early = int(defaults.get("early_ms") or 0) * MS
    turns = issubclass(cls, TurnRules)
    # each strategy built once (a strategy built afresh is validated afresh at every draw)
    gaps = st.one_of(st.sampled_from([300 * MS, 1000 * MS, 2000 * MS, window,
                                      window + early + 200 * MS]),
                     st.integers(100 * MS, max(3000 * MS, window + early + 1000 * MS)))
    offsets = st.integers(-300 * MS, 1500 * MS)
    pressers = st.lists(st.sampled_from(seats), min_size=0 if cls.ROUNDS_FROM_CUES else 1,
                        max_size=n + 1)
    buttons = st.sampled_from([*cls.BUTTONS, "slap", "double"])
    lines: list[dict[str, Any]] = []
    t = BASE_US
    whole = draw(st.booleans())  # many rounds, mostly quiet
    rounds = 40 if whole else draw(st.integers(1, 6))
    for k in range(rounds):
        t += draw(gaps)
        if cls.ROUNDS_FROM_CUES:
            lines.append({"type": "cue", "t_us": t, **({"seat": seats[k % n]} if turns else {})})
        if whole and k % 6 and cls.ROUNDS_FROM_CUES:
            continue
        at = t + draw(offsets)
        for seat in draw(pressers):
            at = max(at, BASE_US) + draw(GAP_US)
            lines.append({"type": "press", "t_us": at, "seat": seat, "button": draw(buttons)})
    facts = {f.name: v for f in cls.FACTS if (v := fact_values(f, seats)) is not None}
    log = [{"type": "game", "game": cls.NAME, "seats": seats, "options": options}, *lines]
    rules = replay([json.dumps(x) for x in log]).rules
    numbers = {o.round for o in rules.outputs()} or {1}  # the rounds it ruled or asks
    judge = draw(judge_lines(seats, max(numbers), facts, cls.PENALTY_REASONS[0]))
    log += judge
    if not draw(st.booleans()):
        return log
    for line in judge:  # judge lines come last in a replay: the same as replaying them all
        rules.feed(event_from_json(line))
    return [*log, *play_out(draw, rules, log)]


DBS = itertools.count()
# Every game of the registry and of tests/ is here: its logs built from its declarations, or, for
# the seed games, the crafted ones above that crowd every threshold of their rules.
CRAFTED = {"spank-the-pig": spank_logs(), "pig": pig_logs(), "pigs-tail": pigs_tail_logs()}
LOGS = {name: CRAFTED[name] if name in CRAFTED else declared_logs(cls)
        for name, cls in every_game().items()}


def run(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    try:
        return replay([json.dumps(x) for x in lines]).lines()
    except LogError as exc:
        # a judge line for a round the presses never opened (Pig's claims): not a game to judge
        assume("has not started" not in str(exc))
        raise


def is_press(line: dict[str, Any]) -> bool:
    return bool(line["type"] == "press")


def renamed(out: Any, names: dict[str, str]) -> Any:
    if isinstance(out, dict):
        return {k: renamed(v, names) for k, v in out.items()}
    if isinstance(out, list):
        return [renamed(v, names) for v in out]
    return names.get(out, out) if isinstance(out, str) else out


GAMES = list(LOGS)


@pytest.fixture(autouse=True)
def _registered(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A made-up game is registered for the test that plays it (the live test opens a game by
    name, and `replay` reads its game line)."""
    game = getattr(request.node, "callspec", None) and request.node.callspec.params.get("game")
    if game and made_up(game):
        register_game(monkeypatch, every_game()[game])


@pytest.mark.parametrize("game", GAMES)
def test_the_order_of_press_lines_never_changes_the_output(game: str) -> None:
    @FAST
    @given(log=LOGS[game], seed=st.integers(0, 2**32 - 1))
    def check(log: list[dict[str, Any]], seed: int) -> None:
        presses = [x for x in log if is_press(x)]
        random.Random(seed).shuffle(presses)
        it = iter(presses)
        shuffled = [next(it) if is_press(x) else x for x in log]
        assert run(shuffled) == run(log)

    check()


@pytest.mark.parametrize("game", GAMES)
def test_shifting_every_time_by_a_constant_never_changes_the_output(game: str) -> None:
    @FAST
    @given(log=LOGS[game], shift=st.integers(-BASE_US + 2_000_000, 10**12))
    def check(log: list[dict[str, Any]], shift: int) -> None:
        moved = [{**x, "t_us": x["t_us"] + shift} if "t_us" in x else x for x in log]
        assume(all(x.get("t_us", 0) >= 0 for x in moved))
        assert run(moved) == run(log)

    check()


@pytest.mark.parametrize("game", GAMES)
def test_renaming_seats_consistently_renames_the_rulings(game: str) -> None:
    @FAST
    @given(log=LOGS[game], new=st.permutations(["Xu", "Yan", "Zoe", "Wim", "Vic", "Uma"]))
    def check(log: list[dict[str, Any]], new: list[str]) -> None:
        names = dict(zip(log[0]["seats"], new, strict=False))
        assert run(renamed(log, names)) == renamed(run(log), names)

    check()


@pytest.mark.parametrize("game", GAMES)
def test_a_press_after_the_game_is_over_changes_nothing(game: str) -> None:
    @FAST
    @given(log=LOGS[game], data=st.data())
    def check(log: list[dict[str, Any]], data: st.DataObject) -> None:
        out = run(log)
        last = max(x.get("t_us", 0) for x in log)
        if not out[-1]["final"]:  # a game the drawn log never finishes: the judge ends it, and
            last += 1  # answers what is still asked (a race the end closes may ask too)
            log = [*log, {"type": "end", "t_us": last}]
            log += settle(data.draw, replay([json.dumps(x) for x in log]).rules)
            out = run(log)
        assert out[-1]["final"]
        # past the last race's close (its window, or the end): the game is over by then
        closes = [r.close_us for r in replay([json.dumps(x) for x in log]).rules.rounds]
        last = max([last, *closes])
        seats = log[0]["seats"]
        extra = [{"type": "press", "t_us": last + data.draw(st.integers(1, 60_000 * MS)),
                  "seat": data.draw(st.sampled_from(seats)),
                  "button": data.draw(st.sampled_from(["slap", "double"]))}
                 for _ in range(data.draw(st.integers(1, 3)))]
        assert run([log[0], *extra, *log[1:]]) == out

    check()


@pytest.mark.parametrize("game", GAMES)
def test_no_score_is_ever_negative_and_final_never_comes_with_an_open_question(game: str) -> None:
    @FAST
    @given(log=LOGS[game])
    def check(log: list[dict[str, Any]]) -> None:
        out = run(log)
        standings = out[-1]
        assert all(row["score"] >= 0 for row in standings["seats"])
        # from the scores before any ruling (a card game's deal: each seat's dealt cards)
        running = {row["seat"]: row["score"] for row in run(log[:1])[-1]["seats"]}
        for line in out[:-1]:
            if line["type"] == "ruling" and line["seat"] is not None:
                running[line["seat"]] += line["delta"]
                assert running[line["seat"]] >= 0, line
        if standings["final"]:
            assert not [x for x in out if x["type"] == "awaiting"]
            assert standings["winners"]
        else:
            assert standings["winners"] == []

    check()


# -- live: the engine on a simulated clock, presses arriving late ----------------------------------


def play_live(tmp: Path, log: list[dict[str, Any]], seed: int) -> tuple[list[Any], list[str]]:
    """Feed the log to a live engine as a table would: presses arrive up to 2 ms late and out
    of order, the engine turns every 0.5 ms, the judge acts while play goes on. Returns the
    engine's outputs and standings as JSON lines, and the exported log."""
    rng = random.Random(seed)
    start = log[0]
    now = [0]
    store = Store(tmp / f"live-{next(DBS)}.db")
    voice = PrintAnnouncer(io.StringIO(), clock=lambda: now[0], quiet=True)
    engine: Engine = open_game(store, GameStart(start["game"], tuple(start["seats"]),
                                                start["options"]),
                               voice, clock=lambda: now[0], auto=False, delivery_us=2500)
    try:
        timed = sorted((x for x in log[1:] if "t_us" in x), key=lambda x: x["t_us"])
        arrivals: list[tuple[int, int, Any]] = []
        for i, x in enumerate(timed):
            event = event_from_json(x)
            late = 0 if isinstance(event, Cue) else rng.randint(500, 2000)
            arrivals.append((x["t_us"] + late, i, event))
        last = max((a for a, _, _ in arrivals), default=BASE_US)
        cues = [x["t_us"] for x in timed if x["type"] == "cue"] or [last]
        at = BASE_US
        for line in (x for x in log[1:] if "t_us" not in x):  # the judge, in order, during play
            begun = cues[min(line.get("round", 1), len(cues)) - 1]
            at = max(at, begun) + rng.randint(0, 3000 * MS)
            arrivals.append((at, len(arrivals), event_from_json(line)))
        end = max(last, at) + 60_000 * MS
        arrivals.sort(key=lambda a: (a[0], a[1]))
        for at, _, event in arrivals:
            while now[0] + 500 < at:  # the engine wakes every 0.5 ms meanwhile
                now[0] += 500 if now[0] >= at - 10_000 else max(500, (at - 10_000 - now[0]))
                engine.turn()
            now[0] = max(now[0], at)
            if isinstance(event, Cue):
                engine.submit(Request(Feed(event)))
            else:
                engine.submit(event)
            try:
                engine.turn()
            except ValueError as exc:  # a judge line for a round not yet begun, live
                assume(False)
                raise AssertionError(exc) from None
        now[0] = end + 120_000 * MS
        engine.turn()
        live = [o.to_json() for o in engine.rules.outputs()] + [engine.rules.standings().to_json()]
        return live, list(export_lines(connect(store.path, readonly=True)))
    finally:
        store.close()


@pytest.mark.parametrize("game", GAMES)
def test_replaying_the_export_of_a_live_game_gives_the_live_rulings(game: str,
                                                                    tmp_path: Path) -> None:
    @SLOW
    @given(log=LOGS[game], seed=st.integers(0, 1000))
    def check(log: list[dict[str, Any]], seed: int) -> None:
        live, exported = play_live(tmp_path, log, seed)
        assert replay(exported).lines() == live

    check()
