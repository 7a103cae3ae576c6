//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: configuration, the SDK channel, result mapping and URL redaction at the bottom,
//! each on its own; a connected server above them; the tools it offers on top.

use reloop_layout::checked_crate;

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-mcp");
    // The reader saw the graph it checks: a server is reached as configured, over a transport
    // that may be the SDK's channel, and its tools call it.
    assert!(graph["server"].contains("config") && graph["server"].contains("channel"), "{graph:?}");
    assert!(graph["tools"].contains("server"), "{graph:?}");
    assert!(graph["config"].is_empty(), "the configuration is read knowing no server: {graph:?}");
}
