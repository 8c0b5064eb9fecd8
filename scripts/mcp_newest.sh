#!/usr/bin/env bash
# Makes sure a venv with the newest `mcp` release is on this machine, outside the checkout, and
# prints its Python:
#
#   MCP_PYTHON=/var/cache/tool-workshop/mcp-newest/bin/python
#
# The app pins mcp 1.19 (zhipuai 2.1.5 pins pyjwt<2.9; mcp 1.20 and later need a newer pyjwt), but
# a student installs today's release: code/mcp_server.py and code/mcp_client_loop.py must run on
# both, and the test lane (tests/mcp/test_newest_sdk.py) checks them with this venv's official
# client and server. The venv is made from Debian's /usr/bin/python3 (readable by any user, like
# the containment tests' Python) and refreshed when it is older than REFRESH_DAYS; a refresh
# that fails (no registry) keeps the venv there was.
#
# `--check` only looks: it prints the line if the venv is there, else exits 3.
# Exit 3 also when the venv is missing and the install failed: the caller says why and skips.
#
# Cache: $TOOL_WORKSHOP_CACHE, else /var/cache/tool-workshop (as root, or when writable), else
# ~/.cache/tool-workshop (as scripts/real_model.sh).
set -euo pipefail

REFRESH_DAYS=7
SYSTEM_CACHE=/var/cache/tool-workshop
CHECK_ONLY=false
case "${1:-}" in
  --check) CHECK_ONLY=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

say() { echo "mcp_newest.sh: $*" >&2; }

if [ -n "${TOOL_WORKSHOP_CACHE:-}" ]; then
  CACHE=$TOOL_WORKSHOP_CACHE
elif [ "$(id -u)" = 0 ] || { mkdir -p "$SYSTEM_CACHE" 2>/dev/null && [ -w "$SYSTEM_CACHE" ]; }; then
  CACHE=$SYSTEM_CACHE
else
  CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tool-workshop
fi
VENV=$CACHE/mcp-newest
STAMP=$VENV/.installed        # written after a whole install: the mcp version it got

# The course loop the test runs there (on the offline model) needs two more packages of requirements.txt
# that mcp does not bring (the registry reads docstrings with docstring-parser, skills read YAML), at the
# versions the app pins: as a student's machine has them.
mapfile -t COURSE_NEEDS < <(grep -iE '^(docstring-parser|PyYAML)==' "$(dirname "$0")/../requirements.txt")
ready() { [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import docstring_parser, yaml" 2>/dev/null; }

if $CHECK_ONLY; then
  ready || exit 3
  echo "MCP_PYTHON=$VENV/bin/python"
  exit 0
fi

if ready && [ -z "$(find "$STAMP" -mtime +"$REFRESH_DAYS" 2>/dev/null)" ]; then
  echo "MCP_PYTHON=$VENV/bin/python"
  exit 0
fi

mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/mcp-newest.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "installing the newest mcp from PyPI into $VENV"
/usr/bin/python3 -m venv "$work/venv"
# `python -m pip` and `bin/python` only: a venv moved after its install still runs them (its
# scripts' first lines name the old folder, and nothing here uses those).
if "$work/venv/bin/python" -m pip install -q --disable-pip-version-check mcp "${COURSE_NEEDS[@]}" >"$work/pip.log" 2>&1 \
   && "$work/venv/bin/python" -c "import importlib.metadata as m; print(m.version('mcp'))" >"$work/venv/.installed"; then
  rm -rf "$VENV"
  mv "$work/venv" "$VENV"
  say "mcp $(cat "$STAMP") ready"
elif ready; then
  say "could not refresh (no registry?): keeping mcp $(cat "$STAMP")"
  touch "$STAMP"
else
  grep -v "is ignored" "$work/pip.log" | tail -5 >&2 || true
fi

ready || { say "could not install mcp from PyPI"; exit 3; }
echo "MCP_PYTHON=$VENV/bin/python"
