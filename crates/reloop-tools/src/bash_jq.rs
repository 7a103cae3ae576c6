//! jq filters in the read-only table: which of them read what a read-only command must not.
//!
//! The check reads identifiers the way jq's lexer can see them and refuses a filter naming one
//! that reads the environment (`env`, `$ENV`), file names (`input_filename`, `$__loc__`) or
//! module files (`import`, `include`, `modulemeta`, the search list). jq lets whitespace and
//! `#` comments (which jq 1.7 continues across a backslash-newline) stand between `$` and a
//! name, so `$ ENV` and `$ # c` newline `ENV` are `$ENV`: hence a name counts wherever it
//! appears, with or without `$`, in code, comments or strings alike. A string or comment that
//! merely mentions `env` needs approval too; that costs an approval, never a leak.

/// Names that read the environment, file names or module files, with or without `$`.
const DANGEROUS: &[&str] = &[
    "env",
    "ENV",
    "input_filename",
    "__loc__",
    "import",
    "include",
    "modulemeta",
    "get_search_list",
    "get_prog_origin",
    "get_jq_origin",
];

/// The first name in `filter` that reads what a read-only command must not, if any.
pub(crate) fn jq_filter_danger(filter: &str) -> Option<String> {
    let bytes = filter.as_bytes();
    let word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if !word_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word_byte(bytes[i]) {
            i += 1;
        }
        // `.env` is a field, not the builtin; `..env` is not a field, so only one dot counts.
        let field = start >= 1 && bytes[start - 1] == b'.' && !(start >= 2 && bytes[start - 2] == b'.');
        // jq reads `1env` as the number 1 then `env`, so every name starting after a digit counts.
        let candidates = (start..i)
            .filter(|&at| at == start || (bytes[at - 1].is_ascii_digit() && !bytes[at].is_ascii_digit()))
            .map(|at| &filter[at..i]);
        for (n, name) in candidates.enumerate() {
            if !(n == 0 && field) && DANGEROUS.contains(&name) {
                return Some(name.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::jq_filter_danger as danger;

    #[test]
    fn names_that_read_the_environment_or_files_are_found_however_jq_is_spelled() {
        for filter in [
            "env",
            "env.HOME",
            "$ENV.GITHUB_TOKEN",
            "$ ENV.GITHUB_TOKEN",
            "$\tENV",
            "$ # a comment\nENV.HOME",
            "$ # continued \\\n comment\n ENV",
            "$__loc__",
            "$ __loc__",
            "input_filename",
            "[.[] | input_filename]",
            "import \"m\" as m; .",
            "include \"m\"; .",
            "modulemeta",
            "get_search_list",
            "\"\\(env.HOME)\"",
            "foo::env",
            "1 as $x | env",
            "1env",
            "..env",
            ".a|env",
            "{a: $ENV}",
        ] {
            assert!(danger(filter).is_some(), "`{filter}` reads the environment or files");
        }
    }

    #[test]
    fn fields_and_longer_names_are_not_the_builtins() {
        for filter in [".env", ".ENV", ".a.env", "environment", ".[] | .input_filename_x", "$x", "envy", "_env"] {
            assert_eq!(danger(filter), None, "`{filter}`");
        }
    }
}
