//! jq filters in the read-only table: which of them read what a read-only command must not.

/// Words of a jq filter that read the environment, file names or module files.
pub(crate) fn jq_filter_danger(filter: &str) -> Option<String> {
    const DANGEROUS: &[&str] = &["env", "$ENV", "input_filename", "import", "include", "get_search_list", "$__loc__"];
    let chars: Vec<char> = filter.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphabetic() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `.env` is a field, not the builtin.
            let field = start > 0 && chars[start - 1] == '.';
            if !field && DANGEROUS.contains(&word.as_str()) {
                return Some(word);
            }
        } else {
            i += 1;
        }
    }
    None
}
