#!/usr/bin/env bash
# The whole test suite, on a fresh machine of this kind: installs what the tests need beyond
# Rust (the Grep parity test runs the real `rg`), then runs every test of the workspace.
# CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null 2>&1; then
  echo "installing ripgrep (the Grep parity test compares against the real rg)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep
fi

cargo test --workspace "$@"
