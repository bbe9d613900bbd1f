"""`veriscribe eval judge`: measure support judges on labelled pairs built from a corpus.

Pairs come from :func:`veriscribe.metrics.judge_pairs.build_pairs` (supported: a unit
of the section; not supported: a unit of another section; contradicted: the unit with
its negation flipped or a number changed). Each judge method rules on every pair with
the configured model; the report gives accuracy, the share of unsupported pairs that
were not certified (``safe_rate``), a confusion table per label, and for the scored
judge the ROC AUC of its scores and the accuracy at other decision thresholds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.errors import InputError
from veriscribe.eval.abstract_judge import AbstractJudgeMethod, measured_for, rule
from veriscribe.eval.reports import (
    AbstractJudgeReport,
    AbstractJudgeScores,
    Calls,
    JudgeReport,
    JudgeScores,
    PairRuling,
)
from veriscribe.llm.factory import make_llm
from veriscribe.metrics.abstract_pairs import (
    AbstractSource,
    build_abstract_pairs,
    split_of,
)
from veriscribe.metrics.judge_pairs import LABELS, JudgePair, build_pairs, roc_auc
from veriscribe.nodes.qa import judge as judge_node
from veriscribe.nodes.qa.state import Ruling
from veriscribe.options import JudgeMethod, QAOptions
from veriscribe.results import UNJUDGED, Verdict
from veriscribe.service.common import open_store
from veriscribe.service.corpora import require_corpus
from veriscribe.settings import Settings
from veriscribe.store import corpora as db

_EXPECTED = {
    "supported": "fully_supported",
    "not_supported": "not_supported",
    "contradicted": "contradicted",
}
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


async def eval_judge(
    settings: Settings,
    corpus: str,
    *,
    sources: int = 40,
    seed: int = 0,
    methods: Sequence[JudgeMethod] = ("scored",),
    samples: int = 3,
    on_pair: Callable[[], None] | None = None,
) -> JudgeReport:
    """Judge labelled pairs built from a corpus with each method; return the report."""
    if sources < 1:
        raise InputError("--sources must be 1 or more")
    async with open_store(settings) as store:
        await require_corpus(store, corpus)
        rows = await db.sections(store, corpus, with_text=True)
        pairs = build_pairs(
            [(row.key, row.text) for row in rows if row.chars], sources, seed
        )
        if not pairs:
            raise InputError(f"corpus {corpus!r} has no sentences to build pairs from")
        llm = make_llm(settings.model, settings, store)
        scored: dict[str, JudgeScores] = {}
        for method in methods:
            options = QAOptions(judge_method=method, samples=samples)
            found = []
            for pair in pairs:
                verdict = await judge_node.decide(
                    llm, options, "", pair.claim, [pair.source]
                )
                found.append(verdict)
                if on_pair is not None:
                    on_pair()
            scored[method] = score_method(pairs, found)
        return JudgeReport(
            corpus=corpus,
            model=llm.label,
            seed=seed,
            pairs=len(pairs),
            labels=dict(Counter(p.label for p in pairs)),
            methods=scored,
            usage=Calls(calls=llm.calls_made),
        )


def score_method(pairs: Sequence[JudgePair], found: Sequence[Ruling]) -> JudgeScores:
    """Return accuracy, safety, the confusion table and ROC AUC of one judge's verdicts."""
    verdicts = [f["verdict"] or UNJUDGED for f in found]
    correct = sum(_EXPECTED[p.label] == v for p, v in zip(pairs, verdicts, strict=True))
    negatives = [
        v for p, v in zip(pairs, verdicts, strict=True) if p.label != "supported"
    ]
    confusion = {
        label: dict(
            Counter(v for p, v in zip(pairs, verdicts, strict=True) if p.label == label)
        )
        for label in LABELS
    }
    scores = [_score(f) for f in found]
    positives = [p.label == "supported" for p in pairs]
    scored = [s is not None for s in scores]
    auc = (
        roc_auc(
            [s for s in scores if s is not None],
            [p for p, k in zip(positives, scored, strict=True) if k],
        )
        if all(scored)
        else None
    )
    binary = sum(
        (v == "fully_supported") == (p.label == "supported")
        for p, v in zip(pairs, verdicts, strict=True)
    )
    return JudgeScores(
        accuracy=round(correct / len(pairs), 4),
        binary_accuracy=round(binary / len(pairs), 4),
        safe_rate=(
            round(sum(v != "fully_supported" for v in negatives) / len(negatives), 4)
            if negatives
            else None
        ),
        confusion=confusion,
        lanes=dict(Counter(f.get("method") or "none" for f in found)),
        roc_auc=round(auc, 4) if auc is not None else None,
        thresholds=_sweep(pairs, found),
        suggested_threshold=_suggest(pairs, found),
        per_pair=[
            PairRuling(
                id=p.id,
                label=p.label,
                how=p.how,
                verdict=v,
                lane=f.get("method"),
                score=f.get("score"),
                claim=p.claim,
                source=p.source,
            )
            for p, v, f in zip(pairs, verdicts, found, strict=True)
        ],
    )


