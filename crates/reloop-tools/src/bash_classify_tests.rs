//! The classifier, row by row: each row's hand-written examples, then every option of every row
//! (safe ones alone are read-only; each unsafe one and each of its unique abbreviations is not).

use super::{analyze, is_read_only_command as ro, NotReadOnly};
use crate::bash_table::{find_row, TABLE};

#[test]
fn every_rows_examples_hold_in_both_directions() {
    let bracket = find_row("[").expect("the [ row");
    for row in TABLE.iter().chain([bracket]) {
        for cmd in row.examples.0 {
            assert!(ro(cmd), "{}: `{cmd}` should be read-only: {:?}", row.command, analyze(cmd).verdict);
        }
        for cmd in row.examples.1 {
            assert!(!ro(cmd), "{}: `{cmd}` must need approval", row.command);
        }
    }
}

/// A sample invocation of one option, with a value when it takes one.
fn invocation(command: &str, name: &str, arity: super::Arity) -> String {
    let target = if command == "find" { ". " } else { "" };
    let value = match arity {
        super::Arity::None | super::Arity::Optional => String::new(),
        super::Arity::Required => " 1".into(),
        super::Arity::Two => " a 1".into(),
    };
    let operand = match command {
        "date" => " +%s",
        "jq" => " .",
        "grep" | "egrep" | "fgrep" | "rg" => " x f",
        "cd" | "find" | "uniq" => "",
        _ => " f",
    };
    format!("{command} {target}{name}{value}{operand}")
}

#[test]
fn each_safe_option_alone_is_read_only_and_each_unsafe_option_and_abbreviation_is_not() {
    for row in TABLE.iter().filter(|r| r.command != "git") {
        let options = row.options();
        for opt in &options {
            let cmd = invocation(row.command, &opt.name, opt.arity);
            if opt.class == super::Class::Unsafe {
                assert!(!ro(&cmd), "{}: `{cmd}` must need approval", row.command);
                if !opt.name.starts_with("--") || row.command == "find" {
                    continue;
                }
                // Every prefix that names only this option is the option, as getopt_long reads it.
                for end in 3..opt.name.len() {
                    let prefix = &opt.name[..end];
                    let unique = options.iter().filter(|o| o.name.starts_with(prefix)).count() == 1;
                    let cmd = invocation(row.command, prefix, opt.arity);
                    if unique {
                        assert!(!ro(&cmd), "{}: abbreviation `{cmd}` must need approval", row.command);
                    }
                }
            } else if row.parse != super::Parse::NoOptions {
                assert!(ro(&cmd), "{}: `{cmd}` should be read-only: {:?}", row.command, analyze(&cmd).verdict);
            }
        }
    }
}

#[test]
fn an_ambiguous_or_unknown_abbreviation_needs_approval() {
    // --s is --set, --sort?... for sort: --s matches --sort, --stable, --sort=... ambiguous.
    assert!(!ro("sort --s a"));
    assert!(!ro("sort --bogus a"));
    assert!(!ro("ls --frobnicate"));
    assert_eq!(
        analyze("sort --co=x a").verdict,
        Err(NotReadOnly::Capability { command: "sort".into(), what: "--compress-program".into() })
    );
}

#[test]
fn bundled_short_options_are_read_as_getopt_reads_them() {
    assert!(!ro("sort -ruo out a"));
    assert!(!ro("sort -rooutfile a"));
    assert!(ro("sort -rk2 a"));
    // -k takes the rest of the cluster as its value, so the `o` is part of the key here.
    assert!(ro("sort -k1o a"));
    assert!(!ro("date -us 2020"));
}

#[test]
fn dash_and_double_dash_are_operands() {
    assert!(ro("cat - a"));
    assert!(ro("cat -- -o"));
    assert!(!ro("uniq - victim.txt"));
    assert!(!ro("uniq -- a b"));
    assert_eq!(paths("cat -- -o"), vec!["-o"]);
}

fn paths(cmd: &str) -> Vec<String> {
    analyze(cmd).reads.into_iter().map(|p| p.word).collect()
}

