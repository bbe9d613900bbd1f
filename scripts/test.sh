#!/usr/bin/env bash
# Install (if needed) and run lint, type checks, the documentation's strict build and the
# whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/ruff check src tests bench
.venv/bin/mypy
# The site is built into a temporary directory: a broken link, a page missing from the
# nav or a reference table the code cannot render fails the build. (No --quiet: it
# silences the warnings that --strict turns into a failure.)
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site"
rm -rf "$site"
.venv/bin/python -m pytest "$@"
