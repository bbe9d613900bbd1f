import math

from hypothesis import given, settings
from hypothesis import strategies as st

from veriscribe.metrics.fragments import (
    Fragment,
    extractive_fragments,
    fragment_stats,
    fragment_stats_from_tokens,
    greedy_fragments_reference,
)


def both(article: str, summary: str) -> list[Fragment]:
    a, s = article.split(), summary.split()
    reference = greedy_fragments_reference(a, s)
    assert extractive_fragments(a, s) == reference
    return reference


def test_copied_runs_and_novel_words() -> None:
    # the cat | lay (novel) | on the mat .
    assert both("the cat sat on the mat .", "the cat lay on the mat .") == [
        Fragment(0, 0, 2),
        Fragment(3, 3, 4),
    ]
    stats = fragment_stats("The cat sat on the mat.", "The cat lay on the mat.")
    assert stats["coverage"] == 6 / 7
    assert stats["density"] == (2**2 + 4**2) / 7
    assert stats["compression"] == 7 / 7


def test_no_match_advances_one_token() -> None:
    assert both("a b", "z a b z") == [Fragment(1, 0, 2)]
    stats = fragment_stats_from_tokens("a b".split(), "z a b z".split())
    assert stats == {"coverage": 0.5, "density": 1.0, "compression": 0.5}


def test_tie_takes_leftmost_article_position() -> None:
    assert both("a b c a b d", "a b") == [Fragment(0, 0, 2)]


def test_longer_later_match_beats_earlier_shorter_one() -> None:
    assert both("a b c a b d", "a b d") == [Fragment(0, 3, 3)]


def test_greedy_takes_longest_at_each_position_not_best_segmentation() -> None:
    # From position 0 the longest match is "a b"; the scan resumes at "c" and never
    # considers "a" + "b c d", which would have given a higher density.
    fragments = both("a b x b c d", "a b c d")
    assert fragments == [Fragment(0, 0, 2), Fragment(2, 4, 2)]
    assert (
        fragment_stats_from_tokens("a b x b c d".split(), "a b c d".split())["density"]
        == (4 + 4) / 4
    )


def test_longest_match_inside_an_earlier_partial_match_is_found() -> None:
    # The Newsroom code resumes its article scan after the partial match "x x" at
    # position 0 and so reports length 2; the longest match starts at position 1.
    assert both("x x x y", "x x y") == [Fragment(0, 1, 3)]


def test_whole_summary_copied() -> None:
    assert both("p q r s t", "q r s") == [Fragment(0, 1, 3)]
    assert both("q r s", "q r s") == [Fragment(0, 0, 3)]


def test_empty_inputs() -> None:
    assert both("a b", "") == []
    assert both("", "a b") == []
    stats = fragment_stats("Some article.", "")
    assert all(math.isnan(v) for v in stats.values())
    assert fragment_stats("", "a b") == {
        "coverage": 0.0,
        "density": 0.0,
        "compression": 0.0,
    }


def test_repetitive_long_article_matches_reference() -> None:
    article = ("a b a b c " * 300 + "a b a b a b c d").split()
    summary = "a b a b a b c d a b c b a".split()
    assert extractive_fragments(article, summary) == greedy_fragments_reference(
        article, summary
    )


small_alphabets = st.integers(min_value=1, max_value=4).map(lambda k: "abcd"[:k])


@settings(max_examples=400, deadline=None)
@given(data=st.data(), alphabet=small_alphabets)
def test_fast_equals_reference_on_random_texts(
    data: st.DataObject, alphabet: str
) -> None:
    article = data.draw(st.lists(st.sampled_from(alphabet), max_size=60))
    # "z" never occurs in the article, so novel tokens are exercised too.
    summary = data.draw(st.lists(st.sampled_from(alphabet + "z"), max_size=30))
    assert extractive_fragments(article, summary) == greedy_fragments_reference(
        article, summary
    )


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_fast_equals_reference_on_summaries_spliced_from_the_article(
    data: st.DataObject,
) -> None:
    article = data.draw(st.lists(st.sampled_from("abcde"), min_size=1, max_size=80))
    pieces: list[str] = []
    for _ in range(data.draw(st.integers(min_value=1, max_value=5))):
        start = data.draw(st.integers(min_value=0, max_value=len(article) - 1))
        stop = data.draw(st.integers(min_value=start, max_value=len(article)))
        pieces += article[start:stop]
        pieces += data.draw(st.lists(st.sampled_from("ayz"), max_size=2))
    fast = extractive_fragments(article, pieces)
    assert fast == greedy_fragments_reference(article, pieces)
    # Every fragment is a real copy, in order and without overlap.
    position = 0
    for f in fast:
        assert f.summary_start >= position and f.length >= 1
        span = pieces[f.summary_start : f.summary_start + f.length]
        assert span == article[f.article_start : f.article_start + f.length]
        position = f.summary_start + f.length
