#!/bin/sh
# Set up the peers bench/peers.py measures beside hookd, outside the repository.
#
#   bench/peers_setup.sh [PEERS_DIR] [EDMONDS_CHECKOUT]
#
# PEERS_DIR (default /work/peers) receives:
#   edmonds/   the Edmonds claude-code-hooks-daemon at the pinned commit, with its own venv
#              (its dependencies from PyPI: pyyaml, pydantic, jsonschema, psutil, mdformat);
#   hookd/     a venv with hookd installed as a user installs it (its own dependencies
#              only, none of the dev tools: the dev venv also has rich and click, which
#              structlog and httpx import when present — ~6 MB of RSS a user does not have);
#   clooks/    nothing to install: clooks is not on npm and its repository could not be
#              fetched, so bench/peers/clooks_model.mjs (a model of its request path,
#              see that file) runs under the system `node`.
# EDMONDS_CHECKOUT: a git repository of github.com/Edmonds-Commerce-Limited/claude-code-hooks-daemon
# that has the pinned commit (the project's search tool fetches one to
# /work/.mirror/Edmonds-Commerce-Limited+claude-code-hooks-daemon/repo, the default).
set -eu
PEERS=${1:-/work/peers}
EDMONDS_SRC=${2:-/work/.mirror/Edmonds-Commerce-Limited+claude-code-hooks-daemon/repo}
EDMONDS_COMMIT=a975e8830d350b2e4c6e3eaf0459d13e61178757   # v3.8.2, 2026-04-22
PYTHON=${PYTHON:-python3}

mkdir -p "$PEERS"
if [ ! -d "$PEERS/edmonds/src" ]; then
    rm -rf "$PEERS/edmonds"
    git clone -q "$EDMONDS_SRC" "$PEERS/edmonds"
fi
git -C "$PEERS/edmonds" -c advice.detachedHead=false checkout -q "$EDMONDS_COMMIT"
if [ ! -x "$PEERS/edmonds/.venv/bin/python" ]; then
    "$PYTHON" -m venv "$PEERS/edmonds/.venv"
fi
"$PEERS/edmonds/.venv/bin/pip" install -q -e "$PEERS/edmonds"
echo "edmonds: $("$PEERS/edmonds/.venv/bin/python" -c 'import claude_code_hooks_daemon as m; print(m.__file__)') at $EDMONDS_COMMIT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$PEERS/hookd/bin/python" ]; then
    "$PYTHON" -m venv "$PEERS/hookd"
fi
"$PEERS/hookd/bin/pip" install -q -e "$ROOT"
echo "hookd (user install): $("$PEERS/hookd/bin/python" -c 'import hookd; print(hookd.__file__)')"
node --version >/dev/null && echo "clooks model: node $(node --version)"
