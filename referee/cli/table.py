"""Wiring the real (or mocked) adapters around the engine: one `Table` per running referee."""

from __future__ import annotations

import dataclasses
import os
import queue
import secrets
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from referee.cli.common import HardwareError, Lines
from referee.clock import now_us
from referee.config import ConfigError, TableConfig, build_seats
from referee.engine.commands import Pause, Request, Resume
from referee.engine.loop import Engine, Item, open_game, resume_game
from referee.engine.ports import Announcer
from referee.events import Facts, GameStart
from referee.notify import Watchdog
from referee.rules.declare import Option, RulesError
from referee.rules.registry import games as registered_games
from referee.rules.registry import rules_for
from referee.scoreboard.pairing import Pairing
from referee.store.database import (
    FULL_MESSAGE,
    MIN_FREE_BYTES,
    StorageFull,
    Store,
    StoreError,
    events,
    free_bytes,
    games,
    marks,
)
from referee.voice.announce import PrintAnnouncer

FINISH_S = 5.0  # how long a stop waits for an open race to close and be ruled

if TYPE_CHECKING:
    from referee.capture.gpio import ButtonBox


def default_db() -> Path:
    env = os.environ.get("REFEREE_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "table-referee" / "referee.db"


def use_mock_pins() -> None:
    """gpiozero's own convention: GPIOZERO_PIN_FACTORY=mock selects MockFactory."""
    os.environ["GPIOZERO_PIN_FACTORY"] = "mock"
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    from referee.capture.gpio import BoundedMockPin, edge_timing

    # a factory of software-driven pins already in place (a test's) is kept
    if Device.pin_factory is None or not edge_timing(Device.pin_factory).software:
        Device.pin_factory = MockFactory(pin_class=BoundedMockPin)


def game_options(config: TableConfig, game: str, options: dict[str, Any]) -> dict[str, Any]:
    """Options for a live game: what the game says the box decides (how many seats, whether
    every seat has its second button), under the config's (`config_options`), under the ones
    given (`--option`, the setup page)."""
    second = all(s.double is not None for s in config.seats)
    return {**rules_for(game).box_defaults(len(config.seats), second),
            **config_options(config, game), **options}


def config_options(config: TableConfig, game: str) -> dict[str, Any]:
    """The config's options for `game`, each checked as its game declares it (ConfigError naming
    the key, its table and the file): `[options.<game>]`, over the flat `[options]`.

    The flat `[options]` are the options of the game being played, `[table] game`: there a key
    the game does not know is a mistake. When another game is chosen (`referee play GAME`, the
    setup page), it takes the flat options it knows too (`tie_us`, `pause_ms`...) and passes
    over those of the config's own game (one game's `deck` never stops another game); a key
    no game knows is a typo, whichever game is played."""
    known_games = registered_games()
    of = f" of {config.source}" if config.source else ""
    own: dict[str, Any] = {}
    for name, table in config.game_options.items():  # each game's table, whatever is played
        if name not in known_games:
            raise ConfigError(f"[options.{name}]{of} names no game; use one of "
                              f"{', '.join(known_games)}")
        declared = known_games[name].known_options()
        for key, value in table.items():
            if key not in declared:
                raise ConfigError(f"unknown option {key!r} for {name} in [options.{name}]{of}; "
                                  f"known: {', '.join(sorted(declared))}")
            checked = _config_value(declared[key], value, f"[options.{name}]{of}")
            if name == game:
                own[key] = checked
    known = rules_for(game).known_options()
    listed = ", ".join(sorted(known))
    taken: dict[str, Any] = {}
    for key, value in config.options.items():
        if key in known:
            taken[key] = _config_value(known[key], value, f"[options]{of}")
        elif game == config.game:
            raise ConfigError(f"unknown option {key!r} for {game} in [options]{of}; known: "
                              f"{listed} (another game's options go in [options.<game>])")
        elif not any(key in cls.known_options() for cls in known_games.values()):
            raise ConfigError(f"unknown option {key!r} in [options]{of}: no game has it; "
                              f"{game} knows {listed}")
    return {**taken, **own}


def _config_value(option: Option, value: Any, where: str) -> Any:
    """A config value as its option declares it; TOML values are typed (no text conversion)."""
    try:
        return option.read(value)
    except RulesError:
        raise ConfigError(f"option {option.name} = {value!r} in {where}: expected "
                          f"{option.expects()}") from None


def make_announcer(config: TableConfig, *, no_speech: bool, out: TextIO) -> Announcer:
    if no_speech:
        return PrintAnnouncer(out)
    try:
        from referee.voice.speech import make_announcer as speech_announcer
    except ImportError:  # pragma: no cover - speech module is part of the package
        return PrintAnnouncer(out)
    return speech_announcer({**config.speech, "language": config.language}, no_speech=False,
                            out=out)


def unfinished_game(store: Store, game: str, seats: tuple[str, ...]) -> int | None:
    """The latest real game of these seats that is neither over nor ended. One that was played
    comes before an empty row (left behind by a failed start of an older version, or a stop
    during the Ready step); practice games and other tables' games are passed over."""
    conn = store.conn
    empty: int | None = None
    for row in reversed(games(conn)):
        if row["game"] != game or tuple(row["seats"]) != seats:
            continue
        if marks(conn, row["id"], "over") or marks(conn, row["id"], "ended"):
            break  # the latest game of these seats is finished: nothing older is resumed
        if any(True for _ in events(conn, row["id"])):
            return int(row["id"])
        if empty is None:
            empty = int(row["id"])
    return empty


class Table:
    """One table: the store, the voice, the button box and the current game's engine."""

    def __init__(
        self,
        config: TableConfig,
        *,
        db: str | Path | None = None,
        mock: bool = False,
        no_speech: bool = False,
        pin: str | None = None,
        out: TextIO | None = None,
        announcer: Announcer | None = None,
        auto: bool = True,
        box: bool = True,
        clock: Callable[[], int] = now_us,
        count_in_ms: int = 1500,
        demo: bool = False,
    ) -> None:
        self.config = config
        self.language = config.language  # the voice's and the pages' (the setup page may change it)
        self.mock = mock
        self.demo = demo  # `referee demo`: its games are marked so, and stay out of the ratings
        # whole lines only: the engine thread and the keyboard print at the same time
        self.out = cast(TextIO, Lines(out if out is not None else sys.stdout))
        self.pin = pin or config.pin or f"{secrets.randbelow(1_000_000):06d}"
        self.store = Store(db or config.db or default_db())
        self.store.demo = demo  # every game of a demo table is a demo game (kept out of ratings)
        self.announcer = announcer or make_announcer(config, no_speech=no_speech, out=self.out)
        self.auto = auto
        self.clock = clock
        self.count_in_ms = count_in_ms
        self.engine: Engine | None = None
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.box: ButtonBox | None = None
        self.pairing = Pairing()  # devices asking to judge; the keypad's YES lets them in
        self.voice_problem: str | None = None
        self.watchdog = Watchdog()  # systemd's WatchdogSec=, pinged by the engine's thread
        self._paused_for_voice = False
        self._watch_voice()
        if box:
            self._open_box()

    # -- health: what the scoreboard's status shows besides the game ----------------------------

    def _watch_voice(self) -> None:
        """A sound device that stalls or is missing pauses the table (no cue may be promised on
        a dead speaker) and resumes it when it plays again; the scoreboard says why."""
        sink = getattr(self.announcer, "sink", None)
        if sink is None or not hasattr(sink, "on_health"):
            return
        sink.on_health = self._voice_health
        if getattr(sink, "problem", None):
            self._voice_health(sink.problem)

    def _voice_health(self, problem: str | None) -> None:
        self.voice_problem = problem
        engine = self.engine
        if problem is not None and engine is not None and not engine.paused:
            self._paused_for_voice = True
            engine.submit(Request(Pause()))
        elif problem is None and self._paused_for_voice and engine is not None:
            self._paused_for_voice = False
            engine.submit(Request(Resume()))

    def health(self) -> dict[str, Any]:
        """Warnings a player must see (sound device, edge timing) and the counts doctor shows."""
        warnings_: list[str] = []
        report = getattr(self.announcer, "health", None)
        audio: dict[str, Any] = dict(report()) if report is not None else {}
        if self.voice_problem:
            warnings_.append(f"Paused: {self.voice_problem}")
        capture: dict[str, Any] = {}
        timing = getattr(self.box, "timing", None)
        if timing is not None:
            capture = {"factory": timing.factory, "timed": timing.timed, "note": timing.note}
            if not timing.timed:
                warnings_.append(f"Edge times are not exact: {timing.note} (allowed by "
                                 "untimed_edges in [buttons]); close races may be misjudged")
        return {"warnings": warnings_, "audio": audio, "capture": capture}

    def _open_box(self) -> None:
        from gpiozero.exc import BadPinFactory, GPIOZeroError, PinFactoryFallback

        from referee.capture.gpio import ButtonBox, CaptureError
        from referee.capture.header import box_error

        if self.box is not None:
            self.box.close()
            self.box = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PinFactoryFallback)
            try:
                self.box = ButtonBox(self.config, self.submit, clock=self.clock)
            except CaptureError as exc:
                raise HardwareError(box_error(exc)) from None
            except BadPinFactory:
                raise HardwareError(
                    "no GPIO library works here (lgpio, or RPi.GPIO before the Pi 5); "
                    "on a Raspberry Pi install python3-lgpio, on a laptop add --mock") from None
            except GPIOZeroError as exc:
                raise HardwareError(f"cannot open the buttons: {exc}; check the pins with "
                                    f"referee doctor") from None

    @property
    def delivery_us(self) -> int:
        """How long the engine waits past a race's close before ruling it: the config's, else
        the box's (the pin library's delivery, the glitch confirmation, the confirmer's waking;
        0 for mock pins), so no press still on its way changes a ruling once said."""
        if self.config.delivery_us is not None:
            return self.config.delivery_us
        return int(self.box.settled_us) if self.box is not None else 0

    def subscribe(self, listener: Callable[[str, dict[str, Any]], None]) -> None:
        """Listen to this table's engine, and to every engine a new game brings."""
        self.listeners.append(listener)
        if self.engine is not None:
            self.engine.subscribe(listener)

    def submit(self, item: object) -> None:
        """The box's and the keyboard's sink: their items go to the current game's engine."""
        engine = self.engine
        if engine is not None:
            engine.submit(cast(Item, item))  # the box sends only engine items (events, signals)

    def start(self, game: str, options: dict[str, Any] | None = None, *, practice: bool = False,
              resume: bool = True, language: str | None = None) -> Engine:
        """Resume the latest unfinished game of this table, or open a new one (`language`: the
        table's from now on; a table setting, never written in the game's log)."""
        if language is not None:
            self.language = language
        seats = tuple(s.name for s in self.config.seats)
        opts = game_options(self.config, game, options or {})
        rules_for(game)(seats, opts)  # validate before anything is written
        old = self.engine
        engine = None
        kw: dict[str, Any] = {"leds": self.box, "auto": self.auto, "clock": self.clock,
                              "count_in_ms": self.count_in_ms, "delivery_us": self.delivery_us,
                              "language": self.language}
        found = unfinished_game(self.store, game, seats) if resume and not practice else None
        if found is not None:
            if old is not None:
                old.stop()
                old = None
            engine = resume_game(self.store, found, self.announcer, **kw)
            print(f"Resuming game {found} at round {engine.rules.round_count()}.", file=self.out)
        if engine is None:
            # a new game on a disk without room is refused before the old game is stopped: the
            # table plays on (a write that fails raises StorageFull, and the old engine runs)
            if old is not None and free_bytes(self.store.path.parent) < MIN_FREE_BYTES:
                raise StorageFull(f"database {str(self.store.path)!r}: {FULL_MESSAGE}")
            engine = open_game(self.store, GameStart(game, seats, opts), self.announcer,
                               practice=practice, **kw)
            if old is not None:
                old.stop()
        for listener in self.listeners:
            engine.subscribe(listener)
        engine.pairing_yes = self.pairing.approve_single
        engine.alive = self.watchdog.beat
        self.engine = engine
        engine.start()
        if self.voice_problem is not None:  # a new game on a silent speaker waits too
            self._voice_health(self.voice_problem)
        return engine

    def game_options(self, game: str, options: dict[str, Any],
                     config: TableConfig | None = None) -> dict[str, Any]:
        return game_options(config or self.config, game, options)

    def press(self, seat: str, button: str) -> None:
        if self.box is None:
            raise LookupError("the button box is not open")
        self.box.press(seat, button)

    def reseat(self, seats: list[dict[str, Any]]) -> None:
        """New seats from the setup page (names, colours, pins); the box is reopened."""
        self.config = dataclasses.replace(self.config, seats=build_seats(seats))
        if self.box is not None:
            self._open_box()

    def close(self) -> None:
        """Stop cleanly (Ctrl-C, SIGTERM): the round in play is finished or voided, then the WAL
        is folded into the database, so a restart finds a whole log and nothing to undo."""
        if self.engine is not None:
            finish(self.engine)
        if self.box is not None:
            self.box.close()
        self.announcer.close()
        self.store.checkpoint()
        self.store.close()


def finish(engine: Engine, wait_s: float = FINISH_S) -> None:
    """Start no new round; give an open race up to `wait_s` to close and be ruled; stop the engine
    thread; a race still open then (a silent game's long round) is voided in the log now."""
    engine.auto = False  # read by the engine thread before it starts a round
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            phase = engine.command("snapshot", timeout=1.0)["phase"]
        except (queue.Empty, StoreError):
            break
        if phase not in ("cadence", "race"):
            break
        time.sleep(0.05)
    engine.stop()  # the engine thread is gone: its rules may be read and fed from here
    if engine.cut_round() is not None:
        try:
            engine.feed(Facts(engine.rules.round_count(), {"void": True}))
        except (StoreError, ValueError):
            pass  # a full disk: the restart voids it instead