#[test]
fn path_operands_and_path_valued_options_are_exposed() {
    assert_eq!(paths("cat ../secret ~/.bashrc"), vec!["../secret", "~/.bashrc"]);
    assert_eq!(paths("grep -r x"), vec!["."]);
    assert_eq!(paths("grep x a b"), vec!["a", "b"]);
    assert_eq!(paths("grep -e x a"), vec!["a"]);
    assert_eq!(paths("grep -f pats a"), vec!["a", "pats"]);
    assert_eq!(paths("sort --random-source=list"), vec!["list"]);
    // A list of files read from a file hides its paths from the check: approval.
    assert!(!ro("sort --files0-from=list") && !ro("wc --files0-from=list") && !ro("file -f list"));
    assert_eq!(paths("find / -name x"), vec!["/"]);
    assert_eq!(paths("find . -newer /etc/shadow"), vec![".", "/etc/shadow"]);
    assert_eq!(paths("cat < /etc/shadow"), vec!["/etc/shadow"]);
    assert_eq!(paths("rg foo"), vec!["."]);
    assert_eq!(paths("git diff"), vec!["."]);
    assert_eq!(paths("echo /etc/shadow"), Vec::<String>::new());
    assert!(analyze("rg foo").reads[0].walks);
    assert!(!analyze("ls").reads[0].walks);
}

#[test]
fn cd_adds_the_directories_later_segments_may_run_in() {
    let analysis = analyze("cd / && ls");
    assert_eq!(analysis.reads[0].word, "/");
    assert_eq!(analysis.directories.last().expect("directories"), &vec![".".to_string(), "/".to_string()]);
    let ls = &analysis.reads[1];
    assert_eq!(analysis.directories[ls.directories], vec![".".to_string(), "/".to_string()]);
    assert!(!ro("cd -"));
    assert_eq!(analyze("cd").reads[0].word, "~");
}

#[test]
fn commands_that_read_the_environment_or_run_programs_need_approval() {
    for cmd in [
        "env",
        "printenv",
        "set",
        "export -p",
        "declare -p",
        "jq -n env",
        "jq -n '$ENV'",
        "xargs cat",
        "tee out",
        "sed -i s/a/b/ f",
        "sed -n 1p f",
        "awk '{system(\"id\")}' f",
        "echo $HOME",
        "cat {a,b}",
        "bash -c ls",
        "/bin/cat a",
        "git -c core.fsmonitor=x status",
        "git --config-env=core.pager=X log",
        "git difftool",
        "git log --output=x",
        "git log --outp=x",
        "git show --textconv HEAD",
        "git branch -D old",
    ] {
        assert!(!ro(cmd), "`{cmd}` must need approval");
    }
}

#[test]
fn chains_and_pipelines_need_every_segment_to_read() {
    assert!(ro("cd src && ls; cat a | grep x || echo none"));
    assert!(!ro("ls && rm -rf target"));
    assert!(!ro("cat a | tee b"));
    assert!(!ro("ls\nrm x"));
    assert!(!ro("ls & rm x"));
    assert!(!ro("echo hi > out.txt"));
    assert!(ro("ls 2>/dev/null"));
    assert!(!ro("echo $(rm x)"));
    assert!(!ro("diff <(ls a) <(ls b)"));
    assert!(!ro("cat <<EOF\nhi\nEOF"));
    assert!(!ro(""));
    assert!(ro("ls # list files > out"));
}

#[test]
fn the_test_bracket_is_test() {
    assert!(find_row("[").is_some());
    assert!(ro("[ -f a ]"));
}

#[test]
fn the_reading_commands_agents_run_most_stay_read_only() {
    for cmd in [
        "ls -la",
        "cat src/main.rs",
        "head -n 20 a.txt",
        "wc -l src/*.rs",
        "cat *.txt",
        "ls -la *",
        "grep -rn 'fn main' src",
        "grep -E 'a|b;c&&d' file",
        "rg foo",
        "find . -name '*.rs'",
        "pwd",
        "echo hello",
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1",
        "git diff --stat",
        "git branch",
        "git branch -a",
        "git show HEAD:src/lib.rs",
        "git rev-parse --show-toplevel",
        "git ls-files | wc -l",
        "git blame src/lib.rs",
        "tree -L 2",
        "du -sh .",
        "sort a.txt | uniq -c",
        "cat < input.txt",
        "grep x a 2>&1 | head",
    ] {
        assert!(ro(cmd), "`{cmd}` should be read-only: {:?}", analyze(cmd).verdict);
    }
}

