#!/usr/bin/env bash
# Starts the playground at http://127.0.0.1:7860 with the offline model (no key needed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh requirements.txt
export GRADIO_ANALYTICS_ENABLED=False
exec "$PY" app.py "$@"
