"""/history and the game in play (issue 16, Medium 11): current after every round, at the cost of
about one replay of the game for all the requests together.

A real SQLite file, written as the live table writes it (a cue, then the presses), read back as
/history reads it, with a fresh reader connection for each request as the page makes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from referee.events import Cue, GameStart, Press
from referee.scoreboard import history
from referee.scoreboard.history import GameSummary, past_games
from referee.store.database import Store, connect, export_lines
from referee.store.tablelog import replay

SEATS = ("Blue", "Red", "Green")
SECOND = 1_000_000


def play_round(store: Store, game: int, number: int, last: str = "Green") -> None:
    """Round `number`, cues 3 s apart: `last` slaps last (and takes the point)."""
    cue = number * 3 * SECOND
    store.append(game, Cue(cue))
    order = [s for s in SEATS if s != last] + [last]
    for seat, ms in zip(order, (250, 310, 480), strict=True):
        store.append(game, Press(cue + ms * 1000, seat, "slap"))


def live_summary(path: Path, game: int) -> GameSummary:
    conn = connect(path, readonly=True)
    try:
        return next(g for g in past_games(conn, str(path)) if g.id == game)
    finally:
        conn.close()


def score(summary: GameSummary, seat: str) -> int:
    return next(int(r["score"]) for r in summary.standings if r["seat"] == seat)


@pytest.fixture
def counted_feeds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every log line history hands to the rules: in whole replays and in pieces."""
    fed: list[int] = []
    whole, pieces = history.replay, getattr(history, "drive", None)

    def replay_counted(lines: Any, *args: Any) -> Any:
        lines = list(lines)
        fed.extend([1] * len(lines))
        return whole(lines, *args)

    def drive_counted(rules: Any, items: Any, **kw: Any) -> Any:
        items = list(items)
        fed.extend([1] * len(items))
        assert pieces is not None
        return pieces(rules, items, **kw)

    monkeypatch.setattr(history, "replay", replay_counted)
    monkeypatch.setattr(history, "drive", drive_counted, raising=False)
    return fed


def test_the_game_in_play_is_current_after_every_round_and_costs_about_one_replay(
        tmp_path: Path, counted_feeds: list[int]) -> None:
    path = tmp_path / "referee.db"
    store = Store(path)
    try:
        game = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 90, "doubles": "off"}))
        play_round(store, game, 1)
        assert live_summary(path, game).rounds == 1  # first sight: one whole replay
        play_round(store, game, 2)  # it grows: from now on it is a game in play
        deadline = time.monotonic() + 20
        key = (str(path), game)
        # its rules are being built, away from the request: until that is done (the fold is in
        # place and the build has let go of the game) a request gets the summary a moment old.
        # (Green's point from round 1 alone ended this wait while the build still ran, and on a
        # loaded machine round 3 then read the old summary.)
        while (score(live_summary(path, game), "Green") < 1 or key not in history._folds
               or history._busy[key].locked()):
            assert time.monotonic() < deadline, "the game in play never came up to date"
            time.sleep(0.01)
        counted_feeds.clear()
        for number in range(3, 26):
            play_round(store, game, number)
            summary = live_summary(path, game)
            # at once, not up to 10 s later: every round before the one in play is scored
            # (the race in play may still take a slap, so it is not ruled yet)
            assert number - 1 <= score(summary, "Green") <= number, (number, summary.standings)
            assert summary.rounds == number
            assert score(summary, "Blue") == score(summary, "Red") == 0
        events = 23 * 4
        # each request fed only the lines logged since the one before: about one replay in all
        # (twenty-three whole replays of a growing game would be over 1,600 events)
        assert len(counted_feeds) <= events + 8, len(counted_feeds)
        assert summary.reactions_us["Green"][-1] == 480_000
    finally:
        store.close()


