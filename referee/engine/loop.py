"""The one stateful loop: one thread, one queue.

GPIO callbacks, the keyboard, HTTP handlers and timers only `submit()` items; the engine thread takes
them in order, appends each event to the log *before* acting on it, feeds the pure rules, and hands
what changed to the voice, the LEDs and the scoreboard listeners. It sleeps until the next thing
that can happen (a race window closing, the next round's cadence) — no polling.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from referee.clock import now_us
from referee.engine import commands, presenter
from referee.engine.commands import Request
from referee.engine.ports import Announcer, Leds, LogFull, TableLog
from referee.engine.rhythm import POLL_US, Decision, Pace, Phase, Rhythm, View
from referee.events import (
    Awaiting,
    ButtonHeld,
    ButtonReleased,
    ButtonStuck,
    Cue,
    End,
    Event,
    Facts,
    GameStart,
    JudgeKey,
    Penalty,
    Press,
    Ruling,
    Undo,
)
from referee.rules.base import Rules
from referee.rules.declare import VOID, Call, Fact, RulesError
from referee.rules.lingo import words_of
from referee.rules.registry import new_rules
from referee.rules.replay import drive
from referee.voice.phrases import (
    Phrasebook,
    correction_changes,
    standings_text,
)
from referee.voice.phrases import text as phrase_text
from referee.voice.phrases import words as phrase_words

log = logging.getLogger(__name__)

PRACTICE_ROUNDS = 3  # a practice game: a few rounds, ruled and said, kept out of history

CHANGED = object()  # a command's handler changed the table (the pages get the new state)


# What the engine's queue carries: events and signals from the box, the judge and the pages.
Item = (Press | Facts | Penalty | Undo | JudgeKey | ButtonHeld | ButtonStuck | ButtonReleased
        | Request)


def phrasebook(rules: Rules | type[Rules], language: str = "en") -> Phrasebook:
    """A game's own words in the table's language, as the voice takes them: its phrases, its
    unit, its direction, its other texts (from the game's file beside its rules)."""
    said = words_of(type(rules) if isinstance(rules, Rules) else rules, language)
    return Phrasebook(said.phrases, said.unit, rules.MORE_WINS, rules.CALLS, language,
                      said.texts, said.gender, said.zero)


class Engine:
    def __init__(
        self,
        rules: Rules,
        store: TableLog,
        game_id: int,
        announcer: Announcer,
        *,
        clock: Callable[[], int] = now_us,
        leds: Leds | None = None,
        auto: bool = True,
        offset_us: int = 0,
        practice: bool = False,
        ready: bool = True,
        count_in_ms: int = 1500,
        cue_light: bool = True,
        delivery_us: int = 0,
        next_start: GameStart | None = None,
        language: str = "en",
    ) -> None:
        self.store = store
        self.language = language  # the table's: the voice's phrases and the pages' words
        self.announcer = announcer
        self.clock = clock
        self.leds = leds
        self.auto = auto  # start rounds on its own
        self.offset_us = offset_us  # keeps a resumed game's clock after the logged times
        self.count_in_us = count_in_ms * 1000
        self.cue_light = cue_light and leds is not None
        # How late a press may reach the queue after its own edge time (the pin library's
        # delivery bound; 0 for mock pins). The rules close a race at its own close time, but
        # only once the clock is `delivery_us` past it, when every press before it is in: a
        # ruling, once said, is never changed by a press that was still on its way.
        self.delivery_us = delivery_us
        self.queue: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.stuck: set[tuple[str, str]] = set()
        self.last_said = ""
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._stuck_check_us = 0
        self.presses_not_played = 0  # ready and resume presses, presses in a count-in
        self.lit_seat: str | None = None  # the seat the game named (to answer): its LED is lit
        # the game played after this one: the same again, or (after practice) the real game with
        # the options chosen for it: a practice game's own small deck never carries over
        self.next_start = next_start or GameStart(rules.NAME, rules.seats, dict(rules.options),
                                                  declared=rules.DECLARATION)
        # the keypad's YES with nothing asked: a device waiting to pair is approved first (the
        # table's pairing port; True when the YES was taken for pairing)
        self.pairing_yes: Callable[[], bool] | None = None
        # called by the engine thread at each turn of its loop (at least every 0.5 s): the
        # table's proof of life for systemd's watchdog
        self.alive: Callable[[], None] | None = None
        self._begin(rules, game_id, practice=practice, ready=ready)

    def _begin(self, rules: Rules, game_id: int, *, practice: bool, ready: bool) -> None:
        """Everything that belongs to one game (a practice game hands over to the real one)."""
        self.rules = rules
        self.game_id = game_id
        self.practice = practice
        self.book = phrasebook(rules, self.language)  # the game's words, for voice and pages
        self.announcer.learn(self.book)
        pace = rules.schedule()
        self.rhythm = Rhythm(rules.seats, Pace(
            count_in_us=self.count_in_us,
            pause_us=pace.pause_ms * 1000,
            quiet_rounds=pace.quiet_rounds if self.auto else None,
            round_limit=PRACTICE_ROUNDS if practice else None), ready=ready and self.auto)
        self.ended = False  # an end line written (the judge's End, a practice over): no more
        # cues or presses are fed; the judge may still correct the rounds before it
        self.final: dict[str, Any] | None = None  # the final standings line, once over
        self.cue_us: int | None = None  # the coming cue's time, until it has passed
        self.last_cue_us: int | None = None
        self.cue_word = ""
        self.calling = ""  # the words of the latest call, for the pages
        self.announced: dict[int, list[Ruling | Awaiting]] = {}
        # rounds whose change is said once the call and the race are over (True: the judge's)
        self.held: dict[int, bool] = {}
        self.prefaced: set[int] = set()  # rounds whose "before" announcements were said
        self.correcting = False  # the latest changes came from the judge (a correction)
        self.next_pass_us: int | None = None
        self.ruled_at: dict[int, int] = {}  # round → engine time its ruling was published
        self.spoken = 0  # phrases said so far (a round that said nothing keeps the turn pace)
        self._spoken_at_call = 0
        self.shown_phase = ""  # the phase of the latest state sent to the pages
        self.calling_seat: str | None = None  # the seat its call named
        self.storage_full = ""  # the one line said when the log could not grow; "" while it can
        self.full_kind: type[LogFull] = LogFull  # and the store's kind of failure, to refuse with

    @property
    def paused(self) -> bool:
        return self.rhythm.phase in (Phase.PAUSED, Phase.PAUSING)

    # -- any thread ---------------------------------------------------------------------------

    def submit(self, item: Item) -> None:
        self.queue.put_nowait(item)

    def command(self, cmd: commands.EngineCommand | str, timeout: float = 5.0,
                **args: Any) -> Any:
        """Run a command (typed, or by its name with its fields) on the engine thread and wait
        for its answer (from HTTP/CLI threads)."""
        typed = commands.parse(cmd, args) if isinstance(cmd, str) else cmd
        reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.submit(Request(typed, reply))
        result = reply.get(timeout=timeout)
        if isinstance(result, Exception):
            raise result
        return result

    def subscribe(self, listener: Callable[[str, dict[str, Any]], None]) -> None:
        self.listeners.append(listener)

    def start(self) -> None:
        # CPython hands the GIL over every 5 ms by default: a thread busy elsewhere (the web
        # server, a render) could hold a waiting ruling that long. Half a millisecond keeps the
        # deciding press → ruling tail short at a negligible cost.
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.0005))
        # every phrase of this table, what the game says before its first round, its questions
        first = self.rules.announcements(1)  # said before the first call: ready before it
        said = [*first, *(self._question(combo) for combo in self.rules.questions()),
                *self.rules.said_ahead()]
        self.announcer.warm_table(list(self.rules.seats), said, reasons=self.rules.reason_texts(),
                                  first=first)
        self._thread = threading.Thread(target=self._run, name="referee-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.submit(Request(commands.Stop()))
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- the engine thread --------------------------------------------------------------------

    def now(self) -> int:
        return self.clock() + self.offset_us

    def _run(self) -> None:
        self.open()
        while not self._stop.is_set():
            if self.alive is not None:
                self.alive()
            wake = self.next_wake()
            timeout = None if wake is None else max(0.0, (wake - self.now()) / 1e6)
            try:
                item = self.queue.get(timeout=min(timeout, 0.5) if timeout is not None else 0.5)
            except queue.Empty:
                item = None
            self.run_items(item)

    # The loop is open(), then run_items() at each wake-up (next_wake()); tests/sim.py calls them
    # on a simulated clock, without the thread, to play a game one wake-up at a time.

    def run_items(self, item: Any) -> None:
        """Handle `item`, then the loop's one turn (`turn`)."""
        try:
            if item is not None:
                self._handle(item)
            self.turn()
        except LogFull:
            pass  # said once, when it first happened (`_full`); the table is paused
        except Exception:  # a bug must not stop the table; it is logged with its traceback
            log.exception("engine error")

    def turn(self) -> None:
        """Take everything queued so far, then let time act (`step`). The clock is read first, so
        every press queued before that instant is in the rules when they are told the time has
        come."""
        now = self.now()
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            self._handle(item)
        self.step(now)

    def open(self) -> None:
        """The game's first words: the deal and the Ready step (a resumed game: its state)."""
        self._publish("state", self.snapshot())
        if self.rhythm.phase is Phase.READY:
            self._say_ready()
        self.step()

    def _say_ready(self) -> None:
        self._preface(1)
        self.say("ready", {})
        if self.leds is not None:
            self.leds.all_leds(False)
        self._publish("state", self.snapshot())

    def next_wake(self) -> int | None:
        """The next instant something can happen without an input (a past one: at once)."""
        now = self.now()
        closes = self.rules.status().closes_at_us  # (none once ended: the end closed them)
        times = [None if closes is None else closes + self.delivery_us, self.cue_us,
                 self.next_pass_us]
        if self.auto:
            times.append(self.rhythm.wake(now))
            if self.rhythm.phase is Phase.OVER and not self.rhythm.dealt:
                quiet = self.announcer.quiet_at()  # the end said: the next game's deal
                if quiet is None:
                    times.append(now + POLL_US)
                elif quiet + self.offset_us > now:
                    times.append(quiet + self.offset_us)
                elif self.ended or not self.rules.status().race_open:
                    times.append(now)  # (else the last race's close wakes it)
        if self.leds is not None:
            at = self.leds.next_hold_us()
            times.append(None if at is None else at + self.offset_us)
        return min((t for t in times if t is not None), default=None)

    def _handle(self, item: Item) -> None:
        if isinstance(item, Press):
            if (item.seat, item.button) in self.stuck:
                return
            self._press(Press(item.t_us + self.offset_us, item.seat, item.button))
        elif isinstance(item, Facts | Penalty | Undo):
            self.feed(item)
        elif isinstance(item, JudgeKey):
            self._judge_key(item.key)
        elif isinstance(item, Request):
            try:
                result = self._command(item.command)
            except Exception as exc:  # answered to the caller, who shows it as one line
                result = exc
            if item.reply is not None:
                item.reply.put(result)
        elif isinstance(item, ButtonHeld):
            if item.button == "slap" and self._pause():
                self._publish("state", self.snapshot())
        elif isinstance(item, ButtonStuck):
            self.stuck.add((item.seat, item.button))
            self.say("stuck", {"seat": item.seat, "button": item.button})
            self._publish("stuck", {"seat": item.seat, "button": item.button})
        elif isinstance(item, ButtonReleased):
            self.stuck.discard((item.seat, item.button))
            self._publish("state", self.snapshot())

    def _press(self, press: Press) -> None:
        """A seat's press: a ready mark, a resume, or a game press (the rhythm says which)."""
        if not self.auto or self.storage_full:
            self.feed(press)  # refused (LogFull) while the log cannot grow
            return
        what = self.rhythm.press(press.seat, press.t_us)
        if what == "game":
            number = self.rules.round_count()
            ruled = number in self.announced  # only a ruled round's window takes a late press
            late = self.rules.late(number) if ruled else {}
            self.feed(press)
            if ruled and self.rules.late(number) != late:  # shown as late, never lost
                self._publish("state", self.snapshot())
            return
        self.presses_not_played += 1
        if what == "ready":
            if self.leds is not None:
                self.leds.led(press.seat, True)
            if self.rhythm.all_ready():
                if self.rhythm.phase is Phase.OVER:
                    self.next_game()
                    return
                self._start_play()
            self._publish("state", self.snapshot())
        elif what == "resume":
            self._counting_in()

    def _start_play(self) -> bool:
        """Every seat is ready, or the judge starts (or resumes): a count-in, then play."""
        if self.storage_full:
            self.store.mark(self.game_id, "resumed", True)  # raises while the disk is full
            self.storage_full = ""
        if not self.rhythm.start(self.now()):
            return False
        self._counting_in()
        return True

    def _resume(self) -> None:
        """The panel's Resume (or the voice back): a pause is called off or counted in."""
        if self.storage_full:
            self.store.mark(self.game_id, "resumed", True)  # raises while the disk is full
            self.storage_full = ""
        if self.rhythm.resume(self.now()) and self.rhythm.phase is Phase.COUNT_IN:
            self._counting_in()

    def _counting_in(self) -> None:
        if self.leds is not None:
            self.leds.all_leds(False)
        self.say("count_in", {})
        self._publish("state", self.snapshot())

    def _pause(self) -> bool:
        status = self.rules.status()
        in_hand = self._deciding(status.race_open) or self._current_awaits()
        if not self.rhythm.pause(self.now(), in_hand=in_hand):
            return False
        if self.rhythm.phase is Phase.PAUSED:
            self.say("paused", {})
        return True

    def _why_no_pause(self) -> str:
        return {
            Phase.PAUSED: "the table is already paused; resume to play on",
            Phase.PAUSING: "the table pauses as soon as this round is ruled; resume to take it back",
            Phase.READY: "nothing to pause yet: the table waits for every seat to be ready",
            Phase.OVER: "nothing to pause: the game is over",
        }.get(self.rhythm.phase, f"nothing to pause now ({self.phase()})")

    def feed(self, event: Event) -> None:
        """Log, then act: the log always holds every event the rules have seen. Once an end
        line is written, cues and presses count for nothing and are not written."""
        if self.ended and isinstance(event, Press | Cue | End):
            return
        try:
            self.rules.check(event)  # what the rules refuse never reaches the log
        except RulesError as exc:
            raise ValueError(str(exc)) from None
        if self.storage_full:  # refused until the judge resumes on a disk with room again
            raise self.full_kind(self.storage_full)  # the store's own kind (a full disk, damage)
        try:
            self.store.append(self.game_id, event)
        except LogFull as exc:  # not logged, so not acted on: the press or fact is refused
            self._full(exc)
            raise
        self.correcting = isinstance(event, Facts | Penalty | Undo)
        self.rules.apply(event)
        if isinstance(event, Facts | Penalty | Undo):
            self._publish("judge", {"event": event.__class__.__name__.lower()})

    def _deciding(self, race_open: bool) -> bool:
        """A race is open and not yet ruled: a pause waits for it (a claim's window that runs
        on after its ruling does not hold the table)."""
        return race_open and self.rules.round_count() not in self.announced

    def cut_round(self) -> int | None:
        """The round a stop cuts in half: its race is open and it was never ruled (a ruled round
        whose window is still open, as a silent claim's, is whole: quitting never changes it)."""
        number = self.rules.round_count()
        status = self.rules.status()
        if (not number or self.ended or status.over or not status.race_open
                or number in self.announced):
            return None
        return number

    def _current_awaits(self) -> bool:
        number = self.rules.round_count()
        return number > 0 and any(isinstance(o, Awaiting) for o in self.rules.round_outputs(number))

    def step(self, now: int | None = None) -> None:
        """Advance time, announce what changed, and start the next round when it is due."""
        if now is None:
            now = self.now()
        if self.leds is not None:
            self.leds.check_stuck(now - self.offset_us)  # holds come back through the queue
        self._deal_next(now)
        self.rules.advance(now - self.delivery_us)  # only time every press has reached
        changed = self.rules.take_changed()
        for number in changed:  # (whether the judge made the change, remembered while held)
            self.held[number] = self.held.get(number, False) or self.correcting
        # a correction of an older round is said between rounds, never over a call or a race
        current = self.rules.round_count()
        for number in sorted(self.held):
            if (number in self.announced and number < current
                    and (self.cue_us is not None or self.rules.status().race_open)):
                continue
            self._announce(number, judged=self.held.pop(number))
        if changed or self.phase() != self.shown_phase:
            # a race can close with nothing to rule (a flip nobody claimed): the pages must
            # still stop showing it as open
            self._publish("state", self.snapshot())
        if self.cue_us is not None and now >= self.cue_us:
            self.cue_us = None
            if self.cue_light and self.leds is not None:
                self.leds.cue_light()
            self._publish("cue", {"round": self.rules.round_count(), "word": self.cue_word,
                                  "t_us": now})
            self._publish("state", self.snapshot())  # phase: cadence → race
        status = self.rules.status()
        current_awaits = self._current_awaits()
        over = status.over and status.awaiting is None  # the final standings wait for the judge
        if (not status.race_open and not current_awaits and not status.over
                and self.rhythm.phase not in (Phase.READY, Phase.OVER)):
            number = self.rules.round_count() + 1
            limit = self.rhythm.pace.round_limit
            if limit is None or number <= limit:
                self._preface(number)
        self._pass_beat(now)
        call = self.rules.next_call()
        earliest = 0
        pace = self.rules.schedule()
        if (pace.turn_ms is not None and self.last_cue_us is not None
                and self.spoken == self._spoken_at_call):
            # a call every turn keeps its own pace while nothing is said between turns
            earliest = self.last_cue_us + (pace.turn_ms - pace.tempo_ms - 100) * 1000
        quiet = self.announcer.quiet_at()
        if over and self.practice and (  # a practice over by itself hands over to the real
                quiet is None or now < quiet + self.offset_us or status.race_open):
            over = False  # game once its last ruling is said and its last race is closed (a
            # late press of that race is never taken for a ready press of the real game)
        view = View(rounds=self.rules.round_count(), race_open=status.race_open,
                    current_awaits=current_awaits, over=over,
                    can_call=call is not None and not self.ended and not pace.judge_starts,
                    quiet_at=None if quiet is None else quiet + self.offset_us,
                    earliest_call=earliest, deciding=self._deciding(status.race_open))
        before = self.rhythm.phase
        decision = self.rhythm.tick(now, view)
        if decision is Decision.OVER and self.practice:
            decision = Decision.DONE
        if decision is Decision.CALL and call is not None and self.auto:
            self.start_round(call)
        elif decision is Decision.GO and pace.beat is not None:
            self.say(pace.beat, {})  # a game without calls: ready opens play with its beat word
        elif decision is Decision.PAUSED:
            self.say("paused", {})
        elif decision is Decision.AUTO_PAUSED:
            self.say("quiet_table", {})
        elif decision is Decision.OVER:
            self._over(self.rules.standings().to_json())
        elif decision is Decision.DONE:
            self._practice_over()
            return
        if self.rhythm.phase is not before or decision is not None:
            self._publish("state", self.snapshot())

    def _over(self, final: dict[str, Any]) -> None:
        """Game over: said once and shown until a person starts the next game (the judge may
        still correct a round: the standings shown follow, nothing more is said)."""
        self.final = final
        self.rhythm.end()
        self._light(None)
        self.next_pass_us = None
        winners = final["winners"]
        self.say("game_over", {"text": standings_text(
            [(r["seat"], r["score"]) for r in final["seats"]], self.book)})
        if len(winners) == 1:
            self.say("champion", {"seats": winners[0]})
        elif winners:
            self.say("co_champions", {"seats": list(winners)})
        self._mark("over", final)
        self._publish("over", final)

    def _practice_over(self) -> None:
        """A practice game has no sudden death and no champion: it ends with an end line, then
        the real game's Ready step."""
        try:
            self.feed(self._end_line())
        except LogFull:
            pass  # said once (`_full`); the practice is over all the same
        self.say("practice_over", {})
        self._mark("ended", True)
        self._switch()
        self._say_ready()

    def _deal_next(self, now: int) -> None:
        """Once the end has been said and the last race is closed, the next game's deal and its
        one Ready step ("Press your slap button when you're ready"): from then on a press marks
        its seat ready for it; before, it belongs to the last race (`Rhythm.press`)."""
        if self.rhythm.phase is not Phase.OVER or self.rhythm.dealt or not self.auto:
            return
        quiet = self.announcer.quiet_at()
        if quiet is None or now < quiet + self.offset_us:
            return
        if not self.ended and self.rules.status().race_open:
            return
        self.rhythm.dealt = True
        for key, params in new_rules(self.next_start).announcements(1):
            self.say(key, params)
        self.say("ready", {})
        if self.leds is not None:
            self.leds.all_leds(False)
        self._publish("state", self.snapshot())

    def next_game(self) -> None:
        """The next game, with the same seats: every seat is ready, or the judge starts it
        (keypad YES, the panel). Its deal was said once the end had been; the count-in follows."""
        if self.rhythm.phase is not Phase.OVER:
            raise ValueError("the game is not over; end it first")
        if not self.ended:
            self._mark("ended", True)
        dealt = self.rhythm.dealt
        self._switch()
        if dealt:
            self.prefaced.add(1)  # the deal is not said twice
        else:
            self._preface(1)  # started before the end had been said: the deal first
        self._start_play()

    def _switch(self) -> None:
        start = self.next_start
        rules = new_rules(start)
        game_id = self.store.new_game(start, practice=False)
        self._begin(rules, game_id, practice=False, ready=True)

    def _pass_beat(self, now: int) -> None:
        """The game's beat phrase every so often while it plays, if it has one (not a
        cue; never logged)."""
        pace = self.rules.schedule()
        if not pace.beat_ms or pace.beat is None or self.rhythm.phase is not Phase.PLAYING:
            self.next_pass_us = None
            return
        if self.next_pass_us is None:
            self.next_pass_us = now + pace.beat_ms * 1000
        elif now >= self.next_pass_us:
            self.next_pass_us = now + pace.beat_ms * 1000
            self.announcer.say(pace.beat, {})

    def _preface(self, number: int) -> None:
        if number not in self.prefaced:
            self.prefaced.add(number)
            if self.practice and number == 1:
                self.say("practice", {})
            for key, params in self.rules.announcements(number):
                self.say(key, params)

    def start_round(self, call: Call) -> None:
        self._preface(self.rules.round_count() + 1)
        params = {"seat": call.seat} if call.seat else {}
        beats = phrase_words(call.phrase, params, book=self.book)
        self.rhythm.called(self.now())
        self._light(None)
        self.calling = "".join(b + (" " if b.endswith(",") else "… ") for b in beats[:-1]) + (
            beats[-1] if beats else "")
        t_cue = self.announcer.cadence(call.phrase, params, self.rules.schedule().tempo_ms)
        seat = call.seat
        self.calling_seat = seat
        self.feed(Cue(t_cue + self.offset_us, seat))
        self.cue_us = self.last_cue_us = t_cue + self.offset_us
        self.cue_word = beats[-1] if beats else ""
        self._spoken_at_call = self.spoken
        self._publish("state", self.snapshot())

    def _announce(self, number: int, *, judged: bool = False) -> None:
        outputs = self.rules.round_outputs(number)
        before = self.announced.get(number)
        if outputs == before:
            return
        self.announced[number] = outputs
        if before is None:  # the race closed: a restart must not take it for a cut round
            # (written before anyone hears of it; no fsync on this path: a killed process keeps
            # it, a pulled plug may lose it, and then the round is voided, never half-ruled)
            self._mark("ruled", {"round": number, "t_us": self.now()}, durable=False)
        self.ruled_at[number] = self.now()
        rulings = [o for o in outputs if isinstance(o, Ruling)]
        awaiting = [o for o in outputs if isinstance(o, Awaiting)]
        for r in rulings:
            if r.seat is not None and self.rules.is_loss(r.delta) and self.leds is not None:
                self.leds.blink(r.seat)
        correction = (before is not None and judged
                      and not any(isinstance(o, Awaiting) for o in before))
        old = [o for o in before or () if isinstance(o, Ruling)]
        if correction and any(r not in rulings for r in old):
            if self.rules.facts_for(number).get(VOID.name):
                self.say("voided", {"round": number}, interrupt=True)  # "Round 7 voided."
            else:
                # a ruling was taken back: say each seat's change, then the new rulings why
                changes = correction_changes(old, rulings, self.book)
                if changes:  # (no score changed: the new rulings below say why)
                    self.say("correction", {"round": number, "changes": changes},
                             interrupt=True)
        new = [r for r in rulings if r not in old]
        if new or not correction:
            # a penalty given is said with its reason, as any ruling; stragglers together
            for key, params in presenter.said_rulings(self.rules, self.book, new):
                self.say(key, params)
            for key, params in self.rules.said_after(number, new, before is None):
                self.say(key, params)
        facts = {f.name: f for f in self.rules.facts()}
        for a in awaiting:
            self.say(*self._question(tuple(  # a need the game forgot to declare: its name
                facts.get(n) or Fact(n, "flag", n, f"{n}?", f"{n}?") for n in a.need)))
        self._light(self.rules.lit(number))
        self._publish("ruling", {"round": number, "rulings": [o.to_json() for o in outputs],
                                 "rulings_said": self.shown(outputs),
                                 "correction": correction})

    def _light(self, seat: str | None) -> None:
        """The LED of the seat the game names (to answer) stays lit; the one before goes dark."""
        if self.leds is None or seat == self.lit_seat:
            return
        if self.lit_seat is not None:
            self.leds.led(self.lit_seat, False)
        if seat is not None:
            self.leds.led(seat, True)
        self.lit_seat = seat

    def ruling_words(self, r: Ruling) -> tuple[str, dict[str, Any]]:
        """The phrase that says ruling `r` (and the pages show it in the same words)."""
        return presenter.ruling_words(self.rules, self.book, r)

    def shown(self, outputs: Sequence[Ruling | Awaiting]) -> list[dict[str, str]]:
        return presenter.shown(self.rules, self.book, outputs)

    @staticmethod
    def _question(asked: tuple[Fact, ...]) -> tuple[str, dict[str, Any]]:
        """The judge is asked for these facts (each also in the game's own words)."""
        return "awaiting", {"need": [f.name for f in asked], "asks": [f.question for f in asked]}

    def _mark(self, kind: str, value: Any, *, durable: bool = True) -> None:
        """A mark the engine can do without for now (a restart re-derives it): a full disk
        pauses the table but does not stop the ruling already made from being said."""
        try:
            self.store.mark(self.game_id, kind, value, durable=durable)
        except LogFull as exc:
            self._full(exc)

    def _full(self, exc: LogFull) -> None:
        """The log cannot grow: one line, the table pauses, the voice and the pages say so."""
        if self.storage_full:
            return
        self.storage_full = str(exc)
        self.full_kind = type(exc)
        log.error("%s", exc)
        self.rhythm.pause(self.now(), in_hand=False)
        self.say("storage_full", {}, interrupt=True)
        self._publish("state", self.snapshot())

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        self.last_said = phrase_text(key, params, book=self.book)
        self.spoken += 1
        self.announcer.say(key, params, interrupt=interrupt)

    def _judge_key(self, key: str) -> None:
        """The keypad: YES / NO answer the judge's question; otherwise YES starts or resumes
        play (or the next game), NO rejects the claim in play or pauses; UNDO reverts the
        latest change to the score in the current or previous round only (older rounds are
        corrected from the judge panel)."""
        if key == "undo":
            if not self._undo(keypad=True):
                self.say("nothing_to_undo", {})
            return
        awaiting = self.rules.status().awaiting
        if awaiting is None:
            # NO with nothing asked rejects the claim of the round in play (its race open, or
            # just ruled), even a silent one nothing was said of; never an older round's
            latest = self.rules.round_count()
            fact = self.rules.refutable(latest) if key == "no" and latest else None
            if fact is not None:
                self.feed(Facts(latest, {fact.name: fact.no}))
                return
            if key == "yes" and self.pairing_yes is not None and self.pairing_yes():
                self._publish("state", self.snapshot())  # the page shows who is in
                return
            if key == "yes":
                if self.rhythm.phase is Phase.OVER:
                    self.next_game()
                elif not self._judge_next() and not self._start_play():
                    return
            elif not self._pause():
                return
            self._publish("state", self.snapshot())
            return
        self.feed(Facts(awaiting.round, self.rules.keypad(awaiting, key)))

    def _judge_next(self) -> bool:
        """In a game whose rounds the judge starts, YES between rounds starts the next one."""
        if (not self.rules.schedule().judge_starts or self.ended or self.storage_full
                or self.rhythm.phase not in (Phase.PLAYING, Phase.RULING)):
            return False
        call = self.rules.next_call()
        if call is None or self._current_awaits():
            return False
        self.start_round(call)
        return True

    def _command(self, cmd: commands.EngineCommand) -> Any:
        """Run a command's handler. A handler that changed the table answers `CHANGED`: the
        pages get the new state, and so does the caller; the others answer what was asked."""
        handler = self._handlers().get(type(cmd))
        if handler is None:
            raise ValueError(f"unknown command {cmd!r}")
        answer = handler(cmd)
        if answer is not CHANGED:
            return answer
        self._publish("state", self.snapshot())
        return self.snapshot()

    def _handlers(self) -> dict[type[commands.EngineCommand], Callable[[Any], Any]]:
        def changes(act: Callable[[], Any]) -> Callable[[Any], object]:
            return lambda _: (act(), CHANGED)[1]

        return {
            commands.Stop: changes(self._stop.set),
            commands.Pause: changes(self._on_pause),
            commands.Resume: changes(self._resume),  # idempotent: a table playing plays on
            commands.Start: changes(self._start_play),  # idempotent too
            commands.End: changes(self._end),
            commands.UndoLatest: changes(self._on_undo),
            commands.NextGame: changes(self.next_game),
            commands.NextRound: changes(self._on_next_round),
            commands.SayStandings: lambda _: self._on_standings(),
            commands.Feed: lambda c: changes(lambda: self.feed(c.event))(c),
            commands.Step: lambda _: self.step(),
            commands.Wake: lambda _: self.next_wake(),
            commands.Snapshot: lambda _: self.snapshot(),
            commands.PressNote: lambda c: self.press_note(c.seat, c.button),
        }

    def undo_step(self, *, keypad: bool) -> Facts | Undo | None:
        """What UNDO would write now (`Rules.undo_step`): the keypad reaches the current and the
        previous round, the judge panel any round. Once the next game's deal has been said the
        keypad belongs to it: a finished game is corrected from the judge panel."""
        if keypad and self.rhythm.phase is Phase.OVER and self.rhythm.dealt:
            return None
        return self.rules.undo_step(max(1, self.rules.round_count() - 1) if keypad else None)

    def _undo(self, *, keypad: bool = False) -> bool:
        """UNDO: revert the latest change to the score, whatever made it: a judge action
        withdrawn, or a round ruled from presses alone voided (said: "Round 7 voided.").
        False: nothing to undo within reach."""
        step = self.undo_step(keypad=keypad)
        if step is None:
            return False
        self.feed(step)
        return True

    def _on_undo(self) -> None:
        if not self._undo():
            raise ValueError("nothing to undo: no ruling or judge action changed the score yet")

    def _on_pause(self) -> None:
        if not self._pause():
            raise ValueError(self._why_no_pause())

    def _on_next_round(self) -> None:
        if self.storage_full:
            raise ValueError(self.storage_full)
        call = self.rules.next_call()
        if call is None or self.ended or self._current_awaits():
            raise ValueError("a round cannot start now (race open, judge asked or game over)")
        self.start_round(call)

    def _on_standings(self) -> dict[str, Any]:
        st = self.rules.standings()
        self.say("standings", {"text": standings_text(
            [(r.seat, r.score) for r in st.seats], self.book)})
        return st.to_json()

    def _end(self) -> None:
        """The judge ends the game early: an end line, so the log replays to the same end. A
        race open now closes now (its ruling is said); the leaders as they stand are the
        (co-)champions, once no question is open (the judge answers it first)."""
        if self.ended:
            raise ValueError("the game is already over")
        if self.rhythm.phase is Phase.OVER:
            return  # over by itself already: its end said, nothing to write
        if self.practice:
            self._practice_over()
            return
        if self.cue_us is not None and self.now() < self.cue_us:
            self.announcer.cut_calls()  # nothing of the old game is said after the champion
            self.cue_us = None
        now = self.now()
        self.feed(self._end_line())
        self.ended = True
        self._mark("ended", True)
        self.step(now)  # the race cut by the end is ruled and said, then the game over

    def _end_line(self) -> End:
        """The end line of a game ended now: at the instant every press before it has reached
        the table (`delivery_us` ago, as a race is ruled only once its close is that far
        behind), so a press still on its way counts as its edge time says, never as it happens
        to arrive before or after the End; a race open then closes there."""
        return End(max(0, self.now() - self.delivery_us))

    # -- what the scoreboard shows -------------------------------------------------------------

    PHASES = {Phase.READY: "ready", Phase.COUNT_IN: "count-in", Phase.PAUSED: "paused",
              Phase.OVER: "over"}

    def phase(self) -> str:
        status = self.rules.status()
        if self.rhythm.phase is Phase.OVER or (status.over and not self.auto):
            return "over"
        shown = self.PHASES.get(self.rhythm.phase)
        if shown is not None and (self.auto or shown == "paused"):
            return shown
        if self._current_awaits() or (not self.auto and status.awaiting is not None):
            return "awaiting"
        if status.race_open and self.rules.schedule().silent:
            return "ruled" if self._shown_round() else "setup"  # a claim is never revealed
        if status.race_open:
            cue = self.cue_us  # read once: another thread may be asking
            return "cadence" if cue is not None and self.now() < cue else "race"
        if self.rhythm.phase is Phase.PAUSING:
            return "paused"
        return "ruled" if status.round else "setup"

    def press_note(self, seat: str, button: str) -> tuple[str, str]:
        """What a press of `seat`'s `button` would do now, for the terminal's echo: what the
        table takes it for ("ready", "resume", "ignore" or "game") and, for a game press, what
        the game says it does (`Rules.press_note`)."""
        now = self.now()
        what = self.rhythm.would(seat, now) if self.auto and not self.storage_full else "game"
        return what, self.rules.press_note(seat, button, now) if what == "game" else ""

    def _turn(self) -> str | None:
        """The seat whose turn it is (the one the call named, or the next), if calls name one."""
        if self.rules.status().race_open:
            return self.calling_seat
        call = self.rules.next_call()
        return call.seat if call is not None else None

    def _shown_round(self) -> int:
        """The round the scoreboard shows: for a silent race, the latest ruled one."""
        status = self.rules.status()
        if status.race_open and self.rules.schedule().silent:
            return max((n for n in self.announced if n > 0), default=0)
        return status.round

    def snapshot(self) -> dict[str, Any]:
        """What the pages and the terminal show now (`presenter.present`)."""
        return presenter.present(self.rules, self.book, presenter.Moment(
            game_id=self.game_id, practice=self.practice, phase=self.phase(),
            round=self._shown_round(), turn=self._turn(),
            ready=tuple(s for s in self.rules.seats if s in self.rhythm.ready),
            final=None,
            said=self.last_said, cue_word=self.cue_word, call=self.calling,
            stuck=tuple(sorted(f"{s} {b}" for s, b in self.stuck)),
            storage_full=self.storage_full))

    def _publish(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "state":
            self.shown_phase = data["phase"]
        for listener in list(self.listeners):
            try:
                listener(kind, data)
            except Exception:
                log.exception("listener failed")


def open_game(
    store: TableLog, start: GameStart, announcer: Announcer, *, practice: bool = False, **kw: Any
) -> Engine:
    """A new game of `start`; `practice`: a practice game of it first, with the game's own
    practice settings (a short deck), then the real game with the options chosen."""
    rules = new_rules(start)
    declared = rules.DECLARATION  # a game from a file: its log carries its declaration
    full = GameStart(start.game, start.seats, dict(rules.options), declared=declared)
    if practice:
        rules = new_rules(GameStart(start.game, start.seats, rules.practice_options(),
                                    practice=True, declared=declared))
    game_id = store.new_game(GameStart(start.game, start.seats, dict(rules.options),
                                       practice=practice, declared=declared),
                             practice=practice)
    return Engine(rules, store, game_id, announcer, practice=practice, next_start=full, **kw)


def resume_game(store: TableLog, game_id: int, announcer: Announcer, **kw: Any) -> Engine:
    """Rebuild a game from its log; a round cut in half by the stop is voided, never half-ruled."""
    found = store.game(game_id)
    if found is None:
        raise ValueError(f"no game {game_id} in the database")
    start, practice = found
    rules = new_rules(start)
    # the same driver as `referee replay`, but the races still open stay open for the table
    last_t = drive(rules, enumerate(store.events(game_id), start=2), finish=False)
    ruled_marks = [m for m in store.marks(game_id, "ruled") if isinstance(m, dict)]
    ruled = [m["t_us"] for m in ruled_marks]
    rules.advance(max([last_t, *ruled]))  # races that had closed before the stop stay closed
    clock = kw.get("clock", now_us)
    offset = max(0, last_t + 1_000_000 - clock())
    ready = bool(kw.pop("ready", True)) and rules.round_count() == 0  # never dealt: Ready
    engine = Engine(rules, store, game_id, announcer, offset_us=offset,
                    practice=practice, ready=ready, **kw)
    engine.announced.update({m["round"]: [] for m in ruled_marks})  # ruled before the stop
    engine.ended = rules.end_us is not None  # an end line: nothing more is played
    cut = engine.cut_round()
    if cut is not None:
        engine.feed(Facts(cut, {"void": True}))
    rules.advance(engine.now())
    for number in range(1, rules.round_count() + 1):
        engine.announced[number] = rules.round_outputs(number)
    rules.take_changed()
    return engine
