//! Where a Bash command's paths really lead: `~`, globs, `cd` and symlinks resolved, so the same
//! workspace boundary and deny rules that hold for Read hold for `cat`.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::workspace::canonicalize_lenient;
use crate::bash_classify::Analysis;
use crate::paths::normalize;
use crate::shell_lex::Lexed;

/// Most paths one glob may expand to before the command is taken as unresolvable.
const MAX_GLOB_MATCHES: usize = 1000;

/// A path a command may touch, canonical; `None` where the text cannot be resolved (`~user`).
pub(crate) type Resolved = Option<PathBuf>;

/// The paths `analysis` says the command reads, resolved against each directory the reading
/// segment may run in, with whether the command reads every file below them. `None` stands for
/// a path that cannot be resolved (`~user`, a glob with too many matches): it is inside no
/// workspace and, for deny rules, may be anything.
pub(crate) fn reads(analysis: &Analysis, cwd: &Path) -> Vec<(Resolved, bool)> {
    let mut out = Vec::new();
    for read in &analysis.reads {
        let directories = analysis.directories.get(read.directories).map(Vec::as_slice).unwrap_or(&[]);
        for base in directories.iter().flat_map(|dir| resolve(dir, cwd)) {
            let base = match (&base, &read.repository) {
                (Some(base), Some(dir)) => expand_home(dir).map(|dir| repository_top(&physical(&base.join(dir)))),
                (base, _) => base.clone(),
            };
            let Some(base) = base else {
                out.push((None, read.walks));
                continue;
            };
            for path in resolve(&read.word, &base) {
                out.push((path, read.walks));
            }
        }
    }
    out
}

/// The top of the git repository holding `dir` (the nearest directory with a `.git`), or `dir`
/// itself outside any repository, where git reads paths as given.
fn repository_top(dir: &Path) -> PathBuf {
    dir.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()).unwrap_or(dir).to_path_buf()
}

/// Every word of a command (and the value of every `--opt=value`), resolved as a path against
/// every directory the command may run in: what a deny rule is matched against, because a
/// command the table does not know may read or write any path it names. `None` where a word or
/// directory cannot be resolved.
pub(crate) fn named(command: &Lexed, analysis: &Analysis, cwd: &Path) -> Vec<Resolved> {
    let directories: Vec<Resolved> =
        analysis.directories.last().map(Vec::as_slice).unwrap_or(&[]).iter().flat_map(|d| resolve(d, cwd)).collect();
    let mut out = Vec::new();
    let redirects = command.inputs.iter().map(|(_, target)| target).chain(&command.outputs);
    for word in command.segments.iter().flatten().chain(redirects) {
        // `--opt=value` and `-ovalue` carry a value that may be a path; a bare option does not.
        let texts: Vec<&str> = match word.split_once('=') {
            Some((option, value)) if option.starts_with('-') => vec![value],
            _ if word.starts_with("--") => continue,
            _ if word.starts_with('-') => word.get(2..).into_iter().collect(),
            _ => vec![word.as_str()],
        };
        for text in texts.into_iter().filter(|t| !t.is_empty()) {
            for dir in &directories {
                match dir {
                    Some(dir) => out.extend(resolve(text, dir)),
                    None => out.push(None),
                }
            }
        }
    }
    out
}

/// `~` and `~/x` are under `$HOME`; `~user` cannot be known here.
fn expand_home(word: &str) -> Option<PathBuf> {
    if word == "~" || word.starts_with("~/") {
        let home = std::env::var_os("HOME")?;
        return Some(PathBuf::from(home).join(word.trim_start_matches('~').trim_start_matches('/')));
    }
    if word.starts_with('~') {
        return None;
    }
    Some(PathBuf::from(word))
}

/// One word as the paths it names: the literal path, and what its glob matches (bounded).
fn resolve(word: &str, base: &Path) -> Vec<Resolved> {
    match expand_braces(word) {
        Some(words) => words.iter().flat_map(|w| resolve_one(w, base)).collect(),
        None => vec![None],
    }
}

