//! The bundled demo: Claude Code's familiar "check the login module" session, scripted.

use std::path::PathBuf;

pub const PROMPT: &str = "检查登录模块";
pub const CASSETTE: &str = include_str!("demo/cassette.json");
const LOGIN_TS: &str = include_str!("demo/login.ts");

/// Creates a fresh workspace holding `src/auth/login.ts` and a README, and keeps it so the
/// session can be inspected afterwards.
pub fn workspace() -> std::io::Result<PathBuf> {
    let dir = tempfile::Builder::new().prefix("reloop-demo-").tempdir()?.keep();
    std::fs::create_dir_all(dir.join("src/auth"))?;
    std::fs::write(dir.join("src/auth/login.ts"), LOGIN_TS)?;
    std::fs::write(dir.join("README.md"), "# shop\n\nA small web shop.\n")?;
    std::fs::canonicalize(dir)
}
