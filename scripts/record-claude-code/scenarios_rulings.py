"""Scenarios for issue 39's rulings (branch h39): the `tool_result_meta` 2.1.332 prints for a call a
PreToolUse hook ruled on (allow, deny, ask) and for one a deny rule refused (a `--disallowedTools`
rule and a settings `permissions.deny` rule). Same step format as scenarios.py, which appends these
to its list. Fixtures: tests/print/recorded/<version>/tool_results/ (record with
`--out tests/print/recorded --only tool_results/hook_rulings --only tool_results/deny_rules`)."""

P = "/tmp/reloop-cc-project"
FINAL = "登录模块检查完毕。"
RULE = "/tmp/reloop-cc-hooks/rule.sh"
# A PreToolUse hook ruling by the tool's name: Write allowed, Bash denied, Edit asked about, any
# other tool left to the rules (no output). It keeps each input it gets.
RULE_SH = """#!/bin/sh
n=$(ls /tmp/reloop-cc-hooks | grep -c '^rule-input-')
input=$(cat)
printf '%s' "$input" > /tmp/reloop-cc-hooks/rule-input-$((n + 1)).json
decide() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s","permissionDecisionReason":"%s"}}\\n' "$1" "$2"
}
case "$input" in
  *'"tool_name":"Write"'*) decide allow "HOOK-ALLOWS-WRITE" ;;
  *'"tool_name":"Bash"'*) decide deny "HOOK-DENIES-BASH" ;;
  *'"tool_name":"Edit"'*) decide ask "HOOK-ASKS-EDIT" ;;
esac
exit 0
"""


BLOCK = "/tmp/reloop-cc-hooks/block.sh"
# A PreToolUse hook that blocks a Bash call by exiting 2 with a reason on stderr (recorded
# 2026-12-06: the `tool_result_meta` of a hook's exit 2).
BLOCK_SH = """#!/bin/sh
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*) echo "HOOK-BLOCKS-BASH" >&2; exit 2 ;;
esac
exit 0
"""


BARE = "/tmp/reloop-cc-hooks/bare.sh"
# A PreToolUse hook that rules with no reason: Bash denied, Edit asked about (recorded 2026-12-06).
BARE_SH = """#!/bin/sh
input=$(cat)
decide() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s"}}\\n' "$1"
}
case "$input" in
  *'"tool_name":"Bash"'*) decide deny ;;
  *'"tool_name":"Edit"'*) decide ask ;;
esac
exit 0
"""


def tool(name, **inp):
    return {"type": "tool_use", "name": name, "input": inp}


def one_each(*calls):
    """One call per response, in order, then the final answer: results never race."""
    return [{"blocks": [c]} for c in calls] + [{"text": FINAL}]