def _score(found: Ruling) -> float | None:
    """Return a judge's support score: the model's P(yes), 1 or 0 for the lexical lane."""
    if (score := found["score"]) is not None:
        return score
    if found.get("method") == "lexical":
        return 1.0 if found["verdict"] == "fully_supported" else 0.0
    return None


def _sweep(pairs: Sequence[JudgePair], found: Sequence[Ruling]) -> dict[str, float]:
    """Return the binary accuracy (supported or not) of the model lane at each threshold."""
    lane = [
        (p, score)
        for p, f in zip(pairs, found, strict=True)
        if f["method"] == "model" and (score := f["score"]) is not None
    ]
    if not lane:
        return {}
    return {
        f"{t:.1f}": round(
            sum((score >= t) == (p.label == "supported") for p, score in lane)
            / len(lane),
            4,
        )
        for t in THRESHOLDS
    }


def _suggest(pairs: Sequence[JudgePair], found: Sequence[Ruling]) -> float | None:
    """Return the model lane's cut-off with the best binary accuracy (ties: the higher).

    Candidates are the scores themselves, so compressed score ranges (a small model
    that says "yes" with probability 0.1 to 0.3) are resolved as finely as the data.
    """
    lane = [
        (score, p.label == "supported")
        for p, f in zip(pairs, found, strict=True)
        if f["method"] == "model" and (score := f["score"]) is not None
    ]
    if not lane:
        return None
    best: tuple[int, float] | None = None
    for cut in sorted({score for score, _ in lane}):
        right = sum((score >= cut) == positive for score, positive in lane)
        if best is None or right >= best[0]:
            best = (right, cut)
    return None if best is None else round(best[1], 4)


async def eval_abstract_judge(
    settings: Settings,
    inputs: Sequence[str],
    *,
    per_article: int = 4,
    articles: int | None = None,
    seed: int = 0,
    methods: Sequence[AbstractJudgeMethod] = ("checks", "hybrid"),
    samples: int = 3,
    on_pair: Callable[[], None] | None = None,
) -> AbstractJudgeReport:
    """Judge labelled abstract-sentence pairs with each method; return the report.

    The pairs come from the articles (with an author abstract) that ``inputs`` name
    (:func:`veriscribe.metrics.abstract_pairs.build_abstract_pairs`). The hybrid's
    cut-off is the one with the best accuracy on the ``tune`` articles' pairs, and
    every figure is given for the ``test`` articles apart: those are held out.
    """
    sources = _abstract_sources(inputs)
    if articles is not None:
        sources = sources[:articles]
    pairs = build_abstract_pairs(sources, per_article=per_article, seed=seed)
    if not pairs:
        raise InputError(
            "no article with an author abstract gave a pair (JATS files, or JSON "
            "lines with an abstract, are needed)"
        )
    async with open_store(settings) as store:
        needs_model = any(m != "checks" for m in methods)
        llm = make_llm(settings.model, settings, store) if needs_model else None
        label = llm.label if llm is not None else None
        scored: dict[str, AbstractJudgeScores] = {}
        for method in methods:
            judge = measured_for(method, label)
            found = []
            for pair in pairs:
                found.append(
                    await rule(llm, judge, pair.claim, [pair.source], samples=samples)
                )
                if on_pair is not None:
                    on_pair()
            cut = None
            if method == "hybrid":
                cut, found = _tuned(pairs, found)
            scored[method] = score_abstract_method(pairs, found, cut)
        return AbstractJudgeReport(
            pairs_from="abstracts",
            articles=len({p.section for p in pairs}),
            model=label,
            seed=seed,
            pairs=len(pairs),
            labels=dict(Counter(p.label for p in pairs)),
            kinds=dict(Counter(p.how for p in pairs)),
            splits=dict(Counter(split_of(p.section) for p in pairs)),
            methods=scored,
            usage=Calls(calls=llm.calls_made if llm is not None else 0),
        )


