from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import check_grad  # type: ignore[import-untyped]
from sklearn.feature_extraction.text import TfidfVectorizer

from veriscribe.labeller import Labeller
from veriscribe.labeller.cluster_learning import ClusterSettings, kmeans, learn_clusters
from veriscribe.labeller.clusters import CLUSTERS_RESOURCE, WordClusters, cluster_tokens
from veriscribe.labeller.crf import Transitions, marginals, viterbi
from veriscribe.labeller.features import (
    CUE_SIZE,
    NEIGHBOUR_WEIGHT,
    SHAPE_PATTERNS,
    SHAPE_SIZE,
    Edges,
    FeatureSpace,
    Vocabulary,
    cue_features,
    edge_terms,
    position_features,
    shape_features,
)
from veriscribe.labeller.model import WEIGHTS_RESOURCE, label_paragraphs
from veriscribe.labeller.training import (
    Abstract,
    Settings,
    _Batch,
    abstract_positions,
    gold_matrix,
    objective,
    train,
)
from veriscribe.metrics.labels import label_scores
from veriscribe.nodes.abstract import divide as divide_node
from veriscribe.text.facets import FACETS

ROOT = Path(__file__).resolve().parents[2]
BIORC = ROOT.parent / "shared" / "data" / "biorc800"
needs_data = pytest.mark.skipif(
    not BIORC.is_dir(), reason="shared/data/biorc800 is not beside the repository"
)


def load(name: str) -> list[Abstract]:
    abstracts = []
    for line in (BIORC / f"{name}.jsonl").read_text("utf-8").splitlines():
        item = json.loads(line)
        abstracts.append(
            Abstract(
                tuple(item["sentences"]),
                tuple(tuple(g.lower() for g in gold) for gold in item["labels"]),
            )
        )
    return abstracts


def score(labeller: Labeller, abstracts: list[Abstract]) -> float:
    gold = [g for a in abstracts for g in a.labels]
    predicted = [
        label
        for a in abstracts
        for label in labeller.label(a.sentences, abstract_positions(len(a.sentences)))
    ]
    return label_scores(gold, predicted)["micro_f1"]


# ------------------------------------------------------------------ TF-IDF blocks

EDGE_CASES = [
    "",
    "a",
    "I",
    "  spaced\tout\n words  ",
    "Über-expression of IL-6 (p<0.05), i.e. 3x; CD4+ T-cells!",
    "\u00e9\u00e9 ab",
]


@pytest.mark.parametrize(
    ("analyzer", "ngrams"), [("word", (1, 2)), ("char_wb", (3, 5))]
)
def test_tfidf_equals_scikit_learn(
    analyzer: str, ngrams: tuple[int, int], shared_data: Path
) -> None:
    texts = [s for a in load("dev")[:60] for s in a.sentences] + EDGE_CASES * 2
    reference = TfidfVectorizer(
        analyzer=analyzer, ngram_range=ngrams, sublinear_tf=True, min_df=2
    ).fit(texts)
    ours = Vocabulary.fit(analyzer, ngrams, texts, min_df=2)  # type: ignore[arg-type]
    assert ours.terms == reference.vocabulary_
    np.testing.assert_allclose(ours.idf, reference.idf_, rtol=1e-12)
    expected = reference.transform(texts).toarray()
    for text, row in zip(texts, expected, strict=True):
        columns, values = ours.transform(text)
        dense = np.zeros(ours.size)
        dense[columns] = values
        np.testing.assert_allclose(dense, row, atol=1e-12)


def test_feature_rows_place_each_block_after_the_previous() -> None:
    words = Vocabulary.fit("word", (1, 1), ["we found it", "we used it"], min_df=1)
    space = FeatureSpace((words,), cues=True, position=True)
    rows = space.rows(["We found it.", "Nothing known"], [0.0, 0.5])
    assert space.width == words.size + CUE_SIZE + 2
    assert len(rows) == 2
    first = rows.indices[rows.indptr[0] : rows.indptr[1]]
    assert set(first[first < words.size]) == {
        words.terms[t] for t in ("we", "found", "it")
    }
    # The last two columns are the position indicators: first item, first fifth.
    dense = np.zeros((2, space.width))
    for row in range(2):
        span = slice(rows.indptr[row], rows.indptr[row + 1])
        dense[row, rows.indices[span]] = rows.values[span]
    assert dense[:, -2:].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    np.testing.assert_allclose(
        dense[0, words.size : words.size + CUE_SIZE], cue_features("We found it.")
    )


