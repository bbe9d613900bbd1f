"""`veriscribe eval abstracts`: generated abstracts against the article and the human one."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from veriscribe.documents.articles import (
    Article,
    ReadFailure,
    expand_inputs,
    read_articles,
)
from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError
from veriscribe.eval.reports import (
    AbstractsReport,
    ArticleScores,
    Comparison,
    ExcludedItem,
    MetricComparison,
    MetricSummary,
    Score,
    ScoredResults,
    SupportDescription,
)
from veriscribe.eval.result_files import AbstractItem, read_abstract_items
from veriscribe.eval.support import (
    CALIBRATION_FLOOR,
    SUPPORT_METRICS,
    SupportChecker,
)
from veriscribe.metrics.abstract_quality import QUALITY_METRICS, abstract_quality
from veriscribe.metrics.bootstrap import PROXIMITY_METRICS, compare_metric
from veriscribe.metrics.fragments import fragment_stats_from_tokens
from veriscribe.metrics.novelty import ngram_novelty
from veriscribe.metrics.recall import KEYPHRASES, concept_recall, keyphrase_recall
from veriscribe.metrics.rouge import rouge_l
from veriscribe.metrics.scorers import (
    MODEL_METRICS,
    registered_scorers,
    run_scorer,
)
from veriscribe.metrics.scorers import load_errors as scorer_load_errors
from veriscribe.text.entities import alias_index
from veriscribe.text.tokens import metric_tokens

# `eval abstracts`: the metrics of DPR-BAG section 4.2 / appendix I per article and on
# average, and the paired bootstrap of appendix J between two result files.

ABSTRACTIVENESS: tuple[str, ...] = (
    "bigram_novelty",
    "trigram_novelty",
    "coverage",
    "density",
    "compression",
)
"""Metrics of the generated abstract against the article, also computed for the human
abstract; the closer to the human value the better (compared by |x - human|)."""

REFERENCE_METRICS: tuple[str, ...] = ("rouge_l", "keyphrase_recall")
"""Metrics against the reference abstract that need no model; higher is better."""

UMLS_METRIC = "umls_recall"

DEFAULT_WORDS = 250
"""The asked length of a result that does not say (made before ``--words``)."""

SMALL_SAMPLE = 20
"""Below this many paired articles the comparison carries a caution."""

_SOURCE_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
_BODY_KEYS = frozenset(
    {"article_text", "abstract_text", "sections", "full_text", "body", "text"}
)


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    return value


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if _finite(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def significance(p_value: float) -> str:
    """Return the paper's marker: ``***`` p < 0.001, ``**`` < 0.01, ``*`` < 0.05."""
    for threshold, marker in ((0.001, "***"), (0.01, "**"), (0.05, "*")):
        if p_value < threshold:
            return marker
    return ""


class Usable(NamedTuple):
    """A result to score, and the key it is known by (its id, else its source)."""

    key: str
    item: AbstractItem


@dataclass
class ResultItems:
    """The items of a results file: those to score and those left out, with why."""

    usable: list[Usable]
    """Items with an ``abstract`` and no ``error``, the first of each ``id``."""
    excluded: list[ExcludedItem]
    """Failed items, lines that are not JSON objects, items without an abstract,
    duplicates: each with the reason."""
    failed: int = 0
    """How many of the excluded items are results of articles that failed."""


def read_results(path: Path) -> ResultItems:
    """Read abstract results: one JSON object, a JSON array, or JSON lines.

    Raises:
        InputError: The file cannot be read or holds no item at all.
    """
    found = ResultItems([], [])
    seen: set[str] = set()
    for where, item in read_abstract_items(path):
        if isinstance(item, str):
            found.excluded.append(ExcludedItem(id=where, source="", reason=item))
            continue
        key = item.id or item.source or where
        reason = None
        if item.error:
            reason = f"failed: {item.error}"
            found.failed += 1
        elif item.abstract is None or not item.abstract.strip():
            reason = "no abstract"
        elif key in seen:
            reason = "duplicate id (the first is scored)"
        if reason is not None:
            found.excluded.append(
                ExcludedItem(id=key, source=item.source, reason=reason)
            )
        else:
            seen.add(key)
            found.usable.append(Usable(key, item))
    return found


