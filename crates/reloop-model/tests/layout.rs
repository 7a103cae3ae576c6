//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: the provider contract and the limits at the bottom; the SSE framing and the HTTP
//! plumbing above them; the Anthropic wire format (the stream assembler, the response object)
//! above those, shared by the OpenAI provider and by the cassettes; a cassette's one response
//! above that; the cassette file and the scripted provider on top.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reloop_layout::{checked_crate, graph};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-model");
    // The reader saw the graph it checks: the scripted provider reads cassettes, whose
    // responses are read through the Anthropic wire format.
    assert!(graph["scripted"].contains("cassette") && graph["scripted"].contains("cassette_file"), "{graph:?}");
    assert!(graph["cassette_file"].contains("cassette"), "{graph:?}");
    assert!(graph["cassette"].contains("anthropic"), "{graph:?}");
    assert!(graph["openai"].contains("anthropic"), "{graph:?}");
}

#[test]
fn the_wire_formats_know_nothing_of_cassettes() {
    let graph = graph(&src());
    let scripting: BTreeSet<String> = ["scripted", "cassette", "cassette_file"].into_iter().map(String::from).collect();
    for wire in ["anthropic", "openai", "http", "sse"] {
        let reaches: Vec<&String> = graph[wire].intersection(&scripting).collect();
        assert!(reaches.is_empty(), "{wire} uses {reaches:?}: the cassettes sit above the wire formats");
    }
}
