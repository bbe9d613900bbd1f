"""The one tokenizer behind the abstractiveness metrics (novelty and fragments).

The DPR-BAG evaluation follows Newsroom (Grusky et al. 2018): the article and the
summary are cut into spaCy tokens, lower-cased, and every token counts, punctuation
included. Loading spaCy to evaluate a million-token article costs seconds, so this
module writes the same idea as one documented rule:

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

__all__ = ["tokenize"]

_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Split text into lower-cased word, number and punctuation tokens.

    Args:
        text: Any text: an article body, an abstract, a generated summary.

    Returns:
        The tokens in reading order, by the rule in the module docstring.
    """
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())
