//! `git` in the read-only table: its global options, the subcommands that only read, and what
//! their operands name.

use crate::bash_classify::{long_option, opts, parse_with, Arity, Class, NotReadOnly, Opt, Parsed};
use crate::bash_table::{Operands, Row, BASE};

/// git's own options before the subcommand; `-c` and friends set config that can run programs.
const GIT_GLOBAL: &str = "--no-pager -p --paginate --no-replace-objects --literal-pathspecs \
    --no-optional-locks --bare <-C= <--git-dir= <--work-tree=";
const GIT_GLOBAL_UNSAFE: &str = "-c= --config-env= --exec-path=? --namespace= --super-prefix= --list-cmds=";

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
pub(crate) fn git(args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let mut global = opts(GIT_GLOBAL, Class::Safe);
    global.extend(opts(GIT_GLOBAL_UNSAFE, Class::Unsafe));
    let unknown = |option: &str| NotReadOnly::UnknownOption { command: "git".into(), option: option.to_string() };
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
        match opt.class {
            Class::Unsafe => return Err(NotReadOnly::Capability { command: "git".into(), what: name }),
            Class::ReadsPath => out.paths.extend(value.map(|v| (v, false))),
            _ => {}
        }
    }
    let sub = args.get(i).ok_or_else(|| unknown("(no subcommand)"))?;
    let (options, walks) = git_subcommand(sub).ok_or_else(|| NotReadOnly::UnknownCommand(format!("git {sub}")))?;
    let row = Row { command: "git", operands: Operands::Paths, numeric_option: true, ..BASE };
    let mut parsed = Parsed::default();
    parse_with(&row, &options, &args[i + 1..], &mut parsed)?;
    if sub == "branch" && !parsed.operands.is_empty() {
        return Err(NotReadOnly::Capability {
            command: "git branch".into(),
            what: "an operand (creates a branch)".into(),
        });
    }
    if walks && parsed.operands.is_empty() {
        parsed.operands.push(".".into());
    }
    // `REV:path` and `:path` name a path relative to the current directory, which may climb out
    // of the workspace inside the repository (`HEAD:../secret`).
    let in_revisions: Vec<String> =
        parsed.operands.iter().filter_map(|o| o.split_once(':').map(|(_, path)| path.to_string())).collect();
    parsed.operands.extend(in_revisions.into_iter().filter(|p| !p.is_empty()));
    out.paths.extend(parsed.paths);
    out.operands.extend(parsed.operands);
    out.walks = walks;
    Ok(())
}
