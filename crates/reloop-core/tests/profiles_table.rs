//! `docs/profiles.md` holds the table rule × profile; it is generated from the profiles' data,
//! so the documented rules are the code's. `RELOOP_BLESS=1` rewrites it.

use reloop_core::profile::ProfileId;

const START: &str = "<!-- profiles-table:start -->\n";
const END: &str = "<!-- profiles-table:end -->";

fn table() -> String {
    let mut out = String::from("| rule |");
    for id in ProfileId::ALL {
        out.push_str(&format!(" `{}` |", id.name()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(ProfileId::ALL.len()));
    out.push('\n');
    let columns: Vec<Vec<(&str, String)>> = ProfileId::ALL.iter().map(|id| id.profile().rules()).collect();
    for (row, (rule, _)) in columns[0].iter().enumerate() {
        out.push_str(&format!("| {rule} |"));
        for column in &columns {
            assert_eq!(column[row].0, *rule, "every profile lists the same rules in the same order");
            out.push_str(&format!(" {} |", column[row].1.replace('|', "\\|").replace('\n', "\\n")));
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_documented_profile_table_is_the_code_s() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/profiles.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = doc.split_once(START).expect("the start marker");
    let (current, tail) = rest.split_once(END).expect("the end marker");
    let wanted = table();
    if std::env::var("RELOOP_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, format!("{head}{START}{wanted}{END}{tail}")).unwrap();
        return;
    }
    assert_eq!(current, wanted, "docs/profiles.md's table is stale: run with RELOOP_BLESS=1");
}
