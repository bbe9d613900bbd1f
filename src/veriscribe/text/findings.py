"""What a reader looks for in an abstract, told by the words of a sentence.

A reader of an abstract looks for the objective, the design, the main findings with
their numbers and the authors' conclusion; eligibility criteria, approvals, search
dates and lab procedure only when space is left. These plain functions score one
article sentence for each job, without a model:

- :func:`states_objective`: the sentence states what the work set out to do;
- :func:`is_procedure`: the sentence is about eligibility, approvals and permits,
  a literature search, funding or a lab protocol (it goes first when an abstract is
  too long);
- :func:`finding_score`: how well a Results sentence states a finding (a comparison,
  an effect size, a P value, something detected or not), against one that describes
  samples or inputs;
- :func:`conclusion_score`: how well a Discussion or Conclusions sentence states the
  authors' own conclusion ("In conclusion, ...", "Our findings suggest ..."), against
  one that reports earlier work, a limitation or a plan.

The scores only rank sentences the evidence checks then hold to the article verbatim.
"""

from __future__ import annotations

import re

__all__ = [
    "conclusion_score",
    "finding_score",
    "is_aside",
    "is_procedure",
    "is_setting",
    "states_objective",
]

_PROCEDURE = re.compile(
    r"eligib|inclusion criteri|exclusion criteri|were excluded|were included if|"
    r"informed consent|consent|approv|ethic|permit|review board|\bIRB\b|"
    r"searched|search(?:es)? (?:of|in|on)|databases?\b|PubMed|MEDLINE|Embase|"
    r"incubat|centrifug|buffer|reagent|\bstain|software|registered|registration|"
    r"funding|funded|grant|primer|plasmid|\bkit\b|protocol",
    re.IGNORECASE,
)
_SETTING = re.compile(
    r"\b(?:approv|ethic|permit|consent|eligib|funding|funded|searched|databases?)\w*",
    re.IGNORECASE,
)
_STATISTICS = (
    re.compile(r"\d\s*%"),
    re.compile(r"\bCI\b|confidence interval|\bSD\b|\bSE\b|±"),
    re.compile(r"\b[Pp]\s*[<=>≤]|\b[Pp]-?values?\b|significan"),
    re.compile(
        r"\b(?:a?OR|HR|RR|IRR)\b|odds|hazard|\bratio\b|"
        r"times (?:more|less|higher|lower|as)",
        re.IGNORECASE,
    ),
)
_FINDING = re.compile(
    r"associat|increas|decreas|higher|lower|reduc|improv|more likely|less likely|"
    r"prevalence|differ|correlat|effect|detect|positive|negative|observed|"
    r"identified|found|none of|no evidence|did not|failed to|greater|fewer|"
    r"declin|rose|predict|linked|\bloss|\bgain|\bchange|\brate\b|incidence|"
    r"mortality|survival|efficacy|likelihood|exceed|harmful|classified as|"
    r"contained|revealed|compliant",
    re.IGNORECASE,
)
_COMPARISON = re.compile(
    r"compared|whereas|\bwhile\b|\bthan\b|\bvs\.?|versus|relative to", re.IGNORECASE
)
_DESCRIPTIVE = re.compile(
    r"ranged from|\binput\b|as determined|were recruited|were enrolled in the study|"
    r"mean age|median age|were aged|consisted of|were collected|were sequenced|"
    r"baseline|characteristics|demographic|response rate|were analy[sz]ed|"
    r"positive control|negative control",
    re.IGNORECASE,
)
_CONCLUDING_OPENER = re.compile(
    r"^(?:In conclusion|In summary|To conclude|To summari[sz]e|Taken together|"
    r"Together|Collectively|Overall|In sum|Altogether|Thus|Therefore)\b",
    re.IGNORECASE,
)
_CONCLUDE = re.compile(r"\bwe conclude|\bconclude that", re.IGNORECASE)
_OWN_WORK = re.compile(
    r"\b(?:our|these|the present|this|the current)\s+(?:[\w-]+\s+)?"
    r"(?:re-?)?(?:findings|results|data|study|studies|analysis|analyses|work|"
    r"observations|"
    r"report|review|evidence)\b|\bbased on our\b|\bwe (?:found|show|showed|have shown|"
    r"observed|did not|failed|provide|demonstrate|report)",
    re.IGNORECASE,
)
_IMPLICATION = re.compile(
    r"suggest|indicat(?:e[sd]?|ing)\b|demonstrat|support|highlight|"
    r"provide[sd]? evidence|\bshould\b|"
    r"recommend|\bneed(?:s|ed)?\b|warrant|implication|important|unlikely|likely|"
    r"\bmay\b|could|underscore|confirm|reveal|probabl|explain",
    re.IGNORECASE,
)
_ASIDE = re.compile(
    r"limitation|future (?:research|stud|work)|further (?:research|stud|work)|"
    r"prior to this|previous(?:ly)? (?:stud|report|work)|et al\b|strength of|"
    r"(?:findings|study|studies|work|data) (?:of|by|from) (?:(?-i:[A-Z])|the USA)|"
    r"susceptible to|biased|generali[sz]|caution",
    re.IGNORECASE,
)
_CITED = re.compile(r"\[\d{1,3}\b|\bet al\b|\([A-Z][\w'-]+,? (?:19|20)\d\d")
_PAREN_CITATION = re.compile(r"\s*\([^()]*\bet al\b[^()]*\)")
_ANAPHORA = re.compile(
    r"^(?:The corresponding|This|These|Those|Such|It|They|Similarly|Likewise|"
    r"In contrast|Conversely|In addition|Furthermore|Moreover|For example|"
    r"For instance|Of these|Of those)\b|"
    r"\b(?:this|that|the same) (?:finding|result|effect|association|difference)\b"
)
_SECONDARY = re.compile(r"\b(?:also|additionally|likewise|similarly)\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;]|\band\b")
_CONTRAST_OPENER = re.compile(r"^(?:However|But|Although|Despite|Nevertheless)\b")


