//! The table behind [`crate::is_read_only_command`]: one row per command a model may run
//! without approval, with every option of it that matters. It is data only, so that it can be
//! audited row by row and depends on nothing: the option parsing that reads it is in
//! [`crate::bash_options`], what the special commands do with their operands in
//! [`crate::bash_commands`] and [`crate::bash_git`].
//!
//! Notation of the option lists: `-n` is a flag, `-k=` takes a value (attached `-k2` or separate
//! `-k 2`; long `--key=2` or `--key 2`), `--color=?` takes only an attached value, `--arg==`
//! takes two words. A sigil before an option says what it does beyond reading and showing:
//! `<` its value is a file the command reads (checked like an operand), `^` it supplies the
//! pattern (so the first operand is a path too), `^<` it supplies the pattern from a file, `*`
//! it makes the command read every file below its directory operands. `unsafe_` lists what
//! makes the command write, run a program, set the clock or read the environment; they are
//! listed (not just left out) so that an abbreviation such as `--outp` resolves to them exactly
//! as the program resolves it. An option in neither list needs approval.
//!
//! Options that take a list of files from a file (`--files0-from`, `file -f`, `md5sum -c`) are
//! unsafe: the paths they read are not in the command, so the workspace check cannot see them
//! (in acceptEdits the model could write the list).
//!
//! Options that follow symlinks while walking (`grep -R`, `rg -L`, `diff -r`) are unsafe too: a
//! link inside the workspace would lead the walk outside it.
//!
//! git is a command of commands: its global options and each subcommand that only reads
//! ([`GIT_SUBCOMMANDS`]) are rows of their own, at the end.
//!
//! Left out on purpose, so they always need approval: `sed` (`-i`, `w` and `e` commands), `awk`
//! (`system()`, `print >`), `tee`, `xargs`, `env`, `printenv`, `set`, `export`, `declare`,
//! interpreters, and anything that reaches the network.

/// How a command reads its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parse {
    /// GNU `getopt_long`: options and operands in any order, `--` ends options.
    Gnu,
    /// POSIX/bash builtins: options stop at the first operand.
    Posix,
    /// Every word is an operand (`echo`, `printf`, `test`).
    NoOptions,
}

/// What the operands of a command are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Not files (`echo`, `seq`, `basename`).
    Text,
    /// Files or directories the command reads.
    Paths,
    /// At most this many files read; one more is a file written (`uniq IN OUT`).
    AtMostPaths(usize),
    /// A pattern, then files (`grep`), unless an option gave the pattern.
    PatternThenPaths,
    /// `+FORMAT` only; any other operand sets the clock (`date MMDDhhmm`).
    DateFormat,
    /// A jq filter (checked for `env`, `$ENV`, `input_filename`, modules), then files.
    JqFilter,
    /// Files; a `+command` operand runs a pager command.
    PagerFiles,
    /// `cd DIR`.
    ChangeDirectory,
    /// Paths, then a find expression (see [`crate::bash_commands::find_expression`]).
    Find,
    /// A git subcommand (see [`crate::bash_git::git`]).
    Git,
    /// A `test` or `[` expression: paths, except that `-v NAME` and `-R NAME` evaluate an array
    /// subscript in NAME as arithmetic, running any `$(...)` it holds.
    TestExpression,
    /// A printf format and its arguments, except that `-v NAME` assigns NAME: a subscript in it
    /// runs code, and a variable such as `CDPATH` or `GIT_CONFIG_VALUE_0` changes what later
    /// commands of the line do.
    PrintfFormat,
}

/// One command of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    pub command: &'static str,
    /// Options that only change what is read or shown (with the sigils above).
    pub safe: &'static str,
    /// Options that write, run programs, set the clock or read the environment.
    pub unsafe_: &'static str,
    pub operands: Operands,
    pub parse: Parse,
    /// `-5` is an option (`head -5`, `git log -5`).
    pub numeric_option: bool,
    /// Without path operands the command reads the current directory (`ls`, `rg foo`).
    pub default_dot: bool,
    /// It reads every file below its directory operands (`rg`).
    pub walks: bool,
    /// Hand-written invocations that are read-only, then ones that are not; the tests run them.
    #[cfg_attr(not(test), allow(dead_code))]
    pub examples: (&'static [&'static str], &'static [&'static str]),
}

