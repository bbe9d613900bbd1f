"""Write a question set with unanswerable questions: their gold passages left out.

Usage::

    python scripts/hold_out.py --n 40 --out-dir holdout \
        [--passages ../shared/data/guidelines/cpgqa/passages.jsonl] \
        [--questions ../shared/data/guidelines/cpgqa/questions.jsonl] \
        [--answerable 60] [--seed 0]

``holdout/passages.jsonl`` holds every passage but the gold passages of ``--n`` chosen
questions; ``holdout/questions.jsonl`` marks those questions ``answerable: false`` and
keeps the questions whose passage stayed (``answerable: true``; the first
``--answerable`` of them if given), in the file's order. Then::

    veriscribe corpus add holdout holdout/passages.jsonl
    veriscribe ask --questions holdout/questions.jsonl --out answers.jsonl \
        --corpus holdout
    veriscribe eval qa answers.jsonl

and ``eval qa`` gives not-found precision and recall and the share of answerable
questions wrongly answered "not found". The choice is seeded: the same arguments
write the same files. See ``veriscribe.eval.holdout`` for which questions qualify.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from veriscribe.errors import VeriscribeError
from veriscribe.eval.holdout import write_hold_out

CPGQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "guidelines" / "cpgqa"


def main() -> int:
    """Write the hold-out set and print what was written as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, required=True, help="Unanswerable questions.")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--passages", type=Path, default=CPGQA / "passages.jsonl")
    parser.add_argument("--questions", type=Path, default=CPGQA / "questions.jsonl")
    parser.add_argument(
        "--answerable", type=int, default=None, help="Keep only the first N others."
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        written = write_hold_out(
            args.passages,
            args.questions,
            args.out_dir,
            args.n,
            seed=args.seed,
            answerable=args.answerable,
        )
    except VeriscribeError as exc:
        print(f"error: {exc.user_message}", file=sys.stderr)
        return 1
    print(json.dumps(written.model_dump(mode="json"), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
