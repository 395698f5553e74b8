"""The table's rhythm: when the referee may call the next round (PRODUCT.md, "The table's rhythm").

The referee follows the table; the table never chases the referee. This is a small state machine,
driven by the engine with explicit times (µs on the engine clock) and knowing no game:

    ready ──(every seat ready, or the judge starts)──▶ count-in ──▶ calling ──(cue)──▶ racing
      racing ──(race closed)──▶ awaiting (the current round asks the judge) ──▶ ruling
      ruling ──(the ruling has been said + pause)──▶ calling …         (free play: "playing")
    any running phase ──(pause)──▶ pausing (the race in hand finishes) ──▶ paused
    paused ──(a press, the judge)──▶ count-in;  the game over ──▶ over (said once, kept shown)

Presses: in `ready` a press marks its seat ready, in `paused` it resumes, in `count-in` it is
nobody's game press; in `over` it belongs to the last race until the next game is dealt (`dealt`:
the end has been said and the last race is closed), then it marks its seat ready for that game;
only from the end of the count-in on are presses fed to the rules, so a
ready press can never land in an early window. A table that stays quiet (`quiet_rounds` rounds in
a row without any press) pauses by itself instead of running rounds for nobody.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Phase(StrEnum):
    READY = "ready"
    COUNT_IN = "count-in"
    CALLING = "calling"  # the cadence is being said; the go-word is still to come
    RACING = "racing"
    AWAITING = "awaiting"  # the current round waits for the judge: the next round waits too
    RULING = "ruling"  # the ruling is being said, then the pause between rounds
    PLAYING = "playing"  # a game without calls (claims open its rounds): presses count
    PAUSING = "pausing"  # a pause was asked while a round was in hand: it finishes first
    PAUSED = "paused"
    OVER = "over"


class Decision(StrEnum):
    """What the engine must do after `tick`."""

    CALL = "call"  # start the next round now (say the cadence / the turn call)
    GO = "go"  # a game without calls begins (or goes on after a break) now
    PAUSED = "paused"  # the table has just paused (say so)
    AUTO_PAUSED = "auto-paused"  # … because nobody pressed for `quiet_rounds` rounds
    OVER = "over"  # the game has just ended (say it, once)
    DONE = "done"  # the round limit (a practice game) is reached


@dataclass(frozen=True)
class Pace:
    count_in_us: int = 1_500_000  # from "go on" (all ready, resume) to the first call
    pause_us: int = 4_000_000  # from the end of the spoken ruling to the next call
    quiet_rounds: int | None = None  # auto-pause after this many rounds without a press
    round_limit: int | None = None  # a practice game stops after this many rounds


@dataclass(frozen=True)
class View:
    """What the engine sees at `now`, for `tick`."""

    rounds: int  # rounds started so far
    race_open: bool
    current_awaits: bool  # the latest round waits for the judge
    over: bool  # the game is over and no question is left
    can_call: bool  # the game has a next round to call (False: claims open rounds)
    quiet_at: int | None  # when the voice is free (None: not known yet, ask again soon)
    earliest_call: int = 0  # a game's own pace (a turn every turn_ms), as a time
    deciding: bool | None = None  # an open race not yet ruled (None: as `race_open`); a
    # window that outlasts its ruling (a claim's) holds no pause


POLL_US = 20_000  # how soon to ask again when the end of speech is not known yet

RUNNING = (Phase.CALLING, Phase.RACING, Phase.AWAITING, Phase.RULING, Phase.PLAYING,
           Phase.PAUSING)


class Rhythm:
    def __init__(self, seats: Iterable[str], pace: Pace, *, ready: bool = True) -> None:
        self.seats = tuple(seats)
        self.pace = pace
        self.phase = Phase.READY if ready else Phase.RULING
        self.ready: set[str] = set()  # seats that pressed in `ready` (or in `over`: next game)
        self.start_at: int | None = None  # count-in: when play starts; ruling: the next call
        self.play_from_us = 0 if not ready else -1  # presses from here on are game presses
        # any press since the latest call; True before the first one: a table that starts
        # mid-game (a resumed one) has no quiet round behind it yet
        self.pressed = True
        self.quiet = 0  # rounds in a row without a press
        self.auto_paused = False
        self.dealt = False  # over: the next game's deal has been said (ready presses count)
        self._free_play = False
        self._after_pause = Phase.RULING

    # -- inputs -----------------------------------------------------------------------------

    def press(self, seat: str, t_us: int) -> str:
        """A seat button's press: "ready", "resume", "game" (feed it to the rules) or "ignore"."""
        self.pressed = True
        what = self.would(seat, t_us)
        if what == "ready":
            self.ready.add(seat)
        elif what == "resume":
            self.start(t_us)
        return what

    def would(self, seat: str, t_us: int) -> str:
        """What `press` would take a press of `seat` at `t_us` for; nothing changes."""
        if self.phase is Phase.OVER and not self.dealt:
            return "game"  # the last race's, or said before the end was: never "ready"
        if self.phase in (Phase.READY, Phase.OVER):
            return "ignore" if seat in self.ready else "ready"
        if self.phase is Phase.PAUSED:
            return "resume"
        if self.phase is Phase.COUNT_IN or self.play_from_us < 0 or t_us < self.play_from_us:
            return "ignore"  # a ready or resume press, however late it arrives
        return "game"

    def all_ready(self) -> bool:
        return set(self.seats) <= self.ready

    def start(self, t_us: int) -> bool:
        """The judge (or every seat) starts play from `ready` or `paused`: a count-in first."""
        if self.phase in (Phase.READY, Phase.PAUSED):
            self.phase, self.start_at = Phase.COUNT_IN, None
            self.ready.clear()
            self.quiet, self.auto_paused = 0, False
            return True
        return False

    def resume(self, t_us: int) -> bool:
        """Go on after a break: a pause not yet in effect is called off; a table paused goes
        through the count-in. Anything else (ready, playing, over) is left as it is."""
        if self.phase is Phase.PAUSING:
            self.phase = self._after_pause
            return True
        if self.phase is Phase.PAUSED:
            return self.start(t_us)
        return False

    def pause(self, t_us: int, *, in_hand: bool) -> bool:
        """Pause now, or (`in_hand`: a race or a question of the current round) once it is done."""
        if self.phase in (Phase.PAUSED, Phase.PAUSING, Phase.OVER, Phase.READY):
            return False
        if self.phase is Phase.COUNT_IN:
            self.phase = Phase.PAUSED
            return True
        self._after_pause = self.phase if self.phase is Phase.PLAYING else Phase.RULING
        self.phase = Phase.PAUSING if in_hand else Phase.PAUSED
        return True

    def called(self, t_us: int) -> None:
        """A round's call was started at `t_us` (its go-word comes later)."""
        if self.play_from_us < 0 or self.phase is Phase.COUNT_IN:
            self.play_from_us = t_us  # presses before this were ready / resume presses
        self.phase = Phase.CALLING
        self.start_at = None
        self.pressed = False

    def end(self) -> None:
        """The game ends (over, or ended by the judge): `over` until a person starts the next."""
        self.phase = Phase.OVER
        self.ready.clear()
        self.dealt = False

    # -- time --------------------------------------------------------------------------------

    def tick(self, now: int, v: View) -> Decision | None:
        """Advance to `now`; at most one decision per call (call again: `wake()` says when)."""
        if self.phase is Phase.OVER:
            return None
        if v.over:
            self.end()
            return Decision.OVER
        if self.phase is Phase.READY:
            return None
        if self.phase is Phase.COUNT_IN:
            if self.start_at is None:
                if v.quiet_at is None:
                    return None
                self.start_at = max(now, v.quiet_at) + self.pace.count_in_us
            if now < self.start_at:
                return None
            return self._go(now, v)
        if self.phase is Phase.PLAYING:
            limit = self.pace.round_limit
            if (limit is not None and v.rounds >= limit and not v.race_open
                    and v.quiet_at is not None and now >= v.quiet_at):
                self.end()
                return Decision.DONE
            return None
        if self.phase is Phase.PAUSED:
            return None
        in_hand = (v.race_open if v.deciding is None else v.deciding) or v.current_awaits
        if self.phase in (Phase.CALLING, Phase.RACING) and v.race_open:
            return None
        if self.phase is Phase.PAUSING:
            if in_hand or v.quiet_at is None or now < v.quiet_at:
                return None
            self.phase = Phase.PAUSED
            return Decision.PAUSED
        if v.current_awaits:
            self.phase = Phase.AWAITING
            return None
        if self.phase is not Phase.RULING:  # the race closed, or the judge answered
            self.phase, self.start_at = Phase.RULING, None
        if v.race_open:
            return None
        if not v.can_call and not self.pace.round_limit:
            self.phase = Phase.PLAYING  # a game without calls: its presses open the rounds
            return None
        if v.quiet_at is None:
            return None
        # from the end of the speech as it stands now, not as it stood when the round was ruled:
        # a correction said meanwhile (what changed, then the round's new ruling) moves it on
        self.start_at = max(v.quiet_at + self.pace.pause_us, v.earliest_call)
        if now < self.start_at:
            return None
        limit = self.pace.round_limit
        if limit is not None and v.rounds >= limit:
            self.end()
            return Decision.DONE
        if not v.can_call:
            return None
        self.quiet = 0 if self.pressed else self.quiet + 1
        if self.pace.quiet_rounds is not None and self.quiet >= self.pace.quiet_rounds:
            self.phase, self.auto_paused = Phase.PAUSED, True
            return Decision.AUTO_PAUSED
        return Decision.CALL

    def _go(self, now: int, v: View) -> Decision:
        if v.can_call:
            return Decision.CALL  # `called()` follows
        self.phase = Phase.PLAYING
        self.start_at = None
        if self.play_from_us < 0 or self.play_from_us < now:
            self.play_from_us = now
        return Decision.GO

    def wake(self, now: int) -> int | None:
        """The next time `tick` can decide something on its own (None: only an input can)."""
        if self.phase in (Phase.COUNT_IN, Phase.RULING, Phase.PAUSING):
            return self.start_at if self.start_at is not None else now + POLL_US
        return None

    # -- what the scoreboard shows ----------------------------------------------------------

    @property
    def holding(self) -> bool:
        """No round may start now (ready, count-in, paused, over)."""
        return self.phase in (Phase.READY, Phase.COUNT_IN, Phase.PAUSED, Phase.OVER)
