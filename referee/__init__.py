"""Table Referee: a Raspberry Pi that referees fast physical card games from arcade slap buttons."""

__version__ = "0.1.0"
