//! How a Bash command is cut into the simple commands that permission rules are matched against.
//!
//! Claude Code is aware of shell operators: `Bash(safe-cmd:*)` must not let `safe-cmd && rm -rf x`
//! through, so a command is split on `&&`, `||`, `;`, `|`, `&` and newlines and every piece is
//! judged on its own. Anything whose effect cannot be read off the text (command or process
//! substitution, subshells, `$` expansion, heredocs, output redirected into a file, an unclosed
//! quote) makes the command *opaque*: allow rules then never apply to it, while deny rules are
//! still matched against every piece that could be recognised, including the insides of `$(...)`.

use crate::shell_lex::{lex, Options};

/// A command cut into simple commands, each a list of unquoted words without redirections;
/// `opaque` is set when the text holds a construct whose effect the words do not show.
pub(crate) use crate::shell_lex::Lexed as Command;

/// How rules read a command with the shared lexer: as the shell does, `\` before a newline joins
/// the lines, and any `$` expansion hides what runs.
const LEX: Options = Options { line_continuation: true, dollar_is_opaque: true };

/// Splits `text` into simple commands. Never fails: what is not understood sets
/// [`Command::opaque`].
pub(crate) fn parse(text: &str) -> Command {
    lex(text, LEX)
}

/// Words of a rule's command text (`git diff` in `Bash(git diff:*)`), unquoted the same way as
/// the commands they are compared with.
pub(crate) fn words(text: &str) -> Vec<String> {
    parse(text).segments.into_iter().flatten().collect()
}

/// Quotes `words` back into a command line that a shell (and [`crate::is_read_only_command`])
/// reads as exactly these words. A word that was a glob (`globbed`, from [`Command::globbed`])
/// keeps its `*`, `?` and `[` unquoted, so the classifier judges the glob the shell will expand,
/// not a literal word.
pub(crate) fn quote_segment(words: &[String], globbed: &[bool]) -> String {
    let quote_glob = |word: &str| -> String {
        word.chars()
            .map(|c| match c {
                '*' | '?' | '[' => c.to_string(),
                '\'' => "\\'".to_string(),
                _ => format!("'{c}'"),
            })
            .collect()
    };
    let quoted = words.iter().enumerate().map(|(i, w)| {
        if globbed.get(i).copied().unwrap_or(false) {
            quote_glob(w)
        } else {
            quote_word(w)
        }
    });
    quoted.collect::<Vec<_>>().join(" ")
}

fn quote_word(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Leading `NAME=value` words, which set the environment of the command that follows them.
pub(crate) fn skip_assignments(words: &[String]) -> &[String] {
    let is_assignment = |w: &String| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    let skip = words.iter().take_while(|w| is_assignment(w)).count();
    &words[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(text: &str) -> Vec<String> {
        parse(text).segments.iter().map(|s| s.join(" ")).collect()
    }

    #[test]
    fn operators_split_and_quotes_do_not() {
        assert_eq!(segs("git diff && npm test; ls | wc -l"), ["git diff", "npm test", "ls", "wc -l"]);
        assert_eq!(segs("grep 'a && b' f"), ["grep a && b f"]);
        assert!(!parse("git diff HEAD 2>&1 >/dev/null").opaque);
        assert_eq!(segs("git diff HEAD 2>&1"), ["git diff HEAD"]);
    }

    #[test]
    fn hidden_effects_are_opaque_but_still_split_for_deny_rules() {
        let cmd = parse("git diff $(rm -rf x)");
        assert!(cmd.opaque);
        assert_eq!(segs("git diff $(rm -rf x)"), ["git diff", "rm -rf x"]);
        for text in ["git diff > out", "echo `id`", "cat <<EOF", "echo \"$HOME\"", "echo 'open", "(ls)"] {
            assert!(parse(text).opaque, "{text}");
        }
    }

    #[test]
    fn quoting_round_trips_words() {
        let words = vec!["echo".to_string(), "it's a b".to_string()];
        assert_eq!(parse(&quote_segment(&words, &[])).segments, vec![words]);
    }

    #[test]
    fn a_glob_stays_a_glob_when_quoted_back() {
        let cmd = parse("uniq [ab].txt 'lit*' it\\'s*");
        let quoted = quote_segment(&cmd.segments[0], &cmd.globbed[0]);
        let again = parse(&quoted);
        assert_eq!(again.segments, cmd.segments);
        assert_eq!(again.globbed, vec![vec![false, true, false, true]]);
    }

    #[test]
    fn leading_assignments_are_skipped() {
        let words: Vec<String> = ["FOO=1", "A_B=x=y", "rm", "-rf"].iter().map(|s| s.to_string()).collect();
        assert_eq!(skip_assignments(&words), &words[2..]);
    }
}