@dataclass(frozen=True)
class ScoringSource:
    """What one result is scored against."""

    key: str
    """Identifies the article, so its human scores are computed once."""
    body: str
    """The article body: paragraphs joined by blank lines."""
    reference: str
    """The human (author) abstract."""


def _is_reference_list(path: Path) -> bool:
    """Tell a JSONL of reference abstracts (``file``, ``abstract``) from a dataset."""
    if path.suffix.lower() not in (".jsonl", ".ndjson") or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    first = json.loads(line)
                    break
            else:
                return False
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return (
        isinstance(first, dict)
        and ("abstract" in first or "reference" in first)
        and not (_BODY_KEYS & first.keys())
    )


class References:
    """Find the article body and the human abstract behind each result.

    ``ref`` is either articles (files, directories or globs of JATS, JSON lines, text:
    the body and the author abstract both come from them), or a JSON-lines list of
    reference abstracts (``abstract`` with ``file`` relative to the list, ``source``
    or ``id``), in which case the body is read from each result's ``source``. With no
    ``ref`` at all, the results' own ``reference`` fields and sources are used.
    Results are matched by their ``source`` path (resolved; a JSON-lines source keeps
    its ``:line``), then by ``id``, then by a file name that is unique.
    """

    def __init__(self, ref: Sequence[str] | None, base: Path) -> None:
        self.base = base
        self._files: dict[Path, list[Article | ReadFailure] | str] = {}
        self._mode = "results"
        self._by_path: dict[str, Any] = {}
        self._by_id: dict[str, Any] = {}
        self._by_name: dict[str, list[Any]] = {}
        self._human: dict[str, dict[str, float]] = {}
        self.problems: list[str] = []
        """Reference files that could not be read, with the reason."""
        if not ref:
            return
        if len(ref) == 1 and _is_reference_list(Path(ref[0])):
            self._mode = "list"
            self._read_list(Path(ref[0]))
        else:
            self._mode = "articles"
            for path in expand_inputs(list(ref)):
                entries = self._articles(path)
                if isinstance(entries, str):
                    self.problems.append(entries)
                    continue
                for entry in entries:
                    if isinstance(entry, Article):
                        self._index(entry.source, entry.id, entry)
        if not self._by_path and not self._by_id:
            raise InputError(f"{', '.join(ref)}: no reference abstract found")

    @property
    def mode(self) -> str:
        """Return where references come from: ``articles``, ``list`` or ``results``."""
        return self._mode

    def _read_list(self, path: Path) -> None:
        for _, entry in json_lines(path):
            if not isinstance(entry, dict):
                continue
            abstract = entry.get("abstract") or entry.get("reference")
            if not isinstance(abstract, str) or not abstract.strip():
                continue
            location = entry.get("file") or entry.get("source")
            source = str(path.parent / location) if location else None
            self._index(source, entry.get("id"), abstract)

    def _index(self, source: str | None, identifier: Any, value: Any) -> None:
        if source:
            key = self._source_key(source)
            if key is not None:
                self._by_path.setdefault(key, value)
            self._by_name.setdefault(_source_name(source), []).append(value)
        if identifier:
            self._by_id.setdefault(str(identifier), value)

    def _resolve(self, path: str) -> Path | None:
        for candidate in (Path(path), self.base / path):
            if candidate.is_file():
                return candidate.resolve()
        return None

    def _source_key(self, source: str) -> str | None:
        resolved = self._resolve(source)
        if resolved is not None:
            return str(resolved)
        match = _SOURCE_LINE.match(source)
        if match:
            resolved = self._resolve(match["path"])
            if resolved is not None:
                return f"{resolved}:{match['line']}"
        return None

    def _articles(self, path: Path) -> list[Article | ReadFailure] | str:
        key = path.resolve()
        if key not in self._files:
            try:
                self._files[key] = list(read_articles(path))
            except InputError as exc:
                self._files[key] = exc.user_message
        return self._files[key]

    def _article_at(self, source: str) -> Article | str:
        """Read the article a result's ``source`` names (``path`` or ``path:line``)."""
        key = self._source_key(source)
        if key is None:
            return f"article not found: {source}"
        match = _SOURCE_LINE.match(key)
        path, line = (
            (Path(match["path"]), match["line"]) if match else (Path(key), None)
        )
        entries = self._articles(path)
        if isinstance(entries, str):
            return entries
        for entry in entries:
            if line is None or entry.source.endswith(f":{line}"):
                if isinstance(entry, ReadFailure):
                    return f"{entry.source}: {entry.reason}"
                return entry
        return f"article not found: {source}"

    def _match(self, item: AbstractItem) -> Any:
        source = item.source
        if source:
            key = self._source_key(source)
            if key is not None and key in self._by_path:
                return self._by_path[key]
        identifier = item.id or ""
        if identifier and identifier in self._by_id:
            return self._by_id[identifier]
        if source:
            same_name = self._by_name.get(_source_name(source), [])
            if len(same_name) == 1:
                return same_name[0]
        return None

    def find(self, item: AbstractItem) -> ScoringSource | str:
        """Return what ``item`` is scored against, or why it cannot be scored."""
        source = item.source
        if self._mode == "articles":
            found = self._match(item)
            if found is None:
                return "no matching article in the reference set"
            article: Article = found
            reference = article.reference
        else:
            loaded = self._article_at(source) if source else "result has no source"
            if isinstance(loaded, str):
                return loaded
            article = loaded
            if self._mode == "list":
                reference = self._match(item)
                if reference is None:
                    return "no reference abstract for it in the reference list"
            else:
                reference = item.reference
        if not isinstance(reference, str) or not reference.strip():
            return "no reference abstract"
        if not article.paragraphs:
            return "the article has no body paragraphs"
        return ScoringSource(article.source, article.body, reference)

    def human_scores(
        self, source: ScoringSource, article_tokens: list[str]
    ) -> dict[str, float]:
        """Return the abstractiveness of the human abstract (computed once)."""
        if source.key not in self._human:
            tokens = metric_tokens(source.reference)
            self._human[source.key] = _abstractiveness(article_tokens, tokens)
        return self._human[source.key]