def test_when_the_game_ends_history_rules_it_as_referee_replay_does(
        tmp_path: Path, counted_feeds: list[int]) -> None:
    path = tmp_path / "referee.db"
    store = Store(path)
    try:
        game = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 12, "doubles": "off"}))
        play_round(store, game, 1)
        live_summary(path, game)
        play_round(store, game, 2)
        deadline = time.monotonic() + 20
        while live_summary(path, game).rounds < 2 or (str(path), game) not in history._folds:
            assert time.monotonic() < deadline, "the game in play never came up to date"
            time.sleep(0.01)
        play_round(store, game, 3)
        live_summary(path, game)
        play_round(store, game, 4, last="Red")  # deck 12, three seats: the fourth round ends it
        live_summary(path, game)
        store.append(game, Press(4 * 3 * SECOND + 9 * SECOND, "Blue", "slap"))  # time passes
        summary = live_summary(path, game)
        conn = connect(path, readonly=True)
        try:
            whole = replay(list(export_lines(conn, game)))
        finally:
            conn.close()
        assert whole.standings.final and summary.final
        assert list(summary.standings) == [r.to_json() for r in whole.standings.seats]
        assert summary.winners == tuple(whole.standings.winners) == ("Blue",)
        assert (str(path), game) not in history._folds  # the rules of a finished game let go
    finally:
        store.close()


def finished_game(store: Store, rounds: int = 2) -> int:
    """A game whose last race closed on the table's clock (every seat slapped, `tie_us` later):
    the log ends with the last press, and the table marks the game over, as the live table does."""
    game = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 3 * rounds, "doubles": "off"}))
    for number in range(1, rounds + 1):
        play_round(store, game, number, last="Red" if number == rounds else "Green")
    return game


def announced(path: Path, game: int) -> dict[str, Any]:
    """What the table says at the end: the whole log ruled, as `referee replay` rules it."""
    conn = connect(path, readonly=True)
    try:
        return replay(list(export_lines(conn, game))).standings.to_json()
    finally:
        conn.close()


def test_a_just_finished_game_shows_as_the_table_announced_it_at_once(tmp_path: Path) -> None:
    path = tmp_path / "referee.db"
    store = Store(path)
    try:
        game = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 6, "doubles": "off"}))
        play_round(store, game, 1)
        live_summary(path, game)  # first sight: round 1 in play
        play_round(store, game, 2, last="Red")  # it grows: a game in play, the last race open
        deadline = time.monotonic() + 20
        while (live_summary(path, game).rounds < 2
               or history._busy[(str(path), game)].locked()):
            assert time.monotonic() < deadline, "the game in play never came up to date"
            time.sleep(0.01)
        assert not live_summary(path, game).final  # the last race is still open in the log
        final = announced(path, game)
        store.mark(game, "over", final)  # the table closes the race and says the end
        summary = live_summary(path, game)  # at once: not "unfinished" with the old places
        assert summary.final
        assert list(summary.standings) == final["seats"]
        assert summary.winners == tuple(final["winners"]) == ("Blue",)
    finally:
        store.close()


def test_the_judges_end_shows_the_champions_the_table_crowned(tmp_path: Path) -> None:
    """Ended from the panel: the leaders as they stood are the champions, in history too."""
    path = tmp_path / "referee.db"
    store = Store(path)
    try:
        game = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 30, "doubles": "off"}))
        play_round(store, game, 1)
        play_round(store, game, 2)
        live_summary(path, game)
        standings = announced(path, game)
        crowned = {**standings, "final": True, "winners": ["Blue", "Red"]}
        store.mark(game, "ended", True)
        store.mark(game, "over", crowned)
        summary = live_summary(path, game)
        assert summary.final and summary.ended
        assert summary.winners == ("Blue", "Red")
        assert list(summary.standings) == crowned["seats"]
    finally:
        store.close()


def test_a_line_written_after_the_end_never_makes_a_finished_game_unfinished(
        tmp_path: Path) -> None:
    """The table was quit inside the last race's window and a restart voided that round: the
    game was over and announced, and history shows it so."""
    from referee.events import Facts

    path = tmp_path / "referee.db"
    store = Store(path)
    try:
        game = finished_game(store)
        final = announced(path, game)
        store.mark(game, "over", final)
        store.append(game, Facts(2, {"void": True}))
        summary = live_summary(path, game)
        assert summary.final and summary.winners == tuple(final["winners"])
        assert list(summary.standings) == final["seats"]
    finally:
        store.close()
