"""Numbers, units and P values of a text, and whether an article states them.

An abstract may only carry numbers its article gives. Each mention is normalised
before it is compared: thousands separators go (``1,234`` and ``1 234`` with a thin
or no-break space are ``1234``), the Unicode minus and dashes before a number are
``-``, a raised-dot decimal (``0·05``) is ``0.05`` and a bare ``.05`` is ``0.05``.
Trailing zeros are kept: ``0.50`` states a precision that ``0.5`` does not.

A mention is supported when the article holds the same number, with the same unit
when the abstract gives one (``25 mg`` is not ``25 µg``; an article number with no
unit supports any unit, since "18 and 25%" gives both), and a P value needs the same
comparison (``P < 0.05`` is not ``P = 0.05``). Digits inside a name (``IL-6``,
``COVID-19``) are numbers too: a changed name number is as wrong as a changed result.

Numbers written in words are numbers too, with their value: ``twenty-five`` is ``25``,
``one million`` and ``a million`` are ``1000000``, and a scale word after digits
multiplies them (``1.2 million`` is ``1200000``), so "one billion" is not supported by
an article that says "one million", while "two" is by one that writes "2". A plural
scale without a count ("millions of", "tens of thousands") states an order of
magnitude: the article supports it with the same words or with any number of that
order ("thousands" by "2,345"), and "billions of" is not "millions of".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

__all__ = [
    "ArticleNumbers",
    "NumberMention",
    "number_mentions",
    "number_precision",
]

# Each pattern opens on a character its matches can start with (the separator
# before the digit it looks behind at, or a lookahead): ``re`` then skips to the
# candidates instead of trying every position of an article.
_GROUPED_SPACE = re.compile(
    r"[\u2009\u202f\u00a0](?<=\d[\u2009\u202f\u00a0])(?=\d{3}\b)"
)
_GROUPED_COMMA = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
_DASHES = "\u2212\u2013\u2012\u2010"
"""The minus sign and dashes read as ``-`` before a number."""
_NUMBER = re.compile(
    r"(?=[-\d.·])(?P<sign>(?<![\w.,)\]])-)?(?P<value>(?:\d+(?:[.·]\d+)*|[.·]\d+))"
    r"(?:\s?(?P<unit>%|°C|[A-Za-zµμ]+(?:/[A-Za-zµμ]+)?))?"
)
_P_VALUE = re.compile(
    r"[Pp](?<!\w[Pp])\s*(?:-?\s*values?\s*)?(?P<op><=|>=|[<>=≤≥])\s*(?P<value>\d*[.·]?\d+)"
)
_UNITS: dict[str, str] = {
    "%": "%",
    "percent": "%",
    "pc": "%",
    "°c": "°c",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "s": "s",
    "sec": "s",
    "second": "s",
    "seconds": "s",
    "d": "day",
    "day": "day",
    "days": "day",
    "wk": "week",
    "week": "week",
    "weeks": "week",
    "mo": "month",
    "month": "month",
    "months": "month",
    "y": "year",
    "yr": "year",
    "yrs": "year",
    "year": "year",
    "years": "year",
}
_METRIC = re.compile(
    r"^(?:[pnuµμmck]?(?:g|l|mol|m|m2|m3|gy|hz|da|bp|iu|u|v|w)|kda|kb|mb|mm|mmhg|ppm)"
    r"(?:/[a-zµμ]+)?$"
)
_OPS = {"≤": "<=", "≥": ">=", "=<": "<=", "=>": ">="}
_SMALL = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * value
    for value, word in enumerate(
        "twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2
    )
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER_WORD = "|".join([*_SMALL, *_TENS, "hundred", *_SCALES])
# "and" joins a count to a scale ("one hundred and five"), not two numbers ("two and three").
_AFTER_SCALE = "(?:" + "|".join(f"(?<={word})" for word in ["hundred", *_SCALES]) + ")"
_FIRST_LETTERS = "".join(sorted({w[0] for w in [*_NUMBER_WORD.split("|"), "a"]}))
_WORD_RUN_SOURCE = (
    rf"\b(?=[{_FIRST_LETTERS}])"
    rf"(?:(?P<article>an?)\s+(?=(?:hundred|{'|'.join(_SCALES)})\b))?"
    rf"(?P<run>(?:{_NUMBER_WORD})(?:(?:[\s-]+|{_AFTER_SCALE}\s+and\s+)(?:{_NUMBER_WORD}))*)\b"
)
_PLURAL_SCALE_SOURCE = r"\b(?=[htmb])(?P<scale>hundred|" + "|".join(_SCALES) + r")s\b"
# Number words are found in the lower-cased text, which ``re`` scans twice as fast as
# it matches letters in either case. The two agree where lower-casing keeps every
# character one character and ``re``'s case-blind match adds no letter of its own:
# it also takes dotless "ı", "İ" for "i" and the long "ſ" for "s".
_WORD_RUN_LOWER = re.compile(_WORD_RUN_SOURCE)
# Opening on the words themselves (each looks behind for its word boundary), the
# pattern lets ``re`` skip to the letters they start with.
_PLURAL_SCALE_LOWER = re.compile(
    "(?P<scale>"
    + "|".join(rf"{word}(?<!\w{word})" for word in ["hundred", *_SCALES])
    + r")s\b"
)
_WORD_RUN = re.compile(_WORD_RUN_SOURCE, re.IGNORECASE)
_PLURAL_SCALE = re.compile(_PLURAL_SCALE_SOURCE, re.IGNORECASE)
_CASE_BLIND_EXTRAS = re.compile("[\u0130\u0131\u017f]")
_DIGITS_BEFORE = re.compile(r"\d\s*$")
_ORDER = "s"
"""The suffix of an order-of-magnitude value: ``1000000s`` is "millions"."""


@dataclass(frozen=True)
class NumberMention:
    """One number of a text, normalised: its value, unit (or ""), and P comparison."""

    text: str
    """The mention as the text gives it (separators normalised)."""
    value: str
    unit: str = ""
    p_op: str = ""
    """For a P value, its comparison (``<``, ``=``, ``<=``...); else ""."""


def _normalise_text(text: str) -> str:
    for dash in _DASHES:  # faster than str.translate on a long text
        text = text.replace(dash, "-")
    text = _GROUPED_SPACE.sub("", text)
    return _GROUPED_COMMA.sub("", text)


def _value(raw: str, sign: str | None) -> str:
    value = raw.replace("·", ".")
    if value.startswith("."):
        value = "0" + value
    return f"-{value}" if sign else value


def _scaled(value: str, scale: int) -> str:
    try:
        return _plain(Decimal(value) * scale)
    except InvalidOperation:
        return value


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f")


def _word_value(run: str) -> int:
    """Return the value of a run of number words ("one hundred and twenty-five")."""
    total = current = 0
    for word in re.split(r"[\s-]+", run.lower()):
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
    return total + current


def _word_mentions(plain: str) -> list[NumberMention]:
    lowered = plain.lower()
    if len(lowered) == len(plain) and not _CASE_BLIND_EXTRAS.search(plain):
        read, runs, plurals = lowered, _WORD_RUN_LOWER, _PLURAL_SCALE_LOWER
    else:
        read, runs, plurals = plain, _WORD_RUN, _PLURAL_SCALE
    mentions = []
    for match in runs.finditer(read):
        run = match["run"]
        first = run.split()[0].split("-")[0].lower()
        if first in _SCALES or first == "hundred":
            if _DIGITS_BEFORE.search(plain[: match.start()]):
                continue  # "1.2 million": read with its digits
        mentions.append(
            NumberMention(
                text=plain[match.start() : match.end()], value=str(_word_value(run))
            )
        )
    for match in plurals.finditer(read):
        scale = _SCALES.get(match["scale"].lower(), 100)
        mentions.append(
            NumberMention(
                text=plain[match.start() : match.end()], value=f"{scale}{_ORDER}"
            )
        )
    return mentions


def _unit(raw: str | None) -> str:
    if not raw:
        return ""
    lowered = raw.lower().replace("μ", "µ")
    if lowered in _UNITS:
        return _UNITS[lowered]
    return lowered if _METRIC.match(lowered.replace("µ", "u")) else ""


def number_mentions(text: str) -> list[NumberMention]:
    """Return every number of ``text`` with its unit and, for a P value, comparison."""
    plain = _normalise_text(text)
    mentions: list[NumberMention] = []
    p_spans: dict[int, str] = {}
    for match in _P_VALUE.finditer(plain):
        op = _OPS.get(match["op"], match["op"])
        p_spans[match.start("value")] = op
    for match in _NUMBER.finditer(plain):
        start = match.start("value")
        value = _value(match["value"], match["sign"])
        scale = _SCALES.get((match["unit"] or "").lower())
        unit = "" if scale else _unit(match["unit"])
        mentions.append(
            NumberMention(
                text=match.group(0).strip()
                if unit or scale
                else plain[match.start() : match.end("value")],
                value=_scaled(value, scale) if scale else value,
                unit=unit,
                p_op=p_spans.get(start, ""),
            )
        )
    return mentions + _word_mentions(plain)


@dataclass
class ArticleNumbers:
    """The numbers an article states, to check another text's numbers against."""

    units: dict[str, set[str]] = field(default_factory=dict)
    """Each value with the units it is given with ("" for none)."""
    p_values: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def of(cls, text: str) -> ArticleNumbers:
        """Index the numbers of an article's text."""
        index = cls()
        index.add(number_mentions(text))
        return index

    def add(self, mentions: Iterable[NumberMention]) -> None:
        """Add mentions to the index."""
        for mention in mentions:
            for value in {mention.value, mention.value.lstrip("-")}:
                self.units.setdefault(value, set()).add(mention.unit)
            if mention.p_op:
                self.p_values.add((mention.p_op, mention.value))

    def supports(self, mention: NumberMention) -> bool:
        """Tell whether the article states this number (unit and P comparison too)."""
        units = self.units.get(mention.value)
        if units is None:
            return mention.value.endswith(_ORDER) and self._of_order(mention.value)
        if mention.p_op:
            return (mention.p_op, mention.value) in self.p_values
        return not mention.unit or mention.unit in units or "" in units

    def _of_order(self, order: str) -> bool:
        """Tell whether the article gives a number of this order of magnitude."""
        low = int(order.removesuffix(_ORDER))
        high = low * (10 if low == 100 else 1000)
        for value in self.units:
            try:
                number = float(value)
            except ValueError:
                continue
            if low <= abs(number) < high:
                return True
        return False

    def unsupported(self, text: str) -> list[str]:
        """Return the mentions of ``text`` the article does not state."""
        return [m.text for m in number_mentions(text) if not self.supports(m)]


def number_precision(text: str, article: ArticleNumbers) -> float | None:
    """Return the share of the text's numbers the article states; None if it has none."""
    mentions = number_mentions(text)
    if not mentions:
        return None
    return sum(article.supports(m) for m in mentions) / len(mentions)
