//! `git` in the read-only table: its global options, the subcommands that only read, and what
//! their operands name.

use crate::bash_options::{long_option, opts, parse_with, Arity, Class, Opt, Parsed};
use crate::bash_table::{Operands, Row, BASE};
use crate::bash_verdict::NotReadOnly;

/// git's own options before the subcommand. `-C` moves where relative paths resolve;
/// `--git-dir` is handled apart (see [`git`]).
const GIT_GLOBAL: &str = "--no-pager -p --paginate --no-replace-objects --literal-pathspecs \
    --no-optional-locks <-C= --git-dir=";
/// `-c` and friends set config that can run programs; `--work-tree`, `--bare` and a `--git-dir`
/// elsewhere than the workspace's own `.git` make git read a repository (and its `config`, with
/// `diff.external`, textconv drivers, `core.fsmonitor`) that the model may have written.
const GIT_GLOBAL_UNSAFE: &str =
    "-c= --config-env= --exec-path=? --namespace= --super-prefix= --list-cmds= --work-tree= --bare";

/// The `--git-dir` values that name the workspace's own repository when git runs in the
/// session's directory.
const OWN_GIT_DIR: &[&str] = &[".git", "./.git", ".git/", "./.git/"];

/// Options of `git diff`, `log` and `show` that only change what is shown.
const GIT_DIFF: &str = "-p -u --patch -s --no-patch -U= --unified= --raw --patch-with-raw -t --numstat \
    --shortstat --dirstat=? --cumulative --dirstat-by-file=? --summary --patch-with-stat -z --name-only \
    --name-status --submodule=? --color=? --no-color --color-moved=? --no-color-moved --color-moved-ws= \
    --word-diff=? --word-diff-regex= --color-words=? --no-renames --rename-empty --no-rename-empty --check \
    --full-index --binary --abbrev=? -B=? --break-rewrites=? -M=? --find-renames=? -C=? --find-copies=? \
    --find-copies-harder -D --irreversible-delete -l= --diff-filter= -S= -G= --find-object= --pickaxe-all \
    --pickaxe-regex -R --relative=? --no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b \
    --ignore-space-change -w --ignore-all-space --ignore-blank-lines -I= --ignore-matching-lines= \
    --inter-hunk-context= -W --function-context --exit-code --quiet --no-ext-diff --no-textconv \
    --ignore-submodules=? --src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= \
    --ita-invisible-in-index --stat=? --stat-width= --stat-name-width= --stat-count= --compact-summary \
    --minimal --patience --histogram --anchored= --diff-algorithm= --indent-heuristic --no-indent-heuristic \
    --cached --staged --merge-base --no-index -1 -2 -3 --base --ours --theirs -0 --remerge-diff \
    --dd --diff-merges= --no-diff-merges --combined-all-paths --cc -m -c";
const GIT_LOG: &str = "--oneline -n= --max-count= --skip= --since= --after= --until= --before= --author= \
    --committer= --grep= --all-match --invert-grep -i --regexp-ignore-case -E --extended-regexp -F \
    --fixed-strings -P --perl-regexp --all --branches=? --tags=? --remotes=? --glob= --exclude= --merges \
    --no-merges --min-parents= --max-parents= --first-parent --not --graph --decorate=? --no-decorate \
    --format= --pretty=? --abbrev-commit --no-abbrev-commit --date= --relative-date --follow --reverse \
    --topo-order --date-order --author-date-order --left-right --cherry-pick --cherry-mark --cherry \
    --boundary --simplify-by-decoration --full-history --dense --sparse --ancestry-path=? --source \
    --use-mailmap --mailmap --no-mailmap --encoding= --notes=? --no-notes --show-notes=? --walk-reflogs \
    -g --left-only --right-only --no-walk=? --do-walk --children --parents --log-size --show-linear-break=? \
    --expand-tabs=? --no-expand-tabs --show-pulls --full-diff --count --no-standard-notes --standard-notes";
/// `-L range:file` names a file inside its value, which the path check would not see.
const GIT_DIFF_UNSAFE: &str = "--output= --output-indicator-new= --ext-diff --textconv --show-signature -L=";

