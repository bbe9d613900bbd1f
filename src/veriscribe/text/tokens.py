"""Every word tokenizer of the package, each for its own job.

They differ in which characters make a word, whether case is folded before or after
the words are found, and what they keep of punctuation; each difference is one that a
caller's scores, stored tables or trained weights depend on, so none is folded into
another.

- :func:`alnum_words`: lower-cased runs of letters and digits (any script), nothing
  dropped: the words the gold-answer scores and key-phrase recall compare, and what
  :func:`bm25_tokens` stems.
- :func:`bm25_tokens`: :func:`alnum_words` with English stop words removed and
  Porter2 (Snowball English) stemming applied: what the BM25 indexes and the fused
  retriever match on.
- :func:`alias_words`: the text lower-cased first, then every character that is
  neither a word character nor whitespace read as a space, and the rest split on
  whitespace: how concept recall cuts a text into the words of knowledge-base aliases,
  which :mod:`veriscribe.text.entities` normalises the same way. It differs from
  :func:`alnum_words` only in the underscore, a word character here (``a_b`` is one
  word, two there), as it is in the aliases' normal form.
- :func:`metric_tokens`: lower-cased word, number and punctuation tokens, every one
  kept: what the abstractiveness metrics (novelty and fragments) count.
- :func:`edge_tokens`: lower-cased runs of word characters and every other single
  character that is not whitespace: the labeller's sentence edges, where an opening
  ``(`` or a closing ``).`` tells a sentence's role as much as a word. Unlike
  :func:`metric_tokens` there is no Unicode normalisation and a number's separators
  are tokens of their own (``0.05`` -> ``0``, ``.``, ``05``).
- :func:`sklearn_words`: lower-cased runs of two or more word characters (letters,
  digits, underscore), scikit-learn's default ``token_pattern``: the labeller's word
  n-grams and its word-cluster table are keyed by these, so the shipped weights and
  table were made with them. Unlike :func:`alias_words` a one-character word is
  dropped.
- :func:`word_runs`: runs of word characters (letters, digits, underscore), each
  lower-cased after it is found: the words whose repeated trigrams the wording checks
  count. Unlike :func:`alias_words` case is folded after the cut, so a capital whose
  lower case holds a combining mark (``İ`` -> ``i̇``) stays inside its word.
- :func:`letter_word_matches`: words of letters only (any script), case kept, as
  matches that say where each word is: what the wording checks read an article's and
  an abstract's spellings with, since they need each word's place (does it start a
  sentence, what is before and after it) and mend words where they stand. The same
  words as :func:`content_words` finds, before its case folding and filters.
- :func:`content_words`: lower-cased words of letters only, longer than two letters
  and not in :data:`CONTENT_STOP_WORDS`: what the abstract checks compare an abstract's
  words with its article's and its guidance's by.
- :func:`support_tokens`: lower-cased ASCII words, each with at most one inner
  apostrophe (``don't``, ``patient's``; a typographic ``’`` read as ``'``), and
  numbers with their ``.`` and ``,`` separators (``0.05``, ``1,000``): what the
  lexical support checks compare a claim with its source by. The apostrophe stays so
  that ``n't`` can be read as a negation, and a number stays whole so that a changed
  number is seen. A letter outside ASCII (``β``, ``é``) ends a word.
- :func:`question_words`: runs of letters and digits of any script, each with at most
  one inner apostrophe (``'`` or ``’``), lower-cased after they are found, ``’`` read
  as ``'``: what the question gates compare a generated question with its section's
  title and text by, and how a guideline's name is spelt out in a question. Unlike
  :func:`support_tokens` a word may mix letters and digits (``covid19``), a number's
  separators split it, and case is folded word by word, after the cut.
- :func:`direction_words`: the set of lower-cased ASCII words, each with at most one
  inner hyphen (``up-regulated``), ``n't`` read as ``not``: what the faithfulness
  checks look the direction and negation words up in. A set, as only whether a word
  occurs counts. Unlike :func:`support_tokens` a hyphen joins (the direction words
  include ``up-regulated`` and ``down-regulated``), an apostrophe splits and numbers
  are not words.
- :func:`ascii_alnum_runs`: runs of ASCII letters and digits, case kept: the parts of
  a name (``SARS-CoV-2`` -> ``SARS``, ``CoV``, ``2``) and the words of the passage a
  name is looked for in. Case is kept because it is what makes a part name-like.
- :func:`hyphenated_names`: ASCII words that start with a letter and may join parts
  of letters and digits with hyphens (``IL-6``, ``SARS-CoV-2``), case kept: the
  candidates the faithfulness checks test for being a name.

The metric tokens follow the DPR-BAG evaluation, which follows Newsroom (Grusky et al.
2018): the article and the summary are cut into spaCy tokens, lower-cased, and every
token counts, punctuation included. Loading spaCy to evaluate a million-token article
costs seconds, so :func:`metric_tokens` writes the same idea as one documented rule:

1. Apply Unicode NFKC normalisation, so that ligatures (``ﬁ``), full-width forms and
   no-break spaces compare equal to their plain forms, then lower-case.
2. A token is, trying each alternative in order at every position:

   - a number with internal decimal or thousands separators (``0.05``, ``1,000``,
     ``3.5.1``): digits joined by single ``.`` or ``,`` characters;
   - a maximal run of word characters (Unicode letters, digits, underscore), so
     ``1996b`` and ``h3k27me3`` stay whole;
   - any other single character that is not whitespace (``(``, ``-``, ``%``, ``.``).

Whitespace separates tokens and is never one (spaCy emits a token for a run of
several spaces; the original scripts counted it, which let layout change scores).
Hyphenated words split at the hyphen (``long-term`` -> ``long``, ``-``, ``term``), as
spaCy's English infix rules split them. Where spaCy keeps an abbreviation whole
(``e.g.``) or splits a clitic (``'s``), this rule gives ``e . g .`` and ``' s``; the
article and the summary are always cut by the same rule, so the metrics compare like
with like.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

__all__ = [
    "CONTENT_STOP_WORDS",
    "STOP_WORDS",
    "alias_words",
    "alnum_words",
    "ascii_alnum_runs",
    "bm25_tokens",
    "content_words",
    "direction_words",
    "edge_tokens",
    "hyphenated_names",
    "letter_word_matches",
    "metric_tokens",
    "question_words",
    "sklearn_words",
    "support_tokens",
    "word_runs",
]

STOP_WORDS: frozenset[str] = frozenset(STOPWORDS_EN_PLUS)
"""The NLTK English stop word list, as shipped with bm25s: not BM25 tokens."""

CONTENT_STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all also although among an and any are as at
    be because been before being below between both but by can could did do does doing
    down during each either few for from further had has have having he her here hers
    him his how however i if in into is it its itself just may might more most much must
    no nor not now of off on once only or other our ours out over own per same she
    should so some such than that the their theirs them then there these they this those
    through thus to too under until up upon very was we were what when where whether
    which while who whom why will with within without would yet you your""".split()
)
"""Function words that are not content words: a shorter list than the NLTK one."""

