//! A token budget written in the prompt, as Claude Code reads it: `+500k` at the start or end,
//! or `use 2M tokens` / `spend 500k tokens` anywhere.

/// The budget the prompt asks for, in tokens.
pub fn parse_token_budget(prompt: &str) -> Option<u64> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let plus = |w: &str| w.strip_prefix('+').and_then(amount);
    if let Some(n) = words.first().and_then(|w| plus(w)).or_else(|| words.last().and_then(|w| plus(w))) {
        return Some(n);
    }
    words.windows(3).find_map(|w| {
        let verb = w[0].to_ascii_lowercase();
        let unit = w[2].trim_end_matches(|c: char| c.is_ascii_punctuation()).to_ascii_lowercase();
        ((verb == "use" || verb == "spend") && unit == "tokens").then(|| amount(w[1])).flatten()
    })
}

/// `500k` → 500000, `2M` → 2000000, `1.5m` → 1500000. A bare number is not a budget (`+5` in
/// `fix the +5 offset` is text), so the suffix is required.
fn amount(word: &str) -> Option<u64> {
    let word = word.trim_end_matches(['.', ',', '!']);
    let (digits, scale) = match word.chars().last()? {
        'k' | 'K' => (&word[..word.len() - 1], 1_000.0),
        'm' | 'M' => (&word[..word.len() - 1], 1_000_000.0),
        'b' | 'B' => (&word[..word.len() - 1], 1_000_000_000.0),
        _ => (word, 1.0),
    };
    let n: f64 = digits.parse().ok()?;
    (n.is_finite() && n > 0.0 && scale > 1.0).then(|| (n * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_token_budget;

    #[test]
    fn budgets_in_prompts() {
        assert_eq!(parse_token_budget("+500k refactor the parser"), Some(500_000));
        assert_eq!(parse_token_budget("refactor the parser +1.5m"), Some(1_500_000));
        assert_eq!(parse_token_budget("please use 2M tokens on this."), Some(2_000_000));
        assert_eq!(parse_token_budget("spend 300k tokens"), Some(300_000));
        assert_eq!(parse_token_budget("fix the +5 offset bug"), None);
        assert_eq!(parse_token_budget("use 3 tokens"), None);
        assert_eq!(parse_token_budget("检查登录模块"), None);
    }
}
