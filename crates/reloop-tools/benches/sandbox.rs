//! What the sandbox adds to a Bash call: `cargo bench -p reloop-tools --bench sandbox` prints
//! the mean and median of `bash -c true` started and waited for, plain and confined (the
//! sandbox's own cost), then of a Bash tool call run unconfined, confined read-only, confined
//! with writes approved, under a deny rule naming one file (no walk), and under a rule that may
//! name many (each call walks the 2,000-file workspace for every name of the denied files).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use reloop_tools::sandbox::{Availability, EnvPolicy, Policy, Sandbox};
use reloop_tools::{Confinement, Containment, PathFilter, ToolContext, ToolRegistry};
use serde_json::json;

const CALLS: usize = 200;

fn main() {
    let sandbox = match Sandbox::probe() {
        Availability::Available(sandbox) => sandbox.clone(),
        Availability::Unavailable(why) => {
            println!("no sandbox on this machine ({why}): nothing to measure");
            return;
        }
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path().canonicalize().expect("canonical");
    for i in 0..2_000 {
        let sub = root.join(format!("d{}", i % 40));
        std::fs::create_dir_all(&sub).expect("dir");
        std::fs::write(sub.join(format!("f{i}.txt")), "x").expect("file");
    }
    std::fs::write(root.join("secret.txt"), "s").expect("secret");
    let env = EnvPolicy::default().build(std::env::vars_os(), |_| false);
    let policy = Policy { roots: vec![root.clone()], network: false, env };
    let confined = |filters: bool, literal: bool| {
        let secret = root.join("secret.txt");
        let filter = filters.then(|| PathFilter::new(move |p: &Path| p == secret));
        let confinement = Confinement::new(sandbox.clone(), policy.clone(), filter.clone(), filter);
        let confinement = match literal {
            true => confinement.with_literal_paths(vec![root.join("secret.txt")], vec![]),
            false => confinement,
        };
        Containment::Confined(Arc::new(confinement))
    };
    println!("`bash -c true`, started and waited for ({CALLS} runs each; ms per run)");
    println!("{:<44} {:>8} {:>8}", "case", "mean", "median");
    let call = reloop_tools::sandbox::Call::new(reloop_tools::sandbox::Access::ReadOnly);
    let args = [std::ffi::OsStr::new("-c"), std::ffi::OsStr::new("true")];
    let plain = spawn_times(|| {
        let mut command = std::process::Command::new("bash");
        command.args(args);
        command
    });
    let confined_process = spawn_times(|| {
        sandbox.command(&policy, &call, &root, std::ffi::OsStr::new("bash"), &args).expect("confined command")
    });
    println!("{:<44} {:>8.2} {:>8.2}", "plain", plain.0, plain.1);
    println!(
        "{:<44} {:>8.2} {:>8.2}   (+{:.2} over plain)",
        "confined, read-only",
        confined_process.0,
        confined_process.1,
        confined_process.1 - plain.1
    );
    println!();
    println!("Bash tool call of `true` ({CALLS} calls each; ms per call)");
    println!("{:<44} {:>8} {:>8}", "case", "mean", "median");
    let cases: Vec<(&str, Containment, &str)> = vec![
        ("unconfined", Containment::Unconfined, "true"),
        ("confined, read-only", confined(false, false), "true"),
        ("confined, writes approved", confined(false, false), "true > /dev/null; touch x"),
        ("confined, a deny rule naming one file", confined(true, true), "true"),
        ("confined, a glob deny rule, 2,000-file walk", confined(true, false), "true"),
    ];
    let mut unconfined_median = 0.0;
    for (name, containment, command) in cases {
        let mut ctx = ToolContext::new(root.clone());
        ctx.containment = containment;
        let (mean, median) = measure(&ctx, command);
        if name == "unconfined" {
            unconfined_median = median;
        }
        println!("{name:<44} {mean:>8.2} {median:>8.2}   (+{:.2} over unconfined)", median - unconfined_median);
    }
}

/// Mean and median milliseconds of running what `make` builds to its end.
fn spawn_times(make: impl Fn() -> std::process::Command) -> (f64, f64) {
    let mut times: Vec<f64> = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let mut command = make();
        let start = Instant::now();
        let status = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("runs");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(status.success());
    }
    median_of(times)
}

fn median_of(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times.iter().sum::<f64>() / times.len() as f64, times[times.len() / 2])
}

fn measure(ctx: &ToolContext, command: &str) -> (f64, f64) {
    let input = json!({ "command": command });
    let registry = ToolRegistry::builtin();
    let bash = registry.get("Bash").expect("the built-in registry has Bash");
    let mut times: Vec<f64> = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        let out = bash.call(&input, ctx);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(!out.is_error || command.contains("touch"), "{}", out.content);
    }
    median_of(times)
}
