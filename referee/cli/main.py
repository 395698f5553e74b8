"""The `referee` command: play, demo, replay, export, buttons, doctor, calibrate, speech.

Bad input (a config file, a log line, a flag) is one line on standard error naming the problem and
the fix, and exit status 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee import __version__
from referee.cli.common import HardwareError, UsageError, table_config
from referee.config import (
    DOUBLE_KEYS,
    JUDGE_KEYS,
    SLAP_KEYS,
    ConfigError,
    TableConfig,
    check_pin,
)
from referee.rules.base import Rules
from referee.rules.declare import RulesError, options_from_text
from referee.rules.fromfile import compile_game
from referee.rules.gamefile import load as load_game_file
from referee.rules.registry import games, register, rules_for
from referee.store.database import StoreError, connect, export_lines
from referee.store.tablelog import LogError, dumps, replay
from referee.voice.phrases import list_words

DB_DEFAULT = "default: $REFEREE_DB, else ~/.local/share/table-referee/referee.db"

if TYPE_CHECKING:
    from referee.cli.table import Table


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {text!r} must be a number from 1 to 65535")
    return value


def parse_options(pairs: Sequence[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {pair!r}: write it as key=value, e.g. --option tie_us=2000")
        options[key.strip()] = value.strip()
    return options


def game_file(args: argparse.Namespace) -> type[Rules] | None:
    """The game of `--game-file FILE.toml`, compiled and registered (None without one); a bad file
    is one line naming its key and the fix."""
    path = getattr(args, "game_file", None)
    if path is None:
        return None
    try:
        cls = compile_game(load_game_file(path))
        known = games().get(cls.NAME)
        if known is not None and known.DECLARATION is None:
            raise RulesError(f"{Path(path).name}: name = {cls.NAME!r} is a game the referee "
                             f"knows already; give the game file another name")
    except RulesError as exc:
        raise UsageError(str(exc)) from None
    register(cls)
    return cls


def cmd_replay(args: argparse.Namespace) -> int:
    path = args.log
    try:
        source = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}; give the path of a table log") from None
    try:
        with source:
            result = replay(source, parse_options(args.option), game_file(args))
    except LogError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a text file; a table log is JSON Lines (UTF-8)") from None
    for line in result.lines():
        print(dumps(line))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from referee.cli.table import default_db

    db = Path(args.db) if args.db else default_db()
    if not db.exists():
        raise UsageError(f"no database at {db}; play a game first or give --db PATH")
    try:
        conn = connect(db, readonly=True)
        for line in export_lines(conn, args.game_id):
            print(line)
    except StoreError as exc:
        raise UsageError(f"{db}: {exc}") from None
    return 0


def cmd_play(args: argparse.Namespace, *, demo: bool = False) -> int:
    from referee.cli.table import Table, game_options, use_mock_pins  # looked up now: tests swap

    game = args.game
    config = table_config(args)
    filed = game_file(args)
    if filed is not None:
        if game is not None and game != filed.NAME:
            raise UsageError(f"give GAME or --game-file, not both ({game} and {filed.NAME})")
        game = filed.NAME
    if game is None:
        game = config.game
    cls = rules_for(game)
    lo, hi = cls.SEATS
    if not lo <= len(config.seats) <= hi:
        raise UsageError(f"{game} is for {lo} to {hi} seats, not {len(config.seats)}; "
                         f"adjust --seats")
    try:  # `--option k=v` is text: converted here, once, to the kinds the game declares
        options: dict[str, Any] = options_from_text(cls.known_options(),
                                                    parse_options(args.option), game)
    except RulesError as exc:
        raise UsageError(str(exc)) from None
    if args.mock or demo:
        use_mock_pins()
    host = args.host or config.host
    port = args.port or config.port
    pin = check_pin(args.pin) if args.pin is not None else None
    try:
        rules_for(game)(tuple(s.name for s in config.seats),
                        game_options(config, game, options))  # bad options: before anything
    except RulesError as exc:
        raise UsageError(str(exc)) from None
    # Every check comes before the first word and the first log line: a start that fails
    # (port in use, bad host, unwritable database) says and writes nothing.
    sock = None
    if not args.no_web:
        from referee.scoreboard.app import listen_on

        try:
            sock = listen_on(host, port)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(f"cannot serve the scoreboard on {host}:{port}: {reason}; "
                             f"choose another --port or --host") from None
    try:
        table = Table(config, db=args.db, mock=args.mock or demo, no_speech=args.no_speech,
                      pin=pin, demo=demo)
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    server = None
    try:
        if sock is not None:
            from referee.scoreboard.app import serve_in_thread

            server = serve_in_thread(table, host, port, sock=sock)
        table.subscribe(lambda kind, data: _print_event(table, kind, data))
        signal.signal(signal.SIGTERM, _stop_signal)  # systemctl stop: like Ctrl-C, a clean stop
        try:
            table.start(game, options, resume=not args.new)
        except RulesError as exc:
            raise UsageError(str(exc)) from None
        out = table.out
        engine = table.engine
        title = engine.rules.title() if engine is not None else cls.TITLE  # the variant played
        print(f"Table Referee {__version__}: {title} for "
              f"{', '.join(s.name for s in config.seats)}", file=out)
        print(f"Table PIN: {table.pin}", file=out)
        from referee.cli.doctor import volatile_storage

        volatile = volatile_storage(Path(table.store.path))
        if volatile:  # said at start: "a pulled plug loses nothing" does not hold here
            print(f"Warning: {volatile}", file=out)
        behind = table.store.clock_behind()
        if behind:  # a Pi booted offline with no hardware clock (Trixie has no fake-hwclock)
            print(f"Warning: {behind}", file=out)
        if server is not None:
            print(f"Scoreboard: {server.url}", file=out)
        table.watchdog.ready(f"{title} for {len(config.seats)} seats")  # systemd: it plays
    except BaseException:
        if server is not None:
            server.close()
        elif sock is not None:
            sock.close()
        table.close()
        raise
    try:
        if (args.mock or demo) and sys.stdin.isatty():
            from referee.capture.keyboard import run_keyboard

            run_keyboard(table)
        else:
            _wait_until_over(table, args)
    except KeyboardInterrupt:
        pass
    finally:
        table.watchdog.stopping()
        if server is not None:
            server.close()
        table.close()
    return 0


def _stop_signal(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _wait_until_over(table: Table, args: argparse.Namespace) -> None:
    done = threading.Event()
    table.subscribe(lambda kind, data: done.set() if kind == "over" else None)
    while not done.wait(0.5):
        engine = table.engine
        if args.exit_when_over and engine is not None and engine.rules.status().over:
            break
    if not args.exit_when_over:
        threading.Event().wait()  # serve the scoreboard until stopped


def _print_event(table: Table, kind: str, data: dict[str, Any]) -> None:
    out = table.out
    if kind == "ruling":
        # a seat named, not scored, is printed as the voice says it ("Red (buzzed first)")
        zero_said = table.engine is None or table.engine.rules.ZERO_SAID
        parts = []
        for r in data["rulings"]:
            if r["type"] == "awaiting":
                parts.append(f"waiting for the judge: {', '.join(r['need'])}")
                continue
            margin = "" if r["margin_us"] is None else f", by {r['margin_us'] / 1000:.1f} ms"
            if r["seat"] is None:
                parts.append(f"{r['reason']}{margin}")
            elif not r["delta"] and not zero_said:
                parts.append(f"{r['seat']} ({r['reason']}{margin})")
            else:
                parts.append(f"{r['seat']} {r['delta']:+d} ({r['reason']}{margin})")
        label = "Correction, round" if data["correction"] else "Round"
        print(f"{label} {data['round']}: " + ("; ".join(parts) or "clean round"), file=out)
        if table.engine is not None:
            st = table.engine.rules.standings()
            print("   " + "  ".join(f"{r.seat} {r.score}" for r in st.seats), file=out,
                  flush=True)
    elif kind == "over":
        rows = ", ".join(f"{r['place']}. {r['seat']} ({r['score']})" for r in data["seats"])
        winners = data["winners"]
        print(f"Game over. {'Winner' if len(winners) == 1 else 'Winners'}: {list_words(winners)}. "
              f"{rows}", file=out, flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    args.game = args.demo_game
    args.new = True  # a demo always starts a fresh game
    if args.seats is None:
        args.seats = "Blue,Red,Green,Yellow"
    return cmd_play(args, demo=True)


def cmd_buttons(args: argparse.Namespace) -> int:
    from referee.cli.buttons import run_buttons

    code: int = run_buttons(args)
    return code


def cmd_doctor(args: argparse.Namespace) -> int:
    from referee.cli.doctor import run_doctor

    code: int = run_doctor(args)
    return code


def cmd_calibrate(args: argparse.Namespace) -> int:
    from referee.cli.calibrate import run_calibrate

    return run_calibrate(args)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit status 2."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: {message}; see '{self.prog} --help'\n")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="referee", description="Table Referee: a referee for fast "
                                "card games played on a box of slap buttons.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def table_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--seats", help="seat names in seat order, e.g. Blue,Red,Green,Yellow")
        sp.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option")
        sp.add_argument("--config", help="a TOML config file (see hardware/config.example.toml)")
        sp.add_argument("--db", help=f"the SQLite table log ({DB_DEFAULT})")
        sp.add_argument("--host", help="scoreboard address (default 127.0.0.1)")
        sp.add_argument("--port", type=port_number, help="scoreboard port (default 8000)")
        sp.add_argument("--no-speech", action="store_true", help="print phrases instead")
        sp.add_argument("--pin", help="the table PIN for the judge panel, setup and the virtual "
                                      "box: 4 to 8 digits (default: 6 random digits, printed at "
                                      "start)")
        sp.add_argument("--no-web", action="store_true", help="no scoreboard")
        sp.add_argument("--language", metavar="CODE",
                        help="the table's language: en, de or es (the voice and the pages)")
        sp.add_argument("--new", action="store_true", help="start a new game, never resume")
        sp.add_argument("--exit-when-over", action="store_true", help=argparse.SUPPRESS)

    names = list(games())
    listed = f"{', '.join(names[:-1])} or {names[-1]}"
    default_game = TableConfig.game  # the game a table plays when its config names none
    sp = sub.add_parser("play", help="run a live table")
    sp.add_argument("game", nargs="?", choices=names, metavar="GAME", help=listed)
    sp.add_argument("--mock", action="store_true", help="mocked pins (no hardware)")
    sp.add_argument("--game-file", metavar="FILE.toml",
                    help="play a game declared in a game file (see docs/games.md)")
    table_args(sp)
    sp.set_defaults(func=cmd_play)

    sp = sub.add_parser("demo", help=f"4 seats of {rules_for(default_game).TITLE} on mocked "
                                     f"pins, from the keyboard")
    sp.add_argument("--game", dest="demo_game", default=default_game, choices=names,
                    metavar="GAME", help=f"{listed} (default {default_game})")
    table_args(sp)
    sp.set_defaults(func=cmd_demo, mock=True)

    sp = sub.add_parser(
        "replay", help="re-rule a recorded table log",
        description="Re-rule a recorded table log with the same rules the live table uses, and "
                    "print each ruling and the standings as JSON Lines. A bad line is reported "
                    "with its line number and exit status 2.")
    sp.add_argument("log", help="a table log (JSON Lines, as referee export writes it), "
                                "or - to read standard input")
    sp.add_argument("--option", action="append", metavar="KEY=VALUE",
                    help="change a game option for this replay, e.g. --option tie_us=2000 "
                         "(repeat for several); the log's own options are kept otherwise")
    sp.add_argument("--game-file", metavar="FILE.toml",
                    help="the game file of a game played from one (its log carries the "
                         "declaration already; this one is used instead)")
    sp.set_defaults(func=cmd_replay)

    sp = sub.add_parser(
        "export", help="write a game's table log to standard output",
        description="Write one game's table log (JSON Lines, every option with its value) to "
                    "standard output, for referee replay or to keep.")
    sp.add_argument("game_id", nargs="?", type=int,
                    help="the game's number, as the History page lists it (default: the latest)")
    sp.add_argument("--db", help=f"the SQLite database to read ({DB_DEFAULT})")
    sp.set_defaults(func=cmd_export)

    sp = sub.add_parser(
        "buttons", help="button check: press each button",
        description="Check a freshly built box: each seat LED lights in turn, then each button is "
                    "asked for by name; the summary names every silent, stuck or swapped button "
                    "with its fix. Exit status 0 when all is well, 1 when something needs fixing.")
    sp.add_argument("--config", help="the TOML config whose pins to check "
                                     "(see hardware/config.example.toml; default: the standard pins)")
    sp.add_argument("--mock", action="store_true",
                    help="mocked pins, no hardware: on a terminal the keyboard is the box "
                         f"({SLAP_KEYS[0]}-{SLAP_KEYS[-1]} slap, {DOUBLE_KEYS[0]}-{DOUBLE_KEYS[-1]} "
                         f"double, {'/'.join(JUDGE_KEYS)} judge YES/NO/UNDO, x stops)")
    sp.add_argument("--seats", help="seat names in seat order, e.g. Blue,Red,Green,Yellow "
                                    "(default: the config's)")
    sp.add_argument("--no-speech", action="store_true",
                    help="print each press instead of saying it")
    sp.add_argument("--seconds", type=float, default=60.0,
                    help="end the check after this many seconds (default 60)")
    sp.add_argument("--prompt-seconds", type=float, default=10.0,
                    help="how long to wait for each button asked for before moving on "
                         "(default 10)")
    sp.add_argument("--no-judge", action="store_true",
                    help="the box has no judge keypad: do not ask for its keys")
    sp.set_defaults(func=cmd_buttons)

    sp = sub.add_parser(
        "doctor", help="check GPIO, pins, audio, speech, database, scoreboard",
        description="Check that this machine can run a table: GPIO access and the pin factory, "
                    "the configured pins, the audio output, espeak-ng and pyttsx3, the database "
                    "and the scoreboard's port. Each problem is one line with its fix.")
    sp.add_argument("--config", help="the TOML config to check (see hardware/config.example.toml)")
    sp.add_argument("--mock", action="store_true",
                    help="mocked pins: check everything but the GPIO hardware (on a laptop)")
    sp.add_argument("--db", help=f"the SQLite database to check ({DB_DEFAULT})")
    sp.set_defaults(func=cmd_doctor)

    sp = sub.add_parser("calibrate", help="measure the speaker's delay with a microphone")
    sp.add_argument("--config", help="the config to write output_delay_ms into")
    sp.add_argument("--device", help="sound output (part of its name; default: [speech] device)")
    sp.add_argument("--mic", help="microphone (part of its name; default: the first)")
    sp.add_argument("--clicks", type=int, default=10, choices=range(3, 101), metavar="N",
                    help="how many clicks to play (3-100, default 10)")
    sp.add_argument("--dry-run", action="store_true", help="measure, but do not write the config")
    sp.set_defaults(func=cmd_calibrate)

    # listed for --help only: `main` hands `referee speech ...` to the voice's own parser
    sp = sub.add_parser("speech", help="speech tools: render DIR, say TEXT, doctor",
                        add_help=False)
    sp.add_argument("rest", nargs=argparse.REMAINDER)
    return p


PATH_ARGS = ("config", "db", "log")


def writable_cwd(args: argparse.Namespace) -> None:
    """lgpio makes its notification pipe (.lgd-nfy0) in the current directory when gpiozero
    imports it; from a directory this user cannot write (systemd's default /, a read-only
    checkout) the import fails and gpiozero silently falls back to a factory without edge
    times. So move to a writable directory first, after making path arguments absolute."""
    try:
        here = os.getcwd()
    except FileNotFoundError:
        here = ""
    if here and os.access(here, os.W_OK | os.X_OK):
        return
    for name in PATH_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value != "-" and here:
            setattr(args, name, os.path.join(here, value))
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    for place in (os.environ.get("STATE_DIRECTORY"), os.path.join(state, "table-referee"),
                  tempfile.gettempdir()):
        if not place:
            continue
        try:
            os.makedirs(place, exist_ok=True)
        except OSError:
            continue
        if os.access(place, os.W_OK | os.X_OK):
            os.chdir(place)
            return


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["speech"]:  # its own parser: render DIR, say TEXT, doctor
        from referee.engine.loop import phrasebook
        from referee.rules.registry import games
        from referee.voice.speech import speech_main

        return speech_main(argv[1:], lambda language: [phrasebook(cls, language)
                                                       for cls in games().values()])
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    writable_cwd(args)
    try:
        code: int = args.func(args)
        return code
    except (UsageError, ConfigError, RulesError, StoreError, HardwareError) as exc:
        print(f"referee {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
