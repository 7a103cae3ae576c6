//! Where scripts/sdk-setup.sh installed the SDKs (RELOOP_SDK_DIR), shared by the tests that run
//! the SDKs' own programs: tests/sdk_examples.rs and tests/sdk_e2e.rs.

use std::path::{Path, PathBuf};

/// The SDK install when it holds every file of `needs`; `None` skips the test (with a notice
/// naming `what`), unless RELOOP_REQUIRE_SDK=1, where a missing install fails it.
pub fn sdk_dir(needs: &[&str], what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("RELOOP_SDK_DIR").map(PathBuf::from);
    let ready = dir.as_ref().filter(|d| needs.iter().all(|f| d.join(f).exists()));
    match ready {
        Some(d) => Some(d.clone()),
        None if std::env::var("RELOOP_REQUIRE_SDK").as_deref() == Ok("1") => {
            panic!("{what} are not installed (RELOOP_SDK_DIR={dir:?}): run `bash scripts/sdk-setup.sh`")
        }
        None => {
            eprintln!("notice: {what} skipped: run `bash scripts/sdk-setup.sh` and set RELOOP_SDK_DIR");
            None
        }
    }
}

/// The Claude Code binary the Python SDK's wheel bundles.
pub fn bundled_claude(sdk: &Path) -> Option<PathBuf> {
    std::fs::read_dir(sdk.join("venv/lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/claude_agent_sdk/_bundled/claude"))
        .find(|p| p.exists())
}
