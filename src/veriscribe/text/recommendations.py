"""A guideline sentence's recommendation, read from its fixed language; never written.

Guidelines state direction and strength in set phrases: GRADE-style "we recommend",
"we suggest against", "Strong for", "Weak against"; "there is insufficient evidence to
recommend for or against"; the USPSTF's "recommends", "recommends against", "concludes
that the current evidence is insufficient" and its grades A, B, C, D and I. The lead
shown above a certified quote ("Suggests against (weak)") is parsed from the quote's own
words by these patterns; a quote that states no recommendation has none, and so has one
that only defines the terms ("Strong for (or "We recommend offering this option ...")",
"The USPSTF recommends the service.").

A strength often stands after the sentence rather than in it: a USPSTF "(B
recommendation)", an NGC grade "[A]", an NHLBI "(Strong Recommendation, Low-Quality
Evidence)", a VA/DoD "Weak for" on the table's next line. The verbatim check shows
such a label with the quote's sentence (`label_end`); `label_closing` takes it from the
end of that passage, and `read_recommendation` reads it with the quote, for the strength
the quote's own words do not name. An imperative sentence ("Offer bariatric surgery
...", "Do not use transfusion therapy ...") is read as a recommendation only with a
strength label beside it; a label alone ("( B recommendation )") states none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Direction = Literal["for", "against", "neither"]
Strength = Literal[
    "strong", "moderate", "weak", "insufficient", "A", "B", "C", "D", "I", "EO"
]

_INSUFFICIENT = re.compile(
    r"\binsufficient evidence (?:to (?:recommend|suggest) )?for or against\b"
    r"|\bevidence (?:is|was) insufficient to (?:recommend|suggest) for or against\b"
    r"|\b(?:do|does|can)\s*not (?:recommend|suggest) for or against\b"
    r"|\bneither for nor against\b"
    r"|\bcurrent evidence is insufficient to assess the balance of benefits and harms\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"\b(Strong|Weak)\s+((?i:for|against))\b")
_GRADE = re.compile(
    r"\(\s*\**\s*([ABCDI])\s+(?:recommendation|statement)\s*\**\s*\)"
    r"|\bGrade:?\s*\**\s*([ABCDI])\b"
    r"|\bthis is an? ([ABCDI]) recommendation\b"
    r"|\[\s*\**\s*([ABCDI])\s*\**\s*\]\W*$",
)
_EXPERT = re.compile(r"\[\s*\**\s*EO\s*\**\s*\]\W*$")
"""An NGC "[EO]": a recommendation of expert opinion, no grade of evidence."""
_GRADED_LABEL = re.compile(
    r"\(\s*\**\s*(Strong|Moderate|Weak|Conditional)\s+Recommendation\b", re.IGNORECASE
)
"""An NHLBI-style "(Strong Recommendation, Low-Quality Evidence)"."""
_AFTER = re.compile(
    r"[\s*_]*("
    r"\(\s*\**\s*[ABCDI]\s+(?:recommendation|statement)\s*\**\s*\)"
    r"|\[\s*\**\s*(?:[ABCDI]|EO)\s*\**\s*\]"
    r"|\(\s*\**\s*(?:Strong|Moderate|Weak|Conditional)\s+Recommendation\b[^()\n]{0,80}\)"
    r"|\(?(?:Strong|Weak)\s+(?:for|against)\b(?:\s*\|[^()\n]{0,40}\))?"
    r")",
    re.IGNORECASE,
)
"""A strength label standing right after a sentence: nothing but space between."""
_LEADING_LABEL = re.compile(
    r"[\s*_(\[]*(?:[ABCDI]\s+(?:recommendation|statement)"
    r"|(?:Strong|Moderate|Weak|Conditional)\s+Recommendation"
    r"|(?:Strong|Weak)\s+(?:for|against))\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[^\W\d_]{2,}")
_ASIDES = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_NEGATED_NEGATIVE = re.compile(r"\A\s*(?:not\b|withhold)", re.IGNORECASE)
"""What follows a negation and turns it round: "suggest not withholding", "against
not ...": a recommendation for."""
_IMPERATIVE = re.compile(
    r"(?:\A|,\s+)(?:\d{1,3}[.)]\s+|[-*•]\s+)?"
    r"(?:(?:promptly|immediately|rapidly|gradually|routinely)\s+)?"
    r"(?:do\s+not\s+|don't\s+|never\s+)?"
    r"(?:offer|use|treat|perform|consider|assess|screen|manage|hospitalize|consult|"
    r"provide|plan|initiate|start|stop|continue|discontinue|evaluate|reassess|engage|"
    r"encourage|convey|reach|give|administer|transfuse|avoid|refer|prescribe|obtain|"
    r"monitor|document|educate|counsel|maintain|calculate|measure|test|limit|address|"
    r"include|ensure|apply|recommend|discuss|select|add|increase|reduce|delay)\b"
    r"|\b(?:is|are)\s+(?:not\s+)?recommended\b",
    re.IGNORECASE,
)
"""A sentence that tells what to do: an imperative opening it or its main clause ("In
people with ACS, give ..."), or "is (not) recommended"."""
_LACKING = re.compile(r"\binsufficient\b|\black(?:ing)?\b", re.IGNORECASE)
_IMPERATIVE_AGAINST = re.compile(
    r"(?:\A|[,;:]\s+)(?:\d{1,3}[.)]\s+)?(?:do\s+not|don't|never|avoid)\b"
    r"|\b(?:is|are)\s+not\s+recommended\b|\bshould\s+not\b",
    re.IGNORECASE,
)
"""An imperative or passive recommendation against ("Do not use ...", "In X, do not
administer ...", "... is not recommended")."""
_VERB = re.compile(
    r"\b(?:we|the uspstf|uspstf|the task force|the work ?group|the (?:guideline )?panel)\s+"
    r"(?:(?:strongly|also|therefore|now)\s+)?"
    r"(?P<not>(?:do|does)\s+not\s+)?"
    r"(?P<verb>recommends?|suggests?)\b"
    r"(?P<against>\s+(?:against|not)\b)?",
    re.IGNORECASE,
)
_AVOID = re.compile(
    r"\s*(?:that\s+)?(?:(?:primary care\s+)?(?:clinicians|providers|physicians|"
    r"patients|people|adults)\s+)?(?:should\s+)?(?:avoid|refrain from)\b",
    re.IGNORECASE,
)
"""What follows "recommends" and turns it against what it names: "that clinicians
avoid ..."."""
_SELECTIVE = re.compile(
    r"\brecommends (?:that (?:primary care )?clinicians )?selectively offer(?:ing)?\b",
    re.IGNORECASE,
)
"""The USPSTF's words for a C recommendation, its grade often paragraphs later."""
_DEFINITION = re.compile(
    r"\bthis (?:option|service)\b|\bthe service\b|…|\.\.\.|\bor [“\"]we (?:recommend|suggest)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Recommendation:
    """What a sentence recommends: its direction and strength, and the lead shown."""

    direction: Direction
    strength: Strength | None
    """GRADE strength, a USPSTF grade, "EO" (expert opinion), or None when the
    sentence names none."""
    phrase: str
    """The words of the sentence (or of its label) the recommendation was read from."""

    @property
    def lead(self) -> str:
        """Return the short lead shown above the quote, e.g. "Suggests against (weak)"."""
        if self.direction == "neither":
            grade = " (grade I)" if self.strength == "I" else ""
            return f"Insufficient evidence to recommend for or against{grade}"
        if self.strength == "C":
            return "Recommends selectively (grade C)"
        if self.strength == "EO":
            return f"Recommends {self.direction} (expert opinion)"
        verb = "Suggests" if self.strength == "weak" else "Recommends"
        if self.strength is None:
            return f"{verb} {self.direction}"
        graded = self.strength not in ("strong", "moderate", "weak")
        shown = f"grade {self.strength}" if graded else self.strength
        return f"{verb} {self.direction} ({shown})"


def label_end(section_text: str, end: int) -> int:
    """Return where the strength label right after ``end`` ends (``end`` if none)."""
    found = _AFTER.match(section_text, end, min(len(section_text), end + 200))
    return found.end(1) if found else end


def label_closing(passage: str) -> str:
    """Return the strength label a passage ends with ("... eruption. (B recommendation)")."""
    for start in (
        m.start() for m in re.finditer(r"[(\[*]|\b(?:Strong|Weak)\b", passage)
    ):
        found = _AFTER.match(passage, start)
        if found and not passage[found.end(1) :].strip(" *_"):
            return " ".join(found.group(1).split())
    return ""


def read_recommendation(sentence: str, label: str = "") -> Recommendation | None:
    """Return the recommendation a guideline sentence states, or None if it states none.

    ``label`` is the strength label that stands right after the sentence in its
    section (`label_closing`); it gives the strength only where the sentence names
    none.
    """
    text = " ".join(sentence.split())
    if _DEFINITION.search(text) or _bare_label(text):
        return None
    if found := _INSUFFICIENT.search(text):
        grade = _GRADE.search(f"{text} {label}")
        graded = "balance of benefits" in found.group(0).lower() or (
            grade is not None and "I" in grade.groups()
        )
        return Recommendation(
            "neither", "I" if graded else "insufficient", found.group(0)
        )
    read = _read(text)
    # A "Strong for" after a sentence may close a table row of other words (a
    # reference list); a VA/DoD sentence names its strength by its verb anyway.
    if label and not _LABEL.search(label) and (read is None or read.strength is None):
        labelled = _read(f"{text} {label}", label)
        if labelled is not None and labelled.strength is not None:
            return labelled
    return read


def _bare_label(text: str) -> bool:
    """Tell whether a text is a strength label alone, or one cut at its line.

    "( B recommendation )" or "( Moderate Recommendation, Low-" says how strongly,
    not what is recommended.
    """
    whole = _AFTER.match(text)
    if whole is not None and not text[whole.end(1) :].strip(" *_.;"):
        return True
    cut = _LEADING_LABEL.match(text)  # a label cut at its line
    if cut is not None and len(_WORDS.findall(text[cut.end() :])) < 2:
        return True
    # Only asides beside a label: "( _Carryover modified from the 2008 CPG_ ) (
    # **Weak For** )", "(Any use of ... by a nephrologist.) ( **Weak Against** )".
    return not _WORDS.search(_ASIDES.sub(" ", text))


def _read(text: str, label: str = "") -> Recommendation | None:
    """Return the recommendation of a sentence (and its label) not of the "neither" set."""
    grade_match = _GRADE.search(text)
    grade = ""
    if grade_match is not None:
        grade = next(g for g in grade_match.groups() if g)
    labels = {(m.group(1), m.group(2).lower()) for m in _LABEL.finditer(text)}
    if len(labels) > 1:
        return None  # "(Strong For, Weak For, Strong Against, ...)": the scale defined
    if labels and (found := _LABEL.search(text)):
        strength: Strength = "strong" if found.group(1) == "Strong" else "weak"
        against = found.group(2).lower() == "against"
        if (verb := _VERB.search(text)) and _AVOID.match(text[verb.end() :]):
            against = not against  # "recommends ... avoid ... (Strong For)"
        direction: Direction = "against" if against else "for"
        return Recommendation(direction, strength, found.group(0))
    if selective := _SELECTIVE.search(text):
        return Recommendation("for", "C", selective.group(0))
    verb = _VERB.search(text)
    if verb is None:
        if grade_match is not None:
            # A grade beside an imperative ("Offer ... [A]") is the USPSTF's: it
            # names its direction. An I grades a sentence of insufficient evidence.
            if grade == "I":
                if not _LACKING.search(text):
                    return None
            elif not _IMPERATIVE.search(text):
                return None
            return _graded(False, grade, grade_match.group(0))
        return _imperative(text)
    rest = text[verb.end() :]
    # "recommends that clinicians avoid ...": against what it names, which is what
    # the reader asks about, though the guideline grades the avoiding "Strong For".
    # "We do not suggest switching ...": graded "Weak against" by the guideline.
    against = (
        bool(verb.group("not"))
        or (bool(verb.group("against")) and not _NEGATED_NEGATIVE.match(rest))
        or bool(_AVOID.match(rest))
    )
    if grade:
        return _graded(against, grade, verb.group(0))
    weak = verb.group("verb").lower().startswith("suggest")
    # The USPSTF states strength by its grades; "we" and a work group or panel by
    # the verb (GRADE: "recommend" strong, "suggest" weak).
    by_grade = re.match(r"(?:the )?(?:uspstf|task force)", verb.group(0), re.IGNORECASE)
    strength_read: Strength | None = (
        None if by_grade else ("weak" if weak else "strong")
    )
    if by_grade and (graded := _GRADED_LABEL.search(text)):
        strength_read = _strength(graded.group(1))
    if by_grade and _EXPERT.search(text):
        strength_read = "EO"
    return Recommendation("against" if against else "for", strength_read, verb.group(0))


def _imperative(text: str) -> Recommendation | None:
    """Return an imperative or passive sentence's recommendation: only with its label.

    "Rapidly initiate treatment with parenteral opioids. (Strong Recommendation,
    ...)" recommends; without the label, "Offer ..." or "should" may be any sentence.
    """
    graded = _GRADED_LABEL.search(text)
    expert = _EXPERT.search(text)
    if (graded is None and expert is None) or not _IMPERATIVE.search(text):
        return None
    strength = _strength(graded.group(1)) if graded else "EO"
    phrase = graded.group(0) if graded else expert.group(0) if expert else ""
    against = _IMPERATIVE_AGAINST.search(text)
    return Recommendation("against" if against else "for", strength, phrase)


def _strength(word: str) -> Strength:
    """Return the strength a label's word names ("Conditional" is GRADE's weak)."""
    word = word.lower()
    if word == "strong":
        return "strong"
    return "moderate" if word == "moderate" else "weak"


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
    r"appropriate|helpful|useful|effective|recommended|a good idea|better|preferred|"
    r"superior)\b"
    r"|\b(?:recommend\w*|suggest\w*|advis\w*|worth|good idea|role for|benefit)\b"
    r"|\b(?:do|does|did|will|would)\b[^?]*\b(?:help|work|prevent|reduce|improve|benefit)"
    r"|\bwhat about\b|\bhow about\b|\bscreen(?:ing)?\b.*\?",
    re.IGNORECASE,
)


def asks_for_verdict(question: str) -> bool:
    """Tell whether a question asks whether to do something: a verdict answers it."""
    return bool(_ASKS.search(question))
