from veriscribe.text.tokens import metric_tokens


def test_words_numbers_and_punctuation_are_tokens() -> None:
    text = "Non-small-cell lung cancer (NSCLC) had p<0.05, n=1,000; in 1996b."
    assert metric_tokens(text) == [
        "non", "-", "small", "-", "cell", "lung", "cancer", "(", "nsclc", ")",
        "had", "p", "<", "0.05", ",", "n", "=", "1,000", ";", "in", "1996b", ".",
    ]  # fmt: skip


def test_lower_cases_and_folds_compatibility_characters() -> None:
    # A ligature, a no-break space and full-width letters compare as plain text.
    assert metric_tokens("\ufb01brosis\u00a0ＣＴ H3K27me3") == [
        "fibrosis",
        "ct",
        "h3k27me3",
    ]


def test_whitespace_is_never_a_token() -> None:
    assert metric_tokens("  a \n\n\t b  ") == ["a", "b"]
    assert metric_tokens("") == []


def test_abbreviation_points_and_trailing_separators_split() -> None:
    assert metric_tokens("e.g. 3.5.") == ["e", ".", "g", ".", "3.5", "."]
    assert metric_tokens("values 1, 2") == ["values", "1", ",", "2"]