_OBJECTIVE = re.compile(
    r"\b(?:the|our|this|its)\s+(?:primary\s+|main\s+|overall\s+|specific\s+)?"
    r"(?:aims?|objectives?|purposes?|goals?)\s+(?:of\s+(?:this|the|our)\s+[\w-]+"
    r"(?:\s+[\w-]+)?\s+)?(?:was|were|is|are)\s+(?:to\b|\(?1\)|twofold|threefold|as follows)|"
    r"\bwe\s+(?:therefore\s+)?(?:aimed|sought|set out|decided|wanted|hypothesi[sz]ed)\b|"
    r"\b(?:this|the present|the current|our)\s+(?:study|work|analysis|report|paper|"
    r"review|trial)\s+(?:aimed|aims|sought|seeks|examined|examines|investigated|"
    r"investigates|assessed|assesses|evaluated|evaluates|explored|explores|"
    r"describes|described)\b|"
    r"\b(?:here|in this (?:study|paper|report|work|article)),?\s+we\s+"
    r"(?:report|describe|show|examine|investigate|assess|evaluate|explore|present|"
    r"characteri[sz]e|test|compare)",
    re.IGNORECASE,
)


def states_objective(sentence: str) -> bool:
    """Tell whether a sentence states what the work set out to do.

    "The aim of this study was ...", "We sought to ...", "This study examined
    ...", "Here we report ...".
    """
    return bool(_OBJECTIVE.search(sentence)) and not is_setting(sentence)


def is_procedure(sentence: str) -> bool:
    """Tell whether a sentence is about eligibility, approvals, searches or protocol."""
    return bool(_PROCEDURE.search(sentence))


def is_setting(sentence: str) -> bool:
    """Tell whether a sentence is about approvals, eligibility, funding or searches.

    Narrower than :func:`is_procedure`: a lab study's finding names its primers and
    assays, but a finding never names its ethics approval.
    """
    return bool(_SETTING.search(sentence))


def is_aside(sentence: str) -> bool:
    """Tell whether a sentence cites others' work or states a limitation or a plan.

    A citation in parentheses with an author's name ("(Clarke et al., 2017)") does
    not count: the sentence may still state the authors' own reading of it.
    """
    sentence = _PAREN_CITATION.sub("", sentence)
    return bool(_CITED.search(sentence) or _ASIDE.search(sentence))


def finding_score(sentence: str) -> float:
    """Return how well a Results sentence states a finding (0: it states none).

    A comparison, an effect size or a P value, and a word of change or detection,
    count for it; describing the samples or citing other work counts against it.
    """
    if is_setting(sentence):
        return 0.0
    sentence = _PAREN_CITATION.sub("", sentence)
    score = 0.0
    score += 1.5 * sum(bool(kind.search(sentence)) for kind in _STATISTICS)
    score += min(3, len(_FINDING.findall(sentence)))
    score += 1.0 * bool(_COMPARISON.search(sentence))
    score -= 2.0 * bool(_DESCRIPTIVE.search(sentence))
    # "The corresponding risk ratio for this finding was 3.6": read alone, it
    # points at a sentence the abstract does not have.
    score -= 2.0 * bool(_ANAPHORA.search(sentence))
    # "The rate ... was also improved": a result beside the main one (not "...,
    # and was also associated with ...", the main one going on).
    also = _SECONDARY.search(sentence)
    score -= 1.5 * bool(also and not _CLAUSE.search(sentence[: also.start()]))
    score -= 2.0 * bool(_CITED.search(sentence) or _ASIDE.search(sentence))
    return max(score, 0.0)


def conclusion_score(sentence: str) -> float:
    """Return how well a closing sentence states the authors' conclusion (0: not).

    An opener such as "In conclusion," or "Taken together,", the authors' own work
    ("our findings", "this study", "we found") and a word of implication ("suggest",
    "should", "support") count for it; earlier work, a limitation or a plan count
    against it.
    """
    sentence = _PAREN_CITATION.sub("", sentence)
    score = 0.0
    score += 3.0 * bool(
        _CONCLUDING_OPENER.search(sentence) or _CONCLUDE.search(sentence)
    )
    score += 3.0 * bool(_OWN_WORK.search(sentence))
    score += min(2, len(_IMPLICATION.findall(sentence)))
    if not score:
        return 0.0
    score -= 2.0 * bool(_CITED.search(sentence))
    score -= 1.5 * bool(_ASIDE.search(sentence))
    score -= 0.5 * bool(_CONTRAST_OPENER.search(sentence))
    score -= 2.0 * is_setting(sentence)
    return max(score, 0.0)
