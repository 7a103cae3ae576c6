//! The bundled demo: Claude Code's familiar "check the login module" session, scripted.

use std::path::PathBuf;

pub const PROMPT: &str = "检查登录模块";
pub const CASSETTE: &str = include_str!("demo/cassette.json");
const LOGIN_TS: &str = include_str!("demo/login.ts");

/// Creates the demo's workspace holding `src/auth/login.ts` and a README, and keeps it so the
/// session can be inspected (and rerun) afterwards: `at` (`.reloop/demo` beside the default
/// journal, written afresh by each run, so runs leave nothing behind elsewhere), or a new
/// temporary folder when the journal is elsewhere.
pub fn workspace(at: Option<&std::path::Path>) -> std::io::Result<PathBuf> {
    let dir = match at {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.to_path_buf()
        }
        None => tempfile::Builder::new().prefix("reloop-demo-").tempdir()?.keep(),
    };
    std::fs::create_dir_all(dir.join("src/auth"))?;
    std::fs::write(dir.join("src/auth/login.ts"), LOGIN_TS)?;
    std::fs::write(dir.join("README.md"), "# shop\n\nA small web shop.\n")?;
    std::fs::canonicalize(dir)
}
