#!/usr/bin/env bash
# The whole test suite, on a fresh machine of this kind: installs what the tests need beyond
# Rust (the Grep parity test also compares live with the real `rg` when it is there; the SDK
# tests run the official Claude Agent SDKs; the MCP tests, servers of the official MCP Python
# SDK; the journal tests start a real PostgreSQL server), runs every test of the workspace, then
# walks the newcomer's path (scripts/newcomer.sh: clone, build, install, run, why, replay).
# Before the tests it gates formatting, clippy (warnings are errors) and the docs.
# CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null 2>&1; then
  echo "installing ripgrep (the Grep parity test compares live with the real rg too)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep
fi

# Every Bash command runs in a bubblewrap sandbox (tests/sandbox.rs proves what it contains with
# the classifier bypassed); required here, so a machine without it fails those tests.
if ! command -v bwrap >/dev/null 2>&1; then
  echo "installing bubblewrap (the sandbox every Bash command runs in)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
fi
export RELOOP_REQUIRE_SANDBOX=1

# The session page (tests/view.rs) and `reloop serve` (tests/serve.rs) are checked in a real
# headless browser: Debian's chromium, driven by npm's playwright-core (installed once into
# target/browser); required here.
bash scripts/browser-setup.sh
export RELOOP_BROWSER_DIR="$PWD/target/browser"
export RELOOP_REQUIRE_BROWSER=1

# The Agent SDK tests (tests/sdk.rs) drive the real Python and TypeScript SDKs against the reloop
# binary, and run the SDKs' own examples (tests/sdk_examples.rs), e2e tests and demos
# (tests/sdk_e2e.rs, vendored in tests/sdk/vendor/); here the SDKs, pytest and tsx are installed
# (once, into target/sdk) and required, so a missing SDK fails them.
bash scripts/sdk-setup.sh
export RELOOP_SDK_DIR="$PWD/target/sdk"
export RELOOP_REQUIRE_SDK=1

# The journal contract tests (crates/reloop-journal-pg/tests) run on a real PostgreSQL server they
# start themselves; its binaries are installed here when missing, and required.
RELOOP_PG_BIN="$(bash scripts/pg-setup.sh)"
export RELOOP_PG_BIN
export RELOOP_REQUIRE_PG=1

# The MCP tests (tests/mcp.rs, crates/reloop-mcp/tests/servers.rs) run real MCP servers written
# with the official MCP Python SDK; installed once into target/mcp and required here.
bash scripts/mcp-setup.sh
export RELOOP_MCP_PY="$PWD/target/mcp/venv/bin/python"
export RELOOP_REQUIRE_MCP=1

# The OpenTelemetry export tests (tests/otel.rs) send sessions to a real receiver, Arize Phoenix,
# and query the spans back; installed once into target/otel and required here.
bash scripts/otel-setup.sh
export RELOOP_PHOENIX="$PWD/target/otel/venv/bin/phoenix"
export RELOOP_REQUIRE_PHOENIX=1

# Every crate of the lockfile, for every platform, before the tests run offline (the rust-version
# test reads them with `cargo metadata --offline`).
cargo fetch --locked --quiet

# The code gates: formatting, lints as errors, and the docs build without a broken link.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

cargo test --workspace "$@"

# The suite passes whatever the developer's shell exports (tests/environment.rs holds every
# variable reloop reads to the list a test's child starts without): the end-to-end tests of
# colour, the pager, checks, reruns and the seed scenario again, under a shell that sets them all.
NO_COLOR=1 CLICOLOR_FORCE=1 CLICOLOR=1 PAGER=false TERM=dumb CI=true RELOOP_PAGER=false \
  RELOOP_COMPAT=no-such-profile RELOOP_JOURNAL=/nonexistent/journal.db RELOOP_LEASE_TTL_MS=1 \
  ANTHROPIC_MODEL=no-such-model ANTHROPIC_BASE_URL=http://127.0.0.1:9 API_TIMEOUT_MS=1 \
  cargo test --locked --test environment --test cli --test check --test rerun --test seed --test errors \
    --test session_files --test recipes

bash scripts/newcomer.sh
