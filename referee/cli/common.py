"""What every command shares: the one-line user error and the table's config from the flags."""

from __future__ import annotations

import argparse
import dataclasses

from referee.config import ConfigError, TableConfig, default_config, load_config, parse_seats


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""


def table_config(args: argparse.Namespace, game: str | None = None) -> TableConfig:
    config = load_config(args.config) if getattr(args, "config", None) else None
    given = getattr(args, "seats", None)
    seats = parse_seats(given) if given is not None else None  # --seats "" is a mistake
    if config is None:
        config = default_config(seats)
    elif seats is not None:
        config = dataclasses.replace(config, seats=default_config(seats).seats)
    check_speech(config)
    return config


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
