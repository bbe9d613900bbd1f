"""What each facet summary is asked to say, and sentences that say the asking instead.

The papers' facet guidance is a noun phrase ("the research gap and the motivation for
the work"); a small model given it often writes it back as a sentence ("The research
gap and the motivation for the work are significant."). The own-words prompts ask the
question the facet answers instead (:data:`QUESTIONS`), and :func:`echoes_guidance`
finds a sentence that restates the guidance rather than the article.
"""

from __future__ import annotations

import re

from veriscribe.text.tokens import content_words

__all__ = [
    "CONCISE_GUIDE",
    "DETAILED_GUIDE",
    "QUESTIONS",
    "echoes_guidance",
    "guidance_words",
    "strip_facet_label",
]

# One line per facet, in the spirit of the paper's concise guidance (table 7).
CONCISE_GUIDE = {
    "background": "the research gap and the motivation for the work.",
    "objective": "the primary aim or hypothesis.",
    "methods": "the design and the procedures.",
    "results": "the key findings and their data.",
    "conclusions": "the implications and the take-home message.",
    "other": "the main point of the text.",
    "intro": "the research context, gap and aim.",
    "main_idea": "the approach, design and main content.",
    "results_conclusions": "the key findings and what they imply.",
}
# The detailed guidance (table 8 style, after structured-abstract author guidelines).
DETAILED_GUIDE = {
    "background": "State the context of the work and the gap or problem it addresses, "
    "with why it matters.",
    "objective": "State the complete aims, questions or hypotheses, including the "
    "population and setting when given.",
    "methods": "Report the design, setting, participants or samples (with sample "
    "sizes), data collection, interventions, outcome measures and analysis methods.",
    "results": "Report the main findings with their numbers: sample sizes, response "
    "rates, effect sizes, P values and confidence intervals.",
    "conclusions": "State the conclusions that the results support, their "
    "implications and the limitations the text names.",
    "other": "State the main point and any key data.",
    "intro": "State the context, the gap and the complete aims.",
    "main_idea": "Report the design, participants, data and analysis, or the main "
    "argument.",
    "results_conclusions": "Report the main findings with their statistics and the "
    "conclusions they support.",
}
# The own-words prompts ask the question each facet answers: a question has no
# sentence to copy, so the answer has to come from the text.
QUESTIONS = {
    "background": "What gap in knowledge motivated the work?",
    "objective": "What did the work set out to find or test?",
    "methods": "How was the work done, on what and on whom?",
    "results": "What was found, with which numbers?",
    "conclusions": "What do the findings mean?",
    "other": "What is the main point of the text?",
    "intro": "What gap motivated the work, and what did it set out to do?",
    "main_idea": "How was the work done, or what does the text argue?",
    "results_conclusions": "What was found, and what does it mean?",
}
_FACET_NAMES = (
    "background",
    "introduction",
    "objectives?",
    "aims?",
    "purpose",
    "methods?",
    "methodology",
    "design",
    "results?",
    "findings",
    "conclusions?",
    "discussion",
    "implications",
    "main (?:idea|content|point)",
    "other",
    "research gap",
    "take-home message",
)
_LABEL = re.compile(
    rf"^\s*(?:\*\*)?(?:{'|'.join(_FACET_NAMES)})(?:\s+and\s+\w+)?(?:\*\*)?"
    r"(?:\s*:(?:\*\*)?|\s+[-–—])\s*",
    re.IGNORECASE,
)
# Words that fill a sentence without saying anything about the article: with the
# guidance's own words they make up an echoed sentence.
_GENERIC = frozenset(
    """study studies work paper article text section sections part authors author
    described describes describe discussed discusses presented presents provided
    provides involved involves include includes including included significant
    important importance various several overall main key aspects aspect details
    detail information topic context content motivation motivated primary mentioned
    summary summarised summarized crucial essential understanding research""".split()
)


def guidance_words() -> frozenset[str]:
    """Return the content words of every facet's guidance, question and name."""
    texts = [
        *CONCISE_GUIDE.values(),
        *DETAILED_GUIDE.values(),
        *QUESTIONS.values(),
        *(name.replace("_", " ") for name in CONCISE_GUIDE),
        "introduction main content results conclusions findings",
    ]
    return frozenset(w for text in texts for w in content_words(text))


_GUIDANCE = guidance_words()
PHRASE_WORDS = 3
"""Consecutive content words of one question or guide that make a copied phrase."""


def _phrases() -> frozenset[tuple[str, ...]]:
    texts = [*CONCISE_GUIDE.values(), *DETAILED_GUIDE.values(), *QUESTIONS.values()]
    runs = set()
    for text in texts:
        words = content_words(text)
        runs |= {
            tuple(words[i : i + PHRASE_WORDS])
            for i in range(len(words) - PHRASE_WORDS + 1)
        }
    return frozenset(runs)


_PHRASES = _phrases()


def strip_facet_label(sentence: str) -> tuple[str, bool]:
    """Remove a leading facet label ("Methods:"); return the sentence and whether."""
    match = _LABEL.match(sentence)
    if match is None or match.end() >= len(sentence):
        return sentence, False
    rest = sentence[match.end() :]
    return rest[:1].upper() + rest[1:], True


def echoes_guidance(sentence: str, article_words: set[str] | frozenset[str]) -> bool:
    """Tell whether a sentence restates the facet guidance instead of the article.

    It does when its content words are mostly the guidance's own or filler ("study",
    "described") and none says something particular to the article (a word of the
    article that is neither): at least two guidance words, at least 60% guidance or
    filler and none particular; or at least three, 75% and one particular.
    A question is always an echo (an abstract answers, it does not ask), and so is a
    sentence that copies a phrase of a question or guide (``PHRASE_WORDS`` of its
    content words in a row); a sentence with a number never is (no guidance has one).
    """
    if sentence.rstrip().endswith("?"):
        return True
    if any(c.isdigit() for c in sentence):
        return False
    words = content_words(sentence)
    if not words:
        return False
    if any(
        tuple(words[i : i + PHRASE_WORDS]) in _PHRASES
        for i in range(len(words) - PHRASE_WORDS + 1)
    ):
        # A phrase of the prompt's own question written back ("The gap in knowledge
        # motivated the work by ..."): the sentence answers the prompt, not the reader.
        return True
    guidance = sum(w in _GUIDANCE for w in words)
    generic = sum(w in _GUIDANCE or w in _GENERIC for w in words)
    particular = sum(
        w in article_words and w not in _GUIDANCE and w not in _GENERIC for w in words
    )
    if particular == 0:
        return guidance >= 2 and generic >= 0.6 * len(words)
    return particular == 1 and guidance >= 3 and generic >= 0.75 * len(words)
