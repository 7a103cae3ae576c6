//! Where Claude Code keeps a session's files: `<config dir>/projects/<project dir name>/`, the
//! name made from the session's working directory the way Claude Code makes it, so the Agent
//! SDKs' session readers (which compute the same name) find what reloop writes.

/// Claude Code's cap on a project folder's name before it is cut and given a hash.
const MAX_NAME: usize = 200;

/// The folder name of the project at `cwd`: every character but ASCII letters and digits becomes
/// `-`; a name longer than 200 is cut to 200 and given `-` and a hash of the whole path. Claude
/// Code is JavaScript, so "character" and "length" are UTF-16 code units (a character outside
/// the Basic Multilingual Plane gives two dashes), and the hash is its 32-bit string hash in
/// base 36.
pub fn project_dir_name(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let sanitized: String = units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    if units.len() <= MAX_NAME {
        return sanitized;
    }
    format!("{}-{}", &sanitized[..MAX_NAME], base36(js_hash(&units)))
}

/// JavaScript's `h = (h << 5) - h + c; h |= 0` over the code units, made positive.
fn js_hash(units: &[u16]) -> u64 {
    let h = units.iter().fold(0i32, |h, &u| h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u)));
    u64::from(h.unsigned_abs())
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    out.into_iter().map(char::from).collect()
}

/// The id a subagent's transcript is filed under (`agent-<id>.jsonl`): the one its task lines
/// and its handed-back report name.
pub use reloop_core::profile::agent_id;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_path_keeps_its_letters_and_digits_and_dashes_the_rest() {
        assert_eq!(project_dir_name("/tmp/reloop-cc-project"), "-tmp-reloop-cc-project");
        assert_eq!(project_dir_name("/home/a.b/C_1"), "-home-a-b-C-1");
        // One BMP character is one dash; one outside it is two (UTF-16).
        assert_eq!(project_dir_name("/é"), "--");
        assert_eq!(project_dir_name("/😀"), "---");
    }

    #[test]
    fn a_long_path_is_cut_at_200_and_hashed_as_the_sdk_computes_it() {
        let long = format!("/{}", "x".repeat(250));
        let name = project_dir_name(&long);
        assert!(name.starts_with(&format!("-{}", "x".repeat(199))), "{name}");
        // The Python SDK's _simple_hash of the same path.
        assert_eq!(&name[200..], "-v734pd", "{name}");
    }
}
