"""What the simulated model says: plausible replies built from the prompt's own values.

Each writer answers the prompts of the graphs named for it in ``WRITERS``, found by the
prompt's id (never by its wording, so an edited prompt file gets the same replies), from
the values the prompt was rendered with (a facet's text, a draft, numbered section
excerpts, fenced guideline sections, ...), as a dutiful model would: it picks sentences
of the given text and lightly rephrases them, copies quotes word for word from fenced
sources, and writes questions from a section's words. Everything is drawn from a
generator the caller seeds with the prompt, so the same prompt always gets the same
reply. A writer that has nothing to say returns ``None`` and the caller's generic answer;
a prompt id without a writer is an error.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from veriscribe.errors import VeriscribeError

__all__ = ["WRITERS", "UnknownPrompt", "reply"]

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9(\"'])")
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]{2,}")
# Reference numbers, "[3]", "[2, 5-7]" or "(12)"; not "(2011-2020)" or "(n = 40)".
_CITATION = re.compile(
    r"\s*(?:\[\d{1,3}(?:\s*[,\u2013\-]\s*\d{1,3})*\]"
    r"|\(\d{1,3}(?:\s*[,\u2013\-]\s*\d{1,3})*\))"
)
_ABBREVIATION = re.compile(
    r"\b(?:Fig|Figs|et al|e\.g|i\.e|vs|approx|No|Ref|Eq|cf|ca|St|Dr)\.$", re.I
)
_ABBREVIATION_TAIL = 12
_FIGURE = re.compile(
    r"\s*\((?:see )?(?:Fig\.?|Figure|Table|Supplementary)[^)]*\)", re.I
)
_STOP = frozenset(
    """a an the of for to in on at by with without from and or but nor is are was were be
    been being do does did has have had can could should would may might must will shall
    what which who whom whose when where why how whether if than then that this these those
    there their it its we our you your he she his her they them also such into over under
    per as not no yes so more most less other been both each between after before during
    any all some only very among within about""".split()
)
# Light rephrasing: what a summariser changes in a sentence it keeps.
_REPHRASE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:In this (?:study|paper|work|article),?\s*)", re.I), ""),
    (re.compile(r"^(?:However|Moreover|Furthermore|Additionally|Thus),\s*", re.I), ""),
    (re.compile(r"^We (found|showed|observed|demonstrated) that\s+", re.I), ""),
    (re.compile(r"^We\b"), "The study"),
    (re.compile(r"\bwe\b"), "the investigators"),
    (re.compile(r"\b[Oo]ur\b"), "the"),
    (re.compile(r"\bin order to\b"), "to"),
    (re.compile(r"\ba number of\b"), "several"),
)
SUMMARY_WORDS = 90
ABSTRACT_WORDS = 250
_FIRST_LINE_ROLES = (
    ("objective", re.compile(r"\b(?:aim|objective|sought to|we asked|hypothes)", re.I)),
    (
        "methods",
        re.compile(
            r"\b(?:we used|were (?:recruited|enrolled|measured|collected)|"
            r"method|sampl|assay|analys|protocol|cohort)",
            re.I,
        ),
    ),
    (
        "results",
        re.compile(
            r"\b(?:found|increase|decrease|significant|p\s*[<=]|"
            r"showed|observed|%|odds ratio)",
            re.I,
        ),
    ),
    (
        "conclusions",
        re.compile(r"\b(?:conclu|suggest|implicat|in summary|overall)", re.I),
    ),
)


def sentences(text: str) -> list[str]:
    """Split text into sentences (paragraph breaks end a sentence too)."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        pieces: list[str] = []
        for piece in (s.strip() for s in _SENTENCE.split(flat)):
            # The abbreviation ends the piece: its tail holds it and the character
            # before it ("approx." is the longest).
            if pieces and _ABBREVIATION.search(pieces[-1][-_ABBREVIATION_TAIL:]):
                pieces[-1] += " " + piece  # "Fig. 2", "et al. (2010)" go on
            elif piece:
                pieces.append(piece)
        found.extend(pieces)
    return found


def rephrase(sentence: str) -> str:
    """Return the sentence lightly reworded: citations dropped, first person gone."""
    text = _FIGURE.sub("", _CITATION.sub("", sentence)).strip()
    for pattern, replacement in _REPHRASE:
        text = pattern.sub(replacement, text)
    text = " ".join(text.split())
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text.rstrip(",;:") + "."


def _words(text: str) -> int:
    return len(text.split())