def _source_name(source: str) -> str:
    match = _SOURCE_LINE.match(source)
    if match and not Path(source).exists():
        return f"{Path(match['path']).name}:{match['line']}"
    return Path(source).name


def _abstractiveness(article: list[str], summary: list[str]) -> dict[str, float]:
    return {
        "bigram_novelty": ngram_novelty(article, summary, 2),
        "trigram_novelty": ngram_novelty(article, summary, 3),
        **fragment_stats_from_tokens(article, summary),
    }


def score_abstract(
    source: ScoringSource,
    generated: str,
    *,
    references: References | None = None,
    aliases: Mapping[str, str] | None = None,
    keyphrases: int = KEYPHRASES,
    words: int = DEFAULT_WORDS,
    key: str = "",
    result_source: str = "",
) -> ArticleScores:
    """Score one generated abstract against its article and human abstract.

    ``words`` is the asked length the quality metrics (:data:`QUALITY_METRICS`)
    measure the abstract against; ``key`` and ``result_source`` name the result.

    Returns:
        ``generated`` (metric -> value), ``human`` and ``difference`` (generated -
        human) for the abstractiveness metrics, the reference's ``keyphrases`` and the
        ``recalled`` ones, and word counts. NaN marks a value that is undefined.
    """
    article_tokens = metric_tokens(source.body)
    generated_scores = _abstractiveness(article_tokens, metric_tokens(generated))
    if references is not None:
        human = references.human_scores(source, article_tokens)
    else:
        human = _abstractiveness(article_tokens, metric_tokens(source.reference))
    recall = keyphrase_recall(source.reference, generated, n=keyphrases)
    generated_scores["rouge_l"] = rouge_l(generated, source.reference)
    generated_scores["keyphrase_recall"] = recall.value
    generated_scores.update(abstract_quality(generated, source.body, words))
    if aliases is not None:
        generated_scores[UMLS_METRIC] = concept_recall(
            source.reference, generated, aliases
        )
    return ArticleScores(
        id=key,
        source=result_source,
        generated=dict(generated_scores),
        human=dict(human),
        difference={m: generated_scores[m] - human[m] for m in ABSTRACTIVENESS},
        keyphrases=list(recall.phrases),
        recalled=list(recall.recalled),
        words=len(generated.split()),
        reference_words=len(source.reference.split()),
        article_words=len(source.body.split()),
    )


