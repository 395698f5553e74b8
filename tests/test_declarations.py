"""The games declare; the engine, the voice, the scoreboard and the command line ask.

Each game's `Rules` class holds its options (kind, unit, choices, label), its facts (kind, label,
question, the keypad's YES and NO), its schedule, its words and its reasons (an enum with phrase
keys). These tests hold the parts to that: no game named outside the rules, no probing, one check
of an event before it reaches the log, one replay driver.
"""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

import referee
from referee.cli.table import Table
from referee.config import default_config
from referee.engine.loop import open_game, resume_game
from referee.events import Cue, Facts, GameStart, JudgeKey, Penalty, Press, Ruling
from referee.rules.base import Rules, Shared
from referee.rules.declare import Option, RulesError
from referee.rules.registry import games
from referee.rules.spank import SpankThePig
from referee.scoreboard.app import create_app
from referee.store.database import Store, export_lines
from referee.store.tablelog import replay
from referee.voice.announce import PrintAnnouncer

PACKAGE = Path(referee.__file__).parent
S = 1_000_000


NUMBERS = r"(?:\d+|\{n\}|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"


def _game_words() -> set[str]:
    """Every word that names a game or its own things: log names, titles, units, variants, the
    words of its calls ("Spank", "PIG!", "flip!", "Pass!") and of the judge's example penalty."""
    found = {"spank", "pig", "pigs", "whammy", "whammies", "spoon", "spoons", "nose", "tongue",
             "hippo"}
    for name, cls in games().items():
        found |= {name, cls.TITLE.lower(), cls.UNIT, *cls.UNIT_WORDS}
        for option in cls.OPTIONS:
            found |= {str(c).lower() for c in option.choices if isinstance(c, str) and
                      c not in ("off", "nothing", "buttons", "judge", "slowest")}
    return found - {"cards", "card", "lives", "letter", "letters"}  # plain English words too


def _game_pattern() -> re.Pattern[str]:
    """A game's words, or a count of a game's unit ("one whammy", "two lives", "18 cards"), or
    the longest fixed part of one of its own phrases ("face-up cards into your whammy pile")."""
    words = sorted(_game_words(), key=len, reverse=True)
    units = {w for cls in games().values() for form in (cls.unit_said().one, cls.unit_said().many)
             for w in [form.replace("{n}", "").strip()]}
    chunks = {max(re.split(r"\{[^}]*\}", beat), key=len).strip()
              for cls in games().values() for beats in cls.PHRASES.values() for beat in beats}
    beats = {b for cls in games().values() for call in cls.CALLS for b in cls.PHRASES[call]
             if "{" not in b and len(b) > 3}  # a call's own words: "Spank", "PIG!", "flip!"
    return re.compile("|".join([
        r"\b(" + "|".join(re.escape(w) for w in words) + r")\b",
        NUMBERS + r" (" + "|".join(re.escape(u) for u in sorted(units)) + r")\b",
        *(re.escape(c) for c in sorted(chunks) if len(c) >= 12),
        *(re.escape(b) + ("" if b[-1] in "!,." else r"\b") for b in sorted(beats))]),
        re.IGNORECASE)


# Lines that may name a game although they are outside the rules (none today; an entry that no
# longer matches fails the test, so the list never goes stale).
KNOWN_GAME_WORDS: dict[tuple[str, str], str] = {}
PARTS_NAMING_NO_GAME = ["engine", "scoreboard", "voice", "cli", "web"]


def _files(part: str) -> list[Path]:
    if part == "web":
        return sorted(p for p in (PACKAGE.parent / "web").rglob("*") if p.is_file()
                      and p.suffix in (".html", ".js", ".css"))
    return sorted((PACKAGE / part).rglob("*.py"))


@pytest.mark.parametrize("part", PARTS_NAMING_NO_GAME)
def test_no_part_but_the_rules_names_a_game(part: str) -> None:
    """Issue 22: a grep finds no game's words in the engine, scoreboard, voice, cli or web/
    (a game is one module: its phrases, units and calls are declared beside its rules)."""
    pattern = _game_pattern()
    known = {k: v for k, v in KNOWN_GAME_WORDS.items() if k[0].startswith(part + "/")}
    seen, hits = set(), []
    for path in _files(part):
        where = str(path.relative_to(PACKAGE.parent if part == "web" else PACKAGE))
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            found = pattern.search(line)
            entry = next((k for k in known if k[0] == where and k[1] in line), None)
            if entry is not None:
                seen.add(entry)
            elif found is not None:
                hits.append(f"{where}:{number}: {found.group(0)!r} in {line.strip()}")
    assert not hits, "\n".join(hits)
    assert seen == set(known), f"clean now, drop from KNOWN_GAME_WORDS: {set(known) - seen}"


