"""What every command shares: the one-line user error and the table's config from the flags."""

from __future__ import annotations

import argparse

from referee.config import TableConfig, default_config, load_config, parse_seats


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""



def table_config(args: argparse.Namespace, game: str | None = None) -> TableConfig:
    config = load_config(args.config) if getattr(args, "config", None) else None
    seats = parse_seats(args.seats) if getattr(args, "seats", None) else None
    if config is None:
        config = default_config(seats)
    elif seats is not None:
        base = default_config(seats)
        config = TableConfig(game=config.game, seats=base.seats, judge=config.judge,
                             leds=config.leds, options=config.options, host=config.host,
                             port=config.port, db=config.db, pin=config.pin, speech=config.speech,
                             delivery_us=config.delivery_us)
    return config