#[test]
fn git_paths_inside_revisions_are_exposed_and_log_ranges_need_approval() {
    assert!(paths("git show HEAD:../secret").contains(&"../secret".to_string()));
    assert!(paths("git show :src/a.rs").contains(&"src/a.rs".to_string()));
    assert!(!ro("git log -L 1,2:../secret"));
    assert!(ro("git blame -L 1,5 src/a.rs"));
}

#[test]
fn without_the_test_switch_a_writing_command_is_not_read_only() {
    // The test environment never sets RELOOP_TEST_CLASSIFY_ALL_READ_ONLY; if it did, every
    // verdict in this file would be meaningless, so say so here.
    assert!(std::env::var_os(super::BYPASS_VAR).is_none(), "unset {} to run these tests", super::BYPASS_VAR);
    assert!(!super::classifier_bypassed());
    assert!(!ro("touch x"));
}

/// bash evaluates an array subscript as arithmetic wherever it takes a variable name, and
/// arithmetic runs `$(...)` even from a single-quoted word; builtins that assign change what the
/// rest of the line does. All of this is code, never reading.
#[test]
fn subscripts_arithmetic_and_assigning_builtins_are_code() {
    for cmd in [
        "test -v 'x[$(touch PWNED)]'",
        "test -R 'x[$(touch PWNED)]'",
        "test -n a -a -v 'x[$(touch PWNED)]'",
        "[ -v 'x[$(touch PWNED)]' ]",
        "[ ! -v x ]",
        "[[ -v 'x[$(touch PWNED)]' ]]",
        "[[ a -eq 'x[$(touch PWNED)]' ]]",
        "[[ -f a ]]",
        "printf -v 'x[$(touch PWNED)]' 1",
        "printf -v GIT_CONFIG_VALUE_0 'touch PWNED;false'; git status",
        "printf -v CDPATH /outside; cd vault && cat key.txt",
        "printf -vCDPATH /outside",
        "let 'x[$(touch PWNED)]=1'",
        "((x[1]=2))",
        "declare -a 'x[$(touch PWNED)]'",
        "typeset x=1",
        "local x=1",
        "read 'x[$(touch PWNED)]' < a",
        "mapfile -t 'x' < a",
        "readarray x < a",
        "unset 'x[$(touch PWNED)]'",
        "export CDPATH=/",
        "readonly x=1",
        "eval ls",
        "source a.sh",
        ". a.sh",
        "exec ls",
        "shopt -s nocaseglob",
        "alias ls=rm",
        "getopts a x",
        "CDPATH=/outside cd vault",
        "GIT_DIR=g git status",
        "GIT_CONFIG_COUNT=1 git status",
    ] {
        assert!(!ro(cmd), "`{cmd}` must need approval");
    }
    // test's integer comparisons only parse numbers (`integer expression expected`).
    for cmd in ["test 1 -eq 1", "[ a = b ]", "[ -f 'x[1]' ]", "printf '%s\\n' a"] {
        assert!(ro(cmd), "`{cmd}` should be read-only: {:?}", analyze(cmd).verdict);
    }
    // printf reads -v only before its format, but a -v anywhere is refused: cheaper than
    // reproducing bash's option scan.
    assert!(!ro("printf '%s' -v"));
}

/// A glob is as many words as files match, and a file may be named like an option.
#[test]
fn a_glob_is_refused_where_its_matches_could_change_the_verdict() {
    for cmd in [
        // Operands read by count or position: a second match is written, parsed as a filter...
        "uniq [ab].txt",
        "uniq .git/[Hc]*",
        "uniq -c a*",
        "cmp a*",
        "comm x*",
        "jq . *.json",
        "date +%s*",
        "less *.log",
        "cd [s]rc",
        "find [-]*",
        "find *",
        "find . -newer a*",
        "git diff *.rs",
        "git -C sr? status",
        "printf *",
        "test -f *",
        "[ -f a* ]",
        // An option injected by a file name: `--compress-program=sh`, `--files0-from=list`, `-r`...
        "sort -k 1 [-]*",
        "sort *",
        "wc -l *.rs",
        "wc ?",
        "grep x *",
        "grep -n x [!a]*",
        "rg x *",
        "du -sh *",
        "file *",
        "md5sum [[:punct:]]*",
        "diff * b",
        "tree [a-z]*",
    ] {
        assert!(!ro(cmd), "`{cmd}` must need approval");
    }
    for cmd in [
        // Quoted: one literal word.
        "find . -name '*.rs'",
        "grep x '*'",
        "uniq 'a[b]'",
        // Cannot start with `-`, on a command whose operands are all alike.
        "wc -l src/*.rs",
        "grep x ./*",
        "sort [ab].txt",
        "grep -n x [ab]*",
        // After `--` a match is an operand whatever its name.
        "grep -- x *",
        "sort -- *",
        // Every option of the command only changes what is shown.
        "cat *",
        "ls -la *",
        "head -n 3 [-]*",
        "echo *",
    ] {
        assert!(ro(cmd), "`{cmd}` should be read-only: {:?}", analyze(cmd).verdict);
    }
}