def test_cue_features_fire_on_their_phrases() -> None:
    names = [
        "aim",
        "purpose",
        "found",
        "conclude",
        "hedge",
        "procedure",
        "statistic",
        "percent",
        "front_matter",
        "context",
    ]
    fired = {
        "We aimed to assess the effect of X.": "aim",
        "In conclusion, X works.": "conclude",
        "Mortality fell (p < 0.01).": "statistic",
        "Trial registration: NCT01234567.": "front_matter",
    }
    for sentence, name in fired.items():
        assert cue_features(sentence)[names.index(name)] == 1.0, sentence
    assert cue_features("Blue sky.")[: len(names)].sum() == 0.0


def test_position_features() -> None:
    assert position_features([0.0, 0.1, 0.2, 0.9]).tolist() == [
        [1.0, 1.0],
        [0.0, 1.0],
        [0.0, 0.0],
        [0.0, 0.0],
    ]
    with pytest.raises(ValueError):
        position_features([1.5])
    with pytest.raises(ValueError):
        position_features([float("nan")])


def test_fine_position_features() -> None:
    fine = position_features([0.0, 0.25, 0.5, 0.75, 1.0], fine=True)
    assert fine.shape == (5, 15)
    np.testing.assert_array_equal(
        fine[:, :2], position_features([0, 0.25, 0.5, 0.75, 1])
    )
    assert fine[:, 2:12].argmax(axis=1).tolist() == [0, 2, 5, 7, 9]
    assert fine[:, 2:12].sum(axis=1).tolist() == [1.0] * 5
    # Second item, next-to-last, last: by index in the sequence.
    assert fine[:, 12:].tolist() == [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ]
    assert position_features([0.0], fine=True)[0, 12:].tolist() == [0.0, 0.0, 1.0]
    assert position_features([], fine=True).shape == (0, 15)


def test_edge_terms_take_first_and_last_tokens_with_digits_as_zero() -> None:
    assert edge_terms("We enrolled 120 patients (P<0.05).") == [
        "first1:we",
        "first2:we enrolled",
        "first3:we enrolled 000",
        "first4:we enrolled 000 patients",
        "last1:.",
        "last2:) .",
    ]
    assert edge_terms("Short")[0] == "first1:short"


def test_neighbour_edges_sit_in_their_own_blocks_at_half_weight() -> None:
    sentences = ["We aimed high.", "Patients were enrolled.", "We aimed low."]
    edges = Edges.fit(sentences, min_df=1)
    space = FeatureSpace(
        (), cues=False, position=False, edges=edges, neighbour_edges=True
    )
    assert space.width == 3 * edges.size
    rows = space.rows(sentences, [0.0, 1 / 3, 2 / 3])
    dense = np.zeros((3, space.width))
    for row in range(3):
        span = slice(rows.indptr[row], rows.indptr[row + 1])
        dense[row, rows.indices[span]] = rows.values[span]
    own, before, after = np.split(dense, 3, axis=1)
    for row, sentence in enumerate(sentences):
        assert set(np.flatnonzero(own[row])) == set(edges.columns(sentence).tolist())
    np.testing.assert_array_equal(before[1], own[0] * NEIGHBOUR_WEIGHT)
    np.testing.assert_array_equal(after[1], own[2] * NEIGHBOUR_WEIGHT)
    assert not before[0].any() and not after[2].any()
    with pytest.raises(ValueError, match="edge vocabulary"):
        FeatureSpace((), neighbour_edges=True)