_ALNUM = re.compile(r"[^\W_]+")
_NOT_WORD = re.compile(r"[^\w\s]")
_METRIC_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|\w+|[^\w\s]")
_LETTERS = re.compile(r"[^\W\d_]+")
_WORD_RUN = re.compile(r"\w+")
_SKLEARN_WORD = re.compile(r"(?u)\b\w\w+\b")
_EDGE_TOKEN = re.compile(r"\w+|[^\w\s]")
_SUPPORT_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*")
_QUESTION_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
_DIRECTION_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]+")
_HYPHENATED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


def alnum_words(text: str) -> list[str]:
    """Return the lower-cased runs of letters and digits of a text, in order."""
    return _ALNUM.findall(text.lower())


def alias_words(text: str) -> list[str]:
    """Return the words of a lower-cased text, punctuation read as spaces, in order."""
    return _NOT_WORD.sub(" ", text.lower()).split()


def bm25_tokens(text: str) -> list[str]:
    """Turn a text into lower-cased, stop-word-free, stemmed alphanumeric tokens."""
    words = [w for w in alnum_words(text) if w not in STOP_WORDS]
    stems: list[str] = _stemmer().stemWords(words)
    return stems


def metric_tokens(text: str) -> list[str]:
    """Split text into lower-cased word, number and punctuation tokens.

    Args:
        text: Any text: an article body, an abstract, a generated summary.

    Returns:
        The tokens in reading order, by the rule in the module docstring.
    """
    return _METRIC_TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def letter_word_matches(text: str) -> Iterator[re.Match[str]]:
    """Yield each word of letters only in a text, as a match, case kept."""
    return _LETTERS.finditer(text)


def word_runs(text: str) -> list[str]:
    """Return the runs of word characters of a text, each then lower-cased."""
    return [m.group(0).lower() for m in _WORD_RUN.finditer(text)]


def content_words(text: str) -> list[str]:
    """Return the lower-cased words of ``text`` that carry content (no stop words)."""
    return [
        w
        for w in map(str.lower, _LETTERS.findall(text))
        if len(w) > 2 and w not in CONTENT_STOP_WORDS
    ]


def sklearn_words(text: str) -> list[str]:
    """Return the lower-cased words of two or more word characters, as scikit-learn."""
    return _SKLEARN_WORD.findall(text.lower())


def edge_tokens(text: str) -> list[str]:
    """Return the lower-cased word-character runs and single marks of a text."""
    return _EDGE_TOKEN.findall(text.lower())


def support_tokens(text: str) -> list[str]:
    """Return the lower-cased ASCII words (one inner apostrophe) and numbers of a text."""
    return _SUPPORT_TOKEN.findall(text.lower().replace("’", "'"))


def question_words(text: str) -> list[str]:
    """Return the words of a text, each lower-cased and with ``’`` read as ``'``."""
    return [w.lower().replace("\u2019", "'") for w in _QUESTION_WORD.findall(text)]


@lru_cache(maxsize=4096)
def direction_words(text: str) -> frozenset[str]:
    """Return the lower-cased ASCII words of a text, one hyphen allowed, n't as not."""
    return frozenset(_DIRECTION_WORD.findall(text.lower().replace("n't", " not")))


def ascii_alnum_runs(text: str) -> list[str]:
    """Return the runs of ASCII letters and digits of a text, case kept."""
    return _ASCII_ALNUM.findall(text)


def hyphenated_names(text: str) -> list[str]:
    """Return the ASCII words of a text that start with a letter, hyphens joining."""
    return _HYPHENATED_NAME.findall(text)
