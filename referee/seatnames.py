"""What a seat name is (PRODUCT.md, "Table log"): the one rule, for every way a name arrives.

Seat names are distinct, 1 to 24 code points after Unicode NFC, with no leading or trailing space,
compared case-insensitively, with no control or invisible formatting characters (zero-width
spaces, bidi overrides, the BOM, the soft hyphen, the Hangul fillers that are drawn blank), so two
seats that look the same are never two seats. A log's game line, `--seats`, the config file and
the setup page all ask `seat_problem` and `seats_problem`; a line's `seat` then matches a name of
the game line exactly.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

MAX_NAME = 24  # code points of a seat name after NFC: a scoreboard tile, a phrase

# Characters that show nothing, so two names that look the same could differ by them: the
# Hangul fillers (letters that are drawn blank) and every format character (zero-width spaces,
# bidi overrides, the BOM, the soft hyphen) but the joiner inside an emoji sequence.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
ZWJ = "\u200d"


def invisible(name: str) -> str:
    """The first invisible character in a name ("" if it has none)."""
    for i, ch in enumerate(name):
        if ch in BLANK_LETTERS:
            return ch
        if unicodedata.category(ch) != "Cf":
            continue
        if ch == ZWJ and 0 < i < len(name) - 1 and all(
                unicodedata.category(n) == "So" or n == "\ufe0f"
                for n in (name[i - 1], name[i + 1])):
            continue  # 👨‍👩‍👧: the joiner of an emoji sequence draws one picture
        return ch
    return ""


def control(name: str) -> str:
    """The first control character in a name ("" if it has none): C0/C1 controls, a lone
    surrogate, the line and paragraph separators."""
    return next((ch for ch in name if unicodedata.category(ch) in ("Cc", "Cs")
                 or ch in "\u2028\u2029"), "")


def shown(value: object) -> str:
    """A name as one line of ASCII, cut short if long."""
    text = ascii(value)
    return text if len(text) <= 48 else text[:45] + "...'"


def seat_problem(name: object) -> str:
    """What is wrong with one seat name, in one line with the fix ("" if nothing)."""
    if not isinstance(name, str) or not name.strip():
        return f"seat name {shown(name)} is empty; give every seat a name, e.g. Blue"
    bad = control(name)
    if bad:
        return (f"seat name {shown(name)} holds the control character {ascii(bad)}; "
                f"use letters, digits and spaces")
    hidden = invisible(name)
    if hidden:
        return (f"seat name {shown(name)} holds the invisible character {ascii(hidden)} "
                f"({unicodedata.name(hidden, 'format character')}); type the name again with "
                f"letters, digits and spaces only")
    if name != name.strip():
        return f"seat name {shown(name)} starts or ends with a space; remove it"
    if len(unicodedata.normalize("NFC", name)) > MAX_NAME:
        return f"seat name {shown(name)} is longer than {MAX_NAME} characters; shorten it"
    return ""


def same(name: str) -> str:
    """A name as names are compared: NFC, case-insensitively ("BLUE" is "Blue")."""
    return unicodedata.normalize("NFC", name).casefold()


def seats_problem(names: Iterable[object]) -> str:
    """What is wrong with a table's seat names, the first problem in one line ("" if none):
    each name as `seat_problem` says, and no two the same (compared as `same` does)."""
    seen: dict[str, str] = {}
    for name in names:
        problem = seat_problem(name)
        if problem:
            return problem
        assert isinstance(name, str)
        key = same(name)
        if key in seen:
            twice = (f"seat {shown(name)} appears twice" if seen[key] == name else
                     f"seats {shown(seen[key])} and {shown(name)} are the same name")
            return f"{twice}; give each seat its own name"
        seen[key] = name
    return ""