pub(crate) const BASE: Row = Row {
    command: "",
    safe: "",
    unsafe_: "",
    operands: Operands::Paths,
    parse: Parse::Gnu,
    numeric_option: false,
    default_dot: false,
    walks: false,
    examples: (&[], &[]),
};

const GREP_OPTIONS: &str = "-i -y -v -w -x -c -l -L -n -h -H -o -q -s -E -F -G -P -z -Z -a -I -b -T -U \
    --ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches \
    --files-without-match --line-number --no-filename --with-filename --only-matching --quiet --silent \
    --no-messages --extended-regexp --fixed-strings --basic-regexp --perl-regexp --null-data --null --text \
    --byte-offset --initial-tab --binary --line-buffered --color=? --colour=? -A= -B= -C= -m= \
    --after-context= --before-context= --context= --max-count= --include= --exclude= --exclude-dir= \
    --label= --binary-files= -D= --devices= ^-e= ^--regexp= ^<-f= ^<--file= <--exclude-from= \
    *-r *--recursive *-d= *--directories=";

/// grep options that follow symlinks while walking, so they can read outside the workspace.
const GREP_UNSAFE: &str = "-R --dereference-recursive";

const SUMS: &str = "-b -t -z --binary --text --tag --zero --ignore-missing --quiet --status --strict -w --warn";

