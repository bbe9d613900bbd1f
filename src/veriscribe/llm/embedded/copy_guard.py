"""Stop a model from continuing a word-for-word run of its source beyond a few words.

Small models asked to summarise a passage copy it: their "summaries" are the source's
own sentences. The guard watches decoding: when the next token would make the text's
last ``limit + 1`` words (the token's own word included) a run that occurs word for
word in the source, that token is forbidden and the model has to say it otherwise.

A model kept from its first choice reaches for the next best token, and a 0.5B model's
next best is often garbage: a Cyrillic "и" for a blocked "and", "Highly" for a blocked
"highly", "cerebral" + "alaria" for a blocked "cerebral malaria", "identical" + "ity".
So the guard also judges every candidate as a piece of English, whether or not it
copies, and forbids one that would garble:

- **script**: a letter of a script the source's words do not use, a character outside
  the common punctuation and symbol blocks that the source does not use, or the first
  bytes of a character the source does not use (a token may hold part of one);
- **case**: a word capitalised mid-sentence unless the source writes it capitalised
  mid-sentence (a name) or has no lower-case word it could be (a name the source does
  not spell out); a sentence start may take a capital;
- **words** (with a word list, ``common``): every word, while it is being built, must
  be the start of a known word, and once ended a known word; known are the source's
  words and the common words, each also with an inflection (``-s``, ``-es``, ``-ed``,
  ``-ing``, ``-ly``, ``-er``, ``-est``, with a dropped ``e``, ``y`` to ``i`` or a
  doubled consonant). So "cerebralal", "howmuch" and "identicality" are refused at
  the token that makes them, and "identically" passes. Words next to a digit
  ("IL6", "5mg") and after an apostrophe are not judged. The embedded backend takes
  its common words from the model's own vocabulary: every token that is a space and
  letters only (about 30,000 for Qwen2.5), read once per model file.

Kept whatever the run: a piece without a letter (numbers, P values and intervals
come out exact), words with a digit, and the rest of a word already begun (unless
only its start was a kept word). Kept up to ``KEPT_MARGIN`` (2) words past the limit:
function words ("and", "of the"), units, a capital at a sentence start, the source's
names and acronyms, and its terms (with a word list: the source's words that are not
common words, such as drug and gene names); without that bound, chains of them made
copied runs of seven words and more. They all count toward the run.

A content word of the source (or the start of one) is never refused for copying,
whatever the run: kept off the source's word, a small model reaches for the next
best one, and that is often the opposite word ("supervised" for "unsupervised",
"dense" for "sparse"). The limit holds back runs of function words only.

Copying is the softer rule: at each step, when none of the best candidates is free of
both, a copying one is allowed rather than a garbling one, and a garbling one rather
than none (forbidding them all would hand the choice to tokens nobody checked). A
foreign script is never allowed.

Words are compared lower-cased with their punctuation kept, so "trial," and "trial"
differ; that errs toward allowing, never toward garbling a number.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from veriscribe.checks.wording import CaseIndex, scripts_of
from veriscribe.llm.embedded.candidates import CandidateFilter
from veriscribe.text.tokens import CONTENT_STOP_WORDS

__all__ = [
    "CANDIDATES",
    "CommonWords",
    "CopyGuard",
    "Verdict",
    "common_words",
    "copy_guard_processor",
]

CANDIDATES = 40
"""Only the highest-scoring tokens are checked at each step: the rest are not sampled
at the low temperatures used for summaries, and checking all 150k would be slow."""

UNITS = frozenset(
    """mg g kg µg μg ng pg ml dl µl μl nl mm cm km nm µm μm mmol µmol μmol nmol pmol
    mol mmhg kpa iu kda da bp kb mb gb hz khz mhz gy sv mv ms min h hr hrs wk wks yr yrs
    mo mos sec kcal cal ppm ppb rpm vs ci sd se sem iqr hr rr or aor ahr auc""".split()
)
"""Units and statistics a paraphrase keeps (besides any word after a number)."""
KEPT_MARGIN = 2
"""How many words past the limit a kept word (a function word, unit, name or term) may
extend a copied run: "... and", "... of the"; a longer run is judged as any other."""

_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "er", "ers", "est")
_SPACE = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")
_LETTERS = re.compile(r"[^\W\d_]+")
_BREAKS = re.compile(r"\\[nrt]")
"""A line break or tab escaped in a JSON string: two characters, the second a letter."""
_OPENING = "'\"“‘([ "
_CLOSING = "'\"”’)]"
_APOSTROPHES = "'’"
_GLUE = ".,;:!?)]"
_GLUED = re.compile(r"[^\W\d_]+(?:[.,;:!?)\]][^\W\d_]+)+")
"""Words joined by a stop with no space in the source: "e.g", "U.S", "i.e"."""
_COMMON_BLOCKS = ((0x80, 0x36F), (0x2000, 0x2BFF))
"""Latin-1 and Latin extensions, then punctuation, super- and subscripts, letterlike
symbols, arrows and mathematical operators: symbols any English text may use."""


class Verdict(IntEnum):
    """What appending a piece of text would do; higher is worse."""

    ALLOW = 0
    COPY = 1
    """Well-formed, but extends a copied run past the limit."""
    GARBLE = 2
    """Changes a word's case, fuses words, or coins a word."""
    FOREIGN = 3
    """A script or character the source does not use, or broken UTF-8."""


