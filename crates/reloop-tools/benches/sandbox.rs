//! What the sandbox adds to a Bash call: `cargo bench -p reloop-tools --bench sandbox` prints
//! the mean and median of a `true` command run unconfined, confined read-only, confined with
//! writes approved, and confined under deny rules over a workspace of 2,000 files (the rules
//! make each call walk the workspace for every name of the denied files).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use reloop_tools::sandbox::{Availability, EnvPolicy, Policy, Sandbox};
use reloop_tools::{BashTool, Confinement, Containment, PathFilter, Tool, ToolContext};
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
    let confined = |filters: bool| {
        let secret = root.join("secret.txt");
        let filter = filters.then(|| PathFilter::new(move |p: &Path| p == secret));
        Containment::Confined(Arc::new(Confinement::new(sandbox.clone(), policy.clone(), filter.clone(), filter)))
    };
    println!("Bash `true` ({CALLS} calls each; ms per call)");
    println!("{:<44} {:>8} {:>8}", "case", "mean", "median");
    let cases: Vec<(&str, Containment, &str)> = vec![
        ("unconfined", Containment::Unconfined, "true"),
        ("confined, read-only", confined(false), "true"),
        ("confined, writes approved", confined(false), "true > /dev/null; touch x"),
        ("confined, deny rules, 2,000-file workspace", confined(true), "true"),
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

fn measure(ctx: &ToolContext, command: &str) -> (f64, f64) {
    let input = json!({ "command": command });
    let mut times: Vec<f64> = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        let out = BashTool.call(&input, ctx);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(!out.is_error || command.contains("touch"), "{}", out.content);
    }
    times.sort_by(f64::total_cmp);
    (times.iter().sum::<f64>() / CALLS as f64, times[CALLS / 2])
}
