"""The table's language is a table setting: `[table] language`, `--language`, the setup page. It
chooses what the voice says and the pages show, and never enters the table log."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from referee.cli.table import Table
from referee.config import ConfigError, default_config, load_config
from referee.scoreboard.app import create_app
from referee.store.database import export_lines
from tests.hostile_support import REFEREE, one_line_error

PIN = "2468"
SEATS = ["Blau", "Rot", "Grün"]


def config_file(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"[table]\n{table}\n" + "".join(
        f'[[seats]]\nname = "{n}"\nslap = {p}\n' for n, p in (("Blau", 4), ("Rot", 17))),
        encoding="utf-8")
    return path


def test_table_language_in_the_config_file(tmp_path: Path) -> None:
    assert load_config(config_file(tmp_path, 'language = "de"')).language == "de"
    assert load_config(config_file(tmp_path, "")).language == "en"


def test_a_bad_language_is_one_line_naming_the_shipped_ones(tmp_path: Path) -> None:
    path = config_file(tmp_path, 'language = "fr"')
    out = subprocess.run([*REFEREE, "play", "--mock", "--no-web", "--no-speech", "--config",
                          str(path), "--db", str(tmp_path / "r.db"), "--exit-when-over"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    line = one_line_error(out)
    assert "'fr'" in line and "de, en, es" in line
    out = subprocess.run([*REFEREE, "play", "--mock", "--no-web", "--no-speech", "--language",
                          "xx", "--seats", "A,B", "--db", str(tmp_path / "r.db"),
                          "--exit-when-over"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert "'xx'" in one_line_error(out)
    with pytest.raises(ConfigError, match="language"):
        load_config(config_file(tmp_path, "language = 7"))


def test_the_table_s_language_is_what_the_voice_says(tmp_path: Path) -> None:
    """A Spanish table: the deal and the Ready step are said in Spanish (printed without a
    speaker), nothing in English."""
    config = dataclasses.replace(default_config(["Azul", "Rojo"]), language="es")
    printed = io.StringIO()
    table = Table(config, db=tmp_path / "r.db", mock=True, no_speech=True, pin=PIN,
                  out=printed, auto=True, box=False)
    try:
        table.start("pigs-tail")
        engine = table.engine
        assert engine is not None
        engine.command("step")
        said = printed.getvalue()
        assert "Barajad las cincuenta y dos cartas" in said
        assert "Pulsad vuestro botón cuando estéis listos." in said
        assert "Press your slap button" not in said
    finally:
        table.close()


@pytest.fixture
def table(mock_factory: Any, tmp_path: Path) -> Iterator[Table]:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    t.start("spank-the-pig", resume=False)
    yield t
    t.close()


@pytest.fixture
def client(table: Table) -> FlaskClient:
    return create_app(table).test_client()


def new_game(client: FlaskClient, body: dict[str, Any]) -> Any:
    return client.post("/api/new-game", data=json.dumps(body), content_type="application/json",
                       headers={"X-Table-Pin": PIN})


def test_the_setup_page_changes_the_language_and_the_log_never_holds_it(
        client: FlaskClient, table: Table) -> None:
    page = client.get("/setup").get_data(as_text=True)
    assert '<html lang="en">' in page and "Language of the voice and the pages" in page
    resp = new_game(client, {"game": "spank-the-pig", "language": "de"})
    assert resp.status_code == 200, resp.get_json()
    assert table.language == "de"
    page = client.get("/setup").get_data(as_text=True)
    assert '<html lang="de">' in page and "Sprache der Stimme und der Seiten" in page
    state = client.get("/api/state").get_json()
    assert state["title"] == "Klatsch das Schwein!"
    assert state["fact_info"]["pigs"]["label"] == "Schweine auf dem Tisch"
    script = client.get("/i18n.js").get_data(as_text=True)
    assert script.startswith("window.TR_WORDS = ") and '"Runde {n}"' in script
    engine = table.engine
    assert engine is not None and engine.book.language == "de"
    game_line = json.loads(next(export_lines(table.store.conn, engine.game_id)))
    assert "language" not in game_line and "language" not in game_line["options"]
    assert '"de"' not in json.dumps(game_line)


def test_the_setup_page_refuses_a_language_not_shipped(client: FlaskClient, table: Table) -> None:
    resp = new_game(client, {"game": "spank-the-pig", "language": "fr"})
    assert resp.status_code == 400
    assert "'fr'" in resp.get_json()["error"] and table.language == "en"
