"""A race from a game file: each round is called by a cadence, or started by the judge's "next".

The rules, in plain words (PRODUCT.md, "More slap games"; the quiz buzzer is this base's shipped
example):
- A round is one call (`round.call`, its words `tempo_ms` apart; the last word is the go-word, the
  cue). `round.start = "cadence"`: the referee calls rounds by itself; `"judge"`: each round waits
  for the judge ("Next question" on the panel, or the keypad's YES), then the call follows.
- A seat's first press from the go-word to the window's end (`window_ms`, cut short by the next
  round's early window) races. A press in the `early_ms` before the go-word is early:
  `round.early = "lock-out"`: the seat is locked out of the round (said, no penalty);
  `"wrong"`: the first early presser earns `press.first_wrong`; `"ignore"`: nothing.
- `judge.mode = "flag"`: whether the round was right is a flag: all racing seats pressed ⇒ yes, none
  ⇒ no, otherwise the judge is asked. Right: the first presser earns `press.first_right`, the last
  (or the one seat that never pressed) `press.last_right`; not right: the first presser earns
  `press.first_wrong`. Too close to call between the two deciding presses: nobody earns.
- `judge.mode = "answer"`: the first presser is named (its LED lit) and the judge marks the answer
  right (`{"<fact>": "<seat>"}`: it earns `press.first_right`) or wrong (`{"wrong": [...]}`: it
  earns `press.first_wrong`); after a wrong answer the next fastest presser not locked out is
  named. Too close to call between the first two: the judge picks (marks either). `{"<fact>":
  null}`: nobody answered right; the round is settled. A round nobody pressed in ends with its
  window.
- Scores start at 0 and never go below it; the game ends after `end.rounds` rounds or by the
  judge; the file says whether more or fewer wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.events import Awaiting, Cue, Event, Facts, Press, Ruling
from referee.rules import race
from referee.rules.base import Phrase, RederivedRules, Shared
from referee.rules.declare import Call, Fact, RulesError, Schedule
from referee.rules.filed import FiledGame

_UNSET = object()


@dataclass
class RaceRound:
    number: int
    cue_us: int
    window_end_us: int
    early: dict[str, int]  # each seat's first press in the early window
    order: dict[str, int]  # each racing seat's first press from the go-word
    before: dict[str, int]  # the scores before the round
    close_us: int = 0
    closed: bool = False
    named: str | None = None  # answer: the seat the judge is asked about
    outputs: list[Ruling | Awaiting] = field(default_factory=list)


class FiledRace(FiledGame, RederivedRules):
    """The base of a game file's called or judge-started race (class attributes from the file)."""

    rounds: list[RaceRound]

    def __init__(self, seats: Any, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seats, options)
        self.cues: list[int] = []
        self.rounds = []
        self.points: dict[str, int] = dict.fromkeys(self.seats, 0)
        self.over = False

    # -- what the game declares ---------------------------------------------------------------

    def limit(self) -> int:
        rounds = self.DECL.end.rounds
        return int(self.options[rounds]) if isinstance(rounds, str) else int(rounds or 0)

    def planned_rounds(self) -> int | None:
        return self.limit() or None

    def schedule(self) -> Schedule:
        quiet = self.DECL.quiet
        judge = self.DECL.round.start == "judge"
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        quiet_rounds=None if quiet == "none" or judge else quiet,
                        judge_starts=judge, next_label=self.DECL.round.next)

    def early_us(self) -> int:
        return int(self.options["early_ms"]) * 1000 if self.DECL.round.early != "ignore" else 0

    def announcements(self, number: int) -> list[Phrase]:
        return [("intro", dict(self.options))] if number == 1 and self.DECL.intro else []

    # -- input ---------------------------------------------------------------------------------

    def check(self, event: Event) -> None:
        super().check(event)
        if isinstance(event, Facts) and self.DECL.judge.mode == "answer":
            right = event.values.get(self.DECL.judge.fact, _UNSET)
            named = [] if right is _UNSET or right is None else [right]
            for seat in [*named, *event.values.get("wrong", [])]:
                if seat not in self.seats:
                    raise RulesError(f"{seat!r} is not a seat at this table "
                                     f"({', '.join(self.seats)})")

    def check_cue(self, cue: Cue) -> None:
        if self.cues and cue.t_us < self.cues[-1] and len(self.cues) < self.limit():
            raise RulesError(f"cue at {cue.t_us} comes before the previous cue")

    def on_cue(self, cue: Cue) -> None:
        if self.over or len(self.cues) >= self.limit():
            return  # cues after the game is over are ignored
        self.cues.append(cue.t_us)
        self.refold(max(1, len(self.cues) - 1))  # the previous window ends at this round's

    def on_press(self, press: Press) -> None:
        self._keep(press)
        early = self.early_us()
        number = sum(1 for t in self.cues if t - early <= press.t_us)
        if number:
            self.refold(number)

    # -- the fold ------------------------------------------------------------------------------

    def _fold(self, start: int) -> None:
        kept = self.rounds[:start - 1]
        scores = dict(self.rounds[start - 1].before) if start - 1 < len(self.rounds) else (
            dict(self.points) if kept else dict.fromkeys(self.seats, 0))
        early, window = self.early_us(), int(self.options["window_ms"]) * 1000
        for i in range(start - 1, len(self.cues)):
            cue = self.cues[i]
            end = cue + window
            if i + 1 < len(self.cues):
                end = min(end, self.cues[i + 1] - early)
            ahead = self._firsts(cue - early, cue) if early else {}
            locked = ahead if self.DECL.round.early == "lock-out" else {}
            order = {s: t for s, t in self._firsts(cue, end).items() if s not in locked}
            rnd = RaceRound(i + 1, cue, end, ahead, order, dict(scores))
            if self.DECL.judge.mode == "answer":
                self._answer(rnd, scores)
            else:
                self._flag(rnd, scores)
            kept.append(rnd)
        self.rounds, self.points = kept, scores
        limit = self.limit()
        self.over = (bool(limit) and len(kept) >= limit and kept[-1].closed
                     and not any(isinstance(o, Awaiting) for r in kept for o in r.outputs))

    def _flag(self, rnd: RaceRound, scores: dict[str, int]) -> None:
        """A flag round: ruled once its race closes (everyone pressed and settled, or the window
        ran out)."""
        racing = self.racing_seats(rnd)
        tie = int(self.options["tie_us"])
        if rnd.order and len(rnd.order) == len(racing):
            rnd.close_us = min(max(rnd.order.values()) + race.clear_us(tie), rnd.window_end_us)
        else:
            rnd.close_us = rnd.window_end_us
        rnd.closed = self.finished or rnd.close_us <= self.now_us
        if not rnd.closed:
            return
        n, name = rnd.number, self.DECL.judge.fact
        facts = self.facts_for(n)
        out: list[Ruling | Awaiting] = []
        if facts.get("void"):
            rnd.outputs = out
            return
        self._early(out, rnd, scores)
        right = facts.get(name, self._consensus(rnd.order, racing))
        if right is None:
            out.append(Awaiting(n, (name,)))
        elif right:
            self._earn(out, scores, n, "first_right", race.first(rnd.order, tie))
            if self.amount("last_right")[0] != "nothing":
                self._earn(out, scores, n, "last_right",
                           race.last(rnd.order, racing, tie))
        elif rnd.order:
            self._earn(out, scores, n, "first_wrong", race.first(rnd.order, tie))
        rnd.outputs = [*out, *self._penalties(n, scores)]

    def _answer(self, rnd: RaceRound, scores: dict[str, int]) -> None:
        """An answer round: the fastest presser is named as soon as no later press can beat it,
        the judge marks it right or wrong, and after a wrong answer the next is named."""
        n, name = rnd.number, self.DECL.judge.fact
        facts = self.facts_for(n)
        settle = race.clear_us(int(self.options["tie_us"]))
        window_over = self.finished or rnd.window_end_us <= self.now_us
        out: list[Ruling | Awaiting] = []
        if facts.get("void"):
            rnd.close_us, rnd.closed = rnd.window_end_us, window_over
            return
        self._early(out, rnd, scores)
        ordered = sorted(rnd.order.items(), key=lambda kv: kv[1])
        tie = len(ordered) > 1 and ordered[1][1] - ordered[0][1] < settle
        if tie:  # too close between the first two: said, and the judge picks
            out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, ordered[1][1] - ordered[0][1]))
        wrong = [s for s, _ in ordered if s in facts.get("wrong", [])]
        for seat in wrong:
            self._earn(out, scores, n, "first_wrong", race.Outcome(seat, None))
        right = facts.get(name, _UNSET)
        settled = right is not _UNSET
        if isinstance(right, str):
            self._earn(out, scores, n, "first_right", race.Outcome(right, None))
        rnd.close_us = rnd.window_end_us
        left = [(s, t) for s, t in ordered if s not in wrong]
        if not settled and left:
            seat, t = left[0]
            if not window_over and self.now_us < t + settle:
                rnd.close_us = t + settle  # a later press may yet tie it
            elif tie and not wrong:
                out.append(Awaiting(n, (name,)))  # the judge picks
            else:
                rnd.named = seat
                out.append(Ruling(n, seat, 0, self.why("named_next" if wrong else "named")))
                out.append(Awaiting(n, (name,)))
        rnd.closed = settled or window_over
        rulings = [o for o in out if isinstance(o, Ruling)]
        rnd.outputs = [*rulings, *self._penalties(n, scores),
                       *(o for o in out if isinstance(o, Awaiting))]

    def _news(self, rnd: Any) -> object:
        """Its outputs, and once a seat is named, who else has pressed (the pages show each
        seat's reaction while the named seat answers)."""
        if not rnd.outputs:
            return ()
        return tuple(rnd.outputs), tuple(rnd.order.items())

    def racing_seats(self, rnd: RaceRound) -> tuple[str, ...]:
        locked = rnd.early if self.DECL.round.early == "lock-out" else {}
        return tuple(s for s in self.seats if s not in locked)

    def _consensus(self, order: Mapping[str, int], racing: tuple[str, ...]) -> bool | None:
        pressed = sum(1 for s in racing if s in order)
        if pressed == 0:
            return False
        if pressed == len(racing) and self.DECL.judge.consensus == "all-or-none":
            return True
        return None

    def _early(self, out: list[Ruling | Awaiting], rnd: RaceRound,
               scores: dict[str, int]) -> None:
        mode = self.DECL.round.early
        if mode == "lock-out":
            out.extend(Ruling(rnd.number, s, 0, self.why("early")) for s in
                       sorted(rnd.early, key=lambda s: rnd.early[s]))
        elif mode == "wrong" and rnd.early:
            first = race.first(rnd.early, int(self.options["tie_us"]))
            self._earn(out, scores, rnd.number, "first_wrong", first, why="early")

    def _earn(self, out: list[Ruling | Awaiting], scores: dict[str, int], n: int, which: str,
              won: race.Outcome, why: str | None = None) -> None:
        kind, count = self.amount(which)
        if kind == "nothing" or (won.seat is None and not won.too_close):
            return
        if won.too_close or won.seat is None:
            out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, won.margin_us))
            return
        seat = won.seat
        delta = count if kind == "gain" else -min(count, scores[seat])  # never below zero
        scores[seat] += delta
        out.append(Ruling(n, seat, delta, self.why(why or which), won.margin_us))

    def _penalties(self, n: int, scores: dict[str, int]) -> list[Ruling]:
        """The judge's penalties, in the game's direction: points lost where more wins (never
        below zero), added where fewer wins."""
        out: list[Ruling] = []
        for p in self.penalties_for(n):
            delta = -min(p.count, scores[p.seat]) if self.MORE_WINS else p.count
            scores[p.seat] += delta
            out.append(Ruling(n, p.seat, delta, Shared.PENALTY, None, (("said", p.reason),)))
        return out

    # -- reading the table ---------------------------------------------------------------------

    def scores(self) -> Mapping[str, int]:
        return self.points

    def next_call(self) -> Call | None:
        st = self.status()
        if st.over or st.race_open or st.awaiting or (self.limit() and
                                                      len(self.cues) >= self.limit()):
            return None
        return Call("call")

    def reactions(self, number: int) -> dict[str, int]:
        rnd = self.rounds[number - 1]
        return {s: t - rnd.cue_us for s, t in rnd.order.items()}

    def early(self, number: int) -> dict[str, int]:
        rnd = self.rounds[number - 1]
        return {s: rnd.cue_us - t for s, t in rnd.early.items()}

    def racing(self, number: int) -> tuple[str, ...]:
        return self.racing_seats(self.rounds[number - 1])

    def lit(self, number: int) -> str | None:
        """The seat named to answer in round `number` (its LED stays lit while it answers)."""
        if not 1 <= number <= len(self.rounds):
            return None
        rnd = self.rounds[number - 1]
        waiting = any(isinstance(o, Awaiting) for o in rnd.outputs)
        return rnd.named if waiting else None

    def in_line(self, number: int, seat: str) -> str:
        """A buzz after the first was named waits its turn: named if the answers before it are
        wrong (the terminal said "already ruled: it changes nothing")."""
        if self.DECL.judge.mode != "answer" or not 1 <= number <= len(self.rounds):
            return ""
        rnd = self.rounds[number - 1]
        if seat not in rnd.order or self.lit(number) in (None, seat):
            return ""
        ahead = sorted(t for s, t in rnd.order.items() if t < rnd.order[seat])
        return (f"in line to answer in round {number}, {len(ahead) + 1}{_th(len(ahead) + 1)} to "
                f"buzz: named if the answers before it are wrong")

    def panel_facts(self) -> tuple[Fact, ...]:
        """The panel marks answers with the named seat's right and wrong (or any seat right):
        the list of wrong answers is what those buttons send, never typed in."""
        return tuple(f for f in self.facts() if f.name != "wrong")

    def judge_marks(self, number: int) -> dict[str, dict[str, Any]]:
        """What the judge's right and wrong give round `number`'s named seat (the panel's two
        buttons, the keypad's YES and NO); empty when nobody is named."""
        named = self.lit(number)
        if named is None or self.DECL.judge.mode != "answer":
            return {}
        wrong = list(self.facts_for(number).get("wrong", []))
        return {"yes": {self.DECL.judge.fact: named}, "no": {"wrong": [*wrong, named]}}

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        number = len(self.rounds)
        return {**super().words(scores), "named": self.lit(number),
                "marks": self.judge_marks(number)}


def _th(n: int) -> str:
    """The English ordinal suffix of `n` ("2nd", "3rd", "11th")."""
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