def test_shape_features_tell_a_result_from_a_method() -> None:
    result = shape_features(
        "Mortality was lower in the treated group (12.5% vs 20.1%, p = 0.03, n = 40)."
    )
    method = shape_features("Patients were randomized to two arms.")
    patterns = len(SHAPE_PATTERNS)
    # Decimal, parenthesised number, sample size, four numbers, comparison.
    assert result[:5].tolist() == [1.0] * 5
    assert method[:5].tolist() == [0.0] * 5
    assert method[5] == 1.0 and result[5] == 0.0  # "were randomized"
    # One length bucket each: 17 tokens and 5 tokens.
    assert result[patterns:].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert method[patterns:].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert shape_features("").sum() == 1.0


def test_shape_and_neighbour_cues_follow_the_edges_in_order() -> None:
    sentences = ["We aimed high.", "Patients were enrolled (n = 12).", "Overall, fine."]
    space = FeatureSpace((), cues=True, position=False, shape=True, neighbour_cues=True)
    assert space.width == CUE_SIZE + SHAPE_SIZE + 2 * CUE_SIZE
    rows = space.rows(sentences, [0.0, 1 / 3, 2 / 3])
    dense = np.zeros((3, space.width))
    for row in range(3):
        span = slice(rows.indptr[row], rows.indptr[row + 1])
        dense[row, rows.indices[span]] = rows.values[span]
    own, shape, before, after = np.split(
        dense, np.cumsum([CUE_SIZE, SHAPE_SIZE, CUE_SIZE]), axis=1
    )
    for row, sentence in enumerate(sentences):
        np.testing.assert_array_equal(own[row], cue_features(sentence))
        np.testing.assert_array_equal(shape[row], shape_features(sentence))
    np.testing.assert_array_equal(before[1], own[0] * NEIGHBOUR_WEIGHT)
    np.testing.assert_array_equal(after[1], own[2] * NEIGHBOUR_WEIGHT)
    assert not before[0].any() and not after[2].any()
    assert own[0].any() and own[2].any()
    # Neighbour cues need no cue block of the sentence's own.
    alone = FeatureSpace((), cues=False, position=False, neighbour_cues=True)
    assert alone.width == 2 * CUE_SIZE


# ------------------------------------------------------------------------- CRF


def brute_force(emissions: np.ndarray, t: Transitions) -> dict[tuple[int, ...], float]:
    length, labels = emissions.shape
    scores = {}
    for path in itertools.product(range(labels), repeat=length):
        value = t.start[path[0]] + t.end[path[-1]]
        value += sum(emissions[i, y] for i, y in enumerate(path))
        value += sum(t.matrix[a, b] for a, b in itertools.pairwise(path))
        scores[path] = value
    return scores


def random_transitions(rng: np.random.Generator, labels: int) -> Transitions:
    return Transitions(
        rng.normal(size=(labels, labels)),
        rng.normal(size=labels),
        rng.normal(size=labels),
    )


@pytest.mark.parametrize("length", [1, 2, 5])
def test_viterbi_and_marginals_match_enumeration(length: int) -> None:
    rng = np.random.default_rng(length)
    emissions = rng.normal(size=(length, 3)) * 2
    t = random_transitions(rng, 3)
    scores = brute_force(emissions, t)
    assert tuple(viterbi(emissions, t)) == max(scores, key=scores.__getitem__)
    weights = np.exp(np.array(list(scores.values())))
    expected = np.zeros((length, 3))
    for path, w in zip(scores, weights / weights.sum(), strict=True):
        expected[np.arange(length), path] += w
    np.testing.assert_allclose(marginals(emissions, t), expected, atol=1e-12)


def test_viterbi_follows_transitions_where_emissions_tie() -> None:
    # The middle item is a tie; a strong 0 -> 0 transition decides it.
    emissions = np.array([[5.0, 0.0], [1.0, 1.0], [5.0, 0.0]])
    sticky = Transitions(np.array([[2.0, -2.0], [-2.0, 2.0]]), np.zeros(2), np.zeros(2))
    assert viterbi(emissions, sticky) == [0, 0, 0]
    assert viterbi(np.zeros((0, 2)), sticky) == []