def _abstract_sources(inputs: Sequence[str]) -> list[AbstractSource]:
    sources = []
    for path in expand_inputs(inputs):
        for article in read_articles(path):
            if isinstance(article, Article) and article.reference:
                sources.append(
                    AbstractSource(article.id, article.body, article.reference)
                )
    return sources


def _tuned(
    pairs: Sequence[JudgePair], found: Sequence[Ruling]
) -> tuple[float | None, list[Ruling]]:
    """Return the hybrid's cut-off set on tune pairs, and the rulings under it."""
    tune = [
        (p, f)
        for p, f in zip(pairs, found, strict=True)
        if split_of(p.section) == "tune"
    ]
    cut = _suggest([p for p, _ in tune], [f for _, f in tune])
    if cut is None:
        return None, list(found)
    out = []
    for ruling in found:
        score = ruling["score"]
        if ruling["method"] == "model" and score is not None:
            verdict: Verdict = (
                "fully_supported" if score >= cut else "partially_supported"
            )
            ruling = Ruling(**{**ruling, "verdict": verdict, "votes": [verdict]})
        out.append(ruling)
    return cut, out


def _binary(pairs: Sequence[JudgePair], verdicts: Sequence[str]) -> float | None:
    if not pairs:
        return None
    right = sum(
        (v == "fully_supported") == (p.label == "supported")
        for p, v in zip(pairs, verdicts, strict=True)
    )
    return round(right / len(pairs), 4)


def score_abstract_method(
    pairs: Sequence[JudgePair], found: Sequence[Ruling], cut: float | None
) -> AbstractJudgeScores:
    """Return one judge's accuracy (all, tune, test) and its recall by kind of pair.

    ``accuracy`` is supported-or-not: the pair's label is ``supported`` exactly when
    the verdict is ``fully_supported``. ``by_kind`` gives, for each kind of pair, the
    share judged right (an author sentence: fully supported; a perturbation: not).
    """
    base = score_method(pairs, found)
    verdicts = [f["verdict"] or UNJUDGED for f in found]
    splits = [split_of(p.section) for p in pairs]

    def among(which: str) -> tuple[list[JudgePair], list[str]]:
        keep = [i for i, s in enumerate(splits) if which in ("all", s)]
        return [pairs[i] for i in keep], [verdicts[i] for i in keep]

    by_kind: dict[str, dict[str, float | None]] = {}
    for which in ("test", "all"):
        chosen, said = among(which)
        by_kind[which] = {
            kind: _binary(
                [p for p in chosen if p.how == kind],
                [v for p, v in zip(chosen, said, strict=True) if p.how == kind],
            )
            for kind in sorted({p.how for p in pairs})
        }
    return AbstractJudgeScores(
        accuracy=_binary(*among("test")),
        accuracy_tune=_binary(*among("tune")),
        accuracy_all=_binary(*among("all")),
        test_pairs=len(among("test")[0]),
        label_accuracy=base.accuracy,
        cut=cut,
        by_kind=by_kind,
        confusion=base.confusion,
        lanes=base.lanes,
        roc_auc=base.roc_auc,
        suggested_threshold=base.suggested_threshold,
        per_pair=base.per_pair,
    )
