"""The voice-less announcer: phrases printed, the cadence timed from the clock alone.

The engine never speaks itself: it asks an announcer (its port, `referee.engine.ports.Announcer`)
to call a cadence (and is told, on the button clock, when the go-word will sound) or to say a
phrase. Both return at once; nothing on the engine thread waits for audio. Before a game's first
word the engine hands over that game's own words (`learn`: its phrases and how its score is
said), since the voice keeps only the shared sentences and never imports the rules.
`PrintAnnouncer` is the voice-less adapter: it prints each phrase and times the cadence from the
clock alone. The speech adapter (`referee.voice.speech`) fits the same port.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from referee.clock import now_us
from referee.voice.phrases import NO_GAME, Phrasebook


class PrintAnnouncer:
    """No speech: phrases go to a text stream; the cue is `lead_ms` + the cadence's beats from now."""

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        lead_ms: int = 100,
        clock: Callable[[], int] = now_us,
        quiet: bool = False,
    ) -> None:
        self.out = out if out is not None else sys.stdout
        self.lead_ms = lead_ms
        self.clock = clock
        self.quiet = quiet
        # (key, params, when): the latest phrases, for tests and the scoreboard; bounded
        self.said: deque[tuple[str, dict[str, Any], int]] = deque(maxlen=500)
        self._busy_until = 0  # a printed phrase takes no time; a cadence lasts until its cue
        self._timers: list[threading.Timer] = []  # the beats of a cadence still to be printed
        self.book = NO_GAME  # the game's own words (`learn`)

    def learn(self, book: Phrasebook) -> None:
        self.book = book

    def _words(self, key: str, params: dict[str, Any]) -> Sequence[str]:
        from referee.voice.phrases import words

        return words(key, params, book=self.book)

    def text(self, key: str, params: dict[str, Any]) -> str:
        """Phrase `key` as this voice says it (with the game's own words): for checks."""
        return " ".join(self._words(key, params))

    def cadence(self, key: str, params: dict[str, Any], tempo_ms: int) -> int:
        words = self._words(key, params)
        start = self.clock() + self.lead_ms * 1000
        cue = start + tempo_ms * 1000 * (len(words) - 1)
        self.said.append((key, dict(params), cue))
        self._busy_until = max(self._busy_until, cue)
        if self.quiet:
            return cue
        if self.clock is not now_us:  # a simulated clock: nothing to wait for
            print("  » " + " … ".join(words), file=self.out, flush=True)
            return cue
        # beat by beat as it would sound, so a player reading the screen sees the go-word at
        # the cue (printed at once, the go-word showed a whole cadence early: every slap was early)
        for i, word in enumerate(words):
            at = start + tempo_ms * 1000 * i
            line = "  » " + word + (" …" if i < len(words) - 1 else "")
            timer = threading.Timer(max(0.0, (at - self.clock()) / 1e6), self._print, (line,))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)
        self._timers = [t for t in self._timers if t.is_alive()]
        return cue

    def cut_calls(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        self._busy_until = min(self._busy_until, self.clock())

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        now = self.clock()
        self.said.append((key, dict(params), now))
        self._busy_until = max(self._busy_until, now)
        if not self.quiet:
            print("  » " + " ".join(self._words(key, params)), file=self.out, flush=True)

    def quiet_at(self) -> int | None:
        return self._busy_until

    def warm_table(self, seats: Sequence[str], said: Sequence[tuple[str, dict[str, Any]]] = (),
                   *, reasons: Sequence[str] = (),
                   first: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
        pass  # printing needs nothing ready

    def describe(self) -> str:
        return "no speech: phrases are printed"

    def close(self) -> None:
        pass