/// One brace-free word as the paths it names. A word holding a NUL (the classifier's
/// [`crate::bash_classify::UNKNOWN_DIRECTORY`]) names a place the text does not show.
fn resolve_one(word: &str, base: &Path) -> Vec<Resolved> {
    if word.contains('\0') {
        return vec![None];
    }
    let Some(expanded) = expand_home(word) else { return vec![None] };
    let joined = base.join(expanded);
    let mut out = vec![Some(physical(&joined))];
    if word.contains(['*', '?', '[']) {
        match expand_glob(&joined) {
            Some(matches) => out.extend(matches.into_iter().map(|p| Some(physical(&p)))),
            None => out.push(None),
        }
    }
    out
}

/// bash's brace expansion of one word (`{a,b}`, nested, `{1..3}`, `{a..c}`, `{1..9..2}`),
/// leftmost first, as the paths a deny rule must see: `cat {secret,x}.txt` reads `secret.txt`.
/// `None` past [`MAX_GLOB_MATCHES`] words.
fn expand_braces(word: &str) -> Option<Vec<String>> {
    let mut done = Vec::new();
    let mut pending = vec![word.to_string()];
    while let Some(word) = pending.pop() {
        match first_brace(&word) {
            Some((open, close, alternatives)) => {
                for alternative in alternatives.iter().rev() {
                    pending.push(format!("{}{alternative}{}", &word[..open], &word[close + 1..]));
                }
            }
            None => done.push(word),
        }
        if done.len() + pending.len() > MAX_GLOB_MATCHES {
            return None;
        }
    }
    Some(done)
}

/// The leftmost brace expression of `word` that expands: its `{` and `}` byte offsets and the
/// words it becomes. `{a}` and an unmatched brace stay literal, as in bash.
fn first_brace(word: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = word.as_bytes();
    for open in (0..bytes.len()).filter(|&i| bytes[i] == b'{') {
        let (mut depth, mut commas) = (0usize, Vec::new());
        let mut close = None;
        for (at, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(at);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(at),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if !commas.is_empty() {
            let mut cuts = vec![open];
            cuts.extend(&commas);
            cuts.push(close);
            let alternatives = cuts.windows(2).map(|w| word[w[0] + 1..w[1]].to_string()).collect();
            return Some((open, close, alternatives));
        }
        if let Some(sequence) = sequence(&word[open + 1..close]) {
            return Some((open, close, sequence));
        }
    }
    None
}

/// `1..5`, `5..1..2`, `01..10` (zero-padded) or `a..e`: the words of a bash sequence
/// expression (cut one past [`MAX_GLOB_MATCHES`]), or `None` when it is not one.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to) = (parts.first()?, parts.get(1)?);
    let step = match parts.get(2) {
        Some(step) => step.parse::<i64>().ok()?.unsigned_abs().max(1),
        None => 1,
    };
    if parts.len() > 3 {
        return None;
    }
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let width =
            if from.starts_with(['0', '-']) || to.starts_with(['0', '-']) { from.len().max(to.len()) } else { 0 };
        // Past the bound, one word more than it is enough for the caller to give up.
        let count = (a.abs_diff(b) / step + 1).min(MAX_GLOB_MATCHES as u64 + 1);
        // Every term lies between `a` and `b`; i128 keeps the products from overflowing.
        let n = |i: u64| {
            let offset = i128::from(i) * i128::from(step);
            if a <= b {
                i128::from(a) + offset
            } else {
                i128::from(a) - offset
            }
        };
        return Some((0..count).map(|i| format!("{:0width$}", n(i))).collect());
    }
    let (a, b) = (single_char(from)?, single_char(to)?);
    let (lo, hi) = (a.min(b), a.max(b));
    let mut letters: Vec<String> = (lo..=hi).step_by(step as usize).map(|c| c.to_string()).collect();
    if a > b {
        letters.reverse();
    }
    Some(letters)
}

fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let c = chars.next().filter(char::is_ascii_alphabetic)?;
    chars.next().is_none().then_some(c)
}

/// Where the kernel takes `path`: `..` after a symlink goes up from the link's target, not
/// from the link (`cd link && cat ../x`), so an existing path is canonicalized as it stands.
/// A path that does not exist cannot be read; it is folded lexically, then resolved leniently.
fn physical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| canonicalize_lenient(&normalize(path)))
}

/// Expands a glob component by component as bash does (a leading `.` is matched only by a
/// pattern that starts with one), up to [`MAX_GLOB_MATCHES`] paths. Such a pattern is also
/// tried against `.` and `..`: bash 5.2 skips them, older shells (and `shopt -u globskipdots`)
/// do not, and `.*/x` would then read `../x`.
fn expand_glob(pattern: &Path) -> Option<Vec<PathBuf>> {
    let mut current = vec![PathBuf::from("/")];
    for component in pattern.components().skip(1) {
        let part = component.as_os_str().to_string_lossy();
        if component == std::path::Component::ParentDir || component == std::path::Component::CurDir {
            current = current.into_iter().map(|p| p.join(part.as_ref())).collect();
            continue;
        }
        if !part.contains(['*', '?', '[']) {
            current = current.into_iter().map(|p| p.join(part.as_ref())).collect();
            continue;
        }
        let matcher = GlobBuilder::new(&bash_pattern(&part))
            .literal_separator(true)
            .backslash_escape(false)
            .build()
            .ok()?
            .compile_matcher();
        let mut next = Vec::new();
        for dir in &current {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            let dots = [".", ".."].into_iter().filter(|_| part.starts_with('.')).map(String::from);
            let names = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned());
            for name in dots.chain(names) {
                if name.starts_with('.') && !part.starts_with('.') {
                    continue;
                }
                if matcher.is_match(name.as_str()) {
                    next.push(dir.join(&name));
                    if next.len() > MAX_GLOB_MATCHES {
                        return None;
                    }
                }
            }
        }
        current = next;
    }
    Some(current)
}

