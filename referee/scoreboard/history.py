"""History: past games re-ruled from the log, reaction-time statistics and a rating per player.

Every stored game (practice games excluded) is replayed with the same code `referee replay` uses,
so history always agrees with the rules; results are cached per game until its log grows. A game
still being played grows with every press: the first time it is seen growing, its rules are built
once in the background (the same driver a resumed game uses; requests meanwhile get the summary
they had), and from then on each request feeds them only the lines logged since the one before,
so the page is current and all the requests of an evening together cost about one replay of the
game, whatever their number. When the game is over it is replayed whole once, as `referee replay`
rules it. A log that cannot be driven in pieces is replayed whole at most every `LIVE_REFRESH_S`.

Rating: Elo over pairwise results. In a game of n players each pair meets once: a better place
scores 1, a shared place ½ (a tie is half a win), a worse place 0. Each player's rating moves by
K/(n−1) × (scored − expected), from the ratings before the game, games taken in the order played.
Only games that are over (or ended by the judge) after at least one ruled round count, and only
real games: every game a `referee demo` table plays (its first, the next ones, the real game after
its practice) is listed but neither rated nor counted in the reaction times. A game the table
announced as over (its "over" mark) shows at once as it was announced, even where its log alone
does not end it (the judge's End, a race closed by the table's clock after the last line, a line
written after the end); a correction the log rules over follows.
A reaction is a press answering a cue; the press that opens a round (a claim, in games whose
rounds a press opens) answers nothing, so it is no reaction (it would read as "0 ms").
"""

from __future__ import annotations

import sqlite3
import statistics
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

from referee.events import Standings
from referee.rules.base import Rules, RulesError
from referee.rules.registry import rules_for
from referee.rules.replay import drive
from referee.store.database import StoreError, connect, export_lines, game_start, games, marks
from referee.store.tablelog import LogError, event_from_line, new_rules, replay

START_RATING = 1000.0
K_FACTOR = 32.0
LIVE_REFRESH_S = 10.0


@dataclass(frozen=True)
class GameSummary:
    id: int
    game: str
    title: str
    seats: tuple[str, ...]
    created: str
    rounds: int
    final: bool
    ended: bool
    standings: tuple[dict[str, Any], ...]
    winners: tuple[str, ...]
    reactions_us: dict[str, tuple[int, ...]] = field(default_factory=dict)
    error: str | None = None
    demo: bool = False
    date_approximate: bool = False  # dated from the last game's date: the clock was behind it

    @property
    def rated(self) -> bool:
        return (self.error is None and not self.demo and self.rounds > 0
                and (self.final or self.ended))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "game": self.game, "title": self.title, "seats": list(self.seats),
                "created": self.created, "rounds": self.rounds, "final": self.final,
                "ended": self.ended, "standings": list(self.standings),
                "winners": list(self.winners), "error": self.error, "demo": self.demo,
                "date_approximate": self.date_approximate}


_cache: dict[tuple[str, int], tuple[int, float, GameSummary]] = {}  # (stamp, when, summary)
_cache_lock = threading.Lock()
_busy: dict[tuple[str, int], threading.Lock] = {}  # one replay or update of a game at a time


@dataclass
class _Fold:
    """A game in play, its rules driven as its log grows: an update feeds only the new lines."""

    rules: Rules
    seq: int  # the last event fed (events.seq)
    lines: int  # lines fed, the game line included (for line numbers in errors)


_folds: dict[tuple[str, int], _Fold] = {}  # the games seen growing, most recent last
_unfoldable: set[tuple[str, int]] = set()  # logs that cannot be driven in pieces: replayed
MAX_FOLDS = 2  # games in play at once worth keeping rules for (one table plays one game)


