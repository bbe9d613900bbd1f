"""The question as searched: read with the chat before it, in the guidelines' words.

A chat's follow-up ("What about for acute low back pain?") names only what changes;
its topic ("opioids") is in the question before. A follow-up, a question that opens
like one or holds few words of its own, is searched with the words of the question
before that it does not hold itself, less a word it replaces ("chronic" when it says
"acute"). The users' terms are then mapped to the guidelines' (see
`veriscribe.retrieval.lay_terms`). Only the search changes: the question shown and the
answer's quotes are as they were.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from veriscribe.nodes.qa.state import QAState, Turn
from veriscribe.retrieval.lay_terms import guideline_words
from veriscribe.text.tokens import bm25_tokens

FOLLOW_UP_TERMS = 3
"""A question of a chat with fewer terms of its own than this is a follow-up."""

_OPENS_FOLLOW_UP = re.compile(
    r"^\W*(?:what|how)\s+about\b|^\W*(?:and|also|but|or)\b|^\W*what\s+if\b"
    r"|^\W*(?:same|likewise)\b|^\W*(?:is|does|do|can|should|would)\s+(?:it|that|this|they|those|these)\b"
    r"|^\W*(?:for|in|with|during)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_][\w'-]*")
_ASKING = frozenset(
    "should could would can may might must will shall does did do is are was were be "
    "been being use used using give given take taken what which when where who whom "
    "how why there their they them it its this that these those my your our his her "
    "patient patients person people someone anyone ok okay recommended recommend "
    "recommendation guideline guidelines say says said".split()
)
"""Words of a question that ask, or name who asks; not its topic."""
CONTRASTS = (
    frozenset({"acute", "subacute", "chronic"}),
    frozenset({"adult", "adults", "child", "children", "adolescent", "adolescents"}),
    frozenset({"men", "women", "male", "female"}),
    frozenset({"mild", "moderate", "severe"}),
    frozenset({"first", "second", "third"}),
    frozenset({"hip", "knee", "hand", "shoulder", "neck", "back"}),
    frozenset({"pregnant", "postpartum", "nonpregnant"}),
    frozenset({"episodic", "chronic"}),
    frozenset({"prevent", "prevention", "preventive", "attack", "attacks", "acute"}),
    frozenset({"tension", "tension-type", "migraine", "migraines", "cluster"}),
)
"""Words of one kind: a follow-up that says one replaces another of the question before."""


def is_follow_up(question: str, history: Sequence[Turn]) -> bool:
    """Tell whether a chat's question leans on the one before it."""
    if not history:
        return False
    own = {t for t in bm25_tokens(question)} - {
        t for w in _ASKING for t in bm25_tokens(w)
    }
    return bool(_OPENS_FOLLOW_UP.match(question)) or len(own) < FOLLOW_UP_TERMS


def with_topic(question: str, previous: str) -> str:
    """Return a follow-up with the topic words of the question before it added."""
    asked = {w.lower() for w in _WORD.findall(question)}
    stems = set(bm25_tokens(question))
    replaced = {
        word for kind in CONTRASTS if asked & kind for word in kind if word not in asked
    }
    carried: list[str] = []
    for word in _WORD.findall(previous):
        low = word.lower()
        if low in _ASKING or low in replaced or low in asked:
            continue
        tokens = bm25_tokens(word)
        if not tokens or set(tokens) <= stems:
            continue
        if low not in (w.lower() for w in carried):
            carried.append(word)
    return f"{question.rstrip()} ({' '.join(carried)})" if carried else question


def searched_question(
    state: QAState, holds: Callable[[str], bool] | None = None
) -> str:
    """Return the question as retrieval and sentence selection read it.

    ``holds`` tells whether the corpus uses a word (see `guideline_words`).
    """
    question = state["question"]
    history = state.get("history", [])
    if is_follow_up(question, history):
        question = with_topic(question, searched_previous(history))
    return guideline_words(question, holds)


def said_before(state: QAState) -> str:
    """Return the answer a chat's follow-up leans on, or "" for a question of its own.

    A follow-up asks what the answer before did not say: a sentence that answer gave
    is on the user's screen already and is not given again.
    """
    history = state.get("history", [])
    if not is_follow_up(state["question"], history):
        return ""
    return history[-1]["answer"]


def searched_previous(history: Sequence[Turn]) -> str:
    """Return the question before, itself read with the one before it if it leaned on it."""
    *earlier, last = history
    if is_follow_up(last["question"], earlier):
        return with_topic(last["question"], earlier[-1]["question"])
    return last["question"]