/// The git subcommands that only read, each with its options; the operands are revisions and
/// paths, all checked as paths (a revision such as `HEAD~1` resolves inside the workspace).
fn git_subcommand(name: &str) -> Option<(Vec<Opt>, bool)> {
    let unsafe_ = opts(GIT_DIFF_UNSAFE, Class::Unsafe);
    let with = |lists: &[&str], walks: bool| {
        let mut all: Vec<Opt> = lists.iter().flat_map(|l| opts(l, Class::Safe)).collect();
        all.extend(unsafe_.clone());
        all.extend(opts("<-O=", Class::Safe));
        Some((all, walks))
    };
    match name {
        "diff" => with(&[GIT_DIFF], true),
        "log" | "show" => with(&[GIT_DIFF, GIT_LOG], true),
        "status" => with(
            &["-s --short -b --branch --show-stash --porcelain=? --long -v --verbose -u=? \
            --untracked-files=? --ignored=? --ignore-submodules=? -z --column=? --no-column --ahead-behind \
            --no-ahead-behind --renames --no-renames --find-renames=?"],
            false,
        ),
        "blame" => with(
            &["-L= -l -t -s -e -w -M=? -C=? --porcelain --line-porcelain --incremental -c --root \
            --show-stats -n --show-number -f --show-name --date= --abbrev=? --since= -p --progress \
            --no-progress --score-debug <--contents= <-S= <--ignore-revs-file= --ignore-rev= --color-lines \
            --color-by-age"],
            true,
        ),
        "ls-files" => with(
            &["-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others \
            --ignored --stage --unmerged --killed --directory --no-empty-directory --exclude= -x= \
            --exclude-standard --full-name --abbrev=? --error-unmatch --recurse-submodules --eol \
            --deduplicate --format= <-X= <--exclude-from= <--exclude-per-directory="],
            false,
        ),
        "rev-parse" => with(
            &["--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir \
            --is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository \
            --abbrev-ref=? --short=? --verify -q --quiet --symbolic --symbolic-full-name --all --branches=? \
            --tags=? --remotes=? --git-common-dir --show-superproject-working-tree --default= --sq --not \
            --path-format= --show-object-format=? --revs-only --no-revs --flags --no-flags"],
            false,
        ),
        // Listing only: an operand would create a branch, so the row takes none (see `git`).
        "branch" => with(
            &["-a -r -v -vv -l --all --remotes --list --show-current --verbose --no-color \
            --color=? --contains=? --no-contains=? --merged=? --no-merged=? --sort= --format= --column=? \
            --no-column --points-at= -i --ignore-case --abbrev=? --no-abbrev"],
            false,
        ),
        _ => None,
    }
}