def _asked_words(item: AbstractItem) -> int:
    """Return the length a result was asked for (its ``words_asked``, else 250)."""
    return item.words_asked or DEFAULT_WORDS


def _summary(
    per_article: Sequence[ArticleScores], metrics: Sequence[str]
) -> dict[str, MetricSummary]:
    summary: dict[str, MetricSummary] = {}
    for metric in metrics:
        values = [_value(a.generated.get(metric)) for a in per_article]
        entry = MetricSummary(
            n=sum(_finite(v) for v in values),
            mean=_mean(values),
            better="closer_to_human"
            if metric in ABSTRACTIVENESS
            else QUALITY_METRICS.get(metric, "higher"),
        )
        if metric == "words":
            finite = [v for v in values if _finite(v)]
            entry.max = max(finite) if finite else math.nan
        if metric in ABSTRACTIVENESS:
            both = [
                (_value(a.generated[metric]), _value(a.human[metric]))
                for a in per_article
                if _finite(a.generated[metric]) and _finite(a.human[metric])
            ]
            entry.human = _mean([h for _, h in both])
            entry.difference = _mean([g - h for g, h in both])
            entry.abs_difference = _mean([abs(g - h) for g, h in both])
        summary[metric] = entry
    return summary


def _plugin_scores(
    scored: list[tuple[ArticleScores, ScoringSource, str]],
) -> tuple[list[str], dict[str, str], list[str]]:
    """Run every registered model-based scorer.

    Returns:
        The metrics scored, a note for each model-based metric that is absent, and
        which of those have no scorer registered at all.
    """
    names: list[str] = []
    notes: dict[str, str] = {}
    unregistered: list[str] = []
    scorers = registered_scorers()
    for name, (scorer, against) in scorers.items():
        texts = [generated for _, _, generated in scored]
        sources = [
            src.body if against == "article" else src.reference for _, src, _ in scored
        ]
        try:
            values = run_scorer(name, scorer, texts, sources) if texts else []
        except Exception as exc:  # a plug-in's failure makes its metric absent
            notes[name] = f"scorer failed: {type(exc).__name__}: {exc}"
            continue
        for (record, _, _), value in zip(scored, values, strict=True):
            record.generated[name] = value
        names.append(name)
    for name, metric in MODEL_METRICS.items():
        if name in scorers or name in notes:
            continue
        if name in scorer_load_errors:
            notes[name] = scorer_load_errors[name]
        else:
            unregistered.append(name)
            notes[name] = (
                f"absent: no {metric.description.split(' (')[0]} scorer registered "
                f"(see `--scorer {name}=module:factory`)"
            )
    return names, notes, unregistered