def summarise(text: str, rng: random.Random, limit: int = SUMMARY_WORDS) -> str:
    """Keep the first sentence and a few others, in order, reworded, within ``limit``."""
    every = sentences(text)
    pool = [s for s in every if _words(s) >= 5] or every
    if not pool:
        return ""
    extra = sorted(rng.sample(range(1, len(pool)), min(3, len(pool) - 1)))
    kept: list[str] = []
    for index in [0, *extra]:
        sentence = rephrase(pool[index])
        if not sentence:
            continue
        if kept and sum(map(_words, kept)) + _words(sentence) > limit:
            break
        kept.append(sentence)
    if not kept:  # one sentence longer than the limit: cut it at a word
        kept = [" ".join(rephrase(pool[0]).split()[:limit]).rstrip(",;:.") + "."]
    return " ".join(kept)


def refine(draft: str) -> str:
    """Join the draft's parts into one abstract, repeated sentences said once."""
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in sentences(draft):
        key = sentence.lower()
        if key in seen:
            continue
        if kept and sum(map(_words, kept)) + _words(sentence) > ABSTRACT_WORDS:
            break
        seen.add(key)
        kept.append(sentence)
    return " ".join(kept)


def naive_abstract(article: str, rng: random.Random) -> str:
    """Write an abstract from the openings of paragraphs spread over the article."""
    paragraphs = [p for p in re.split(r"\n\s*\n", article) if p.strip()]
    if not paragraphs:
        return ""
    step = max(1, len(paragraphs) // 6)
    openings = [found[0] for p in paragraphs[::step] if (found := sentences(p))]
    return summarise("\n\n".join(openings), rng, ABSTRACT_WORDS)


def elements(text: str) -> list[str]:
    """List key elements: numbers with their noun, then distinctive words."""
    found = re.findall(r"\b\d[\d.,]*\s*%?\s+[a-z][a-z\-]{2,}", text)
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 6]
    unique = list(dict.fromkeys([*found, *words]))
    return unique[:6] or ["the main finding"]


def labels(items: str, count: int) -> list[str]:
    """Label each item's target sentence by its cue words, else by its position."""
    targets = re.findall(r"^Target: (.*)$", items, re.MULTILINE)
    result = []
    for index in range(count):
        target = targets[index] if index < len(targets) else ""
        role = next((r for r, cue in _FIRST_LINE_ROLES if cue.search(target)), "")
        if not role:
            role = "background" if index < max(1, count // 4) else "methods"
        result.append(role)
    return result


# -------------------------------------------------------------------- guidelines

_FENCED = re.compile(
    r"^=== SOURCE (\w+) ===\n\[([^\]\n]+)\]\n(.*?)\n=== END \1 ===$",
    re.MULTILINE | re.DOTALL,
)


_UNIT_LINE = re.compile(r"^\[(S\d+)\] (.+)$", re.MULTILINE)


def fenced_sources(text: str) -> list[tuple[str, str]]:
    """Return the (key, text) of every fenced guideline section in a prompt."""
    return [(key, body) for _, key, body in _FENCED.findall(text)]


def cited_sentences(sources: str, rng: random.Random) -> list[dict[str, str]]:
    """Answer with one sentence per source (up to three), each quoting its source."""
    cited = []
    for key, body in fenced_sources(sources)[:3]:
        numbered = dict(_UNIT_LINE.findall(body))
        pool = [s for s in numbered.values() or sentences(body) if _words(s) >= 5]
        if not pool:
            continue
        quote = pool[rng.randrange(min(3, len(pool)))]
        if numbered:
            # Sentences shown with ids are cited by id.
            unit = next(i for i, text in numbered.items() if text == quote)
            cited.append({"source": unit, "sentence": rephrase(quote)})
        else:
            cited.append(
                {"sentence": rephrase(quote), "section_id": key, "quote": quote}
            )
    return cited


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP}


def pick_sections(question: str, candidates: str, k: int) -> list[str]:
    """Choose the candidates whose summaries share most words with the question."""
    listed = re.findall(r"^\[([^\]\n]+)\]\n(.*)$", candidates, re.MULTILINE)
    asked = _terms(question)
    scored = sorted(
        (
            (len(asked & _terms(summary)), -i, key)
            for i, (key, summary) in enumerate(listed)
        ),
        reverse=True,
    )
    chosen = [key for shared, _, key in scored[:k] if shared]
    return chosen or [key for _, _, key in scored[:1]]


def section_lines(sections: str) -> str | None:
    """Write ``n: Covers ...`` for every numbered section excerpt of the prompt."""
    blocks = re.split(r"^Section (\d+) \((.*)\):$", sections, flags=re.MULTILINE)
    if len(blocks) < 4:
        return None
    lines = []
    for number, title, body in zip(
        blocks[1::3], blocks[2::3], blocks[3::3], strict=True
    ):
        topic = " ".join(title.split()[:6])
        point = " ".join(body.split()[: max(4, 18 - _words(topic))]).rstrip(",;:.")
        lines.append(f"{number}: Covers {topic}: {point}.")
    return "\n".join(lines)


