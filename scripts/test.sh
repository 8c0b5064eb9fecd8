#!/usr/bin/env bash
# Runs the whole test suite: installs what the tests need (Debian's chromium-headless-shell included),
# then the linter, the ordinary tests (two at a time), the course's MCP files on the newest mcp
# release (a venv of its own, outside the checkout), the fairness tests alone, the real-model lane
# (a real llama.cpp server and a real small model, built once outside the checkout), a short classroom
# smoke run, and the sandbox containment tests as an unprivileged user.
set -euo pipefail
cd "$(dirname "$0")/.."
export GRADIO_ANALYTICS_ENABLED=False
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
# Bytecode is kept (in __pycache__, which git ignores): pytest then rewrites the asserts of the
# ~200 test files once, not again in every pytest run and worker (about 6 s each).
unset PYTHONDONTWRITEBYTECODE

lib() { [ -e "/usr/lib/x86_64-linux-gnu/$1" ] || [ -e "/usr/lib/aarch64-linux-gnu/$1" ]; }
# The page tests' browser: chromium without its own UI (the same engine, about a fifth less CPU per page).
if [ "$(id -u)" = 0 ] && ! { [ -x /usr/lib/chromium/chromium-headless-shell ] && lib libseccomp.so.2 && lib libjemalloc.so.2; }; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium-headless-shell fonts-liberation fonts-noto-color-emoji fonts-noto-cjk libseccomp2 libjemalloc2 python3-venv >/dev/null
fi
source scripts/setup.sh requirements-dev.txt

echo "== ruff (rules in pyproject.toml); any finding fails the run"
"$PY" -m ruff check .

# Extra arguments (paths, -k ...) go to both pytest runs below; a selection may leave one of
# them nothing to run (pytest's exit 5), which is then no failure.
part() { "$PY" -m pytest "$@" || { status=$?; [ "$status" = 5 ] && [ -n "$extra" ] || return "$status"; }; }
extra="$*"

echo "== tests, ${TEST_WORKERS:-2} at a time (each test file, or class, stays on one worker)"
part -m "not unprivileged and not serial and not real_model and not mcp_newest" -n "${TEST_WORKERS:-2}" --dist loadscope --durations=25 "$@"

echo "== the newest mcp release: its official client against the course's MCP server (the app pins 1.19)"
# A venv outside the checkout (scripts/mcp_newest.sh: installed once, refreshed weekly); skipped,
# saying so, only when it cannot be installed (no package registry).
if [ -z "$extra" ] || "$PY" -m pytest -q --collect-only -m mcp_newest "$@" >/dev/null 2>&1; then
  if paths=$(bash scripts/mcp_newest.sh); then
    MCP_PYTHON=$(sed -n 's/^MCP_PYTHON=//p' <<<"$paths")
    export MCP_PYTHON
    if [ -n "$extra" ]; then part -m mcp_newest "$@"; else part -m mcp_newest tests/mcp/test_newest_sdk.py; fi
  else
    echo "   SKIPPED: the newest mcp could not be installed from PyPI (see the lines above)"
  fi
fi

# The fairness and containment tests live in these two folders (tests/test_lanes.py checks it):
# collecting only there saves each of those runs about 4 s of importing the page's test files.
sandbox_tests=(tests/sandbox tests/workspace)

echo "== fairness tests, on their own: their limits are tenths of a second"
if [ -n "$extra" ]; then part -m "serial and not unprivileged and not real_model" "$@"
else part -m "serial and not unprivileged and not real_model" "${sandbox_tests[@]}"; fi

echo "== real model: SmolLM2-135M-Instruct on llama.cpp's llama-server, one slot, on its own"
# A selection without real-model tests skips this step (and never starts the one-time build).
if [ -z "$extra" ] || "$PY" -m pytest -q --collect-only -m real_model "$@" >/dev/null 2>&1; then
  # Builds llama-server (5 to 10 minutes on 2 cores, once per machine) and fetches the model if missing.
  paths=$(bash scripts/real_model.sh)
  LLAMA_SERVER=$(sed -n 's/^LLAMA_SERVER=//p' <<<"$paths")
  MODEL=$(sed -n 's/^MODEL=//p' <<<"$paths")
  export LLAMA_SERVER MODEL
  if [ -n "$extra" ]; then part -m real_model "$@"; else part -m real_model tests/real_model; fi
fi

# The classroom smoke run (it fails only on an error, not on a time) and the containment tests
# as an unprivileged user (no time limits of their own) share the two cores.
echo "== classroom smoke: 10 simulated students, 2 of them with abusive tools, 15 s; fails on any error"
echo "== and, beside it, sandbox containment as an unprivileged user (its output follows the smoke run's)"
contained=$(mktemp /tmp/tool-workshop-unprivileged.XXXXXX.log)
copy=""
trap 'rm -rf "$contained" ${copy:+"$copy"}' EXIT
if [ "$(id -u)" = 0 ]; then
  # A copy the unprivileged user can read, wherever this checkout lives; with the files' times,
  # so that the bytecode the runs above kept is still good for it (it cannot write any).
  copy=$(mktemp -d /tmp/tool-workshop-tests.XXXXXX)
  cp -rp . "$copy/repo" && chmod -R a+rX "$copy"
  (cd "$copy/repo" && runuser -u nobody -- env HOME=/tmp GRADIO_ANALYTICS_ENABLED=False \
      "$PY" -m pytest -m unprivileged -p no:cacheprovider "${sandbox_tests[@]}") >"$contained" 2>&1 &
else
  "$PY" -m pytest -m unprivileged "${sandbox_tests[@]}" >"$contained" 2>&1 &
fi
unprivileged=$!
smoke=0
"$PY" benchmarks/classroom.py --students 10 --abusers 2 --seconds 15 --smoke || smoke=$?
status=0
wait "$unprivileged" || status=$?
cat "$contained"
[ "$smoke" = 0 ] || exit "$smoke"
exit "$status"
