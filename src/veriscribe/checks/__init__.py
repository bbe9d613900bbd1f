"""The deterministic checks of an answer: markers, sentences, verbatim quotes, lexical support."""