def test_the_game_word_grep_finds_a_game_s_words() -> None:
    """The grep above can fail: it finds each kind of game word it looks for."""
    pattern = _game_pattern()
    for line in ('say("Spank", "the", "PIG!")', "Blue, flip!", "Pass!", "two lives lost",
                 "one whammy", "18 cards", "{n} cards", "take 3 face-up cards into your whammy pile.",
                 "slapped the hippo", "pigs-tail", "Pig's Tail"):
        assert pattern.search(line), line
    for line in ("the sound card", "a USB card may appear", "one set of four", "press a button"):
        assert not pattern.search(line), line


def test_nothing_outside_the_tests_names_the_made_up_game() -> None:
    """The made-up game brings its own phrases (no test adds them to the voice's table)."""
    from tests.made_up_game import FirstAfterTheBeep

    names = {FirstAfterTheBeep.NAME, *FirstAfterTheBeep.PHRASES, "made_up_game"}
    pattern = re.compile("|".join(re.escape(n) for n in names))
    for part in PARTS_NAMING_NO_GAME:
        for path in _files(part):
            assert not pattern.search(path.read_text()), path
    assert set(FirstAfterTheBeep.PHRASES) >= set(FirstAfterTheBeep.CALLS) == {"beep"}


def test_nothing_probes_a_game_or_the_engine_s_ports() -> None:
    probes = {"engine": ("getattr(", ".options.get(", ".options["),
              "scoreboard": ("getattr(rules", "getattr(self.rules", "not-a-value",
                             '.get("doubles', "check_facts"),
              "cli": ("getattr(rules", "getattr(self.rules", ".options.get(")}
    for part, found in probes.items():
        for path in (PACKAGE / part).rglob("*.py"):
            text = path.read_text()
            for probe in found:
                assert probe not in text, (path.name, probe)


def test_every_game_declares_what_the_rest_asks() -> None:
    for name, cls in games().items():
        assert cls.NAME == name and cls.TITLE and len(cls.UNIT_WORDS) == 2
        for option in cls.known_options().values():
            assert option.label and option.help and option.kind in ("number", "choice")
            if option.kind == "number":
                assert option.lo <= option.default <= option.hi, (name, option.name)
                assert option.read(option.default) == option.default
                assert option.read(str(option.default), text=True) == option.default
            else:
                assert option.default is None or option.default in option.choices
        for fact in cls.facts():
            assert fact.label and fact.question and fact.ask, (name, fact.name)
            fact.check(fact.yes)  # the keypad's YES and NO are values the fact takes
            fact.check(fact.no)
        for reasons in cls.reasons():
            assert all(isinstance(r.value, str) and r.value for r in reasons)
        assert Shared in cls.reasons()


def test_an_option_is_read_as_it_is_declared() -> None:
    deck = SpankThePig.known_options()["deck"]
    assert (deck.kind, deck.unit, deck.label) == ("number", "cards", "Deck")
    # PRODUCT.md, "Table log": option values are JSON values of the declared kind (every numeric
    # option a JSON integer: "1000" and 2500.5 are bad values); text is converted only from
    # `--option key=value`.
    assert deck.read(36) == 36 and deck.read(" 36 ", text=True) == 36
    for bad in ("x", True, 1, "1e3", "36", 36.0, 2500.5):
        with pytest.raises(RulesError, match=r"option deck=.*expected a whole number from 2 to"):
            deck.read(bad)
    for bad_text in ("x", "1", "1e3", "36.0", "٣٦"):
        with pytest.raises(RulesError, match=r"option deck=.*expected a whole number from 2 to"):
            deck.read(bad_text, text=True)
    lives = Option.choice("lives", 1, (1, 3), label="Lives", help="h")
    assert lives.read("3", text=True) == 3 and lives.read(1) == 1
    for bad in ("3", 3.0, True):
        with pytest.raises(RulesError, match=r"option lives=.*: expected 1 or 3"):
            lives.read(bad)
    with pytest.raises(RulesError, match=r"option lives=2: expected 1 or 3"):
        lives.read(2)
    doubles = SpankThePig.known_options()["doubles"]
    with pytest.raises(RulesError, match="expected one of buttons, judge, off"):
        doubles.read("Buttons")


def _setup_data(client: Any) -> dict[str, Any]:
    page = client.get("/setup").get_data(as_text=True)
    found = re.search(r'<script type="application/json" id="setup-data">(.*?)</script>', page,
                      re.DOTALL)
    assert found is not None
    data: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return data


@pytest.fixture
def table(mock_factory: Any, tmp_path: Path) -> Any:
    t = Table(default_config(["Blue", "Red", "Green", "Yellow"]), db=tmp_path / "t.db",
              mock=True, no_speech=True, pin="1234", out=io.StringIO(), box=False)
    yield t
    t.close()


