"""A question in the guideline's words: brand, foreign, abbreviated and lay terms mapped.

Clinicians and patients ask with the words they use ("Tylenol", "paracetamol", "BP",
"water pills", "flu shot"); the guidelines say "acetaminophen", "blood pressure",
"diuretics", "influenza vaccination". A question shares too few words with the sentence
that answers it, so retrieval misses the section and the sentence choice finds too
little of the question in it. Before retrieval and sentence selection the question is
read with the shipped list (``data/lay_terms.tsv``, one pair a line) applied: each
user's term is replaced by the guideline's. Only the words searched change: the
question shown, and every quote, stay as they are; the answer is still only the
guideline's own sentences, which the checker certifies.

A term written with two or more capitals ("BP", "PrEP", "NSAIDs") matches only as
written, so that "pt" or "prep" in ordinary prose is not read as one; any other term
matches in any case. The longest term at a place wins, and a term is left alone where
the question already holds the guideline's phrase ("back pain" in "low back pain"). A
one-word term the corpus itself uses is the corpus's word: in the opioid guideline
"OT" is opioid therapy, not occupational therapy, and stays as asked.

Guidelines recommend by class ("the concurrent use of benzodiazepines and opioids"); a
user names the drug ("Xanax and Percocet"). A generic name of the second shipped list
(``data/drug_classes.tsv``) is searched with its class beside it: "alprazolam (or
benzodiazepine) and oxycodone (or opioid)", unless the question already names the
class; a sentence that names either answers (`veriscribe.retrieval.units.alternatives`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

_CAPITALS = re.compile(r"[A-Z].*[A-Z]")


@dataclass(frozen=True)
class LayTerms:
    """The mapping from users' terms to guideline terms, compiled for matching."""

    exact: dict[str, str]
    """Terms matched as written (abbreviations), by their text."""
    folded: dict[str, str]
    """Terms matched in any case, by their lower-case text."""
    pattern: re.Pattern[str]

    def rewrite(self, question: str, holds: Callable[[str], bool] | None = None) -> str:
        """Return the question with each user's term replaced by the guideline's.

        ``holds`` tells whether the corpus itself uses a word: a one-word term the
        guidelines use is theirs ("OT" is opioid therapy in an opioid guideline,
        "NSAIDs" a guideline's own abbreviation), and is left as it is.
        """
        lowered = question.lower()

        def swap(match: re.Match[str]) -> str:
            found = match.group(0)
            target = self.exact.get(found) or self.folded.get(found.lower())
            if target is None or (" " not in found and holds and holds(found)):
                return found
            # "back pain" in "low back pain": the guideline's phrase is already there.
            start = max(0, match.start() - len(target))
            window = lowered[start : match.end() + len(target)]
            if target.lower() in window:
                return found
            return target

        return self.pattern.sub(swap, question)


def read_lay_terms(text: str) -> LayTerms:
    """Parse the list's text: ``user's term<TAB>guideline's term`` a line, ``#`` notes."""
    exact: dict[str, str] = {}
    folded: dict[str, str] = {}
    for user, guideline in _pairs(text, "lay terms").items():
        if _CAPITALS.search(user):
            exact[user] = guideline
        else:
            folded[user.lower()] = guideline
    terms = sorted({*exact, *folded}, key=lambda t: (-len(t), t))
    alternation = "|".join(re.escape(t) for t in terms)
    # Whole words only; case is checked in `rewrite` for the exact terms.
    pattern = re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])", re.IGNORECASE)
    return LayTerms(exact, folded, pattern)


@dataclass(frozen=True)
class DrugClasses:
    """Generic names and the class a guideline names each by, compiled for matching."""

    classes: dict[str, str]
    """The class of each generic name, by its lower-case text."""
    pattern: re.Pattern[str]

    def add(self, question: str) -> str:
        """Return the question with each generic name followed by its class."""
        lowered = question.lower()

        def name(match: re.Match[str]) -> str:
            found = match.group(0)
            kind = self.classes[found.lower()]
            if kind.lower() in lowered:
                return found
            return f"{found} (or {kind})"

        return self.pattern.sub(name, question)


def read_drug_classes(text: str) -> DrugClasses:
    """Parse the list's text: ``generic name<TAB>class`` a line, ``#`` notes."""
    classes = {
        user.lower(): kind for user, kind in _pairs(text, "drug classes").items()
    }
    alternation = "|".join(re.escape(t) for t in sorted(classes, key=lambda t: -len(t)))
    pattern = re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])", re.IGNORECASE)
    return DrugClasses(classes, pattern)


def _pairs(text: str, what: str) -> dict[str, str]:
    """Return the tab-separated pairs of a shipped list, in order, ``#`` lines skipped."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        first, tab, second = line.partition("\t")
        if not tab or not first.strip() or not second.strip():
            raise ValueError(f"{what} line {number}: not two tab-separated terms")
        pairs[first.strip()] = second.strip()
    return pairs


@lru_cache(maxsize=1)
def drug_classes() -> DrugClasses:
    """Return the shipped list of generic names and their classes."""
    data = resources.files(__package__).joinpath("data", "drug_classes.tsv")
    return read_drug_classes(data.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def lay_terms() -> LayTerms:
    """Return the shipped list of users' terms and their guideline terms."""
    data = resources.files(__package__).joinpath("data", "lay_terms.tsv")
    return read_lay_terms(data.read_text(encoding="utf-8"))


def guideline_words(question: str, holds: Callable[[str], bool] | None = None) -> str:
    """Return the question as searched: users' terms in the guidelines' words.

    ``holds`` tells whether the corpus uses a word (`BM25Index.holds`): a one-word
    term it uses is read as the corpus means it. Each drug named is followed by its
    class.
    """
    return drug_classes().add(lay_terms().rewrite(question, holds))
