"""What every command shares: the one-line user error and the table's config from the flags."""

from __future__ import annotations

import argparse
import dataclasses

from referee.config import TableConfig, default_config, load_config, parse_seats


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""


def table_config(args: argparse.Namespace, game: str | None = None) -> TableConfig:
    config = load_config(args.config) if getattr(args, "config", None) else None
    seats = parse_seats(args.seats) if getattr(args, "seats", None) else None
    if config is None:
        config = default_config(seats)
    elif seats is not None:
        config = dataclasses.replace(config, seats=default_config(seats).seats)
    return config