SCENARIOS = [
    {"name": "tool_results/hook_rulings",
     "note": "A PreToolUse hook (every tool) rules by tool name: a Write (no allow rule) the hook allows, "
             "a Bash the hook denies, an Edit the hook asks about (print mode: nobody to ask), a Read it "
             "leaves to the rules (allowed by --allowedTools Read).",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Read"],
     "files": {RULE: RULE_SH},
     "settings": {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": RULE}]}]}},
     "full_texts": True,
     "steps": one_each(
         tool("Write", file_path=P + "/notes.txt", content="alpha\n"),
         {"type": "tool_use", "name": "Bash", "input": {"command": "ls src", "description": "list"}},
         tool("Read", file_path=P + "/README.md"),
         tool("Edit", file_path=P + "/README.md", old_string="demo", new_string="DEMO"),
     )},
    {"name": "tool_results/hook_exit2",
     "note": "A PreToolUse hook (every tool) that exits 2 for a Bash call (stderr `HOOK-BLOCKS-BASH`) and "
             "0 otherwise: the blocked Bash, then a Read the rules allow (--allowedTools Read).",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Read"],
     "files": {BLOCK: BLOCK_SH},
     "settings": {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": BLOCK}]}]}},
     "full_texts": True,
     "steps": one_each(
         {"type": "tool_use", "name": "Bash", "input": {"command": "ls src", "description": "list"}},
         tool("Read", file_path=P + "/README.md"),
     )},
    {"name": "tool_results/hook_no_reason",
     "note": "A PreToolUse hook (every tool) that denies a Bash call and asks about an Edit, giving no "
             "reason for either; a Read the rules allow (--allowedTools Read).",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Read"],
     "files": {BARE: BARE_SH},
     "settings": {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": BARE}]}]}},
     "full_texts": True,
     "steps": one_each(
         {"type": "tool_use", "name": "Bash", "input": {"command": "ls src", "description": "list"}},
         tool("Edit", file_path=P + "/README.md", old_string="demo", new_string="DEMO"),
         tool("Read", file_path=P + "/README.md"),
     )},
    {"name": "tool_results/deny_rules",
     "note": "Deny rules: `--disallowedTools Bash(touch:*)` refuses a Bash touch, the settings' "
             "`permissions.deny` `Read(./README.md)` refuses a Read of it; a read-only Bash (`ls src`) and "
             "a Read of another file allowed by `--allowedTools Read` run.",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Read", "--disallowedTools", "Bash(touch:*)"],
     "settings": {"permissions": {"deny": ["Read(./README.md)"]}},
     "full_texts": True,
     "steps": one_each(
         {"type": "tool_use", "name": "Bash", "input": {"command": "touch made.txt", "description": "write"}},
         tool("Read", file_path=P + "/README.md"),
         {"type": "tool_use", "name": "Bash", "input": {"command": "ls src", "description": "list"}},
         tool("Read", file_path=P + "/src/auth/login.ts"),
     )},
]


# ---- Issue 39: where a permission rule came from (`ruleSource` in 2.1.332's session file) --------
# Fixtures: crates/reloop-import/tests/recorded/<version>/rule_sources/ (record with
# `--out crates/reloop-import/tests/recorded --only rule_sources`). Each settings layer names its own
# rule: the user's (`$HOME/.claude/settings.json`), the project's (`.claude/settings.json`), the
# local one (`.claude/settings.local.json`), and the command line's.
HOME = "/tmp/reloop-cc-home"


def layers(user, project, local):
    """The three settings files, each holding `permissions` as given."""
    import json
    return {
        HOME + "/.claude/settings.json": json.dumps({"permissions": user}, indent=1),
        P + "/.claude/settings.json": json.dumps({"permissions": project}, indent=1),
        P + "/.claude/settings.local.json": json.dumps({"permissions": local}, indent=1),
    }


def local_allow(variant, note, git, more_files=None):
    """The local settings allow `Write` in a git repository laid out as `git` says; one Write."""
    return {"name": "rule_sources/" + variant, "note": note, "prompt": "检查登录模块",
            "files": dict(layers({}, {}, {"allow": ["Write"]}), **(more_files or {})),
            "git": git,
            "steps": one_each(tool("Write", file_path=P + "/notes.txt", content="alpha\n"))}


def bash_call(command, description):
    return {"type": "tool_use", "name": "Bash", "input": {"command": command, "description": description}}


SCENARIOS += [
    {"name": "rule_sources/allow",
     "note": "Allow rules, one per origin: the user settings' `Write`, the local settings' `Bash`, "
             "`--allowedTools Read`; each lets its call through.",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Read"],
     "files": layers({"allow": ["Write"]}, {}, {"allow": ["Bash"]}),
     "steps": one_each(
         tool("Write", file_path=P + "/notes.txt", content="alpha\n"),
         bash_call("echo made", "say made"),
         tool("Read", file_path=P + "/README.md"),
     )},
    {"name": "rule_sources/allow_project",
     "note": "The project settings allow `Write` and `Bash`, a `--settings` file allows `Read`: whether each lets "
             "its call through, and under which origin.",
     "prompt": "检查登录模块",
     "files": layers({}, {"allow": ["Write", "Bash"]}, {}),
     "settings": {"permissions": {"allow": ["Read"]}},
     "steps": one_each(
         tool("Write", file_path=P + "/notes.txt", content="alpha\n"),
         bash_call("echo made", "say made"),
         tool("Read", file_path=P + "/README.md"),
     )},
    local_allow("local_tracked",
                "The project is a git repository whose first commit holds `.claude/settings.local.json`, "
                "which allows `Write`: whether a local allow rule git tracks lets its call through.",
                {"commit": [".claude/settings.local.json"]}),
    local_allow("local_tracked_trusted",
                "As `local_tracked`, in a folder the global config trusts (`hasTrustDialogAccepted`).",
                {"commit": [".claude/settings.local.json"]},
                {HOME + "/.claude.json": '{"projects": {"%s": {"hasTrustDialogAccepted": true}}}' % P}),
    local_allow("local_staged",
                "As `local_tracked`, but `.claude/settings.local.json` is only added to the index (the "
                "first commit holds README.md).",
                {"commit": ["README.md"], "stage": [".claude/settings.local.json"]}),
    local_allow("local_untracked",
                "As `local_tracked`, but git does not track `.claude/settings.local.json` (the first "
                "commit holds README.md): the local allow rule in a git repository.",
                {"commit": ["README.md"]}),
    {"name": "rule_sources/allow_everywhere",
     "note": "The same allow rule `Write` in the user, project and local settings and `--allowedTools`: "
             "which origin the ruling names.",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Write"],
     "files": layers({"allow": ["Write"]}, {"allow": ["Write"]}, {"allow": ["Write"]}),
     "steps": one_each(tool("Write", file_path=P + "/notes.txt", content="alpha\n"))},
    {"name": "rule_sources/deny",
     "note": "Deny rules, one per origin: the user settings' `Bash(mkdir:*)`, the project settings' "
             "`Bash(touch:*)`, the local settings' `Read(./README.md)`, `--disallowedTools Bash(rm:*)`.",
     "prompt": "检查登录模块",
     "flags": ["--disallowedTools", "Bash(rm:*)"],
     "files": layers({"deny": ["Bash(mkdir:*)"]}, {"deny": ["Bash(touch:*)"]}, {"deny": ["Read(./README.md)"]}),
     "steps": one_each(
         bash_call("mkdir made", "make a folder"),
         bash_call("touch made.txt", "make a file"),
         tool("Read", file_path=P + "/README.md"),
         bash_call("rm -f made.txt", "remove a file"),
     )},
    {"name": "rule_sources/ask",
     "note": "Ask rules, one per settings file (print mode: nobody to ask): the user settings' "
             "`Bash(mkdir:*)`, the project settings' `Write`, the local settings' `Bash(touch:*)`.",
     "prompt": "检查登录模块",
     "files": layers({"ask": ["Bash(mkdir:*)"]}, {"ask": ["Write"]}, {"ask": ["Bash(touch:*)"]}),
     "steps": one_each(
         bash_call("mkdir made", "make a folder"),
         tool("Write", file_path=P + "/notes.txt", content="alpha\n"),
         bash_call("touch made.txt", "make a file"),
     )},
    {"name": "rule_sources/command",
     "note": "A slash command whose `allowed-tools` is `Write`, then its Write: the origin of a command's rule.",
     "prompt": "/jot",
     "files": {P + "/.claude/commands/jot.md": "---\ndescription: Jot a note\nallowed-tools: Write\n---\n"
               "Write alpha into notes.txt.\n"},
     "steps": one_each(tool("Write", file_path=P + "/notes.txt", content="alpha\n"))},
]