/// The commands that may run without approval, alphabetically.
pub(crate) const TABLE: &[Row] = &[
    Row {
        command: "basename",
        safe: "-a -s= -z --multiple --suffix= --zero",
        operands: Operands::Text,
        examples: (&["basename src/a.rs .rs"], &[]),
        ..BASE
    },
    Row {
        command: "cat",
        safe: "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number \
        --squeeze-blank --show-ends --show-tabs --show-nonprinting",
        examples: (&["cat -n a.txt", "cat - a.txt", "cat -- -weird"], &["cat --output=x a", "cat -o x"]),
        ..BASE
    },
    Row {
        command: "cd",
        operands: Operands::ChangeDirectory,
        parse: Parse::Posix,
        safe: "-L -P",
        examples: (&["cd src", "cd src && ls"], &["cd -", "cd a b"]),
        ..BASE
    },
    Row {
        command: "cmp",
        safe: "-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet \
        --silent",
        operands: Operands::AtMostPaths(2),
        examples: (&["cmp a b"], &[]),
        // With a directory operand it compares the files inside: a walk, as `grep -r`.
        walks: true,
        ..BASE
    },
    Row {
        command: "column",
        safe: "-t -s= -o= -c= -x -n -e --table --separator= --output-separator= \
        --output-width= --fillrows --table-noheadings",
        examples: (&["column -t -s , a.csv", "column -o ' | ' -t a"], &["column --bogus a"]),
        ..BASE
    },
    Row {
        command: "comm",
        safe: "-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total \
        --zero-terminated",
        operands: Operands::AtMostPaths(2),
        examples: (&["comm -12 a b"], &[]),
        ..BASE
    },
    Row {
        command: "cut",
        safe: "-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= \
        --complement --only-delimited --output-delimiter= --zero-terminated",
        examples: (&["cut -d: -f1 a", "cut -f 2 --output-delimiter=, a"], &[]),
        ..BASE
    },
    Row {
        command: "date",
        safe: "-d= -I=? -R -u --date= --iso-8601=? --rfc-email --rfc-3339= --utc --universal \
        --debug <-f= <--file= <-r= <--reference=",
        unsafe_: "-s= --set=",
        operands: Operands::DateFormat,
        examples: (
            &["date", "date +%s", "date -u -d @0 +%F", "date --iso=seconds"],
            &["date 010100002030", "date -s 2020-01-01", "date --se=now", "date --s now", "date -us now"],
        ),
        ..BASE
    },
    Row {
        command: "df",
        safe: "-a -B= -h -H -i -k -l -P -t= -T -x= --all --block-size= --human-readable --si \
        --inodes --local --no-sync --sync --output=? --portability --print-type --type= --exclude-type= --total",
        examples: (&["df -h .", "df --output=source,pcent ."], &[]),
        ..BASE
    },
    Row {
        command: "diff",
        safe: "-q -s -c -C= -u -U= -e -n -y -W= -l -t -T -N -x= -S= -i -E -Z -b -w -B -I= -a \
        -d -p -F= --brief --report-identical-files --context=? --unified=? --ed --normal --rcs --side-by-side \
        --width= --left-column --suppress-common-lines --show-c-function --show-function-line= --label= \
        --expand-tabs --initial-tab --tabsize= --suppress-blank-empty --paginate --no-dereference --new-file \
        --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case --exclude= \
        --starting-file= --ignore-case --ignore-tab-expansion --ignore-trailing-space --ignore-space-change \
        --ignore-all-space --ignore-blank-lines --ignore-matching-lines= --text --minimal --horizon-lines= \
        --speed-large-files --strip-trailing-cr --color=? --palette= \
        <-X= <--exclude-from= <--from-file= <--to-file=",
        // diff follows symlinks while walking a directory: it could read outside the workspace.
        unsafe_: "-r --recursive",
        examples: (&["diff -u a b", "diff --from-file=a b c"], &["diff --bogus a b", "diff -ru a b"]),
        // With a directory operand it compares the files inside: a walk, as `grep -r`.
        walks: true,
        ..BASE
    },
    Row { command: "dirname", safe: "-z --zero", operands: Operands::Text, examples: (&["dirname a/b"], &[]), ..BASE },
    Row {
        command: "du",
        safe: "-a -b -c -D -h -H -k -L -l -m -P -s -S -x -0 -B= -d= -t= --all --apparent-size \
        --block-size= --bytes --total --dereference-args --human-readable --inodes --dereference --count-links \
        --max-depth= --null --no-dereference --separate-dirs --si --summarize --threshold= --time=? \
        --time-style= --one-file-system --exclude= <-X= <--exclude-from=",
        unsafe_: "--files0-from=",
        default_dot: true,
        examples: (&["du -sh .", "du -d 1 src"], &["du --bogus"]),
        ..BASE
    },
    Row {
        command: "echo",
        operands: Operands::Text,
        parse: Parse::NoOptions,
        examples: (&["echo hello", "echo --output=x"], &["echo hi > out.txt"]),
        ..BASE
    },
    Row {
        command: "egrep",
        safe: GREP_OPTIONS,
        unsafe_: GREP_UNSAFE,
        operands: Operands::PatternThenPaths,
        examples: (&["egrep 'a|b' f"], &["egrep --bogus x"]),
        ..BASE
    },
    Row { command: "false", operands: Operands::Text, parse: Parse::NoOptions, examples: (&["false"], &[]), ..BASE },
    Row {
        command: "fgrep",
        safe: GREP_OPTIONS,
        unsafe_: GREP_UNSAFE,
        operands: Operands::PatternThenPaths,
        examples: (&["fgrep -n x f"], &[]),
        ..BASE
    },
    Row {
        command: "file",
        safe: "-b -i -L -h -k -r -s -N -n -0 -E --brief --mime --mime-type --mime-encoding \
        --dereference --no-dereference --keep-going --raw --special-files --no-pad --print0 --separator= -F= \
        --exclude= -e= --extension --apple <-m= <--magic-file=",
        unsafe_: "-C --compile -p --preserve-date -z -Z --uncompress --uncompress-noreport -f= --files-from=",
        examples: (&["file a.txt", "file -b --mime-type a"], &["file -C -m magic", "file --comp", "file -p a"]),
        ..BASE
    },
    Row {
        command: "find",
        safe: FIND_SAFE,
        unsafe_: FIND_UNSAFE,
        operands: Operands::Find,
        default_dot: true,
        examples: (
            &[
                "find . -name '*.rs'",
                "find src -type f -newer a.txt",
                "find -L . -maxdepth 2 \\( -name a -o -name b \\)",
            ],
            &["find . -delete", "find . -exec rm {} ;", "find . -fprint out", "find . -fls x", "find . -ok rm {} ;"],
        ),
        ..BASE
    },
    Row {
        command: "git",
        operands: Operands::Git,
        examples: (
            &["git status", "git log --oneline -5", "git diff HEAD~1 --stat", "git -C src log"],
            &[
                "git commit -m x",
                "git -c core.pager=sh log",
                "git diff --output=p",
                "git diff --out=p",
                "git log --ext-diff",
                "git --exec-path=/tmp log",
                "git branch new",
            ],
        ),
        ..BASE
    },
    Row {
        command: "grep",
        safe: GREP_OPTIONS,
        unsafe_: GREP_UNSAFE,
        operands: Operands::PatternThenPaths,
        numeric_option: true,
        examples: (&["grep -rn 'fn main' src", "grep -e a -e b f", "grep -5 x f"], &["grep --bogus x f"]),
        ..BASE
    },
    Row {
        command: "head",
        safe: "-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated",
        numeric_option: true,
        examples: (&["head -n 20 a", "head -5 a", "head -c10 a"], &["head --bogus a"]),
        ..BASE
    },
    Row {
        command: "id",
        safe: "-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero",
        operands: Operands::Text,
        examples: (&["id -u"], &[]),
        ..BASE
    },
    Row {
        command: "jq",
        safe: "-n -r -j -a -c -s -e -S -C -M -R -0 --tab --indent= --null-input --raw-output \
        --join-output --ascii-output --compact-output --slurp --exit-status --sort-keys --color-output \
        --monochrome-output --seq --stream --stream-errors --raw-input --raw-output0 --args --jsonargs \
        --arg== --argjson== <--slurpfile== <--rawfile==",
        unsafe_: "-f= --from-file= -L= --library-path=",
        operands: Operands::JqFilter,
        examples: (
            &["jq .name a.json", "jq -r '.[] | .id' a.json", "jq -n --arg x 1 '$x'", "jq '.env' a.json"],
            &[
                "jq -n env",
                "jq -n '$ENV.HOME'",
                "jq -n '$ ENV.GITHUB_TOKEN'",
                "jq -n '$__loc__'",
                "jq input_filename a",
                "jq -f prog.jq a",
                "jq 'import \"m\" as m; .' a",
            ],
        ),
        ..BASE
    },
    Row {
        command: "less",
        safe: "-N -S -R -r -X -F -i -I -n -g -G -M -m -E -e -f -q -Q -s -u -U -w -W -x= -y= \
        -z= -j= -b= -h= -p= --LINE-NUMBERS --chop-long-lines --RAW-CONTROL-CHARS --raw-control-chars --no-init \
        --quit-if-one-screen --ignore-case --IGNORE-CASE --line-numbers --squeeze-blank-lines --pattern=",
        unsafe_: "-o= -O= --log-file= --LOG-FILE= -k= --lesskey-file= -t= --tag= -T= --tag-file=",
        operands: Operands::PagerFiles,
        examples: (&["less -N a.txt"], &["less -o log a", "less --log=x a", "less +!id a"]),
        ..BASE
    },
    Row {
        command: "ls",
        safe: "-a -A -b -B -c -C -d -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -s -S \
        -t -u -U -v -x -X -Z -1 -I= -w= -T= --all --almost-all --author --escape --block-size= \
        --ignore-backups --color=? --directory --dired --classify=? --file-type --format= --full-time \
        --group-directories-first --no-group --human-readable --si --dereference-command-line \
        --dereference-command-line-symlink-to-dir --hide= --hyperlink=? --indicator-style= --inode --ignore= \
        --kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars \
        --quote-name --quoting-style= --reverse --size --sort= --time= --time-style= --tabsize= --width= \
        --context --zero -R --recursive",
        default_dot: true,
        examples: (&["ls -la", "ls -R src", "ls --color=never"], &["ls --bogus"]),
        ..BASE
    },
    Row {
        command: "md5sum",
        safe: SUMS,
        unsafe_: "-c --check",
        examples: (&["md5sum a"], &["md5sum -c list", "md5sum --ch list"]),
        ..BASE
    },
    Row {
        command: "nl",
        safe: "-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= \
        --section-delimiter= --footer-numbering= --header-numbering= --line-increment= --join-blank-lines= \
        --number-format= --no-renumber --number-separator= --starting-line-number= --number-width=",
        examples: (&["nl -ba a"], &[]),
        ..BASE
    },
    Row {
        command: "od",
        safe: "-A= -j= -N= -S= -t= -v -w=? -a -b -c -d -f -i -l -o -s -x --address-radix= \
        --skip-bytes= --read-bytes= --strings=? --format= --output-duplicates --width=? --endian= --traditional",
        examples: (&["od -c a", "od -An -tx1 a"], &[]),
        ..BASE
    },
    Row {
        command: "printf",
        operands: Operands::PrintfFormat,
        parse: Parse::NoOptions,
        examples: (
            &["printf '%s\\n' a b", "printf -- '-%s' a"],
            &["printf -v x 1", "printf -vx 1", "printf -v 'x[$(touch PWNED)]' 1"],
        ),
        ..BASE
    },
    Row { command: "pwd", safe: "-L -P", operands: Operands::Text, examples: (&["pwd"], &[]), ..BASE },
    Row {
        command: "readlink",
        safe: "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing \
        --canonicalize-missing --no-newline --quiet --silent --verbose --zero",
        examples: (&["readlink -f a"], &[]),
        ..BASE
    },
    Row {
        command: "realpath",
        safe: "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing \
        --logical --physical --quiet --strip --no-symlinks --zero <--relative-to= <--relative-base=",
        examples: (&["realpath a"], &[]),
        ..BASE
    },
    Row {
        command: "rg",
        safe: "-i -S -s -w -x -v -c -l -n -N -H -I -F -o -U -P -a -b -q -0 -u -uu -uuu \
        --ignore-case --smart-case --case-sensitive --word-regexp --line-regexp --invert-match --count \
        --count-matches --files-with-matches --files-without-match --line-number --no-line-number \
        --with-filename --no-filename --fixed-strings --only-matching --multiline --multiline-dotall --pcre2 \
        --text --byte-offset --quiet --null --hidden --no-hidden --no-ignore --no-ignore-vcs \
        --no-ignore-dot --no-ignore-parent --no-require-git --no-config --no-messages --json --files --heading \
        --no-heading --column --vimgrep --trim --stats --passthru --one-file-system --sort= --sortr= \
        --color= --colors= -g= --glob= --iglob= -t= -T= --type= --type-not= --type-add= -A= -B= -C= \
        --after-context= --before-context= --context= -m= --max-count= --max-depth= -d= --max-filesize= \
        -r= --replace= -M= --max-columns= --max-columns-preview --context-separator= \
        --field-match-separator= --engine= --type-list -j= --threads= \
        ^-e= ^--regexp= ^<-f= ^<--file= <--ignore-file=",
        unsafe_: "--pre= --pre-glob= -z --search-zip --hostname-bin= -L --follow",
        operands: Operands::PatternThenPaths,
        default_dot: true,
        walks: true,
        examples: (
            &["rg foo", "rg -n 'fn main' src", "rg -e a -e b"],
            &["rg --pre ./x foo", "rg --pr=./x foo", "rg -z foo", "rg --hostname-bin=./x foo"],
        ),
        ..BASE
    },
    Row {
        command: "seq",
        safe: "-f= -s= -w --format= --separator= --equal-width",
        operands: Operands::Text,
        examples: (&["seq 1 10", "seq -s , 3"], &[]),
        ..BASE
    },
    Row {
        // Claude Code runs it as read-only, in a concurrent batch (tests/print/recorded/*/concurrent_results).
        command: "sleep",
        operands: Operands::Text,
        examples: (&["sleep 2", "sleep 0.5"], &[]),
        ..BASE
    },
    Row {
        command: "sha1sum",
        safe: SUMS,
        unsafe_: "-c --check",
        examples: (&["sha1sum a"], &["sha1sum -c l"]),
        ..BASE
    },
    Row {
        command: "sha256sum",
        safe: SUMS,
        unsafe_: "-c --check",
        examples: (&["sha256sum a"], &["sha256sum --check l"]),
        ..BASE
    },
    Row {
        command: "sha512sum",
        safe: SUMS,
        unsafe_: "-c --check",
        examples: (&["sha512sum a"], &["sha512sum -bc l"]),
        ..BASE
    },
    Row {
        command: "sort",
        safe: "-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k= -t= -S= --parallel= \
        --batch-size= --debug --key= --field-separator= --buffer-size= --ignore-leading-blanks \
        --dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort --ignore-nonprinting \
        --month-sort --numeric-sort --random-sort --reverse --sort= --version-sort --check=? --merge --stable \
        --unique --zero-terminated <--random-source=",
        unsafe_: "-o= --output= -T= --temporary-directory= --compress-program= --files0-from=",
        examples: (
            &["sort -u a", "sort -k 2 -t , a", "sort -S 64k a"],
            &[
                "sort -o out a",
                "sort -uo out a",
                "sort -oout a",
                "sort --output=o a",
                "sort --outp=o a",
                "sort --ou o a",
                "sort -S 64k --compress-prog=sh a",
                "sort -T /tmp a",
            ],
        ),
        ..BASE
    },
    Row {
        command: "stat",
        safe: "-L -f -t --dereference --file-system --terse -c= --format= --printf= --cached=",
        examples: (&["stat -c %s a"], &[]),
        ..BASE
    },
    Row {
        command: "tail",
        safe: "-c= -n= -q -v -z -f -F -s= --bytes= --lines= --quiet --silent --verbose \
        --zero-terminated --follow=? --retry --pid= --sleep-interval= --max-unchanged-stats=",
        numeric_option: true,
        examples: (&["tail -n 5 a", "tail -5 a"], &[]),
        ..BASE
    },
    Row {
        command: "test",
        parse: Parse::NoOptions,
        operands: Operands::TestExpression,
        examples: (&["test -f a", "test 1 -eq 2"], &["test -v 'x[$(touch PWNED)]'", "test -R x"]),
        ..BASE
    },
    Row {
        command: "tr",
        safe: "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1",
        operands: Operands::Text,
        examples: (&["tr a-z A-Z < a"], &[]),
        ..BASE
    },
    Row {
        command: "tree",
        safe: "-a -d -l -f -x -L= -P= -I= -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r \
        -n -C -J -X --prune --noreport --si --du --dirsfirst --filesfirst --charset= --filelimit= --timefmt= \
        --sort= --gitignore --matchdirs --ignore-case --fromfile",
        unsafe_: "-o= -R -H= --output=",
        default_dot: true,
        examples: (&["tree -L 2", "tree -a src"], &["tree -o out", "tree -R -H x"]),
        ..BASE
    },
    Row { command: "true", operands: Operands::Text, parse: Parse::NoOptions, examples: (&["true"], &[]), ..BASE },
    Row {
        command: "type",
        safe: "-a -f -P -p -t",
        operands: Operands::Text,
        parse: Parse::Posix,
        examples: (&["type ls"], &[]),
        ..BASE
    },
    Row {
        command: "uname",
        safe: "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release \
        --kernel-version --machine --processor --hardware-platform --operating-system",
        operands: Operands::Text,
        examples: (&["uname -a"], &[]),
        ..BASE
    },
    Row {
        command: "uniq",
        safe: "-c -d -D -u -i -z -f= -s= -w= --count --repeated --all-repeated=? --group=? \
        --unique --ignore-case --zero-terminated --skip-fields= --skip-chars= --check-chars=",
        operands: Operands::AtMostPaths(1),
        examples: (
            &["uniq -c a", "sort a | uniq", "uniq 'a*'"],
            &["uniq a b", "uniq - victim.txt", "uniq -c a /tmp/x", "uniq [ab].txt", "uniq .git/[Hc]*"],
        ),
        ..BASE
    },
    Row {
        command: "wc",
        safe: "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total=",
        unsafe_: "--files0-from=",
        examples: (&["wc -l a"], &["wc --files0-from=list", "wc --files0=list"]),
        ..BASE
    },
    Row { command: "which", safe: "-a", operands: Operands::Text, examples: (&["which cargo"], &[]), ..BASE },
    Row { command: "whoami", operands: Operands::Text, examples: (&["whoami"], &[]), ..BASE },
];

