//! 2.1.332 saves each image an MCP tool answers with to a file in the session's folder beside its
//! transcript (`<session>/tool-results/mcp-SERVER-blob-MS-RANDOM.EXT`) and follows the image
//! block with a text block `[Image: source: PATH]` (recorded, `sdk_wire/mcp_result`); the model
//! and the app's `user` line get both. The profile says whether (`mcp_image_saved`), the driver
//! where ([`reloop_tools::ToolContext::results_dir`]). The result is journaled as it was sent,
//! so a replay needs no file.

use std::path::Path;

use base64::Engine;
use serde_json::{json, Value};

/// The image blocks of `blocks`, each saved under `dir` and followed by its note. An image that
/// cannot be saved (bad base64, a folder that cannot be made) is kept without a note.
pub(crate) fn saved(blocks: Vec<Value>, dir: &Path, server: &str) -> Vec<Value> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        let note = (block["type"] == "image").then(|| save(&block, dir, server)).flatten();
        out.push(block);
        if let Some(path) = note {
            out.push(json!({"type": "text", "text": format!("[Image: source: {path}]")}));
        }
    }
    out
}

/// Writes one image block's bytes; its path.
fn save(block: &Value, dir: &Path, server: &str) -> Option<String> {
    let source = &block["source"];
    let bytes = base64::engine::general_purpose::STANDARD.decode(source["data"].as_str()?).ok()?;
    let extension = source["media_type"].as_str()?.strip_prefix("image/")?;
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    let random: String = reloop_driver::new_session_id().chars().filter(char::is_ascii_alphanumeric).take(6).collect();
    let name: String =
        server.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    std::fs::create_dir_all(dir).ok()?;
    let path = dir.join(format!("mcp-{name}-blob-{millis}-{random}.{extension}"));
    std::fs::write(&path, bytes).ok()?;
    Some(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIXEL: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    #[test]
    fn an_image_is_saved_and_noted_after_its_block() {
        let dir = tempfile::tempdir().unwrap();
        let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}});
        let blocks = vec![json!({"type": "text", "text": "a red pixel"}), image.clone()];
        let out = saved(blocks, &dir.path().join("tool-results"), "fixture");
        assert_eq!(out.len(), 3);
        assert_eq!(out[1], image);
        let text = out[2]["text"].as_str().unwrap();
        let path = text.strip_prefix("[Image: source: ").unwrap().strip_suffix(']').unwrap();
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("mcp-fixture-blob-") && name.ends_with(".png"), "{name}");
        let written = std::fs::read(path).unwrap();
        assert_eq!(written, base64::engine::general_purpose::STANDARD.decode(PIXEL).unwrap());
    }

    #[test]
    fn an_image_that_cannot_be_decoded_is_kept_without_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%%"}});
        assert_eq!(saved(vec![image.clone()], dir.path(), "s"), vec![image]);
    }
}
