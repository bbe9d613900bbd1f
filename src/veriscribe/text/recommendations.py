"""A guideline sentence's recommendation, read from its fixed language; never written.

Guidelines state direction and strength in set phrases: GRADE-style "we recommend",
"we suggest against", "Strong for", "Weak against"; "there is insufficient evidence to
recommend for or against"; the USPSTF's "recommends", "recommends against", "concludes
that the current evidence is insufficient" and its grades A, B, C, D and I. The lead
shown above a certified quote ("Suggests against (weak)") is parsed from the quote's own
words by these patterns; a quote that states no recommendation has none, and so has one
that only defines the terms ("Strong for (or "We recommend offering this option ...")",
"The USPSTF recommends the service.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Direction = Literal["for", "against", "neither"]
Strength = Literal["strong", "weak", "insufficient", "A", "B", "C", "D", "I"]

_INSUFFICIENT = re.compile(
    r"\binsufficient evidence (?:to (?:recommend|suggest) )?for or against\b"
    r"|\bneither for nor against\b"
    r"|\bcurrent evidence is insufficient to assess the balance of benefits and harms\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"\b(Strong|Weak)\s+((?i:for|against))\b")
_GRADE = re.compile(
    r"\(\s*\**\s*([ABCDI])\s+(?:recommendation|statement)\s*\**\s*\)"
    r"|\bGrade:?\s*\**\s*([ABCDI])\b"
    r"|\bthis is an? ([ABCDI]) recommendation\b",
)
_VERB = re.compile(
    r"\b(?:we|the uspstf|uspstf|the task force|the work ?group|the (?:guideline )?panel)\s+"
    r"(?:(?:strongly|also|therefore|now)\s+)?"
    r"(recommends?|suggests?)\b"
    r"(\s+(?:against|not)\b)?",
    re.IGNORECASE,
)
_SELECTIVE = re.compile(r"\brecommends selectively offering\b", re.IGNORECASE)
_DEFINITION = re.compile(
    r"\bthis (?:option|service)\b|\bthe service\b|…|\.\.\.|\bor [“\"]we (?:recommend|suggest)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Recommendation:
    """What a sentence recommends: its direction and strength, and the lead shown."""

    direction: Direction
    strength: Strength | None
    """GRADE strength, a USPSTF grade, or None when the sentence names neither."""
    phrase: str
    """The words of the sentence the recommendation was read from."""

    @property
    def lead(self) -> str:
        """Return the short lead shown above the quote, e.g. "Suggests against (weak)"."""
        if self.direction == "neither":
            grade = " (grade I)" if self.strength == "I" else ""
            return f"Insufficient evidence to recommend for or against{grade}"
        if self.strength == "C":
            return "Recommends selectively (grade C)"
        verb = "Suggests" if self.strength == "weak" else "Recommends"
        if self.strength is None:
            return f"{verb} {self.direction}"
        graded = self.strength not in ("strong", "weak")
        shown = f"grade {self.strength}" if graded else self.strength
        return f"{verb} {self.direction} ({shown})"


def read_recommendation(sentence: str) -> Recommendation | None:
    """Return the recommendation a guideline sentence states, or None if it states none."""
    text = " ".join(sentence.split())
    if _DEFINITION.search(text):
        return None
    if found := _INSUFFICIENT.search(text):
        graded = "balance of benefits" in found.group(0).lower()
        return Recommendation(
            "neither", "I" if graded else "insufficient", found.group(0)
        )
    grade_match = _GRADE.search(text)
    grade = ""
    if grade_match is not None:
        grade = next(g for g in grade_match.groups() if g)
    labels = {(m.group(1), m.group(2).lower()) for m in _LABEL.finditer(text)}
    if len(labels) > 1:
        return None  # "(Strong For, Weak For, Strong Against, ...)": the scale defined
    if labels and (label := _LABEL.search(text)):
        strength: Strength = "strong" if label.group(1) == "Strong" else "weak"
        against = label.group(2).lower() == "against"
        direction: Direction = "against" if against else "for"
        return Recommendation(direction, strength, label.group(0))
    if selective := _SELECTIVE.search(text):
        return Recommendation("for", "C", selective.group(0))
    verb = _VERB.search(text)
    if verb is None:
        # A grade alone ("(B recommendation)") states a recommendation of A, B or D.
        if grade_match is None or grade not in ("A", "B", "D"):
            return None
        return _graded(False, grade, grade_match.group(0))
    against = bool(verb.group(2))
    if grade:
        return _graded(against, grade, verb.group(0))
    weak = verb.group(1).lower().startswith("suggest")
    # The USPSTF states strength by its grades; "we" and a work group or panel by
    # the verb (GRADE: "recommend" strong, "suggest" weak).
    by_grade = re.match(r"(?:the )?(?:uspstf|task force)", verb.group(0), re.IGNORECASE)
    strength_read: Strength | None = (
        None if by_grade else ("weak" if weak else "strong")
    )
    return Recommendation("against" if against else "for", strength_read, verb.group(0))


def _graded(against: bool, grade: str, phrase: str) -> Recommendation:
    """Return a USPSTF-graded recommendation; the grade decides over the verb."""
    if grade == "I":
        return Recommendation("neither", "I", phrase)
    if grade == "C":
        return Recommendation("for", "C", phrase)
    if against or grade == "D":
        return Recommendation("against", "D", phrase)
    return Recommendation("for", "A" if grade == "A" else "B", phrase)


_ASKS = re.compile(
    r"\b(?:should|shall|ought|can|could|may|might|must)\b"
    r"|\b(?:is|are)\b[^?]*?\b(?:ok|okay|safe|fine|wise|worth|advisable|allowed|"
    r"appropriate|helpful|useful|effective|recommended|a good idea)\b"
    r"|\b(?:recommend\w*|suggest\w*|advis\w*|worth|good idea|role for|benefit)\b"
    r"|\b(?:do|does|did|will|would)\b[^?]*\b(?:help|work|prevent|reduce|improve|benefit)"
    r"|\bwhat about\b|\bhow about\b|\bscreen(?:ing)?\b.*\?",
    re.IGNORECASE,
)


def asks_for_verdict(question: str) -> bool:
    """Tell whether a question asks whether to do something: a verdict answers it."""
    return bool(_ASKS.search(question))