def test_training_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(7)
    lengths = [3, 1, 4]
    labels, width = 3, 5
    import scipy.sparse as sp  # type: ignore[import-untyped]

    x = sp.csr_matrix(rng.normal(size=(sum(lengths), width)))
    accepted = rng.random((sum(lengths), labels)) < 0.4
    accepted[np.arange(sum(lengths)), rng.integers(0, labels, sum(lengths))] = True
    batch = _Batch.build(lengths, accepted)
    settings = Settings(c=2.0, c_transitions=0.5)
    theta = rng.normal(size=width * labels + labels + labels * labels + 2 * labels)
    error = check_grad(
        lambda t: objective(t, x, batch, labels, settings)[0],
        lambda t: objective(t, x, batch, labels, settings)[1],
        theta,
    )
    assert error < 1e-4
    # When every item accepts every label the data term vanishes.
    everything = _Batch.build(lengths, np.ones_like(accepted))
    zero = np.zeros_like(theta)
    assert objective(zero, x, everything, labels, settings)[0] == pytest.approx(0.0)


def test_gold_matrix_reads_label_sets() -> None:
    matrix = gold_matrix([["OBJECTIVE", "METHODS"], ["none"]], FACETS)
    assert matrix.sum() == 3
    assert matrix[0, FACETS.index("methods")] and matrix[1, FACETS.index("other")]
    with pytest.raises(ValueError, match="unknown label"):
        gold_matrix([["DISCUSSION"]], FACETS)
    with pytest.raises(ValueError, match="no gold label"):
        gold_matrix([[]], FACETS)


# ------------------------------------------------------------------ word clusters


def tiny_table() -> WordClusters:
    words = {"increased": 0, "reduced": 1, "patients": 2, "we": 3}
    assignments = np.array([[0, 2], [0, 2], [1, 0], [1, 1]])
    return WordClusters(words, assignments, (2, 3))


def test_cluster_tokens_lower_case_and_zero_digits() -> None:
    # Words of one character ("p", "0", "a") are not tokens, as in the TF-IDF block.
    assert cluster_tokens("We saw 12 Patients (p<0.05) a") == [
        "we",
        "saw",
        "00",
        "patients",
        "00",
    ]


def test_cluster_features_are_normalised_counts_per_granularity() -> None:
    columns, values = tiny_table().features("Increased, REDUCED; patients, unknown")
    # Granularity 0: cluster 0 twice, cluster 1 once; granularity 1 (columns 2-4):
    # cluster 2 twice, cluster 0 once. The unknown word adds nothing.
    row = np.zeros(5)
    row[columns] = values
    np.testing.assert_allclose(
        row, [2 / 5**0.5, 1 / 5**0.5, 1 / 5**0.5, 0.0, 2 / 5**0.5]
    )
    empty_columns, empty_values = tiny_table().features("nothing known here")
    assert empty_columns.size == 0 and empty_values.size == 0


def test_cluster_table_round_trips_and_its_digest_follows_its_content(
    tmp_path: Path,
) -> None:
    table = tiny_table()
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    table.save(first)
    WordClusters.from_file(first).save(second)
    assert first.read_bytes() == second.read_bytes()
    assert WordClusters.from_file(first).digest == table.digest
    moved = WordClusters(table.words, table.assignments.copy(), table.sizes)
    moved.assignments[3, 1] = 2
    assert moved.digest != table.digest
    with pytest.raises(ValueError, match="outside its granularity"):
        WordClusters(table.words, table.assignments + 2, table.sizes)
    with pytest.raises(ValueError, match="format"):
        WordClusters.from_config({"format": 99})


def test_cluster_block_follows_the_neighbour_cues() -> None:
    table = tiny_table()
    plain = FeatureSpace((), cues=False, position=False, neighbour_cues=True)
    space = dataclasses.replace(plain, clusters=table)
    assert space.width == plain.width + table.width
    rows = space.rows(["We reduced it.", "Nothing."], [0.0, 0.5])
    first = rows.indices[rows.indptr[0] : rows.indptr[1]]
    # "we" is in cluster 1 of 2 and cluster 1 of 3; "reduced" in 0 and 2.
    assert sorted(first[first >= plain.width] - plain.width) == [0, 1, 3, 4]
    assert rows.indptr[2] - rows.indptr[1] == 2 * CUE_SIZE


