#!/usr/bin/env bash
# Creates (once) the virtual environment and installs the given requirements file.
# Sourced by start.sh and test.sh; sets $PY to the environment's python.
#
# As root the environment lives in /opt, readable by the unprivileged user that the
# sandbox workers drop to; otherwise in .venv beside the code.
set -euo pipefail
REQS=${1:-requirements.txt}
if [ "$(id -u)" = 0 ]; then
  VENV=${VENV:-/opt/tool-workshop-venv}
else
  VENV=${VENV:-$PWD/.venv}
fi
BASE_PY=/usr/bin/python3
[ -x "$BASE_PY" ] || BASE_PY=$(command -v python3)
if [ ! -x "$VENV/bin/python" ]; then
  "$BASE_PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
fi
stamp="$VENV/.installed-$(cat requirements*.txt | sha1sum | cut -c1-12)-$(basename "$REQS")"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q -r "$REQS" 2>&1 | grep -v "is ignored" || true
  "$VENV/bin/python" -c "import gradio, openai, zhipuai, jsonschema, docstring_parser" 
  touch "$stamp"
fi
PY="$VENV/bin/python"
export PY
