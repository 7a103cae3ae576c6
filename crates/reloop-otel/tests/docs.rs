//! docs/otel.md's tables say what the mapper writes: every attribute key it uses and every span
//! name, no more and no fewer.

use std::collections::BTreeSet;
use std::path::Path;

use reloop_otel::semconv::{ATTRIBUTE_KEYS, SPAN_NAMES};

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/otel.md")).unwrap()
}

/// The backticked first column of the table under `heading`.
fn first_column(doc: &str, heading: &str) -> BTreeSet<String> {
    let section = doc.split(heading).nth(1).unwrap_or_else(|| panic!("no {heading}"));
    let section = section.split("\n## ").next().unwrap_or_default();
    section.lines().filter(|l| l.starts_with("| `")).filter_map(|l| l.split('`').nth(1)).map(str::to_string).collect()
}

#[test]
fn the_attribute_table_lists_every_key_the_mapper_writes() {
    let documented = first_column(&doc(), "## Attributes");
    let used: BTreeSet<String> = ATTRIBUTE_KEYS.iter().map(|k| k.to_string()).collect();
    assert_eq!(documented, used);
}

#[test]
fn the_span_table_lists_every_span_name() {
    let documented = first_column(&doc(), "## Spans");
    let used: BTreeSet<String> = SPAN_NAMES.iter().map(|k| k.to_string()).collect();
    assert_eq!(documented, used);
}