/// One component of a bash glob as a globset pattern matching at least what bash matches.
/// globset knows no POSIX classes (`[[:alpha:]]`), equivalence classes (`[[=s=]]`, which in a
/// UTF-8 locale also match accented letters) or collating symbols (`[[.s.]]`), so a bracket
/// expression holding one becomes `?`: any one character, a superset, which is safe for both
/// the workspace check and deny rules. An unclosed `[` is a literal in bash; `{` and `}` are
/// literals in a glob (brace expansion is the shell's, earlier).
fn bash_pattern(component: &str) -> String {
    let chars: Vec<char> = component.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '[' => match bracket_end(&chars, i) {
                Some(end) => {
                    let inner: String = chars[i + 1..end].iter().collect();
                    if inner.contains("[:") || inner.contains("[=") || inner.contains("[.") {
                        out.push('?');
                    } else {
                        out.push('[');
                        out.push_str(&inner);
                        out.push(']');
                    }
                    i = end + 1;
                    continue;
                }
                None => out.push_str("[[]"),
            },
            '{' => out.push_str("[{]"),
            '}' => out.push_str("[}]"),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Where the bracket expression opened at `open` closes, as bash reads it: a `]` right after
/// `[`, `[!` or `[^` is a member, and `[:...:]`, `[=...=]`, `[. ... .]` are single members.
fn bracket_end(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match (chars[i], chars.get(i + 1)) {
            (']', _) => return Some(i),
            ('[', Some(&kind @ (':' | '=' | '.'))) => {
                let close =
                    (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == kind && chars[j + 1] == ']')?;
                i = close + 2;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash_classify::analyze;

    #[test]
    fn globs_expand_to_the_files_they_match_and_skip_dot_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::write(root.join("secret.txt"), "s").expect("write");
        std::fs::write(root.join(".hidden"), "h").expect("write");
        let found: Vec<PathBuf> = resolve("secr*", &root).into_iter().flatten().collect();
        assert!(found.contains(&root.join("secret.txt")), "{found:?}");
        let all: Vec<PathBuf> = resolve("*", &root).into_iter().flatten().collect();
        assert!(!all.contains(&root.join(".hidden")), "{all:?}");
        // An older bash matches `..` with `.*`: the parent counts.
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        let dots: Vec<PathBuf> = resolve(".*/x", &root.join("sub")).into_iter().flatten().collect();
        assert!(dots.contains(&root.join("x")), "{dots:?}");
    }

    #[test]
    fn braces_expand_as_bash_expands_them() {
        let words = |w: &str| expand_braces(w).expect("bounded");
        assert_eq!(words("{secret,x}.txt"), ["secret.txt", "x.txt"]);
        assert_eq!(words("a{b,{c,d}e}f"), ["abf", "acef", "adef"]);
        assert_eq!(words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(words("{3..1..2}"), ["3", "1"]);
        assert_eq!(words("{08..10}"), ["08", "09", "10"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("{a}{,b}"), ["{a}", "{a}b"]);
        assert_eq!(words("{unclosed,"), ["{unclosed,"]);
        assert_eq!(expand_braces("{1..100000}"), None);
        assert_eq!(words("{-9223372036854775808..9223372036854775807..9223372036854775807}").len(), 3);
        assert_eq!(expand_braces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}"), None);
    }

    #[test]
    fn posix_classes_in_brackets_match_at_least_what_bash_matches() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::write(root.join("secret.txt"), "s").expect("write");
        std::fs::write(root.join("{a}"), "s").expect("write");
        for word in
            ["[[=s=]]ecret.txt", "[[:alpha:]]ecret.txt", "[[.s.]]ecret.txt", "[![:digit:]]ecret.txt", "[]s]ecret*"]
        {
            let found: Vec<PathBuf> = resolve(word, &root).into_iter().flatten().collect();
            assert!(found.contains(&root.join("secret.txt")), "{word}: {found:?}");
        }
        let braces: Vec<PathBuf> = resolve("{a}*", &root).into_iter().flatten().collect();
        assert!(braces.contains(&root.join("{a}")), "{braces:?}");
        assert_eq!(bash_pattern("[ab]x[!c]"), "[ab]x[!c]");
        assert_eq!(bash_pattern("a[b"), "a[[]b");
    }

    #[test]
    fn reads_follow_cd_and_home() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let paths: Vec<Resolved> =
            reads(&analyze("cd / && cat etc/hostname"), &root).into_iter().map(|r| r.0).collect();
        assert!(paths.contains(&Some(PathBuf::from("/etc/hostname"))), "{paths:?}");
        // A globbed cd target is every directory it matches.
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        let paths: Vec<Resolved> =
            reads(&analyze("cd [s]rc && cat secret.txt"), &root).into_iter().map(|r| r.0).collect();
        assert!(paths.contains(&Some(root.join("src/secret.txt"))), "{paths:?}");
        assert_eq!(resolve("~bob/x", &root), vec![None]);
    }

    #[test]
    fn dot_dot_after_a_symlink_climbs_from_its_target_as_the_kernel_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join("ws")).expect("mkdir");
        std::fs::create_dir_all(root.join("elsewhere/deep")).expect("mkdir");
        std::fs::write(root.join("elsewhere/secret"), "s").expect("write");
        std::os::unix::fs::symlink(root.join("elsewhere/deep"), root.join("ws/link")).expect("symlink");
        let ws = root.join("ws");
        let paths: Vec<Resolved> = reads(&analyze("cd link && cat ../secret"), &ws).into_iter().map(|r| r.0).collect();
        assert!(paths.contains(&Some(root.join("elsewhere/secret"))), "{paths:?}");
        assert_eq!(resolve("link/../secret", &ws), vec![Some(root.join("elsewhere/secret"))]);
    }
}