def test_the_setup_page_shows_options_as_the_games_declare_them(table: Table) -> None:
    """Not guessed from a parser's error text: a choice of numbers (Pig's lives, 1 or 3) was
    offered as a free number field, and no option had a label or a unit."""
    client = create_app(table).test_client()
    for data in (_setup_data(client), client.get("/api/setup").get_json()):
        pig = {g["name"]: g for g in data["games"]}["pig"]
        options = {o["name"]: o for o in pig["options"]}
        assert (options["lives"]["kind"], options["lives"]["choices"]) == ("choice", [1, 3])
        assert options["window_ms"]["label"] == "Race window"
        assert (options["window_ms"]["unit"], options["window_ms"]["min"]) == ("ms", 1000)
        assert [f["name"] for f in pig["facts"]] == ["claim", "void"]


def test_the_judge_keypad_gives_what_each_fact_declares(tmp_path: Path) -> None:
    store = Store(tmp_path / "k.db")
    try:
        engine = open_game(store, GameStart("spank-the-pig", ("A", "B", "C"),
                                            {"doubles": "buttons"}),
                           PrintAnnouncer(io.StringIO(), quiet=True), auto=False)
        engine.feed(Cue(S))
        engine.feed(Press(S + 100_000, "A"))  # one of three slapped: pigs? doubles? ask
        engine.feed(Press(S + 150_000, "A", "double"))
        engine.rules.advance(5 * S)
        assert engine.rules.status().awaiting is not None
        engine._handle(JudgeKey(5 * S, "yes"))
        assert engine.rules.facts_for(1) == {"pigs": 1, "doubles": ["double"]}
    finally:
        store.close()


@pytest.mark.parametrize(("game", "first", "refused", "message"), [
    ("spank-the-pig", Cue(2 * S), Cue(S), "comes before the previous cue"),
    ("pig", Press(S, "A"), Penalty(1, "B", 1, " "), "a penalty needs a reason"),
    ("pigs-tail", Cue(S, "A"), Cue(2 * S), "names the flipper"),
    ("spank-the-pig", Cue(S), Facts(1, {"match": True}), "facts field 'match' is not used"),
])
def test_what_the_rules_refuse_never_reaches_the_log(tmp_path: Path, game: str, first: Any,
                                                      refused: Any, message: str) -> None:
    """The engine asks the rules (`Rules.check`) before it writes: a refused event used to be
    written first, and then the log itself could not be replayed."""
    store = Store(tmp_path / "r.db")
    try:
        engine = open_game(store, GameStart(game, ("A", "B", "C"), {}),
                           PrintAnnouncer(io.StringIO(), quiet=True), auto=False)
        engine.feed(first)
        with pytest.raises(ValueError, match=message):
            engine.feed(refused)
        lines = list(export_lines(store.conn, engine.game_id))
        assert len(lines) == 2  # the game line and the first event only
        replay(lines)  # and the log still replays
    finally:
        store.close()


def test_check_changes_nothing() -> None:
    rules = SpankThePig(["A", "B", "C"], {"doubles": "off"})
    rules.feed(Cue(S))
    before = (rules.round_count(), rules.judge_log[:], rules.outputs())
    for event in (Cue(2 * S), Press(S + 1, "A"), Facts(1, {"pigs": 2})):
        rules.check(event)
    assert (rules.round_count(), rules.judge_log, rules.outputs()) == before


LOG = [
    {"type": "game", "game": "spank-the-pig", "seats": ["A", "B", "C"],
     "options": {"doubles": "off", "deck": 9}},
    {"type": "cue", "t_us": 1 * S},
    {"type": "press", "t_us": 1 * S + 300_000, "seat": "B"},
    {"type": "press", "t_us": 1 * S + 200_000, "seat": "A"},  # logged late: time decides
    {"type": "cue", "t_us": 5 * S},
    {"type": "press", "t_us": 5 * S + 100_000, "seat": "C"},
    {"type": "facts", "round": 2, "pigs": 0},
    {"type": "penalty", "round": 1, "seat": "C", "count": 1, "reason": "slapped the hippo"},
    {"type": "press", "t_us": 4 * S + 900_000, "seat": "B"},  # early for round 2, logged last
    {"type": "cue", "t_us": 9 * S},
]


