"""Numbers as a speaker says them, and which plural form a count takes, per language.

`plural(language, n)` is CLDR's cardinal category for English, German and Spanish: "one" for
exactly 1 (a whole number), "other" for everything else (0, 2, 5, 21, 1.05). A new language adds
its rule here when CLDR gives it more categories (few, many...).

`number_words(n, language, gender)` spells a whole number the way it is said before a noun:
English up to twelve ("two"; "13" is read well from its digits), German and Spanish up to 999
("einundzwanzig", "veintiún" / "veintiuna": their voices read "1" as "eins", "uno" whatever the
noun); larger numbers stay digits. Spanish numbers ending in one agree with their noun: `gender` "m" or "f"
(a unit's, declared in its language file).
"""

from __future__ import annotations

from collections.abc import Callable

ONE, OTHER = "one", "other"


def plural(language: str, n: float) -> str:
    """CLDR's cardinal plural category of `n` (en, de, es: one for exactly 1, else other)."""
    return ONE if n == 1 and float(n).is_integer() else OTHER


_EN_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
             "fourteen fifteen sixteen seventeen eighteen nineteen").split()


def _english(n: int, gender: str) -> str:
    """Up to twelve in words; the voice reads larger numbers as well from their digits."""
    return _EN_SMALL[n] if n <= 12 else str(n)


_DE_SMALL = ("null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn "
             "vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn").split()
_DE_TENS = "_ _ zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()


def _german(n: int, gender: str) -> str:
    if n == 1:  # before a noun: "eine Millisekunde", "ein Leben"
        return "eine" if gender == "f" else "ein"
    if n < 20:
        return _DE_SMALL[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        if not ones:
            return _DE_TENS[tens]
        one = "ein" if ones == 1 else _DE_SMALL[ones]
        return f"{one}und{_DE_TENS[tens]}"
    hundreds, rest = divmod(n, 100)
    head = "ein" if hundreds == 1 else _DE_SMALL[hundreds]
    return f"{head}hundert" + (_german(rest, gender) if rest else "")


_ES_SMALL = ("cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce "
             "quince dieciséis diecisiete dieciocho diecinueve veinte").split()
_ES_TWENTIES = ("veinte veintiuno veintidós veintitrés veinticuatro veinticinco veintiséis "
                "veintisiete veintiocho veintinueve").split()
_ES_TENS = "_ _ veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa".split()
_ES_HUNDREDS = ("_ ciento doscientos trescientos cuatrocientos quinientos seiscientos "
                "setecientos ochocientos novecientos").split()


def _spanish(n: int, gender: str) -> str:
    if n == 100:
        return "cien"
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        head = _ES_HUNDREDS[hundreds]
        if gender == "f" and hundreds > 1:
            head = head.replace("ientos", "ientas")
        return head + (f" {_spanish(rest, gender)}" if rest else "")
    if n <= 20:
        word = _ES_SMALL[n]
    elif n < 30:
        word = _ES_TWENTIES[n - 20]
    else:
        tens, ones = divmod(n, 10)
        word = _ES_TENS[tens] + (f" y {_ES_SMALL[ones]}" if ones else "")
    if word.endswith("uno"):  # before a noun: "un milisegundo", "veintiuna cartas"
        word = word[:-3] + ("una" if gender == "f" else ("ún" if n == 21 else "un"))
    return word


SPELLERS: dict[str, Callable[[int, str], str]] = {"en": _english, "de": _german, "es": _spanish}


def number_words(n: int, language: str = "en", gender: str = "m") -> str:
    """`n` in words as said before a noun of `gender` (0-999), else its digits."""
    speller = SPELLERS.get(language, _english)
    return speller(n, gender) if 0 <= n < 1000 else str(n)
