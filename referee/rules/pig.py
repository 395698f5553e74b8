"""Pig / Spoons / Tongue on the box.

The rules, in plain words (PRODUCT.md, "Pig / Spoons / Tongue"; the seed rule sheet):
- One set of four same-rank cards per seat (aces, twos, threes…); everyone passes a card to the
  left, optionally on a "Pass!" beat every `pass_beat_ms` (0: no beat).
- There are no cues. A press while no race is open is a claim of four of a kind (pig: a finger on
  the nose; spoons: grab a spoon; tongue: stick it out) and opens a round; rounds are numbered by
  claims. The race stays open `window_ms` from the claim; a seat's first press inside it belongs to
  that round, even after the round is ruled. The referee says nothing at a claim.
- When all but one active seat have pressed, the remaining seat loses a life, ruled `tie_us` after
  the last of those presses. If the remaining seat presses within that settle time, the last two
  are in a photo finish: under `tie_us` apart, it is too close to call and nobody loses.
- If the window runs out with two or more seats that never pressed, it is unclear:
  `stragglers = no-one` (nobody loses) or `all-lose` (each of them loses a life).
- The judge may reject a claim ({"claim": false}): the round is void and, with
  `false_claim = lose-life`, the claimer loses a life instead. {"void": true} voids a round
  outright (no rulings at all, e.g. a round cut in half by a power loss).
- `lives = 1`: the loser is eliminated; `lives = 3`: eliminated at the third life lost (P, I, G).
  After each elimination one set of four leaves the deck. Eliminated seats neither claim nor lose;
  their presses are ignored. Judge penalties add lives lost.
- When two active seats are left they are co-winners and the game is over (if an all-lose round
  leaves one, that one wins alone). Places: winners first, then the eliminated, the later out the
  better; seats out in the same round share a place.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import (
    Awaiting,
    Cue,
    Press,
    Reason,
    Ruling,
    Standings,
)
from referee.rules import race
from referee.rules.base import Phrase, RederivedRules, Shared, Status
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule, UnitWords


@dataclass(frozen=True)
class Variant:
    """What a claim looks like: the thing (for the scoreboard), the action as the table is told
    to do it, and as a ruling says it was (not) done."""

    thing: str
    act: str
    done: str


VARIANTS = {
    "pig": Variant("nose", "touch your nose", "touch the nose"),
    "spoons": Variant("spoon", "grab a spoon", "grab a spoon"),
    "tongue": Variant("tongue", "stick out your tongue", "stick out the tongue"),
}
LETTERS = "PIG"  # lives lost, as the letters of the game's name
RANKS = ("aces", "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines",
         "tens", "jacks", "queens", "kings")  # one set of four per seat, dealt in this order


class Why(Reason):
    """Pig's reasons; `{act}` is the variant's action, `{n}` how many never pressed."""

    FALSE_CLAIM = "false claim"
    NOT_IN_TIME = "did not {act} in time"
    UNCLEAR = "unclear: {n} did not {act}", "unclear"
    LAST = "last to {act}"


@dataclass
class _State:
    """The running totals of the fold over rounds."""

    lost: dict[str, int]  # lives lost (the score)
    out_round: dict[str, int]  # eliminated seat → the round it went out in
    over: bool = False
    winners: tuple[str, ...] = ()

    def copy(self) -> _State:
        return _State(dict(self.lost), dict(self.out_round), self.over, self.winners)


@dataclass
class Round:
    number: int
    claimer: str
    claim_us: int
    window_end_us: int  # claim + window: presses before it belong to this round
    active: tuple[str, ...]
    presses: dict[str, int]  # each active seat's first press in the window
    close_us: int  # when the race is decided (all but one pressed + tie, or the window's end)
    before: _State
    after: _State
    closed: bool = False
    outputs: list[Ruling | Awaiting] = field(default_factory=list)


class Pig(RederivedRules):
    NAME: ClassVar[str] = "pig"
    TITLE: ClassVar[str] = "Pig / Spoons / Tongue"
    SEATS: ClassVar[tuple[int, int]] = (3, 8)
    UNIT: ClassVar[str] = "lives"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("letter", "letters")
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} life", "{n} lives", loss="{count} lost",
                                               gain="{count} back")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "pass": ("Pass!",),  # the beat (not a cue)
        "deal_sets": ("Use the {ranks}: one set of four per player. Deal four cards to each "
                      "player.",),
        "variant_rule": ("Four of a kind? Quietly {act}.",),
        "lives": ("{seat} takes the letter {letter}.",),  # "the letter": espeak says "P." "pee"
        "eliminated": ("{seat} is out. Remove one set of four cards.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("pass",)
    # the other English it hands the voice and the pages: its ranks, variants, titles, units
    TEXTS: ClassVar[tuple[str, ...]] = (
        *RANKS, *(w for v in VARIANTS.values() for w in (v.thing, v.act, v.done)),
        *(v.title() for v in VARIANTS), "life lost", "lives lost")
    ROUNDS_FROM_CUES: ClassVar[bool] = False
    SILENT_RACE: ClassVar[bool] = True  # say nothing, light nothing, show nothing at a claim
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.choice("variant", "pig", tuple(VARIANTS), label="Variant",
                      help="what a claim looks like",
                      labels=tuple(f"{v.title()}: {VARIANTS[v].act}" for v in VARIANTS)),
        Option.number("window_ms", 15000, 1000, 600_000, unit="ms", label="Race window",
                      help="race window after a claim"),
        Option.choice("stragglers", "no-one", ("no-one", "all-lose"), label="Stragglers",
                      help="two or more never pressed: nobody loses, or all of them do",
                      labels=("Nobody loses", "Each of them loses a life")),
        Option.choice("false_claim", "lose-life", ("lose-life", "nothing"), label="False claim",
                      help="what a rejected claim costs the claimer",
                      labels=("The claimer loses a life", "Nothing")),
        Option.choice("lives", 1, (1, 3), label="Lives",
                      help="lives per seat (3: the letters P, I, G)",
                      labels=("1: out at the first loss", "3: the letters P, I, G")),
        Option.number("pass_beat_ms", 0, 0, 60_000, unit="ms", label="Pass beat",
                      help="a 'Pass!' beat every so often (0: off)"),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("claim", "flag", "Was the claim a real four of a kind?", "was that four of a kind?",
             "Was that four of a kind?", answers=("Real", "False"), asked=False),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)

    def __init__(self, seats: Any, options: Any = None) -> None:
        super().__init__(seats, options)
        self.rounds: list[Round] = []
        self.state = self._initial()

    def _initial(self) -> _State:
        return _State(dict.fromkeys(self.seats, 0), {})

    # -- what the game declares ---------------------------------------------------------------

    def schedule(self) -> Schedule:
        """No calls: claims open the rounds; an optional "Pass!" beat, which is not a cue."""
        return Schedule(pause_ms=int(self.options["pause_ms"]), silent=True,
                        beat_ms=int(self.options["pass_beat_ms"]), beat="pass")

    def refutable(self, number: int) -> Fact | None:
        """A claim stands unless the judge says it was no four of a kind."""
        return None if "claim" in self.facts_for(number) else self.FACTS[0]

    def racing(self, number: int) -> tuple[str, ...]:
        """The seats still in the game when round `number` was claimed."""
        return tuple(self.rounds[number - 1].active)

    def reason_words(self) -> dict[str, str]:
        return {"act": VARIANTS[self.options["variant"]].done}

    def title(self) -> str:
        """The variant played: "Pig", "Spoons" or "Tongue"."""
        return str(self.options["variant"]).title()

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        """What a claim looks like in this variant; with 3 lives, letters for lives lost
        (P-I-G); with 1, lives lost (the loser is out)."""
        variant = VARIANTS[self.options["variant"]]
        words = {**super().words(scores), "thing": variant.thing, "act": variant.act}
        if int(self.options["lives"]) == 1:
            return {**words, "unit": ["life lost", "lives lost"]}
        return {**words, "letters": {seat: "-".join(LETTERS[:min(n, len(LETTERS))])
                                     for seat, n in scores.items()}}

    # -- input --------------------------------------------------------------------------------

    def check_cue(self, cue: Cue) -> None:
        raise RulesError("pig has no cues: a claim is a press; remove the cue line")

    def on_cue(self, cue: Cue) -> None:
        """Never reached: `check_cue` refuses every cue."""

    def on_press(self, press: Press) -> None:
        self._keep(press)
        # re-derive from the round this press may belong to (or that precedes it); rounds
        # before a stale one are as they were, and the stale ones are re-derived anyway
        start = 1
        for rnd in self.rounds:
            if rnd.claim_us <= press.t_us:
                start = rnd.number
        self.refold(start)

    # -- the fold -----------------------------------------------------------------------------

    def _fold(self, start: int) -> None:
        """Re-derive rounds from round `start` on: claims, windows, rulings, eliminations."""
        kept = self.rounds[:start - 1]
        state = kept[-1].after.copy() if kept else self._initial()
        i = bisect_left(self.presses, (kept[-1].window_end_us,)) if kept else 0
        window = self.options["window_ms"] * 1000
        while i < len(self.presses) and not state.over:
            t, _, seat = self.presses[i]
            if seat in state.out_round:
                i += 1
                continue
            active = tuple(s for s in self.seats if s not in state.out_round)
            end = t + window if self.end_us is None else min(t + window, self.end_us)
            presses: dict[str, int] = {}
            while i < len(self.presses) and self.presses[i][0] < end:
                pt, _, ps = self.presses[i]
                if ps in active and ps not in presses:
                    presses[ps] = pt
                i += 1
            rnd = Round(len(kept) + 1, seat, t, end, active, presses,
                        _close_at(presses, len(active), end, self.options["tie_us"]),
                        state.copy(), state)
            facts = self.facts_for(rnd.number)
            rnd.closed = (self.finished or rnd.close_us <= self.now_us
                          or facts.get("claim") is False or bool(facts.get("void")))
            if rnd.closed:
                rnd.outputs = self._rule(rnd)
                state = self._apply(rnd, state.copy())
            rnd.after = state
            kept.append(rnd)
        self.rounds = kept
        self.state = state

    def _rule(self, rnd: Round) -> list[Ruling | Awaiting]:
        n = rnd.number
        facts = self.facts_for(n)
        if facts.get("void"):
            return []
        act = tuple(self.reason_words().items())
        out: list[Ruling | Awaiting] = []
        if facts.get("claim") is False:
            lose = 1 if self.options["false_claim"] == "lose-life" else 0
            out.append(Ruling(n, rnd.claimer, lose, Why.FALSE_CLAIM))
        else:
            counted = {s: t for s, t in rnd.presses.items() if t < rnd.close_us}
            missing = [s for s in rnd.active if s not in counted]
            if len(missing) >= 2:
                if self.options["stragglers"] == "all-lose":
                    out += [Ruling(n, s, 1, Why.NOT_IN_TIME, None, act) for s in missing]
                else:
                    out.append(Ruling(n, None, 0, Why.UNCLEAR, None,
                                      (("n", str(len(missing))), *act)))
            else:
                result = race.last(counted, rnd.active, self.options["tie_us"])
                if result.too_close:
                    out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, result.margin_us))
                elif result.seat is not None:
                    # the loser had not pressed when the race was decided: no margin to tell
                    out.append(Ruling(n, result.seat, 1, Why.LAST, None, act))
        out += self.penalty_rulings(n)
        return out

    def _apply(self, rnd: Round, state: _State) -> _State:
        for o in rnd.outputs:
            if isinstance(o, Ruling) and o.seat is not None:
                state.lost[o.seat] += o.delta
        gone = [s for s in rnd.active if state.lost[s] >= self.options["lives"]]
        for s in gone:
            state.out_round[s] = rnd.number
        left = tuple(s for s in self.seats if s not in state.out_round)
        if len(left) <= 2:
            state.over, state.winners = True, left or tuple(gone)
        return state

    # -- reading the table --------------------------------------------------------------------

    def table_standings(self) -> Standings:
        st = self.state
        out = {s: r for s, r in st.out_round.items() if s not in st.winners}
        later = sorted(set(out.values()), reverse=True)
        key = {}
        for s in self.seats:
            if s in out:
                key[s] = 1000 + later.index(out[s])  # out later: better place
            else:
                key[s] = 0 if st.over else st.lost[s]
        rows = self.rows(st.lost, key, out)
        return Standings(st.over, rows, st.winners if st.over else ())

    def table_status(self) -> Status:
        last = self.rounds[-1] if self.rounds else None
        race_open = last is not None and not self.finished and self.now_us < last.window_end_us
        pending = [r.close_us for r in self.rounds if not r.closed]
        if race_open and last is not None:
            pending.append(last.window_end_us)
        return Status(
            round=len(self.rounds),
            race_open=race_open,
            closes_at_us=min(pending, default=None),
            awaiting=None,
            over=self.state.over,
        )

    def next_call(self) -> Call | None:
        return None  # no cadence: claims open the rounds; the pass beat is not a cue

    def opened_by(self, number: int) -> tuple[int, str] | None:
        if number > len(self.rounds):  # a claim once the game was over: ignored
            return self._ignored_claims()[number - len(self.rounds) - 1]
        rnd = self.rounds[number - 1]
        return rnd.claim_us, rnd.claimer

    def rounds_named(self) -> int:
        return len(self.rounds) + len(self._ignored_claims())

    def _ignored_claims(self) -> list[tuple[int, str]]:
        """The claims made once the game was over (or after its end line): each press outside
        the window of the claim before it, by a seat still in. They open no round, but a judge
        line may name them (well formed, it changes nothing)."""
        if not (self.state.over or self.end_us is not None):
            return []
        until = self.rounds[-1].window_end_us if self.rounds else 0
        late = [(t, seat) for t, _, seat in self.presses[bisect_left(self.presses, (until,)):]]
        late += sorted((p.t_us, p.seat) for p in self.after_end)
        window = self.options["window_ms"] * 1000
        claims: list[tuple[int, str]] = []
        for t, seat in late:
            if t >= until and seat not in self.state.out_round:
                claims.append((t, seat))
                until = t + window
        return claims

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's time from the claim to its press in round `number`, µs."""
        rnd = self.rounds[number - 1]
        return {s: t - rnd.claim_us for s, t in rnd.presses.items()}

    def late(self, number: int) -> dict[str, int]:
        """Presses in round `number`'s window after it was ruled (each seat's first, µs after the
        claim): they belong to it and change nothing, and are shown as late, never lost."""
        rnd = self.rounds[number - 1]
        if not rnd.closed:
            return {}
        late: dict[str, int] = {}
        i = bisect_left(self.presses, (rnd.close_us,))
        while i < len(self.presses) and self.presses[i][0] < rnd.window_end_us:
            t, _, seat = self.presses[i]
            late.setdefault(seat, t - rnd.claim_us)
            i += 1
        return late

    def announcements(self, number: int) -> list[Phrase]:
        """What to say before round `number` can start: dealing before round 1; after round
        `number - 1` is ruled, lives lost (P, I, G), eliminations with the set to remove, and the
        co-winners. Nothing while that round is unruled: a claim is never announced."""
        variant = self.options["variant"]
        if number <= 1:
            n = len(self.seats)
            return [
                ("deal_sets", {"sets": n, "ranks": list(RANKS[:n])}),
                ("variant_rule", {"variant": variant, "act": VARIANTS[variant].act}),
            ]
        if number - 1 > len(self.rounds) or not self.rounds[number - 2].closed:
            return []
        rnd = self.rounds[number - 2]
        before, after = rnd.before, rnd.after
        said: list[Phrase] = []
        sets = len(rnd.active)
        for s in rnd.active:
            if s in after.out_round:
                sets -= 1
                said.append(("eliminated", {"seat": s, "rank_index": sets}))
            elif after.lost[s] > before.lost[s] and self.options["lives"] > 1:
                said.append(_letter(s, after.lost[s], self.options["lives"]))
        return said

    def said_ahead(self) -> list[Phrase]:
        """Each seat's letters and its elimination, ready before they are said."""
        if self.options["lives"] == 1:
            return [("eliminated", {"seat": s}) for s in self.seats]
        return [*(_letter(s, lost, self.options["lives"]) for s in self.seats
                  for lost in range(1, self.options["lives"])),
                *(("eliminated", {"seat": s}) for s in self.seats)]


def _letter(seat: str, lost: int, lives: int) -> Phrase:
    """A seat's lives lost, said as the letter of P-I-G it has reached."""
    letter = LETTERS[max(0, min(lost, len(LETTERS)) - 1)]
    return ("lives", {"seat": seat, "lost": lost, "left": lives - lost, "letter": letter})


def _close_at(presses: dict[str, int], active: int, window_end_us: int, tie_us: int) -> int:
    """When the race is decided: `tie_us` after all but one have pressed (at least 1 µs, so a
    press at the very same microsecond is a photo finish), or the window's end."""
    times = sorted(presses.values())
    if len(times) >= active - 1:
        return min(times[active - 2] + race.clear_us(tie_us), window_end_us)
    return window_end_us

