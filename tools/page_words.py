"""The pages' catalogues, kept up to date: `python tools/page_words.py` extracts the English the
templates, the scoreboard and the scripts use (babel.cfg) into web/translations/messages.pot,
merges it into each language's web/translations/<code>/LC_MESSAGES/messages.po (a new msgid
arrives empty, for a translator to fill in; one no longer used is dropped) and compiles
messages.mo beside it. Both files are committed, so a fresh clone's `pip install -e .` serves
them; tests/test_page_languages.py fails on an empty translation or a .mo older than its .po.
A new language: `pybabel init -i web/translations/messages.pot -d web/translations -l CODE`,
translate, run this."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "web" / "translations"


def main() -> int:
    pot = DIR / "messages.pot"
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", "extract", "-F",
                    str(ROOT / "babel.cfg"), "-k", "n_:1,2", "--no-location", "--sort-output",
                    "--omit-header", "-o", str(pot), str(ROOT)], check=True, cwd=ROOT,
                   capture_output=True)
    with pot.open("rb") as f:
        template = read_po(f)
    for po in sorted(DIR.glob("*/LC_MESSAGES/messages.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        with po.open("wb") as f:
            write_po(f, catalog, sort_output=True, width=0, omit_header=False)
        with po.with_suffix(".mo").open("wb") as f:
            write_mo(f, catalog)
        print(f"{po.relative_to(ROOT)}: {len([m for m in catalog if m.id])} messages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
