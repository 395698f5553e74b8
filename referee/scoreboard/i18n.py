"""The pages in the table's language: one gettext catalogue per language (Flask-Babel).

The templates, the words the scoreboard's Python builds, and the JavaScript in web/static all take
their English from `_()` calls; `pybabel extract -F babel.cfg` collects them into
web/translations/messages.pot, each language's `web/translations/<code>/LC_MESSAGES/messages.po`
translates them, and its compiled `messages.mo` (committed beside it, and checked against the .po
by the suite) is what Flask-Babel reads. The pages' scripts get the same catalogue as
`/i18n.js`, served from the package (offline): `window.TR_WORDS`.

The language is the table's (`[table] language`, `--language`, the setup page): every page and
every device shows it, whatever the browser asks for. A game's own words (its title, options,
facts, reasons) are not here: they live beside its rules (`referee.rules.lingo`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Flask, Response
from flask_babel import Babel, get_translations

from referee.rules.declare import RulesError
from referee.rules.lingo import words_of
from referee.rules.registry import rules_for
from referee.scoreboard.ports import TablePort


def translations_dir(web: Path) -> Path:
    return web / "translations"


def init(app: Flask, table: TablePort, web: Path) -> None:
    """Flask-Babel in the table's language, and `/i18n.js` for the pages' scripts."""
    Babel(app, locale_selector=lambda: table.language,
          default_translation_directories=str(translations_dir(web)))

    @app.context_processor
    def language() -> dict[str, Any]:
        return {"lang": table.language}

    @app.get("/i18n.js")
    def scripts_catalogue() -> Response:
        body = "window.TR_WORDS = " + json.dumps(catalogue(), ensure_ascii=False,
                                                  sort_keys=True) + ";\n"
        resp = Response(body, mimetype="text/javascript")
        resp.headers["Cache-Control"] = "no-cache"  # the table's language may change
        return resp


def catalogue() -> dict[str, Any]:
    """The current language's messages for the scripts: msgid → text, and a plural msgid →
    [one, other] (the pages' counts are small: CLDR's "one" for exactly 1, else "other", its
    last form; Spanish's "many" is for millions)."""
    found = getattr(get_translations(), "_catalog", {})
    out: dict[str, Any] = {}
    plural: dict[str, dict[int, str]] = {}
    for key, value in found.items():
        if isinstance(key, tuple):  # (msgid, plural index)
            plural.setdefault(key[0], {})[key[1]] = value
        elif key:
            out[key] = value
    for msgid, forms in plural.items():
        out[msgid] = [forms[0], forms[max(forms)]]
    return out


def game_title(game: str, title: str, language: str) -> str:
    """A past game's title (its name, or its variant's) in `language`."""
    try:
        cls = rules_for(game)
    except RulesError:
        return title  # a game no longer installed: shown as it was
    said = words_of(cls, language)
    return said.title if title == cls.TITLE else said.text(title)


def game_catalogue(cls: Any, language: str) -> dict[str, Any]:
    """A game as the setup page offers it, in `language` (its words from beside its rules)."""
    said = words_of(cls, language)
    options = []
    for o in cls.known_options().values():
        option = o.to_json()
        option["label"], option["help"] = said.text(o.label), said.text(o.help)
        option["unit"] = said.text(o.unit) if o.unit else o.unit
        if "choice_labels" in option:
            option["choice_labels"] = [said.text(label) for label in option["choice_labels"]]
        options.append(option)
    return {"name": cls.NAME, "title": said.title, "seats": list(cls.SEATS), "unit": cls.UNIT,
            "unit_words": list(said.unit_words), "buttons": list(cls.BUTTONS),
            "options": options, "facts": [f.to_json() for f in cls.facts()]}