/// Parses `git [global options] SUBCOMMAND [options] [operands]`.
///
/// Relative paths resolve from the `-C` directories, one after the other. Pathspec magic
/// (`:(top)`, `:/`, `:!`, `:(glob)`) is refused rather than reproduced. A path inside a
/// revision (`HEAD:src/a.rs`, `:0:a`) is relative to the repository's top, unless it starts
/// with `./` or `../`; and `diff`, `log` and `show` without a pathspec after `--` may show any
/// file of the repository (`git show HEAD` prints the whole commit), so they read its top.
pub(crate) fn git(args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let mut global = opts(GIT_GLOBAL, Class::Safe);
    global.extend(opts(GIT_GLOBAL_UNSAFE, Class::Unsafe));
    let unknown = |option: &str| NotReadOnly::UnknownOption { command: "git".into(), option: option.to_string() };
    let capability = |what: String| NotReadOnly::Capability { command: "git".into(), what };
    let mut directory = ".".to_string();
    let mut i = 0;
    while let Some(arg) = args.get(i).filter(|a| a.starts_with('-')) {
        i += 1;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (arg.clone(), None),
        };
        let opt = long_option(&global, &name).ok_or_else(|| unknown(&name))?;
        let value = match (opt.arity, inline) {
            (Arity::Required, None) => {
                i += 1;
                Some(args.get(i - 1).cloned().ok_or_else(|| unknown(&name))?)
            }
            (_, inline) => inline,
        };
        match (opt.class, opt.name.as_str(), value) {
            (Class::Unsafe, ..) => return Err(capability(opt.name.clone())),
            (_, "-C", Some(dir)) => {
                directory = join(&directory, &dir);
                out.paths.push((directory.clone(), false));
            }
            (_, "--git-dir", Some(dir)) if directory == "." && OWN_GIT_DIR.contains(&dir.as_str()) => {
                out.session_directory_only = Some("--git-dir".into());
            }
            (_, "--git-dir", _) => {
                return Err(capability("--git-dir (a repository the model may have written)".into()))
            }
            _ => {}
        }
    }
    let sub = args.get(i).ok_or_else(|| unknown("(no subcommand)"))?;
    let (options, walks) = git_subcommand(sub).ok_or_else(|| NotReadOnly::UnknownCommand(format!("git {sub}")))?;
    let row = Row { command: "git", operands: Operands::Paths, numeric_option: true, ..BASE };
    let mut parsed = Parsed::default();
    let sub_args = &args[i + 1..];
    parse_with(&row, &options, sub_args, &mut parsed)?;
    if sub == "branch" && !parsed.operands.is_empty() {
        return Err(NotReadOnly::Capability {
            command: "git branch".into(),
            what: "an operand (creates a branch)".into(),
        });
    }
    for operand in &parsed.operands {
        let path = revision_path(operand).inspect_err(|_| {
            // Refused, but deny rules must still see that any file of the repository may be shown.
            out.top_reads.push((directory.clone(), ".".into(), true));
        })?;
        match path {
            Some(path) if path.starts_with("./") || path.starts_with("../") || path == "." || path == ".." => {
                out.paths.push((join(&directory, &path), false));
            }
            Some(path) => out.top_reads.push((directory.clone(), path, false)),
            None => {}
        }
    }
    let pathspecs = parsed.pathspecs_from.is_some_and(|from| parsed.operands.len() > from);
    let no_index = sub_args.iter().any(|a| a == "--no-index");
    if matches!(sub.as_str(), "diff" | "log" | "show") && !pathspecs && !no_index {
        out.top_reads.push((directory.clone(), ".".into(), true));
    }
    out.paths.extend(parsed.paths.into_iter().map(|(p, w)| (join(&directory, &p), w)));
    out.operands.extend(parsed.operands.iter().map(|o| join(&directory, o)));
    out.walks = walks;
    Ok(())
}

/// `path` as seen from `directory` (both as written; `~` and `/` start afresh).
fn join(directory: &str, path: &str) -> String {
    if directory == "." || path.starts_with('/') || path.starts_with('~') {
        path.to_string()
    } else {
        format!("{directory}/{path}")
    }
}

/// The path named inside a revision operand (`REV:path`, `:path`, `:N:path`), or `None` for a
/// plain revision or path. Pathspec magic and `:/message` searches are refused.
fn revision_path(operand: &str) -> Result<Option<String>, NotReadOnly> {
    let refuse =
        |what: &str| Err(NotReadOnly::Capability { command: "git".into(), what: format!("`{operand}` ({what})") });
    if operand.starts_with(":(") || operand.starts_with(":/") || operand.starts_with(":!") || operand.starts_with(":^")
    {
        return refuse("pathspec magic or a message search");
    }
    // The first colon outside `@{...}` (a date there may hold colons) ends the revision.
    let mut depth = 0usize;
    let mut colon = None;
    for (at, c) in operand.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                colon = Some(at);
                break;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return refuse("a revision this check does not read");
    }
    let Some(colon) = colon else { return Ok(None) };
    let mut path = &operand[colon + 1..];
    if colon == 0 {
        // `:N:path` names stage N of the index.
        if let Some(rest) = path.strip_prefix(['0', '1', '2', '3']).and_then(|r| r.strip_prefix(':')) {
            path = rest;
        }
    }
    Ok((!path.is_empty()).then(|| path.to_string()))
}
