#!/usr/bin/env bash
# Install (if needed) and write an abstract for the bundled example article on the embedded
# model: no server, no download.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/veriscribe doctor
.venv/bin/veriscribe abstract "${1:-examples/plos-editorial.xml}"
