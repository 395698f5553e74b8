"""What every command shares: the one-line user error and the table's config from the flags."""

from __future__ import annotations

import argparse
import dataclasses
import threading
from typing import TextIO

from referee.config import ConfigError, TableConfig, default_config, load_config, parse_seats


class HardwareError(RuntimeError):
    """The GPIO pins cannot be opened: one line with the fix."""


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""


class Lines:
    """A text stream that several threads print to, written a whole line at a time.

    `print()` writes a line's text and its newline as two writes, so the engine thread's phrase
    ("» ...") and the main thread's "Table Referee …" could run together on one line. Each
    thread's text is held until its newline and then written, with the newline, under
    one lock."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._partial = threading.local()

    def write(self, text: str) -> int:
        held: str = getattr(self._partial, "text", "") + text
        head, sep, tail = held.rpartition("\n")
        self._partial.text = tail
        if sep:
            with self._lock:
                self.stream.write(head + sep)
                self.stream.flush()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            self.stream.flush()

    def getvalue(self) -> str:
        """What a `StringIO` under it holds (tests read the output this way)."""
        value: str = self.stream.getvalue()  # type: ignore[attr-defined]
        return value

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def table_config(args: argparse.Namespace, game: str | None = None) -> TableConfig:
    config = load_config(args.config) if getattr(args, "config", None) else None
    given = getattr(args, "seats", None)
    seats = parse_seats(given) if given is not None else None  # --seats "" is a mistake
    if config is None:
        config = default_config(seats)
    elif seats is not None:
        config = dataclasses.replace(config, seats=default_config(seats).seats)
    if getattr(args, "language", None):
        config = dataclasses.replace(config, language=args.language)
    check_speech(config)
    check_language(config.language)
    return config


def check_language(code: str) -> None:
    """One line naming a language the referee does not ship, and those it does."""
    from referee.voice.phrases import LANGUAGES

    if code not in LANGUAGES:
        raise ConfigError(f"language {code!r} is not shipped; use one of "
                          f"{', '.join(sorted(LANGUAGES))} ([table] language or --language)")


def check_speech(config: TableConfig) -> None:
    """[speech] values are checked whether or not the table will speak (--no-speech too)."""
    if not config.speech:
        return  # nothing to check, and no need to load the speech code (and numpy) for it
    from referee.voice.tts import SpeechError, SpeechOptions

    try:
        SpeechOptions.coerce(config.speech)
    except (SpeechError, ValueError, TypeError) as exc:
        raise ConfigError(f"[speech] in the config: {exc}; see hardware/config.example.toml"
                          ) from None