#[test]
fn git_pathspec_magic_is_refused_and_revision_paths_are_relative_to_the_repository_top() {
    for cmd in [
        "git show HEAD -- ':(top)secret.txt'",
        "git log -- ':(glob)**/secret*'",
        "git diff -- ':(icase)SECRET.TXT'",
        "git diff -- ':(exclude)a'",
        "git show ':/fix the bug'",
        "git log -- ':/secret.txt'",
        "git log -- ':!src'",
        "git log -- ':^src'",
        "git show 'HEAD@{2024-01-01 10:00'",
    ] {
        assert!(!ro(cmd), "`{cmd}` must need approval");
    }
    let top = |cmd: &str| -> Vec<(String, Option<String>)> {
        analyze(cmd).reads.into_iter().filter(|r| r.repository.is_some()).map(|r| (r.word, r.repository)).collect()
    };
    let at = |word: &str, dir: &str| (word.to_string(), Some(dir.to_string()));
    assert_eq!(top("git show HEAD:src/a.rs"), vec![at("src/a.rs", "."), at(".", ".")]);
    assert_eq!(top("git show :0:a.rs -- a.rs"), vec![at("a.rs", ".")]);
    assert_eq!(top("git -C sub show 'HEAD@{1}:a.rs' -- a.rs"), vec![at("a.rs", "sub")]);
    // `./` and `../` inside a revision are relative to where git runs.
    assert!(top("git show HEAD:./a.rs -- a.rs").is_empty());
    assert!(paths("git -C sub show HEAD:../a.rs -- x").contains(&"sub/../a.rs".to_string()));
    // Without pathspecs after `--`, diff, log and show may show any file of the repository.
    assert_eq!(top("git show HEAD"), vec![at(".", ".")]);
    assert_eq!(top("git diff"), vec![at(".", ".")]);
    assert!(top("git diff -- src").is_empty());
    assert!(top("git diff --no-index a b").is_empty());
}

#[test]
fn git_minus_c_moves_where_relative_paths_resolve() {
    assert_eq!(paths("git -C cfg diff --no-index secret.env /tmp/x"), vec!["cfg/secret.env", "/tmp/x", "cfg"]);
    assert!(paths("git -C a -C b blame f").contains(&"a/b/f".to_string()));
    assert!(paths("git -C a blame --contents=c f").contains(&"a/c".to_string()));
}

/// git reads `config` (with `diff.external`, textconv drivers, `core.fsmonitor`) from the
/// repository it is pointed at; only the workspace's own `.git` is known not to be the model's.
#[test]
fn git_pointed_at_another_repository_needs_approval() {
    for cmd in [
        "git --git-dir=g diff --no-index a b",
        "git --git-dir g status",
        "git --git-dir=./g/.git log",
        "git --git-d=g status",
        "git --work-tree=. status",
        "git --work-tree . --git-dir=.git status",
        "git --bare log",
        "git --namespace=x log",
        "GIT_DIR=g git status",
        "GIT_WORK_TREE=. git status",
        "cd src && git --git-dir=.git status",
        "cd src || git --git-dir=.git status",
        "git -C src --git-dir=.git status",
    ] {
        assert!(!ro(cmd), "`{cmd}` must need approval");
    }
    for cmd in ["git --git-dir=.git status", "git --git-dir .git log --oneline", "git --git-dir=./.git/ diff"] {
        assert!(ro(cmd), "`{cmd}` should be read-only: {:?}", analyze(cmd).verdict);
    }
}

#[test]
fn diff_and_cmp_walk_their_directory_operands() {
    for cmd in ["diff -N . src", "diff a src", "cmp . b", "diff --from-file=. a"] {
        assert!(analyze(cmd).reads.iter().all(|r| r.walks), "`{cmd}`: {:?}", analyze(cmd).reads);
    }
}