class _Words:
    """Sorted words, for exact and prefix look-ups without touching all of them."""

    def __init__(self, words: Iterable[str]) -> None:
        self.sorted = sorted(set(words))
        self.set = frozenset(self.sorted)

    def __contains__(self, word: object) -> bool:
        return word in self.set

    def starts(self, prefix: str) -> bool:
        """Return whether some word starts with ``prefix``."""
        at = bisect_left(self.sorted, prefix)
        return at < len(self.sorted) and self.sorted[at].startswith(prefix)


_NO_WORDS = _Words(())


@dataclass(frozen=True)
class CommonWords:
    """A list of common words, lower-cased: those written only in lower case, and all."""

    lower: _Words
    """Words the list has in lower case: a capital on one mid-sentence is a change."""
    any_case: _Words
    """Every word of the list, lower-cased (names included)."""


def common_words(pieces: Iterable[str | bytes]) -> CommonWords:
    """Return the common words among a model's token texts: a space and letters only."""
    lower, any_case = [], []
    for raw in pieces:
        piece = raw.decode("utf-8", "ignore") if isinstance(raw, bytes) else raw
        word = piece[1:]
        if piece[:1] != " " or not word.isascii() or not word.isalpha():
            continue
        any_case.append(word.lower())
        if word.islower():
            lower.append(word)
    return CommonWords(_Words(lower), _Words(any_case))


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower())


def _squeeze(text: str) -> str:
    return _SPACE.sub("", text.lower())


def _opens_sentence(before: str) -> bool:
    """Tell whether a word written right after ``before`` starts a sentence."""
    core = before.rstrip()
    if "\n" in before[len(core) :]:
        return True
    core = core.rstrip(_OPENING).rstrip()
    if not core:
        return True
    if core[-1] in "-/'’":
        return False  # a hyphenated part ("Disease-Causing") is where its word is
    return core.rstrip(_CLOSING)[-1:] in (".", "!", "?", ":")


@dataclass
class _Step:
    """What every candidate of one step is judged against: the text so far."""

    text: str
    words: list[str]
    tail: str
    """The letters the text ends in (a word being built), or empty."""
    tail_opens: bool
    tail_free: bool
    """The tail is not judged as a word (it follows a digit or an apostrophe)."""
    history_new: str
    history_joined: str
    escaping: bool = False
    """The text ends in a backslash that starts an escape."""


