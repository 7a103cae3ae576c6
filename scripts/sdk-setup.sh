#!/usr/bin/env bash
# Installs the official Claude Agent SDKs that tests/sdk.rs drives against the reloop binary:
#   target/sdk/venv          Python venv with claude-agent-sdk (PyPI)
#   target/sdk/node          npm install of @anthropic-ai/claude-agent-sdk (from tests/sdk/package.json)
#   target/sdk/examples      the Python SDK's own example programs, from its sdist on PyPI (the wheel
#                            has none), which tests/sdk_examples.rs runs on reloop and on the bundled
#                            Claude Code; trio in the venv, which one of them imports
#   pytest, pytest-asyncio   in the venv, for the Python SDK's own e2e-tests/ (vendored in
#                            tests/sdk/vendor/, run by tests/sdk_e2e.rs)
#   tsx                      in target/sdk/node (tests/sdk/package.json), which runs the vendored
#                            TypeScript demos (tests/sdk_e2e.rs)
# Idempotent and quiet: a stamp file records what was installed, so a second run does nothing.
# The SDKs' bundled Claude Code binaries are never run (tests pass the reloop binary as the CLI);
# the npm platform packages that only carry that binary are skipped (--omit=optional); esbuild
# (under tsx) then fetches its own platform binary from the npm registry in its install script.
set -euo pipefail
cd "$(dirname "$0")/.."

PY_SDK_VERSION=0.2.189   # newest claude-agent-sdk on PyPI when pinned
SDK_DIR=target/sdk
STAMP="$SDK_DIR/.installed"
TRIO_VERSION=0.35.0      # for examples/streaming_mode_trio.py
PYTEST_VERSION=9.2.0     # for the vendored e2e-tests/
PYTEST_ASYNCIO_VERSION=1.5.0
want="py=$PY_SDK_VERSION trio=$TRIO_VERSION pytest=$PYTEST_VERSION/$PYTEST_ASYNCIO_VERSION examples=1 node=$(cat tests/sdk/package.json tests/sdk/package-lock.json | cksum)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" \
      && -x "$SDK_DIR/venv/bin/python" && -d "$SDK_DIR/node/node_modules/@anthropic-ai/claude-agent-sdk" \
      && -x "$SDK_DIR/node/node_modules/.bin/tsx" \
      && -f "$SDK_DIR/examples/quick_start.py" ]]; then
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "sdk-setup: $1 failed:" >&2; cat "$log" >&2; exit 1; }

mkdir -p "$SDK_DIR"
rm -f "$STAMP"

# Python: python3 -m venv needs ensurepip (Debian's system python ships it in python3-venv).
if [[ ! -x "$SDK_DIR/venv/bin/python" ]]; then
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "sdk-setup: installing python3-venv" >&2
    apt-get update -qq >"$log" 2>&1 || fail "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >"$log" 2>&1 || fail "apt-get install python3-venv"
  fi
  rm -rf "$SDK_DIR/venv"
  python3 -m venv "$SDK_DIR/venv" >"$log" 2>&1 || fail "python3 -m venv"
fi
"$SDK_DIR/venv/bin/python" -m pip install -q --disable-pip-version-check \
  "claude-agent-sdk==$PY_SDK_VERSION" "trio==$TRIO_VERSION" \
  "pytest==$PYTEST_VERSION" "pytest-asyncio==$PYTEST_ASYNCIO_VERSION" >"$log" 2>&1 || fail "pip install claude-agent-sdk==$PY_SDK_VERSION"

# The SDK's examples/ ship in its source distribution only.
sdist=$(mktemp -d)
"$SDK_DIR/venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
  -d "$sdist" "claude-agent-sdk==$PY_SDK_VERSION" >"$log" 2>&1 || fail "pip download the claude-agent-sdk sdist"
rm -rf "$SDK_DIR/examples"
mkdir -p "$SDK_DIR/examples"
tar -xzf "$sdist"/claude_agent_sdk-"$PY_SDK_VERSION".tar.gz -C "$SDK_DIR/examples" --strip-components=2 \
  "claude_agent_sdk-$PY_SDK_VERSION/examples" >"$log" 2>&1 || fail "unpacking the sdist's examples"
rm -rf "$sdist"

# Node: package.json and its lock live in tests/sdk/ (committed); the install goes to target/sdk/node.
mkdir -p "$SDK_DIR/node"
cp tests/sdk/package.json tests/sdk/package-lock.json "$SDK_DIR/node/"
(cd "$SDK_DIR/node" && npm ci --omit=optional --no-audit --no-fund --loglevel=error >"$log" 2>&1) \
  || fail "npm install @anthropic-ai/claude-agent-sdk"

echo "$want" > "$STAMP"
