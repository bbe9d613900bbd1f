"""The deterministic checks: markers, verbatim quotes, lexical support, faithfulness, wording."""