_LOOKUP = (
    "What does current practice advise about {a}?",
    "When should clinicians consider {a}?",
    "How should {a} be managed in adults?",
)
_SCENARIO = (
    "A {age}-year-old {who} with {a} comes for a follow-up visit. "
    "What should the clinician do about {b}?"
)
_SDM = (
    "I have been dealing with {a} for a while. "
    "What are my options for {b}, and what are the risks?"
)


def _phrase(sentence: str, rng: random.Random, size: int = 3) -> str:
    words = [w.lower() for w in _WORD.findall(sentence) if w.lower() not in _STOP]
    if not words:
        return "this condition"
    start = rng.randrange(max(1, len(words) - size + 1))
    return " ".join(words[start : start + size])


def question(style: str, text: str, rng: random.Random) -> str:
    """Write a question about a section's text in a style: lookup, scenario or sdm."""
    pool = [s for s in sentences(text) if _words(s) >= 6] or [text]
    a = _phrase(rng.choice(pool), rng)
    b = a
    for _ in range(3):  # a second topic, different from the first if there is one
        if b != a:
            break
        b = _phrase(rng.choice(pool), rng)
    if style == "lookup":
        return rng.choice(_LOOKUP).format(a=a)
    if style == "scenario":
        who = rng.choice(("woman", "man"))
        return _SCENARIO.format(age=rng.randint(25, 80), who=who, a=a, b=b)
    return _SDM.format(a=a, b=b)


# ------------------------------------------------------------------------ replies


Values = dict[str, str]
Writer = Callable[[Values, dict[str, Any], random.Random], str | dict[str, Any] | None]
"""A writer takes the prompt's values, its schema's properties and the seeded generator."""
_REASONING = {"reasoning": "Kept the main points in the order given."}


class UnknownPrompt(VeriscribeError):
    """A prompt the simulated model has no writer for."""


def _summary(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"summary": summarise(values["text"], rng), **_REASONING}


def _refined(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"abstract": refine(values["draft"]), **_REASONING}


def _naive(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"abstract": naive_abstract(values["text"], rng), **_REASONING}


def _elements(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"elements": elements(values["text"])}


def _labels(
    values: Values, properties: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    count = int(properties.get("labels", {}).get("minItems", values["count"]))
    return {"labels": labels(values["items"], count)}


def _cited(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"sentences": cited_sentences(values["sources"], rng)}


def _picked(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    picked = pick_sections(values["question"], values["candidates"], int(values["k"]))
    return {"ids": picked}


def _no_claims(values: Values, _: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"not_claims": []}  # most sentences of an answer are claims


def _generic(values: Values, _: dict[str, Any], rng: random.Random) -> None:
    return None  # a value made from the schema serves: verdicts, spans, yes or no


def _section_lines(values: Values, _: dict[str, Any], rng: random.Random) -> str | None:
    return section_lines(values["sections"])


def _asking(style: str) -> Writer:
    def write(values: Values, _: dict[str, Any], rng: random.Random) -> str:
        return question(style, values["text"], rng)

    return write


_SUMMARISED = ("bc", "bc_ns", "di", "own", "si", "si_cot")
_ANSWERED = ("answer", "answer_id", "answer_quote", "select_id", "select_quote")
WRITERS: dict[str, Writer] = {
    **{f"abstract/summarize_{kind}": _summary for kind in _SUMMARISED},
    "abstract/merge": _summary,
    "abstract/refine": _refined,
    "abstract/refine_own": _refined,
    "abstract/naive": _naive,
    "abstract/elements_si_cot": _elements,
    "abstract/label": _labels,
    **{f"qa/{name}": _cited for name in _ANSWERED},
    "qa/retrieve": _picked,
    "qa/claims": _no_claims,
    "qa/judge": _generic,
    "qa/judge_yesno": _generic,
    "qa/select_yesno": _generic,
    "qa/recover": _generic,
    "qa/summarize_sections": _section_lines,
    **{f"questions/{style}": _asking(style) for style in ("lookup", "scenario", "sdm")},
}
"""The writer of every prompt file, by ``<graph>/<name>`` (its id without the digest)."""


def reply(
    prompt_id: str,
    values: Values,
    schema: dict[str, Any] | None,
    rng: random.Random,
) -> str | dict[str, Any] | None:
    """Return the reply to a rendered prompt: text, or JSON when a schema is given.

    ``None`` when the writer has nothing to say (the caller's generic answer serves).

    Raises:
        UnknownPrompt: No writer answers the prompt.
    """
    name = prompt_id.partition("@")[0]
    writer = WRITERS.get(name)
    if writer is None:
        raise UnknownPrompt(
            f"sim: no reply written for the prompt {name!r}: add its writer to "
            "veriscribe.llm.sim_replies.WRITERS"
        )
    properties: dict[str, Any] = (schema or {}).get("properties", {})
    value = writer(values, properties, rng)
    if isinstance(value, dict):
        if schema is None:
            return None
        return {key: item for key, item in value.items() if key in properties}
    return value if schema is None else None