def test_resume_and_replay_drive_the_rules_the_same_way(tmp_path: Path) -> None:
    """One driver (`referee.rules.replay.drive`) for both: a resumed game's rulings are the
    replay's, whatever order its lines were logged in."""
    store = Store(tmp_path / "d.db")
    try:
        game = LOG[0]
        start = GameStart(game["game"], tuple(game["seats"]), game["options"])
        rules = SpankThePig(start.seats, start.options)
        game_id = store.new_game(GameStart(start.game, start.seats, rules.options))
        from referee.store.tablelog import event_from_json

        for line in LOG[1:]:
            store.append(game_id, event_from_json(line))
        engine = resume_game(store, game_id, PrintAnnouncer(io.StringIO(), quiet=True),
                             auto=False)
        resumed = engine.rules
        resumed.finish()
        replayed = replay(json.dumps(x) for x in LOG)
        assert [o.to_json() for o in resumed.outputs()] == [o.to_json() for o in replayed.outputs]
        # round 3 was cut by the stop: voided on resume, never half-ruled
        assert resumed.facts_for(3) == {"void": True}
    finally:
        store.close()


def test_every_ruling_carries_a_declared_reason() -> None:
    out = replay(json.dumps(x) for x in LOG)
    declared = {member for reasons in SpankThePig.reasons() for member in reasons}
    assert out.outputs and all(o.reason in declared for o in out.outputs if isinstance(o, Ruling))
    penalty = next(o for o in out.outputs if isinstance(o, Ruling) and o.reason is Shared.PENALTY)
    assert penalty.to_json()["reason"] == "slapped the hippo"


def test_a_game_without_declarations_cannot_be_made() -> None:
    class Half(Rules):  # declares nothing, implements nothing
        NAME = "half"

    with pytest.raises(TypeError):
        Half(["A", "B"])  # type: ignore[abstract]


class Warming(PrintAnnouncer):
    """Keeps what the engine asks the voice to have ready."""

    def __init__(self) -> None:
        super().__init__(io.StringIO(), quiet=True)
        self.warmed: list[tuple[str, dict[str, Any]]] = []

    def warm_table(self, seats: Any, said: Any = (), *, reasons: Any = (),
                   first: Any = ()) -> None:
        self.warmed = list(said)
        self.reasons = list(reasons)


@pytest.mark.parametrize(("game", "options", "questions"), [
    ("spank-the-pig", {"doubles": "buttons"}, ["Pig or no pig?", "Double or no double?",
                                                "Pig or no pig? Double or no double?"]),
    ("spank-the-pig", {"doubles": "off"}, ["Pig or no pig?"]),
    ("pig", {}, []),  # a claim is never questioned aloud: the judge rejects it unasked
    ("pigs-tail", {"take": "slowest"}, ["Match or no match?"]),
    ("pigs-tail", {"take": "flipper"}, []),
])
def test_the_voice_gets_ready_for_what_the_game_will_say(tmp_path: Path, game: str,
                                                         options: dict[str, Any],
                                                         questions: list[str]) -> None:
    from referee.voice.phrases import text

    store = Store(tmp_path / "w.db")
    voice = Warming()
    try:
        engine = open_game(store, GameStart(game, ("A", "B", "C"), options), voice, auto=False)
        engine.start()
        asked = [text(k, p).removeprefix("Judge: ") for k, p in voice.warmed if k == "awaiting"]
        assert asked == questions
        assert [k for k, _ in voice.warmed if k != "awaiting"] == [
            k for k, _ in (*engine.rules.announcements(1), *engine.rules.said_ahead())]
        assert voice.reasons == engine.rules.reason_texts() and voice.reasons  # ruling pieces
        engine.stop()
    finally:
        store.close()


def test_no_module_imports_one_that_imports_it_back() -> None:
    """No import circles, counting imports made only for type checking and inside functions."""
    import grimp  # comes with import-linter (the test extras)

    graph = grimp.build_graph("referee")
    circles = sorted({tuple(sorted((a, b))) for a in graph.modules
                      for b in graph.find_modules_directly_imported_by(a)
                      if a != b and graph.chain_exists(importer=b, imported=a)})
    assert circles == []


def test_an_unclear_race_is_said_as_unclear_not_as_a_clean_round(tmp_path: Path) -> None:
    """A reason carries the key of the phrase it is said with: Pig's "unclear: 2 did not touch
    the nose" used to be announced as "Clean round."."""
    now = [0]
    voice = PrintAnnouncer(io.StringIO(), quiet=True, clock=lambda: now[0])
    store = Store(tmp_path / "u.db")
    try:
        engine = open_game(store, GameStart("pig", ("A", "B", "C", "D"), {}), voice,
                           clock=lambda: now[0], auto=False)
        engine.feed(Press(S, "A"))  # a claim; one more presses, two never do
        engine.feed(Press(S + 200_000, "B"))
        now[0] = 17 * S  # the 15 s window has run out
        engine.step()
        said = [key for key, _, _ in voice.said]
        assert "unclear" in said and "nobody" not in said
        assert engine.last_said == "Unclear: two did not touch the nose. Nobody loses."
    finally:
        store.close()
