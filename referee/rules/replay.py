"""Driving a game's rules through a recorded log: one driver for `referee replay` and for resuming
a game from the database, so both re-rule a log the same way.

Timed events (cues, presses, the end) are fed in order of `t_us` (line order breaks ties), time
advanced to each before it is fed; judge lines (facts, penalty, undo) follow in their own order,
once every timed event is in, each stamped with the latest time logged before its line (for UNDO
to tell which change came last). At the end of a log every open race is closed (`finish`); a
resumed game leaves its races to the live table instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.events import Cue, End, Event, Facts, GameStart, Penalty, Press
from referee.rules.base import Rules
from referee.rules.declare import RulesError


class ReplayError(RulesError):
    """A log line the rules refuse, with its line number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def drive(rules: Rules, lines: Iterable[tuple[int, Event]], *, finish: bool = True,
          cues_before: int = 0) -> int:
    """Feed (line number, event) pairs of a log after its game line to `rules`.

    `cues_before`: cues already fed from earlier lines (a log driven in pieces, as it grows).
    Returns the latest `t_us` of a timed event (0 if none). ReplayError names the first line
    the rules refuse.
    """
    timed: list[tuple[int, int, Cue | Press | End]] = []
    judge: list[tuple[int, int, Event]] = []  # (line, the latest time logged before it, event)
    logged_us = 0
    cues_seen = cues_before
    press_lines: dict[tuple[int, str], int] = {}  # (t_us, seat) → its first line
    for line, ev in lines:
        if isinstance(ev, GameStart):
            raise ReplayError(line, "a second game line; a log holds exactly one game")
        if isinstance(ev, End):
            timed.append((ev.t_us, line, ev))
            logged_us = max(logged_us, ev.t_us)
        elif isinstance(ev, Cue | Press):
            if ev.seat is not None and ev.seat not in rules.seats:
                raise ReplayError(line, f"seat {ev.seat!r} is not at this table "
                                        f"({', '.join(rules.seats)})")
            cues_seen += isinstance(ev, Cue)
            if isinstance(ev, Press):
                press_lines.setdefault((ev.t_us, ev.seat), line)
            timed.append((ev.t_us, line, ev))
            logged_us = max(logged_us, ev.t_us)
        else:
            if isinstance(ev, Facts | Penalty) and rules.ROUNDS_FROM_CUES and ev.round > cues_seen:
                raise ReplayError(line, f"round {ev.round} has no cue before this line "
                                        f"(cues so far: {cues_seen})")
            judge.append((line, logged_us, ev))
    timed.sort(key=lambda x: (x[0], x[1]))
    last_t = 0
    for t_us, line, ev in timed:
        try:
            rules.advance(t_us)
            rules.feed(ev)
        except RulesError as exc:
            raise ReplayError(line, str(exc)) from None
        last_t = t_us
    if finish:
        rules.finish()
    with rules.batch():  # the judge lines re-rule once, from the earliest round they name
        for line, at_us, ev in judge:
            try:
                if isinstance(ev, Facts | Penalty):
                    rules.check_round(ev.round)
                    opener = rules.opened_by(ev.round)  # a claim (Pig) comes before its judging
                    if opener is not None and press_lines.get(opener, 0) > line:
                        raise RulesError(f"round {ev.round} is opened by the press on line "
                                         f"{press_lines[opener]}, after this line; a judge line "
                                         f"comes after the claim it judges")
                rules.feed(ev, at_us)
            except RulesError as exc:
                raise ReplayError(line, str(exc)) from None
    return last_t
