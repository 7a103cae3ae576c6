//! Peak memory and time of the tools on outputs that once exhausted memory (issue 10, family 6).
//!
//! `cargo run --release -p reloop-tools --example big_outputs` creates the files in a temporary
//! directory (about 1.6 GB of disk), then runs each case in a fresh child process so its peak RSS
//! (`VmHWM` from /proc/self/status) is its own, and prints one line per case. The bound the
//! issue asks for is 200 MB per case.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use reloop_tools::{ToolContext, ToolRegistry};
use serde_json::{json, Value};

const MB: u64 = 1024 * 1024;

/// The cases: name, tool, input (with `{dir}` replaced by the temporary directory).
fn cases(dir: &Path) -> Vec<(&'static str, &'static str, Value)> {
    let d = dir.display();
    vec![
        (
            "grep content, 300 MB of matching lines",
            "Grep",
            json!({"pattern": "needle", "path": format!("{d}/lines.txt"), "output_mode": "content"}),
        ),
        (
            "grep count, 300 MB of matching lines",
            "Grep",
            json!({"pattern": "needle", "path": format!("{d}/lines.txt"), "output_mode": "count"}),
        ),
        (
            "grep content, one 300 MB line",
            "Grep",
            json!({"pattern": "needle", "path": format!("{d}/one_line.txt"), "output_mode": "content"}),
        ),
        ("read 1 GB file, no offset (refused)", "Read", json!({"file_path": format!("{d}/huge.txt")})),
        (
            "read 1 GB file, last lines (streamed)",
            "Read",
            json!({"file_path": format!("{d}/huge.txt"), "offset": 67_108_860, "limit": 5}),
        ),
        (
            "read 1 GB file, limit 100000000 (refused)",
            "Read",
            json!({"file_path": format!("{d}/huge.txt"), "offset": 1, "limit": 100_000_000}),
        ),
        (
            "grep content, offset 5000000 (counted)",
            "Grep",
            json!({"pattern": "needle", "path": format!("{d}/lines.txt"), "output_mode": "content", "offset": 5_000_000, "head_limit": 3}),
        ),
        ("read one 300 MB line (streamed, cut)", "Read", json!({"file_path": format!("{d}/one_line.txt"), "limit": 1})),
        ("bash yes | head -c 500000000", "Bash", json!({"command": "yes | head -c 500000000", "timeout": 600_000})),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, dir, index] = args.as_slice() {
        if flag == "--case" {
            run_case(Path::new(dir), index.parse().unwrap_or(usize::MAX));
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap_or_else(|err| fail(&format!("cannot create a temporary directory: {err}")));
    let started = Instant::now();
    create_files(dir.path());
    println!("files created in {:.1} s", started.elapsed().as_secs_f64());
    println!("{:<44} {:>9} {:>12} {:>12}  result", "case", "time", "peak RSS", "output");
    let exe = std::env::current_exe().unwrap_or_else(|err| fail(&format!("cannot find this example: {err}")));
    for index in 0..cases(dir.path()).len() {
        let out = Command::new(&exe)
            .args(["--case", &dir.path().display().to_string(), &index.to_string()])
            .output()
            .unwrap_or_else(|err| fail(&format!("cannot run case {index}: {err}")));
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprintln!("case {index} failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// 300 MB of short matching lines, one 300 MB line, and 1 GB of 32-byte lines.
fn create_files(dir: &Path) {
    write_repeated(&dir.join("lines.txt"), b"a needle in a haystack, line 0\n", 300 * MB);
    write_repeated(&dir.join("one_line.txt"), b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 300 * MB);
    write_repeated(&dir.join("huge.txt"), b"the quick brown fox jumps over\n\n", 1024 * MB);
}

fn write_repeated(path: &PathBuf, unit: &[u8], size: u64) {
    let file = std::fs::File::create(path).unwrap_or_else(|err| fail(&format!("{}: {err}", path.display())));
    let mut writer = std::io::BufWriter::with_capacity(MB as usize, file);
    let block: Vec<u8> = unit.iter().copied().cycle().take(unit.len() * 32_768).collect();
    let mut written = 0u64;
    while written < size {
        let take = (size - written).min(block.len() as u64) as usize;
        writer.write_all(&block[..take]).unwrap_or_else(|err| fail(&format!("{}: {err}", path.display())));
        written += take as u64;
    }
    writer.flush().unwrap_or_else(|err| fail(&format!("{}: {err}", path.display())));
}

fn run_case(dir: &Path, index: usize) {
    let Some((name, tool, input)) = cases(dir).into_iter().nth(index) else { fail("no such case") };
    let registry = ToolRegistry::builtin();
    let ctx = ToolContext::new(dir.to_path_buf());
    let started = Instant::now();
    let output = registry.execute(tool, &input, &ctx);
    let took = started.elapsed();
    let first_line: String = output.content.lines().next().unwrap_or_default().chars().take(60).collect();
    let last_line: String = output.content.lines().last().unwrap_or_default().chars().take(60).collect();
    println!(
        "{name:<44} {:>7.2} s {:>9} MB {:>9} ch  {}{first_line} … {last_line}",
        took.as_secs_f64(),
        peak_rss_mb().map_or("?".into(), |mb| mb.to_string()),
        output.content.chars().count(),
        if output.is_error { "error: " } else { "" },
    );
}

/// This process's peak resident set size, from /proc/self/status (`VmHWM`, kB).
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