def test_kmeans_is_seeded_and_finds_separate_groups() -> None:
    rng = np.random.default_rng(1)
    points = np.concatenate(
        [rng.normal(centre, 0.05, size=(20, 2)) for centre in (0.0, 3.0, 6.0)]
    )
    labels = kmeans(points, 3, seed=0)
    np.testing.assert_array_equal(labels, kmeans(points, 3, seed=0))
    assert len({tuple(labels[i : i + 20]) for i in (0, 20, 40)}) == 3
    assert all(len(set(labels[i : i + 20])) == 1 for i in (0, 20, 40))
    with pytest.raises(ValueError, match="clusters for"):
        kmeans(points[:2], 3, seed=0)


def test_learnt_clusters_group_words_that_share_contexts() -> None:
    texts = [
        f"the {animal} sat on the mat near {place}"
        for animal in ("cat", "dog", "fox")
        for place in ("home", "town")
    ] + [
        f"one {colour} car drove very fast to {goal}"
        for colour in ("red", "blue", "green")
        for goal in ("work", "school")
    ]
    settings = ClusterSettings(dimensions=2, sizes=(2,), min_count=2)
    table = learn_clusters(texts * 2, settings)
    cluster = {w: int(table.assignments[row, 0]) for w, row in table.words.items()}
    assert cluster["cat"] == cluster["dog"] == cluster["fox"] == cluster["mat"]
    assert cluster["red"] == cluster["blue"] == cluster["green"] == cluster["car"]
    assert cluster["cat"] != cluster["red"]
    assert learn_clusters(texts * 2, settings).digest == table.digest
    with pytest.raises(ValueError, match="too few"):
        learn_clusters(texts[:1], settings)


def test_shipped_weights_name_the_shipped_cluster_table() -> None:
    document = Labeller.load().to_document()
    table = WordClusters.load()
    assert document["clusters"]["sha256"] == table.digest
    assert Labeller.load().space.clusters is table
    # A frequent word gets a cluster at each granularity.
    assert table.words.keys() >= {"patients", "we", "results", "increased"}
    other = {**document, "clusters": {**document["clusters"], "sha256": "0" * 64}}
    with pytest.raises(ValueError, match="retrain the labeller"):
        Labeller.from_document(other)


def test_weights_and_clusters_together_stay_under_two_megabytes() -> None:
    package = resources.files("veriscribe.labeller")
    sizes = [
        len(package.joinpath(name).read_bytes())
        for name in (WEIGHTS_RESOURCE, CLUSTERS_RESOURCE)
    ]
    assert sum(sizes) < 2_000_000


# --------------------------------------------------------------- shipped weights


def test_weights_file_is_small_versioned_json() -> None:
    blob = resources.files("veriscribe.labeller").joinpath(WEIGHTS_RESOURCE)
    data = blob.read_bytes()
    assert len(data) < 2_000_000
    document = json.loads(gzip.decompress(data))
    assert document["format"] == 2 and document["model"] == "crf"
    assert tuple(document["labels"]) == FACETS


def test_load_is_cached_and_the_divide_node_uses_it() -> None:
    assert Labeller.load() is Labeller.load()
    # The divide node labels through the module-level step (which a batch's worker
    # processes can run), and that is the shipped labeller's.
    assert divide_node.label_paragraphs is label_paragraphs
    texts = ["We enrolled 40 adults with asthma.", "Asthma is common in adults."]
    assert label_paragraphs(texts) == Labeller.load().label_paragraphs(texts)
    assert Labeller.load().labels == FACETS


@needs_data
def test_dev_micro_f1_with_shipped_weights() -> None:
    # 0.853 for the sentence-by-sentence classifier, 0.897 for the CRF without the
    # fine position, shape and neighbour cue features, 0.901 without the word
    # clusters; 0.911 with them.
    assert score(Labeller.load(), load("dev")) >= 0.91


@needs_data
def test_transitions_add_to_the_sentence_scores_on_dev() -> None:
    shipped = Labeller.load()
    alone = dataclasses.replace(shipped, transitions=Transitions.none(6))
    dev = load("dev")
    assert score(shipped, dev) >= score(alone, dev) + 0.02


