//! docs/journal.md's table of behaviour flags matches the engine's flags, number and name.

use reloop_core::Flag;

/// docs/journal.md's table of flags has a row per flag, `| N \`snake_name\` |`, and no other.
#[test]
fn the_journal_doc_lists_every_flag_by_number_and_name() {
    let doc = include_str!("../../../docs/journal.md");
    let rows: Vec<(u32, String)> = doc
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.strip_prefix("| ")?.split_once(" `")?;
            Some((number.parse().ok()?, rest.split_once('`')?.0.to_string()))
        })
        .collect();
    let snake = |name: String| {
        name.chars().enumerate().fold(String::new(), |mut out, (i, c)| {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            out
        })
    };
    let mut flags: Vec<(u32, String)> =
        <Flag as strum::VariantArray>::VARIANTS.iter().map(|f| (f.number(), snake(format!("{f:?}")))).collect();
    flags.sort();
    assert_eq!(rows, flags);
}
