#!/usr/bin/env bash
# A newcomer's path, end to end, as the README tells it: clone the repository, run its first
# command (`cargo run --release -- run --demo`), install the binary with `cargo install --path .`,
# then use the installed `reloop` from PATH: run, why, replay, and view and diff where this tree
# has them. Fails on the first step that does not do what the README says.
#
# The clone is of this repository's committed HEAD, into a temporary directory; the install goes
# to a temporary --root. The release build goes to this checkout's target/ (override with
# NEWCOMER_TARGET_DIR), so dependencies already built there are not built again.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export CARGO_TARGET_DIR="${NEWCOMER_TARGET_DIR:-$repo/target}"
step() { printf '\n== newcomer: %s\n' "$*" >&2; }
fail() { printf 'newcomer: FAILED: %s\n' "$*" >&2; exit 1; }

step "git clone"
git clone -q "$repo" "$tmp/reloop"
cd "$tmp/reloop"

step "the README's first command: cargo run --release -- run --demo"
grep -q 'cargo run --release -- run --demo' README.md || fail "the README no longer starts with the demo"
cargo run --release --quiet -- run --demo > "$tmp/demo.txt"
grep -q 'reloop replay' "$tmp/demo.txt" || fail "the demo did not say how to replay its session"

step "install: cargo install --path . --root (temporary)"
grep -qE 'cargo install (--locked )?--path \.' README.md || fail "the README does not say how to install"
cargo install --quiet --locked --path . --root "$tmp/root"
export PATH="$tmp/root/bin:$PATH"
[ "$(command -v reloop)" = "$tmp/root/bin/reloop" ] || fail "reloop is not on PATH after the install"

work="$tmp/work"
mkdir -p "$work"
cd "$work"
step "reloop run --demo (installed)"
reloop run --demo > run.txt
session="$(reloop sessions --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | tail -1)"
[ -n "$session" ] || fail "reloop sessions lists no session after a run"

step "reloop why last"
reloop why last > why.txt
[ -s why.txt ] || fail "why printed nothing"

step "reloop replay last"
reloop replay last | tee replay.txt
grep -q 'identical' replay.txt || fail "the demo session did not replay identically"

subcommands="$(reloop --help)"
if grep -qE '^  view ' <<<"$subcommands"; then
  step "reloop view last"
  reloop view last -o page.html
  grep -qi '<html' page.html || fail "view wrote no HTML page"
fi
if grep -qE '^  diff ' <<<"$subcommands"; then
  step "reloop diff (two runs of the demo)"
  reloop run --demo > /dev/null
  first="$(reloop sessions --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -1)"
  reloop diff "$first" last > diff.txt || [ $? -le 1 ] || fail "diff failed"
fi

step "shell completions and the man page"
reloop completions bash > reloop.bash && bash -n reloop.bash
reloop man > reloop.1 && grep -q '^\.TH reloop 1' reloop.1

printf '\nnewcomer: every step of the README worked\n' >&2