/// `[ ... ]` is `test`.
const TEST_BRACKET: Row = Row {
    command: "[",
    parse: Parse::NoOptions,
    operands: Operands::TestExpression,
    examples: (&["[ -f a ]"], &["[ -v 'x[$(touch PWNED)]' ]"]),
    ..BASE
};

/// The row for a command name.
pub(crate) fn find_row(name: &str) -> Option<&'static Row> {
    if name == "[" {
        return Some(&TEST_BRACKET);
    }
    TABLE.iter().find(|row| row.command == name)
}

/// find's options, tests and actions that only read and print; `<` marks a file whose metadata is
/// read. find takes no abbreviations.
const FIND_SAFE: &str = "-H -L -P -D= -O=? -print -print0 -ls -prune -quit -true -false -empty -readable \
    -writable -executable -nogroup -nouser -depth -d -mount -xdev -noleaf -follow -ignore_readdir_race \
    -noignore_readdir_race -daystart -regextype= -name= -iname= -path= -ipath= -wholename= -iwholename= \
    -regex= -iregex= -lname= -ilname= -type= -xtype= -size= -mtime= -mmin= -atime= -amin= -ctime= -cmin= \
    -used= -user= -group= -uid= -gid= -perm= -links= -inum= -maxdepth= -mindepth= -fstype= -printf= -context= \
    -not -a -and -o -or <-newer= <-anewer= <-cnewer= <-samefile=";

