"""Stop a model from continuing a word-for-word run of its source beyond a few words.

Small models asked to summarise a passage copy it: their "summaries" are the source's
own sentences. The guard watches decoding: when the next token would make the text's
last ``limit + 1`` words (the token's own word included) a run that occurs word for
word in the source, that token is forbidden and the model has to say it otherwise.
Tokens without letters (digits, punctuation, spaces) are never forbidden, so numbers,
P values and intervals are still copied exactly; they only count toward the run.

Words are compared lower-cased with their punctuation kept, so "trial," and "trial"
differ; that errs toward allowing, never toward garbling a number.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from veriscribe.llm.candidates import CandidateFilter

__all__ = ["CANDIDATES", "CopyGuard", "copy_guard_processor"]

CANDIDATES = 40
"""Only the highest-scoring tokens are checked at each step: the rest are not sampled
at the low temperatures used for summaries, and checking all 150k would be slow."""

_SPACE = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower())


def _squeeze(text: str) -> str:
    return _SPACE.sub("", text.lower())


@dataclass
class CopyGuard:
    """Decide whether appending a piece of text extends a copied run too far."""

    source: str
    limit: int
    """The longest word-for-word run of the source allowed, in words (at least 1)."""
    _haystack: str = field(init=False, repr=False)
    _words: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("a copy limit is at least one word")
        self._haystack = _squeeze(self.source)
        self._words = sorted(set(_norm(self.source).split()))

    def forbids(self, text: str, piece: str) -> bool:
        """Return whether ``text + piece`` ends in a copied run of more than ``limit`` words.

        A run is copied when it occurs in the source, or earlier in the text itself (a
        model that may not copy its source tends to loop on its own words instead).
        Allowed whatever the run: a piece without a letter (numbers come out exact), a
        word that starts with a capital (names, acronyms, sentence starts: stopping
        those only garbles them), and the rest of a word already begun. Gluing a
        word to a finished source word ("UK" + "National") is checked as the new word
        it stands for, so it is no way around the limit.
        """
        if not _LETTER.search(piece):
            return False
        if piece[:1].isspace() or not text or text[-1].isspace():
            word = _last_word(text + piece)
            return not word[:1].isupper() and self._copied(text, piece)
        # The piece continues the text's last word.
        word = _last_word(text)
        if word[:1].isupper() or not self._glued(word, piece):
            return False
        return self._copied(text, " " + piece.lstrip())

    def _glued(self, word: str, piece: str) -> bool:
        """Return whether ``word + piece`` joins a whole source word to another."""
        last = _norm(word).strip()
        joined = last + _norm(piece).split(" ")[0]
        if not last or not self._is_word(last):
            return False
        return not self._starts_a_word(joined)

    def _is_word(self, word: str) -> bool:
        at = bisect_left(self._words, word)
        return at < len(self._words) and self._words[at] == word

    def _starts_a_word(self, prefix: str) -> bool:
        at = bisect_left(self._words, prefix)
        return at < len(self._words) and self._words[at].startswith(prefix)

    def _copied(self, text: str, piece: str) -> bool:
        words = _norm(text + piece).split()
        if len(words) < self.limit + 1:
            return False
        needle = "".join(words[-(self.limit + 1) :])
        if needle in self._haystack:
            return True
        return needle in "".join(words[: -(self.limit + 1)])


def _last_word(text: str) -> str:
    parts = text.split()
    return parts[-1] if parts else ""


def copy_guard_processor(
    guard: CopyGuard,
    token_text: Callable[[int], str],
    candidates: int = CANDIDATES,
) -> CandidateFilter:
    """Return a llama.cpp logits processor that enforces ``guard`` on generated text.

    It reads only the ``candidates`` best-scoring tokens of each step, never the whole
    vocabulary (see ``veriscribe.llm.candidates``).

    Args:
        guard: The source and the run limit.
        token_text: The text of one token id (the model's detokenizer).
        candidates: How many of the best-scoring tokens to check at each step.
    """
    texts: dict[int, str] = {}
    state: dict[str, Any] = {"prompt": None, "ids": [], "text": ""}

    def text_of(token: int) -> str:
        if token not in texts:
            texts[token] = token_text(token)
        return texts[token]

    def generated(input_ids: Sequence[int]) -> str:
        if state["prompt"] is None:
            state["prompt"] = len(input_ids)
        new = [int(t) for t in input_ids[state["prompt"] :]]
        if new[: len(state["ids"])] != state["ids"]:
            state["ids"], state["text"] = [], ""
        for token in new[len(state["ids"]) :]:
            state["ids"].append(token)
            state["text"] += text_of(token)
        return str(state["text"])

    def check(
        input_ids: Any,
        ids: npt.NDArray[np.intc],
        logits: npt.NDArray[np.single],
    ) -> None:
        text = generated(input_ids)
        for at, token in enumerate(ids.tolist()):
            if guard.forbids(text, text_of(token)):
                logits[at] = -np.inf

    return CandidateFilter(check, candidates)