async def _evaluate(
    path: Path,
    references: References,
    aliases: Mapping[str, str] | None,
    keyphrases: int,
    support: SupportChecker | None = None,
) -> tuple[ScoredResults, list[str]]:
    """Score one results file; also return the model-based metrics not registered."""
    items = read_results(path)
    usable, excluded = items.usable, items.excluded
    total = len(usable) + len(excluded)
    per_article: list[ArticleScores] = []
    scored: list[tuple[ArticleScores, ScoringSource, str]] = []
    for key, item in usable:
        found = references.find(item)
        if isinstance(found, str):
            excluded.append(ExcludedItem(id=key, source=item.source, reason=found))
            continue
        generated = item.abstract or ""
        record = score_abstract(
            found,
            generated,
            references=references,
            aliases=aliases,
            keyphrases=keyphrases,
            words=_asked_words(item),
            key=key,
            result_source=item.source,
        )
        per_article.append(record)
        scored.append((record, found, generated))
    plugins, notes, unregistered = _plugin_scores(scored)
    metrics = list(ABSTRACTIVENESS + REFERENCE_METRICS) + list(QUALITY_METRICS)
    if aliases is not None:
        metrics.append(UMLS_METRIC)
    metrics += plugins
    if support is not None:
        for record, source, generated in scored:
            checked = await support.check(generated, source.body)
            record.generated.update(checked.scores())
            record.support_verdicts = checked.counts()
        metrics += SUPPORT_METRICS
    summary = _summary(per_article, metrics)
    for name, note in notes.items():
        summary[name] = MetricSummary(n=0, mean=None, better="higher", note=note)
    report = ScoredResults(
        results=str(path),
        models=sorted({item.model for _, item in usable if item.model}),
        items=total,
        scored=len(per_article),
        failed=items.failed,
        excluded=excluded,
        metrics=summary,
        per_article=per_article,
    )
    return report, unregistered


def _statistic(
    scores: Mapping[str, float], human: Mapping[str, float] | None, key: str
) -> float:
    """Return the bootstrap's per-item statistic: |score - human| or the score."""
    return abs(scores[key] - human[key]) if human is not None else scores[key]


def _comparison(
    a: ScoredResults, b: ScoredResults, resamples: int, seed: int
) -> Comparison:
    """Paired bootstrap, A - B, for every metric both reports scored (app. J)."""
    a_items = {r.id: r for r in a.per_article}
    b_items = {r.id: r for r in b.per_article}
    shared = sorted(a_items.keys() & b_items.keys())
    metrics = [
        m
        for m, entry in a.metrics.items()
        if entry.mean is not None and m in b.metrics and b.metrics[m].mean is not None
    ]
    compared: dict[str, MetricComparison] = {}
    for metric in metrics:
        scores_a = {i: _value(a_items[i].generated[metric]) for i in shared}
        scores_b = {i: _value(b_items[i].generated[metric]) for i in shared}
        proximity = metric in PROXIMITY_METRICS
        human = (
            {i: _value(a_items[i].human[metric]) for i in shared} if proximity else None
        )
        ids = [
            i
            for i in shared
            if _finite(scores_a[i])
            and _finite(scores_b[i])
            and (human is None or _finite(human[i]))
        ]
        test = "abs_deviation" if proximity else "raw"
        mean_a = _mean([_statistic(scores_a, human, i) for i in ids])
        mean_b = _mean([_statistic(scores_b, human, i) for i in ids])
        try:
            result = compare_metric(
                metric,
                scores_a,
                scores_b,
                reference=human,
                resamples=resamples,
                seed=seed,
            )
        except ValueError as exc:
            compared[metric] = MetricComparison(
                test=test,
                a=mean_a,
                b=mean_b,
                n=len(ids),
                mean_difference=None,
                note=str(exc),
            )
        else:
            compared[metric] = MetricComparison(
                test=test,
                a=mean_a,
                b=mean_b,
                **result.as_dict(),
                significance=significance(result.p_value),
            )
    notes = []
    if len(shared) < SMALL_SAMPLE:
        notes.append(
            f"only {len(shared)} paired articles: bootstrap p-values and intervals "
            "are rough at this size"
        )
    return Comparison(
        a=a.results,
        b=b.results,
        paired=len(shared),
        notes=notes,
        resamples=resamples,
        seed=seed,
        metrics=compared,
    )


def _value(score: Score) -> float:
    """Return a score for the bootstrap: NaN where it is undefined."""
    return math.nan if score is None else float(score)