def _stamp(conn: sqlite3.Connection, game_id: int) -> tuple[int, bool]:
    """The game's events counted, and its end marks: a game that ends (the table marks it over
    or ended, with no line logged) is summarized again at once."""
    (count,) = conn.execute("SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,)).fetchone()
    ended = bool(marks(conn, game_id, "ended"))
    over = bool(_announced(conn, game_id))
    return _stamp_of(int(count), ended, over), ended


def _stamp_of(count: int, ended: bool, over: bool) -> int:
    return count * 4 + int(over) * 2 + int(ended)


def _lines_of(stamp: int) -> int:
    """The log lines a stamp counts: the game line and its events."""
    return stamp // 4 + 1


def _announced(conn: sqlite3.Connection, game_id: int) -> dict[str, Any] | None:
    """The final standings the table said at the end (its latest "over" mark), if it said any."""
    said = [m for m in marks(conn, game_id, "over") if isinstance(m, dict) and m.get("final")]
    return said[-1] if said else None


def _as_announced(summary: GameSummary, said: dict[str, Any] | None) -> GameSummary:
    """A game the table announced as over shows as it was announced: the log alone may not end
    it (the judge's End, a race the table's clock closed after the last line, a line written
    after the end); once the log rules it over too, the log's standings follow any correction."""
    if said is None or summary.final or summary.error is not None:
        return summary
    return replace(summary, final=True, standings=tuple(said.get("seats", ())),
                   winners=tuple(said.get("winners", ())))


def summarize(conn: sqlite3.Connection, row: dict[str, Any], db_key: str = "") -> GameSummary:
    game_id = int(row["id"])
    stamp, ended = _stamp(conn, game_id)
    key = (db_key, game_id)
    with _cache_lock:
        hit = _cache.get(key)
        busy = _busy.setdefault(key, threading.Lock())
    if hit is not None and hit[0] == stamp:
        return hit[2]
    if hit is not None and db_key and stamp % 4 == 0:  # it grew: a game in play (not marked
        # over or ended: a game the table has ended is summarized at once, as it was announced)
        if not busy.acquire(blocking=False):
            return hit[2]  # being brought up to date right now: the summary a moment old
        handed_over = False
        try:
            fold = _folds.get(key)
            if fold is not None:
                return _update(conn, row, key, fold, ended)
            if key in _unfoldable:  # replayed whole, at most every LIVE_REFRESH_S
                if time.monotonic() - hit[1] < LIVE_REFRESH_S:
                    return hit[2]
                target: Any = _refresh
            else:  # first seen growing: its rules are built once, away from the request
                target = _build_fold
            threading.Thread(target=target, args=(db_key, row, busy), daemon=True,
                             name="history-refresh").start()
            handed_over = True
            return hit[2]
        finally:
            if not handed_over:
                busy.release()
    with busy:  # the first request for a game: others wait for this one replay, not their own
        with _cache_lock:
            hit = _cache.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[2]
        if stamp % 4:  # ended: replayed whole from now on, its rules in play let go
            _folds.pop(key, None)
        return _summarize(conn, row, db_key, stamp, ended)


def _update(conn: sqlite3.Connection, row: dict[str, Any], key: tuple[str, int], fold: _Fold,
            ended: bool) -> GameSummary:
    """Feed a game in play the lines logged since the last request; its summary, current."""
    game_id = int(row["id"])
    try:
        _feed(conn, game_id, fold)
    except (LogError, RulesError, sqlite3.Error, ValueError):
        _folds.pop(key, None)  # this log is replayed whole from now on
        _unfoldable.add(key)
        stamp, ended = _stamp(conn, game_id)
        return _summarize(conn, row, key[0], stamp, ended)
    rules = fold.rules
    said = _announced(conn, game_id)
    summary = _as_announced(_from_rules(_base(conn, row, ended), rules, rules.standings()), said)
    stamp = _stamp_of(fold.lines - 1, ended, said is not None)
    with _cache_lock:
        _cache[key] = (stamp, time.monotonic(), summary)
    if ended or said is not None or rules.status().over:  # over: replayed whole, once
        _folds.pop(key, None)
        _summarize(conn, row, key[0], stamp, ended)
    return summary


def _feed(conn: sqlite3.Connection, game_id: int, fold: _Fold) -> None:
    rows = conn.execute("SELECT seq, body FROM events WHERE game_id = ? AND seq > ? ORDER BY seq",
                        (game_id, fold.seq)).fetchall()
    if not rows:
        return
    game = fold.rules.NAME  # its facts lines are read as the game declares them
    items = [(fold.lines + i, event_from_line(body, game))
             for i, (_, body) in enumerate(rows, start=1)]
    cues = fold.rules.round_count() if fold.rules.ROUNDS_FROM_CUES else 0
    drive(fold.rules, items, finish=False, cues_before=cues)
    fold.seq = int(rows[-1][0])
    fold.lines += len(rows)


def _build_fold(db_key: str, row: dict[str, Any], busy: threading.Lock) -> None:
    key = (db_key, int(row["id"]))
    try:
        conn = connect(db_key, readonly=True)
        try:
            fold = _Fold(new_rules(game_start(row)), seq=0, lines=1)
            _feed(conn, key[1], fold)
            _folds[key] = fold
            while len(_folds) > MAX_FOLDS:
                _folds.pop(next(iter(_folds)))
            _update(conn, row, key, fold, _stamp(conn, key[1])[1])
        finally:
            conn.close()
    except (LogError, RulesError, StoreError, sqlite3.Error, ValueError):
        _unfoldable.add(key)  # replayed whole, every LIVE_REFRESH_S at most
    finally:
        busy.release()


def _refresh(db_key: str, row: dict[str, Any], busy: threading.Lock) -> None:
    try:
        conn = connect(db_key, readonly=True)
        try:
            stamp, ended = _stamp(conn, int(row["id"]))
            _summarize(conn, row, db_key, stamp, ended)
        finally:
            conn.close()
    except (StoreError, sqlite3.Error):
        pass  # the next request tries again
    finally:
        busy.release()


def _known_game(name: str) -> type[Rules] | None:
    try:
        return rules_for(name)
    except RulesError:
        return None  # a game no longer installed: shown by its log name


def _base(conn: sqlite3.Connection, row: dict[str, Any], ended: bool) -> dict[str, Any]:
    game_id = int(row["id"])
    cls = _known_game(row["game"])
    return {"id": game_id, "game": row["game"], "title": cls.TITLE if cls else row["game"],
            "seats": tuple(row["seats"]), "created": row["created"], "ended": ended,
            "demo": bool(marks(conn, game_id, "demo")),
            "date_approximate": bool(marks(conn, game_id, "date_approximate"))}


def _from_rules(base: dict[str, Any], rules: Rules, st: Standings) -> GameSummary:
    reactions: dict[str, list[int]] = {}
    opened_by_press = not rules.ROUNDS_FROM_CUES  # a claim opens the round: no reaction
    for number in range(1, rules.round_count() + 1):
        for seat, us in rules.reactions(number).items():
            if us > 0 or (us == 0 and not opened_by_press):
                reactions.setdefault(seat, []).append(us)
    return GameSummary(
        **{**base, "title": rules.title()}, rounds=rules.status().round, final=st.final,
        standings=tuple(r.to_json() for r in st.seats), winners=tuple(st.winners),
        reactions_us={s: tuple(v) for s, v in reactions.items()})


def _summarize(conn: sqlite3.Connection, row: dict[str, Any], db_key: str, stamp: int,
               ended: bool) -> GameSummary:
    """The game's summary from a whole replay of its log, as `referee replay` rules it."""
    game_id = int(row["id"])
    base = _base(conn, row, ended)
    try:
        # read up to the counted events only: a press logged meanwhile waits for the next stamp
        result = replay(_first_lines(export_lines(conn, game_id), _lines_of(stamp)))
    except (LogError, RulesError, StoreError) as exc:
        summary = GameSummary(**base, rounds=0, final=False, standings=(), winners=(),
                              error=str(exc))
    else:
        summary = _as_announced(_from_rules(base, result.rules, result.standings),
                                _announced(conn, game_id))
    with _cache_lock:
        _cache[(db_key, game_id)] = (stamp, time.monotonic(), summary)
    return summary


def _first_lines(lines: Any, n: int) -> Any:
    for i, line in enumerate(lines):
        if i >= n:
            return
        yield line


def past_games(conn: sqlite3.Connection, db_key: str = "") -> list[GameSummary]:
    """Every game that is not a practice game, oldest first."""
    return [summarize(conn, row, db_key) for row in games(conn)]


def table_games(store: Any) -> list[GameSummary]:
    """`past_games` of a table's store, through a reader connection of its own."""
    conn = store.reader()
    try:
        return past_games(conn, str(store.path))
    finally:
        conn.close()


@dataclass
class PlayerStats:
    name: str
    reactions_us: list[int] = field(default_factory=list)
    rating: float = START_RATING
    games: int = 0
    wins: float = 0.0

    def to_json(self) -> dict[str, Any]:
        r = self.reactions_us
        return {
            "name": self.name,
            "rating": round(self.rating),
            "games": self.games,
            "wins": self.wins,
            "reactions": {
                "count": len(r),
                "median_ms": round(statistics.median(r) / 1000, 1) if r else None,
                "best_ms": round(min(r) / 1000, 1) if r else None,
            },
        }


def player_stats(summaries: list[GameSummary]) -> list[PlayerStats]:
    """Reaction times pooled by player name and Elo ratings, best rating first."""
    players: dict[str, PlayerStats] = {}

    def player(name: str) -> PlayerStats:
        return players.setdefault(name, PlayerStats(name))

    for game in summaries:
        if game.demo:
            continue
        for seat, times in game.reactions_us.items():
            player(seat).reactions_us.extend(times)
        if not game.rated:
            continue
        place = {row["seat"]: int(row["place"]) for row in game.standings}
        names = [s for s in game.seats if s in place]
        if len(names) < 2:
            continue
        before = {s: player(s).rating for s in names}
        firsts = [s for s in names if place[s] == 1]
        for s in names:
            scored = expected = 0.0
            for other in names:
                if other == s:
                    continue
                expected += 1.0 / (1.0 + 10 ** ((before[other] - before[s]) / 400.0))
                scored += 1.0 if place[s] < place[other] else 0.5 if place[s] == place[other] else 0.0
            p = player(s)
            p.rating += K_FACTOR / (len(names) - 1) * (scored - expected)
            p.games += 1
            if s in firsts:
                p.wins += 1.0 if len(firsts) == 1 else 0.5
    return sorted(players.values(), key=lambda p: (-p.rating, p.name))


def chart(stats: list[PlayerStats], width: int = 480, row: int = 34) -> dict[str, Any]:
    """Geometry of the reaction-time chart: one bar per player to the median, a tick at the best."""
    rows = [p for p in stats if p.reactions_us]
    rows.sort(key=lambda p: statistics.median(p.reactions_us))
    label_w, pad, value_w = 112, 12, 44  # value_w: room for the median's figure after its bar
    top = max((statistics.median(p.reactions_us) for p in rows), default=0) / 1000
    step = 100 if top <= 600 else 250 if top <= 1500 else 500
    scale_max = max(step, (int(top // step) + 1) * step)
    plot_w = width - label_w - pad * 2 - value_w

    def x(ms: float) -> float:
        return round(label_w + plot_w * ms / scale_max, 1)

    bars = []
    for i, p in enumerate(rows):
        median = statistics.median(p.reactions_us) / 1000
        best = min(p.reactions_us) / 1000
        y = pad + i * row
        bars.append({"name": p.name, "y": y, "text_y": y + row * 0.6, "x0": label_w,
                     "w": max(1.0, x(median) - label_w), "h": row - 10, "best_x": x(best),
                     "median": round(median), "best": round(best), "count": len(p.reactions_us)})
    height = pad * 2 + len(rows) * row + 24
    ticks = [{"x": x(ms), "ms": ms} for ms in range(0, scale_max + 1, step)]
    return {"width": width, "height": height, "bars": bars, "ticks": ticks,
            "axis_y": pad + len(rows) * row, "label_w": label_w}