@dataclass
class CopyGuard:
    """Judge whether appending a piece of text copies too far or garbles a word."""

    source: str
    limit: int
    """The longest word-for-word run of the source allowed, in words (at least 1)."""
    words: str | None = None
    """The text whose words, spellings and scripts the output may use (default: the
    source); the refine step, which may copy its draft, gives the article here."""
    common: CommonWords | None = None
    """Common words: with them every word must be a known one; without, only gluing a
    word onto a finished source word is refused."""
    _haystack: str = field(init=False, repr=False)
    _known: _Words = field(init=False, repr=False)
    _lower: _Words = field(init=False, repr=False)
    _names: _Words = field(init=False, repr=False)
    _terms: _Words = field(init=False, repr=False)
    _scripts: frozenset[str] = field(init=False, repr=False)
    _chars: frozenset[str] = field(init=False, repr=False)
    _fragments: frozenset[bytes] = field(init=False, repr=False)
    _underscores: bool = field(init=False, repr=False)
    _glued_brackets: bool = field(init=False, repr=False)
    _chunks: _Words = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("a copy limit is at least one word")
        self._haystack = _squeeze(self.source)
        vocabulary = self.source if self.words is None else self.words
        spelled = {m.group(0) for m in _LETTERS.finditer(vocabulary)}
        case = CaseIndex.of(vocabulary)
        self._known = _Words(w.lower() for w in spelled)
        self._lower = _Words(case.lower)
        self._names = _Words(
            w
            for w in spelled
            if not w.islower()
            and (w.lower() in case.capitalised or any(c.isupper() for c in w[1:]))
        )
        common = self.common
        self._terms = (
            _Words(w for w in self._known.sorted if w not in common.lower)
            if common is not None
            else _NO_WORDS
        )
        self._scripts = frozenset(scripts_of(vocabulary) | {"LATIN"})
        self._chars = frozenset(c for c in set(vocabulary) if ord(c) > 127)
        self._underscores = "_" in vocabulary
        self._chunks = _Words(m.group(0).lower() for m in _GLUED.finditer(vocabulary))
        self._glued_brackets = re.search(r"[^\W\d_][(\[]", vocabulary) is not None
        self._fragments = frozenset(
            c.encode()[:i] for c in self._chars for i in range(1, len(c.encode()))
        )

    # ------------------------------------------------------------------ the API

    def forbids(self, text: str, piece: str) -> bool:
        """Return whether ``text + piece`` copies too far or garbles a word."""
        return self.judge(self.step(text), piece) != Verdict.ALLOW

    def step(self, text: str) -> _Step:
        """Return what the candidates of one step are judged against (once a step).

        The text is JSON: an escaped line break reads as the line break (its "n" is
        no letter of a word), and a backslash that starts an escape as a space.
        """
        escaping = (len(text) - len(text.rstrip("\\"))) % 2 == 1
        text = _BREAKS.sub("\n ", text)
        if escaping:
            text = text[:-1] + " "
        words = _norm(text).split()
        tail_match = re.search(r"[^\W\d_]+$", text)
        tail = tail_match.group(0) if tail_match else ""
        before = text[: len(text) - len(tail)]
        return _Step(
            text=text,
            words=words,
            tail=tail,
            tail_opens=_opens_sentence(before[-60:]) if tail else False,
            tail_free=bool(tail) and before[-1:] != "" and _free(before[-1]),
            history_new="".join(words[: -self.limit]),
            history_joined="".join(words[: -(self.limit + 1)]),
            escaping=escaping,
        )

    def judge(self, step: _Step, piece: str, partial: bytes = b"") -> Verdict:
        """Return what appending ``piece`` (then the bytes ``partial``) would do."""
        if partial and partial not in self._fragments:
            return Verdict.FOREIGN
        if not piece:
            return Verdict.ALLOW
        if step.escaping and piece[0] in "nrt":
            piece = "\n" + piece[1:]
        elif step.escaping and piece[0] == "u" or "\\u" in piece:
            return Verdict.GARBLE  # an escaped character the script check cannot see
        piece = _BREAKS.sub("\n ", piece)
        if not piece.isascii() and self._foreign(piece):
            return Verdict.FOREIGN
        if self._garbles(step, piece):
            return Verdict.GARBLE
        if _LETTER.search(piece) and self._copies(step, piece):
            return Verdict.COPY
        return Verdict.ALLOW

    def bytes_of(self, step: _Step, pending: bytes, token: bytes) -> Verdict:
        """Judge a token's bytes, after the text's unfinished character ``pending``."""
        if not pending and token.isascii():
            return self.judge(step, token.decode("ascii"))
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            piece = decoder.decode(pending + token)
        except UnicodeDecodeError:
            return Verdict.FOREIGN
        return self.judge(step, piece, decoder.getstate()[0])

    def unknown_words(self, text: str) -> list[str]:
        """Return the words of ``text`` this guard's word rule refuses (with ``common``).

        A measure of fused and coined words ("chemicalproperties", "trade_channels",
        "identicality"): a word next to a digit or after an apostrophe is not judged,
        as in decoding.
        """
        found = []
        for match in re.finditer(r"[^\W\d]+", text):
            whole = match.group(0)
            start, end = match.start(), match.end()
            if (start and _free(text[start - 1])) or text[end : end + 1].isdigit():
                continue
            if "_" in whole.strip("_") and not self._underscores:
                found.append(whole)
            elif self.common is not None and any(
                not self._is_word(part) for part in whole.split("_") if part
            ):
                found.append(whole)
        return found

    # ---------------------------------------------------------------- the rules

    def _foreign(self, piece: str) -> bool:
        for char in piece:
            if ord(char) < 128 or char in self._chars:
                continue
            if char.isalpha():
                if not scripts_of(char) <= self._scripts:
                    return True
            elif not any(lo <= ord(char) <= hi for lo, hi in _COMMON_BLOCKS):
                return True
        return False

    def _garbles(self, step: _Step, piece: str) -> bool:
        if "_" in piece and not self._underscores:
            return True  # "trade_channels": a code model's way of fusing words
        if step.tail and piece[0] in "([" and not self._glued_brackets:
            return True  # "chemical(properties)": a bracket glued onto a word
        joins = bool(step.tail) and _LETTER.match(piece) is not None
        if step.tail and not joins and not step.tail_free and not piece[0].isdigit():
            if self.common is not None and not self._is_word(step.tail):
                return True  # ends a word that is only the start of one
        text = step.tail + piece if joins else piece
        offset = len(step.text) - len(step.tail) if joins else len(step.text)
        prefix = step.text[max(0, offset - 60) : offset]
        for match in _LETTERS.finditer(text):
            word = match.group(0)
            start, end = match.start(), match.end()
            before = text[start - 1] if start else prefix[-1:]
            after = text[end : end + 1]
            if (before and _free(before)) or after.isdigit():
                continue
            if before in _GLUE and self._glued_by(prefix + text[:start], word):
                return True  # "chemical.properties": words glued by a stop
            if joins and start == 0:
                opens = step.tail_opens
            else:
                opens = _opens_sentence(prefix + text[:start])
            if word[0].isupper() and not opens and self._recased(word):
                return True
            if self.common is None:
                continue
            ended = end < len(text)
            if ended and not self._is_word(word):
                return True
            if not ended and not self._may_start(word):
                return True
        return False

    def _glued_by(self, before: str, word: str) -> bool:
        """Tell whether ``word`` is glued to a word by a stop, unlike in the source."""
        # The source's own "e.g." and "U.S." are allowed.
        glued = re.search(r"[^\W\d_]+[.,;:!?)\]]$", before)
        if glued is None:
            return False
        return not self._chunks.starts((glued.group(0) + word).lower())

    def _recased(self, word: str) -> bool:
        """Tell whether a capitalised word mid-sentence is a lower-case word recased."""
        if self._names.starts(word):
            return False
        lower = word.lower()
        if self._lower.starts(lower) or self._inflected(lower, self._lower_word):
            return True
        return self.common is not None and self.common.lower.starts(lower)

    def _is_word(self, word: str) -> bool:
        if word in self._names:
            return True
        lower = word.lower()
        return self._known_word(lower) or self._inflected(lower, self._known_word, True)

    def _may_start(self, word: str) -> bool:
        if self._names.starts(word):
            return True
        lower = word.lower()
        assert self.common is not None
        return (
            self._known.starts(lower)
            or self.common.any_case.starts(lower)
            or self._inflected(lower, self._known_word)
        )

    def _known_word(self, lower: str) -> bool:
        common = self.common
        return (
            lower in self._known
            or lower in CONTENT_STOP_WORDS
            or (common is not None and lower in common.any_case)
        )

    def _lower_word(self, lower: str) -> bool:
        common = self.common
        return lower in self._lower or (common is not None and lower in common.lower)

    @staticmethod
    def _inflected(
        word: str, known: Callable[[str], bool], ended: bool = False
    ) -> bool:
        """Tell whether ``word`` is a ``known`` word with (the start of) an inflection."""
        for cut in range(max(3, len(word) - 3), len(word)):
            base, rest = word[:cut], word[cut:]
            if not any(s == rest if ended else s.startswith(rest) for s in _SUFFIXES):
                continue
            if known(base):
                return True
            if rest[0] in "ie" and known(base + "e"):
                return True  # cause: causing, caused
            if base[-1] == "i" and known(base[:-1] + "y"):
                return True  # study: studies, studied
            if rest[0] in "ie" and base[-1] == base[-2] and known(base[:-1]):
                return True  # stop: stopped
        return False

    def _kept(self, word: str, opens: bool, previous: str) -> bool:
        """Tell whether a word is always allowed whatever the run (its letters)."""
        if not word:
            return True
        lower = word.lower()
        if lower in CONTENT_STOP_WORDS or lower in UNITS:
            return True
        if len(word) <= 2 and any(c.isdigit() for c in previous):
            return True  # a unit after a number: "5 h"
        if word[0].isupper() and opens:
            return True
        return self._names.starts(word) or self._terms.starts(lower)

    def _content_word(self, word: str) -> bool:
        """Tell whether a word is (the start of) a content word of the source.

        Such a word is never refused for copying: kept off the source's word, a
        small model reaches for the next best one, often its opposite ("supervised"
        for "unsupervised", "dense" for "sparse").
        """
        lower = word.lower()
        if not lower or lower in CONTENT_STOP_WORDS:
            return False
        found = self._known.sorted
        at = bisect_left(found, lower)
        for candidate in found[at : at + CANDIDATES]:
            if not candidate.startswith(lower):
                return False
            if candidate not in CONTENT_STOP_WORDS:
                return True
        return False

    def _copies(self, step: _Step, piece: str) -> bool:
        if piece[:1].isspace() or not step.text or step.text[-1].isspace():
            whole = _last_word(step.text + piece)
            if any(c.isdigit() for c in whole):
                return False
            core = _last_letters(whole)
            if self._content_word(core):
                return False
            before = (step.text + piece)[: len(step.text + piece) - len(whole)]
            previous = step.words[-1] if step.words else ""
            kept = self._kept(core, _opens_sentence(before[-60:]), previous)
            new = _norm(piece).split()
            return self._copied(step, new, joined=False, margin=KEPT_MARGIN * kept)
        # The piece continues the text's last word.
        word = _last_word(step.text)
        joined = word + piece.split(" ")[0]
        if any(c.isdigit() for c in joined):
            return False
        if self._content_word(_last_letters(joined)):
            return False
        previous = step.words[-2] if len(step.words) > 1 else ""
        if self._kept(_last_letters(word), step.tail_opens, previous):
            # Only the start of the word may have been a term: judged as a whole.
            kept = self._kept(_last_letters(joined), step.tail_opens, previous)
            new = _norm(word + piece).split()
            return self._copied(step, new, joined=True, margin=KEPT_MARGIN * kept)
        if word[:1].isupper() or not self._glued(word, piece):
            return False
        # Glued to a finished source word: judged as the new word it stands for.
        return self._copied(step, _norm(piece).split(), joined=False)

    def _glued(self, word: str, piece: str) -> bool:
        """Return whether ``word + piece`` joins a whole source word to another."""
        last = _norm(word).strip()
        joined = last + _norm(piece).split(" ")[0]
        if not last or last not in self._known:
            return False
        return not self._known.starts(joined)

    def _copied(
        self, step: _Step, new: list[str], *, joined: bool, margin: int = 0
    ) -> bool:
        """Tell whether the text's words, then ``new``, end in a copied run.

        The run is ``limit + 1 + margin`` words long.
        """
        kept = step.words[:-1] if joined else step.words
        size = self.limit + 1 + margin
        if len(kept) + len(new) < size:
            return False
        words = kept[-size:] + new
        needle = "".join(words[-size:])
        if needle in self._haystack:
            return True
        if len(new) == 1 and not margin:
            history = step.history_joined if joined else step.history_new
        else:
            history = "".join((kept + new)[:-size])
        return needle in history