async def eval_abstracts(
    results_path: Path,
    *,
    reference: Sequence[str] | str | Path | None = None,
    against: Path | None = None,
    plot: Path | None = None,
    kb: Path | None = None,
    keyphrases: int = KEYPHRASES,
    resamples: int = 10_000,
    seed: int = 0,
    support: SupportChecker | None = None,
) -> AbstractsReport:
    """Score generated abstracts per article and on average; compare two result files.

    Args:
        results_path: Abstract results: a JSON object, a JSON array or JSON lines
            (the output of ``abstract --out``, ``batch`` or ``eval baseline``).
        reference: Articles (files, directories, globs) or a JSON-lines list of
            reference abstracts; None uses each result's ``reference`` and ``source``.
        against: A second results file, compared with the first by paired bootstrap.
        plot: Write a PNG of the metric distributions here.
        kb: A scispaCy-format knowledge base; enables ``umls_recall``.
        keyphrases: How many key phrases of each reference ``keyphrase_recall`` uses.
        resamples: Bootstrap resamples (the paper uses 10,000).
        seed: Seed of the bootstrap's random generator.
        support: Judge each abstract sentence against its article with this checker:
            adds ``claim_support`` and ``claim_support_lenient``.

    Returns:
        The report: ``metrics`` (per metric ``mean``, ``n``, and for the
        abstractiveness metrics ``human``, ``difference``, ``abs_difference``),
        ``per_article``, ``excluded`` (with reasons), ``failed``, ``notes``, and with
        ``against`` also ``against`` (the second report) and ``comparison``.
    """
    if isinstance(reference, str | Path):
        reference = [str(reference)]
    refs = References(reference, results_path.parent)
    aliases = alias_index(kb) if kb is not None else None
    scored, unregistered = await _evaluate(
        results_path, refs, aliases, keyphrases, support
    )
    notes = _scoring_notes(scored, unregistered, refs, kb_given=aliases is not None)
    described = None
    if support is not None:
        described, judge_notes = await _described_judge(support)
        notes += judge_notes
    report = AbstractsReport(
        **dict(scored),
        reference=list(reference) if reference else None,
        reference_mode=refs.mode,
        keyphrases=keyphrases,
        support=described,
        notes=notes,
    )
    if against is not None:
        other, _ = await _evaluate(against, refs, aliases, keyphrases, support)
        report.against = other
        report.comparison = _comparison(report, other, resamples, seed)
        report.notes += report.comparison.notes
    # Undefined values (NaN while computing) are None in the report.
    report = AbstractsReport.model_validate(_nan_to_none(report.model_dump()))
    if plot is not None:
        from veriscribe.eval.plots import abstract_metrics_plot

        abstract_metrics_plot(report, plot)
        report.plot = str(plot)
    return report


def _scoring_notes(
    scored: ScoredResults,
    unregistered: list[str],
    refs: References,
    *,
    kb_given: bool,
) -> list[str]:
    """Return the notes on how the metrics were scored and what was left out."""
    notes = [
        f"{name}: {entry.note}"
        for name, entry in scored.metrics.items()
        if entry.note and name not in unregistered
    ]
    if unregistered:
        notes.append(
            f"absent, no scorer registered: {', '.join(unregistered)} (model-based "
            "metrics are plug-ins: --scorer NAME=module:factory)"
        )
    if not kb_given:
        notes.append(
            "umls_recall omitted: no knowledge base given (--kb); keyphrase_recall "
            "counts the reference's TextRank key phrases instead"
        )
    notes += [f"reference file skipped: {problem}" for problem in refs.problems]
    return notes


async def _described_judge(
    support: SupportChecker,
) -> tuple[SupportDescription, list[str]]:
    """Check the support judge on articles' own sentences; describe it.

    Returns:
        The judge's description, and a note if it called too few of those
        sentences supported for its figures to mean anything.
    """
    calibration = await support.calibrate()
    described = support.describe()
    share = calibration.share
    if share is not None and share < CALIBRATION_FLOOR:
        return described, [
            "claim_support is not meaningful with this judge: it called only "
            f"{calibration.fully_supported} of {calibration.sentences} article "
            "sentences fully supported by their own article (judge check)"
        ]
    return described, []