def test_label_checks_arguments() -> None:
    labeller = Labeller.load()
    with pytest.raises(ValueError, match="positions"):
        labeller.label(["One sentence."], [0.0, 0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        labeller.label(["One sentence."], [2.0])
    assert labeller.label([], []) == []
    assert labeller.probabilities([], []).shape == (0, 6)


def test_probabilities_sum_to_one() -> None:
    probabilities = Labeller.load().probabilities(
        ["We enrolled 50 patients.", "Hello."], [0.4, 1.0]
    )
    assert probabilities.shape == (2, 6)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)


def test_labels_typical_paragraph_openings() -> None:
    paragraphs = [
        "Malaria remains a leading cause of death among children in sub-Saharan "
        "Africa. Many more words follow here.",
        "Blood samples were collected from 120 participants and stored at -80 °C. "
        "Then more.",
        "The mean age of the participants was 42 years, and 58% were women (Table 1).",
        "In conclusion, these findings suggest that screening should be expanded. End.",
    ]
    labels = Labeller.load().label_paragraphs(paragraphs)
    assert labels == ["background", "methods", "results", "conclusions"]


def test_weights_round_trip_byte_for_byte(tmp_path: Path) -> None:
    shipped = Labeller.load()
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    shipped.save(first)
    Labeller.from_file(first).save(second)
    assert first.read_bytes() == second.read_bytes()
    blob = resources.files("veriscribe.labeller").joinpath(WEIGHTS_RESOURCE)
    assert first.read_bytes() == blob.read_bytes()


def test_weights_of_another_format_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"format": 1}))
    with pytest.raises(ValueError, match="format"):
        Labeller.from_file(path)


def test_incomplete_weights_are_refused_with_one_error() -> None:
    document = Labeller.load().to_document()
    for key in ("vocabularies", "coef", "transitions"):
        broken = {k: v for k, v in document.items() if k != key}
        with pytest.raises(ValueError, match="malformed labeller weights"):
            Labeller.from_document(broken)
    # Emission weights that do not fit the feature columns.
    short = {**document, "edges": None, "neighbour_edges": False}
    with pytest.raises(ValueError, match="coef of shape"):
        Labeller.from_document(short)


@needs_data
def test_training_is_deterministic_and_learns() -> None:
    abstracts = load("train")
    settings = Settings(chars=False, max_iter=60)
    first = train(abstracts[:60], FACETS, settings)
    second = train(abstracts[:60], FACETS, settings)
    np.testing.assert_array_equal(first.coef, second.coef)
    np.testing.assert_array_equal(first.transitions.matrix, second.transitions.matrix)
    # Well above the 0.34 of always answering "results", the commonest label.
    assert score(first, abstracts[400:440]) > 0.7


# ------------------------------------------------------------------ label_scores


def test_label_scores_multi_label_rule() -> None:
    gold = [["OBJECTIVE", "METHODS"], ["RESULTS"], ["RESULTS"], ["BACKGROUND"]]
    pred = ["methods", "results", "conclusions", "background"]
    scores = label_scores(gold, pred)
    assert scores["micro_f1"] == pytest.approx(0.75)
    assert scores["accuracy"] == scores["micro_f1"]
    labels = scores["labels"]
    assert labels["methods"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "support": 1,
    }
    assert "objective" not in labels  # correctly covered by the methods prediction
    assert labels["results"]["recall"] == pytest.approx(0.5)
    assert labels["conclusions"]["precision"] == 0.0
    expected_macro = (1.0 + 1.0 + 2 / 3 + 0.0) / 4
    assert scores["macro_f1"] == pytest.approx(expected_macro)


def test_label_scores_wrong_prediction_charges_first_gold_label() -> None:
    scores = label_scores([["OBJECTIVE", "METHODS"]], ["results"])
    assert scores["labels"]["objective"]["recall"] == 0.0
    assert "methods" not in scores["labels"]
    assert scores["micro_f1"] == 0.0


def test_label_scores_reads_none_as_other() -> None:
    assert label_scores([["OTHER"]], ["none"])["micro_f1"] == 1.0


def test_label_scores_checks_lengths() -> None:
    with pytest.raises(ValueError):
        label_scores([["RESULTS"]], [])
    with pytest.raises(ValueError):
        label_scores([[]], ["results"])