/// find's actions that write files or run programs.
const FIND_UNSAFE: &str = "-exec= -execdir= -ok= -okdir= -delete -fprint= -fprint0= -fprintf== -fls=";

/// git's own options before the subcommand. `-C` moves where relative paths resolve;
/// `--git-dir` is handled apart (see [`crate::bash_git::git`]).
pub(crate) const GIT_GLOBAL: &str = "--no-pager -p --paginate --no-replace-objects --literal-pathspecs \
    --no-optional-locks <-C= --git-dir=";
/// `-c` and friends set config that can run programs; `--work-tree`, `--bare` and a `--git-dir`
/// elsewhere than the workspace's own `.git` make git read a repository (and its `config`, with
/// `diff.external`, textconv drivers, `core.fsmonitor`) that the model may have written.
pub(crate) const GIT_GLOBAL_UNSAFE: &str =
    "-c= --config-env= --exec-path=? --namespace= --super-prefix= --list-cmds= --work-tree= --bare";

/// A git subcommand that only reads: a row of its own, since git is a command of commands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GitSubcommand {
    pub name: &'static str,
    /// Option lists (the notation above) that only change what is read or shown.
    pub safe: &'static [&'static str],
    /// It may show any file below its directory operands.
    pub walks: bool,
}

/// The git subcommands that only read, each with its options; the operands are revisions and
/// paths, all checked as paths (a revision such as `HEAD~1` resolves inside the workspace).
/// Every one also takes [`GIT_EVERY_SUBCOMMAND_UNSAFE`] and [`GIT_EVERY_SUBCOMMAND`].
pub(crate) const GIT_SUBCOMMANDS: &[GitSubcommand] = &[
    GitSubcommand { name: "diff", safe: &[GIT_DIFF], walks: true },
    GitSubcommand { name: "log", safe: &[GIT_DIFF, GIT_LOG], walks: true },
    GitSubcommand { name: "show", safe: &[GIT_DIFF, GIT_LOG], walks: true },
    GitSubcommand {
        name: "status",
        safe: &["-s --short -b --branch --show-stash --porcelain=? --long -v --verbose -u=? \
            --untracked-files=? --ignored=? --ignore-submodules=? -z --column=? --no-column --ahead-behind \
            --no-ahead-behind --renames --no-renames --find-renames=?"],
        walks: false,
    },
    GitSubcommand {
        name: "blame",
        safe: &["-L= -l -t -s -e -w -M=? -C=? --porcelain --line-porcelain --incremental -c --root \
            --show-stats -n --show-number -f --show-name --date= --abbrev=? --since= -p --progress \
            --no-progress --score-debug <--contents= <-S= <--ignore-revs-file= --ignore-rev= --color-lines \
            --color-by-age"],
        walks: true,
    },
    GitSubcommand {
        name: "ls-files",
        safe: &["-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others \
            --ignored --stage --unmerged --killed --directory --no-empty-directory --exclude= -x= \
            --exclude-standard --full-name --abbrev=? --error-unmatch --recurse-submodules --eol \
            --deduplicate --format= <-X= <--exclude-from= <--exclude-per-directory="],
        walks: false,
    },
    GitSubcommand {
        name: "rev-parse",
        safe: &["--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir \
            --is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository \
            --abbrev-ref=? --short=? --verify -q --quiet --symbolic --symbolic-full-name --all --branches=? \
            --tags=? --remotes=? --git-common-dir --show-superproject-working-tree --default= --sq --not \
            --path-format= --show-object-format=? --revs-only --no-revs --flags --no-flags"],
        walks: false,
    },
    // Listing only: an operand would create a branch, so the row takes none (see
    // [`crate::bash_git::git`]).
    GitSubcommand {
        name: "branch",
        safe: &["-a -r -v -vv -l --all --remotes --list --show-current --verbose --no-color \
            --color=? --contains=? --no-contains=? --merged=? --no-merged=? --sort= --format= --column=? \
            --no-column --points-at= -i --ignore-case --abbrev=? --no-abbrev"],
        walks: false,
    },
];

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
/// Options of `git log` and `show` that choose, order and format the commits shown.
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
/// Options every git subcommand is checked against as unsafe. `-L range:file` names a file
/// inside its value, which the path check would not see.
pub(crate) const GIT_EVERY_SUBCOMMAND_UNSAFE: &str =
    "--output= --output-indicator-new= --ext-diff --textconv --show-signature -L=";
/// Options every git subcommand takes: `-O FILE` reads a file (the order a diff shows files in).
pub(crate) const GIT_EVERY_SUBCOMMAND: &str = "<-O=";