def _free(char: str) -> bool:
    """Tell whether letters right after ``char`` are not judged as a word."""
    return char.isdigit() or char in _APOSTROPHES


def _last_word(text: str) -> str:
    parts = text.split()
    return parts[-1] if parts else ""


def _last_letters(word: str) -> str:
    runs = _LETTERS.findall(word)
    return runs[-1] if runs else ""


def copy_guard_processor(
    guard: CopyGuard,
    token_text: Callable[[int], str | bytes],
    candidates: int = CANDIDATES,
) -> CandidateFilter:
    """Return a llama.cpp logits processor that enforces ``guard`` on generated text.

    It reads only the ``candidates`` best-scoring tokens of each step, never the whole
    vocabulary (see ``veriscribe.llm.embedded.candidates``), and judges the text so far once a
    step. Of the candidates it forbids those worse than the best one's verdict, and a
    foreign one always (see the module's docstring).

    Args:
        guard: The source and the run limit.
        token_text: The bytes (or text) of one token id (the model's detokenizer).
        candidates: How many of the best-scoring tokens to check at each step.
    """
    pieces: dict[int, bytes] = {}
    state: dict[str, Any] = {"prompt": None, "ids": [], "text": "", "decoder": None}

    def bytes_of(token: int) -> bytes:
        if token not in pieces:
            raw = token_text(token)
            pieces[token] = raw.encode("utf-8") if isinstance(raw, str) else raw
        return pieces[token]

    def generated(input_ids: Sequence[int]) -> tuple[str, bytes]:
        if state["prompt"] is None:
            state["prompt"] = len(input_ids)
        new = [int(t) for t in input_ids[state["prompt"] :]]
        if state["decoder"] is None or new[: len(state["ids"])] != state["ids"]:
            state["ids"], state["text"] = [], ""
            state["decoder"] = codecs.getincrementaldecoder("utf-8")("replace")
        for token in new[len(state["ids"]) :]:
            state["ids"].append(token)
            state["text"] += state["decoder"].decode(bytes_of(token))
        return str(state["text"]), bytes(state["decoder"].getstate()[0])

    def check(
        input_ids: Any,
        ids: npt.NDArray[np.intc],
        logits: npt.NDArray[np.single],
    ) -> None:
        text, pending = generated(input_ids)
        step = guard.step(text)
        verdicts = [
            guard.bytes_of(step, pending, bytes_of(token)) for token in ids.tolist()
        ]
        if not verdicts:
            return
        worst = min(min(verdicts), Verdict.GARBLE)
        for at, verdict in enumerate(verdicts):
            if verdict > worst:
                logits[at] = -np.inf

    return CandidateFilter(check, candidates)
