//! What the table's special commands do with their words, beyond what their options say:
//! find's expression (tests and actions in any order), and the operand roles of
//! [`Operands`]: a date's `+FORMAT` (any other operand sets the clock), `uniq IN OUT` (the last
//! operand is written), a jq filter, a pager's `+command`, `cd`'s one target, `test -v`,
//! `printf -v`. Git, being a command of commands, has its own module ([`crate::bash_git`]).

use crate::bash_options::{Arity, Class, Parsed};
use crate::bash_table::{Operands, Row};
use crate::bash_verdict::NotReadOnly;

/// What a command's operands make it do, once they are judged read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OperandEffect {
    /// It reads these paths, and every file below them when `walks`.
    Reads { paths: Vec<String>, walks: bool },
    /// `cd DIR`: later segments may run in DIR.
    ChangeDirectory(String),
}

/// Judges the operands by the row's kind: a refusal, or what they make the command read.
pub(crate) fn operand_effect(row: &Row, parsed: &Parsed) -> Result<OperandEffect, NotReadOnly> {
    let capability = |what: String| Err(NotReadOnly::Capability { command: row.command.to_string(), what });
    let walks = row.walks || parsed.walks;
    let mut paths: Vec<String> = Vec::new();
    match row.operands {
        Operands::Text => {}
        Operands::Paths => paths.extend(parsed.operands.iter().cloned()),
        Operands::AtMostPaths(n) => {
            if parsed.operands.len() > n {
                return capability(format!("operand `{}` (written to)", parsed.operands[n]));
            }
            paths.extend(parsed.operands.iter().cloned());
        }
        Operands::PatternThenPaths => {
            let skip = usize::from(!parsed.pattern_given);
            paths.extend(parsed.operands.iter().skip(skip).cloned());
        }
        Operands::DateFormat => {
            if let Some(setting) = parsed.operands.iter().find(|o| !o.starts_with('+')) {
                return capability(format!("operand `{setting}` (sets the clock)"));
            }
        }
        Operands::JqFilter => {
            let Some((filter, files)) = parsed.operands.split_first() else {
                return Ok(OperandEffect::Reads { paths, walks });
            };
            if let Some(word) = crate::bash_jq::jq_filter_danger(filter) {
                return capability(format!("`{word}` in the filter"));
            }
            paths.extend(files.iter().cloned());
        }
        Operands::PagerFiles => {
            if let Some(command) = parsed.operands.iter().find(|o| o.starts_with('+')) {
                return capability(format!("operand `{command}` (runs a pager command)"));
            }
            paths.extend(parsed.operands.iter().cloned());
        }
        Operands::ChangeDirectory => return cd_target(parsed).map(OperandEffect::ChangeDirectory),
        Operands::TestExpression => {
            if let Some(test) = parsed.operands.iter().find(|o| matches!(o.as_str(), "-v" | "-R")) {
                return capability(format!("`{test}` (evaluates an array subscript, which may run code)"));
            }
            paths.extend(parsed.operands.iter().cloned());
        }
        Operands::PrintfFormat => {
            // bash's printf reads `-v NAME` and `-vNAME` before its format; refuse it anywhere.
            if let Some(assign) = parsed.operands.iter().find(|o| o.starts_with("-v")) {
                return capability(format!("`{assign}` (assigns a shell variable)"));
            }
        }
        Operands::Find | Operands::Git => paths.extend(parsed.operands.iter().cloned()),
    }
    let reads_dot = match row.operands {
        // grep without -r reads its input; with -r (and rg always) the current directory.
        Operands::PatternThenPaths => walks,
        _ => row.default_dot,
    };
    if paths.is_empty() && reads_dot {
        paths.push(".".to_string());
    }
    Ok(OperandEffect::Reads { paths, walks })
}

/// Where `cd` goes: `cd` alone goes home; `cd -` goes to a place the text does not show, and
/// more than one operand is not a `cd` the check can follow.
fn cd_target(parsed: &Parsed) -> Result<String, NotReadOnly> {
    match parsed.operands.as_slice() {
        [] => Ok("~".to_string()),
        [dir] if dir != "-" => Ok(dir.clone()),
        _ => Err(NotReadOnly::Capability { command: "cd".into(), what: "a target the text does not show".into() }),
    }
}

/// Parses `find [-H|-L|-P] [-D x] [-Ox] [path...] [expression]`.
pub(crate) fn find_expression(row: &Row, args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let options = row.options();
    let unknown = |option: &str| NotReadOnly::UnknownOption { command: "find".into(), option: option.to_string() };
    let is_expression_start = |a: &str| (a.starts_with('-') && a != "-") || matches!(a, "(" | ")" | "!" | ",");
    let mut i = 0;
    while i < args.len() && matches!(args[i].as_str(), "-H" | "-L" | "-P" | "-D") | args[i].starts_with("-O") {
        i += if args[i] == "-D" { 2 } else { 1 };
    }
    while i < args.len() && !is_expression_start(&args[i]) {
        out.operands.push(args[i].clone());
        i += 1;
    }
    while i < args.len() {
        let word = args[i].as_str();
        i += 1;
        if matches!(word, "(" | ")" | "!" | ",") {
            continue;
        }
        // -newerXY takes a reference (a file unless Y is t).
        if word.len() == 8 && word.starts_with("-newer") {
            let value = args.get(i).ok_or_else(|| unknown(word))?;
            if !word.ends_with('t') {
                out.paths.push((value.clone(), false));
            }
            i += 1;
            continue;
        }
        let opt = options.iter().find(|o| o.name == word).ok_or_else(|| unknown(word))?;
        let count = match opt.arity {
            Arity::None | Arity::Optional => 0,
            Arity::Required => 1,
            Arity::Two => 2,
        };
        // -exec and -ok run to `;` or `+`, but they are refused before that matters.
        let values = args.get(i..i + count).ok_or_else(|| unknown(word))?;
        i += count;
        match opt.class {
            Class::Unsafe => return Err(NotReadOnly::Capability { command: "find".into(), what: word.to_string() }),
            Class::ReadsPath => out.paths.extend(values.last().map(|v| (v.clone(), false))),
            _ => {}
        }
    }
    Ok(())
}
