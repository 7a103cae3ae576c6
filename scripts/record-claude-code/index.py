#!/usr/bin/env python3
"""Write SOURCES.md for a folder of recorded fixtures (OUT/<version>/<family>[/<variant>]/scenario.json)."""
import json
import os
import sys

out = sys.argv[1]
rows = []
for dp, dns, fns in os.walk(out):
    dns.sort()
    if "scenario.json" in fns:
        rel = os.path.relpath(dp, out)
        sc = json.load(open(os.path.join(dp, "scenario.json")))
        o = sc["outcome"]
        note = " ".join(sc.get("summary", "").split()) if sc.get("summary") else ""
        rows.append((rel, o["exit_code"], o["requests"], [f["to"] for f in o["files"]], note))
rows.sort()
lines = [
    "# Recorded Claude Code transcripts",
    "",
    "Made by the real Claude Code CLI (2.1.197 from npm `@anthropic-ai/claude-code`, 2.1.332 bundled in the "
    "PyPI `claude-agent-sdk` 0.2.189 wheel), offline against the scripted fake Anthropic server of "
    "`scripts/record-claude-code/` (see its README for how to regenerate them all). Each folder holds "
    "`transcript.jsonl` (the session file from `~/.claude/projects/`, plus `subagents/` when the version "
    "wrote any), `stdout.jsonl` (stream-json), `requests.jsonl` (every request the fake server got), "
    "`scenario.json` (prompt, flags, env, the server's script, exit code) and `NOTE.md`.",
    "",
    "FINDINGS.md (written by hand from these recordings) says per family what each version wrote into "
    "the transcript: line types, subtypes, attachments, meta messages and their exact texts.",
    "",
    "| fixture | exit | requests | files |",
    "|---|---|---|---|",
]
for rel, rc, n, files, _ in rows:
    lines.append("| `%s` | %s | %d | %s |" % (rel, rc, n, ", ".join(files)))
lines.append("")
open(os.path.join(out, "SOURCES.md"), "w").write("\n".join(lines))
print("indexed %d fixtures" % len(rows))
