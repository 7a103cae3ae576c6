//! The sessions the transition table is generated from: each plays a session from `idle` with
//! the events a driver feeds, and states where it is at the points that matter (`now`, `ends`).

use reloop_core::hook::HookEventName;
use reloop_core::profile::ProfileId;
use reloop_core::{Config, ModelError, Price, StopReason};

use crate::session::{overloaded, server_error, too_long, usage, Session, Verdict};

/// A session with two tool turns behind it: enough history for a compaction to summarise.
fn two_tool_turns(name: &'static str, config: Config) -> Session {
    Session::new(name, config).prompt("go").asks_for(&["t1"]).tools_run().asks_for(&["t2"]).tools_run()
}

/// The sessions the table is generated from.
pub fn paths() -> Vec<Session> {
    use StopReason::{EndTurn, MaxTokens, ToolUse};
    use Verdict::{Block, Pass, Prevent};
    let plain = Config::default;
    let hooked = || Config::default().with_stop_hooks(true);
    // Effective window 20,000: compacts at an estimate of 7,000 tokens, refuses at 17,000.
    let small = || Config::default().with_context_window(40_000);
    vec![
        // Turns as most sessions take them.
        Session::new("a plain answer", plain()).prompt("hi").now("awaiting_model").answers("hello").ends("completed"),
        Session::new("a tool turn, then the answer, then another prompt", plain())
            .set_mode("plan")
            .prompt("read /x")
            .streams("Let me look.")
            .asks_for(&["t1", "t2"])
            .now("running_tools")
            .tools_run()
            .now("awaiting_model")
            .set_model("claude-haiku-4-5")
            .set_model("claude-haiku-4-5")
            .answers("done")
            .ends("completed")
            .set_model("claude-opus-4-8")
            .prompt("again")
            .now("awaiting_model")
            .answers("ok")
            .ends("completed"),
        Session::new("max_turns", plain().with_max_turns(Some(1)))
            .prompt("go")
            .asks_for(&["t1"])
            .tools_run()
            .ends("max_turns"),
        Session::new("tool hooks, one stops the run", plain())
            .prompt("go")
            .asks_for(&["t1", "t2"])
            .tool_hook(HookEventName::PreToolUse, "t1", Pass)
            .tool_started("t1")
            .tool_done("t1")
            .tool_hook(HookEventName::PostToolUse, "t1", Block)
            .tool_hook(HookEventName::PostToolUse, "t2", Prevent)
            .tool_started("t2")
            .tool_done("t2")
            .ends("hook_stopped"),
        Session::new("the cost budget", cost_budget())
            .prompt("go")
            .calls(&["t1"])
            .ends_with(ToolUse, usage(1_000, 20))
            .tools_run()
            .ends("max_budget_usd"),
        // Claude Code stops before the calls of the response that reached the budget (flag 11).
        Session::new("the cost budget under Claude Code", cost_budget().with_profile(ProfileId::ClaudeCode2_1_332))
            .prompt("go")
            .calls(&["t1"])
            .ends_with(ToolUse, usage(1_000, 20))
            .ends("max_budget_usd"),
        // Stop hooks.
        Session::new("Stop hooks block, then pass", hooked())
            .prompt("go")
            .answers("done?")
            .now("running_stop_hooks")
            .stop_hooks(Block)
            .now("awaiting_model")
            .answers("done now")
            .stop_hooks(Pass)
            .ends("completed"),
        Session::new("a Stop hook ends the run", hooked())
            .prompt("go")
            .answers("x")
            .stop_hooks(Prevent)
            .ends("stop_hook_prevented"),
        Session::new("Stop hooks at their cap", hooked().with_stop_hook_block_cap(1))
            .prompt("go")
            .answers("x")
            .stop_hooks(Block)
            .answers("y")
            .stop_hooks(Block)
            .ends("completed"),
        // Queued input joins the next request.
        Session::new("queued while the model answers", plain())
            .prompt("go")
            .queue("q1")
            .answers("x")
            .now("awaiting_model")
            .answers("y")
            .ends("completed"),
        Session::new("queued while tools run", plain())
            .prompt("go")
            .asks_for(&["t1"])
            .queue("q1")
            .tools_run()
            .answers("y")
            .ends("completed"),
        Session::new("queued while the Stop hooks run", hooked())
            .prompt("go")
            .answers("x")
            .queue("q1")
            .stop_hooks(Pass)
            .now("awaiting_model")
            .answers("y")
            .stop_hooks(Pass)
            .ends("completed"),
        // Compaction: auto (the threshold reached before a request), reactive (the API says the
        // prompt is too long), manual (asked for once the loop stopped).
        Session::new("auto compaction before the next turn", small())
            .prompt("go")
            .asks_for(&["t1"])
            .tools_run()
            .calls(&["t2"])
            .ends_with(ToolUse, usage(8_000, 50))
            .tools_run()
            .now("compacting")
            .queue("q1")
            .summary()
            .now("awaiting_model")
            .answers("done")
            .answers("and that")
            .ends("completed"),
        Session::new("auto compaction before a new prompt, failing", small())
            .prompt("go")
            .streams("long")
            .ends_with(EndTurn, usage(8_000, 50))
            .ends("completed")
            .prompt("more")
            .now("compacting")
            .summary_fails()
            .now("awaiting_model")
            .answers("ok")
            .ends("completed"),
        Session::new("the blocking limit, auto compaction off", small().with_auto_compact(false))
            .prompt("go")
            .calls(&["t1"])
            .ends_with(ToolUse, usage(18_000, 50))
            .tools_run()
            .ends("blocking_limit"),
        two_tool_turns("reactive compaction, still too long", plain())
            .fails(too_long())
            .now("compacting")
            .summary()
            .now("awaiting_model")
            .fails(too_long())
            .ends("prompt_too_long"),
        two_tool_turns("reactive compaction fails", plain()).fails(too_long()).summary_fails().ends("prompt_too_long"),
        Session::new("too long with nothing to compact", plain())
            .prompt("go")
            .fails(too_long())
            .ends("prompt_too_long"),
        Session::new("a manual compaction", plain())
            .prompt("go")
            .answers("x")
            .compact()
            .now("compacting")
            .summary()
            .ends("completed"),
        Session::new("a manual compaction fails", plain())
            .prompt("go")
            .answers("x")
            .compact()
            .summary_fails()
            .ends("model_error"),
        // Whatever continues the loop meets the auto-compact threshold or the blocking limit before
        // its request: a queued message, the token budget, a Stop hook's block.
        Session::new("queued input, then auto compaction", small())
            .prompt("go")
            .queue("q1")
            .streams("long")
            .ends_with(EndTurn, usage(8_000, 50))
            .now("compacting")
            .summary()
            .answers("ok")
            .ends("completed"),
        Session::new("a budget continuation, then auto compaction", small().with_token_budget(Some(10_000)))
            .prompt("go")
            .streams("long")
            .ends_with(EndTurn, usage(8_000, 100))
            .now("compacting")
            .summary()
            .streams("more")
            .ends_with(EndTurn, usage(100, 9_500))
            .ends("completed"),
        Session::new("an output-token recovery at the blocking limit", small().with_auto_compact(false))
            .prompt("go")
            .streams("long")
            .ends_with(MaxTokens, usage(18_000, 100))
            .ends("blocking_limit"),
        Session::new("auto compaction fails at the blocking limit", small())
            .prompt("go")
            .asks_for(&["t1"])
            .tools_run()
            .calls(&["t2"])
            .ends_with(ToolUse, usage(18_000, 50))
            .tools_run()
            .now("compacting")
            .summary_fails()
            .ends("blocking_limit"),
        Session::new("Stop hooks pass, then the token budget", hooked().with_token_budget(Some(10_000)))
            .prompt("go")
            .answers("x")
            .stop_hooks(Pass)
            .now("awaiting_model")
            .streams("more")
            .ends_with(EndTurn, usage(100, 9_500))
            .stop_hooks(Pass)
            .ends("completed"),
        Session::new("Stop hooks block, then auto compaction", hooked().with_context_window(40_000))
            .prompt("go")
            .streams("long")
            .ends_with(EndTurn, usage(8_000, 50))
            .stop_hooks(Block)
            .now("compacting")
            .summary()
            .answers("fixed")
            .stop_hooks(Pass)
            .ends("completed"),
        Session::new("Stop hooks pass, queued input, then auto compaction", hooked().with_context_window(40_000))
            .prompt("go")
            .queue("q1")
            .streams("long")
            .ends_with(EndTurn, usage(8_000, 50))
            .stop_hooks(Pass)
            .now("compacting")
            .summary()
            .answers("ok")
            .stop_hooks(Pass)
            .ends("completed"),
        Session::new(
            "Stop hooks pass, a budget continuation, then auto compaction",
            hooked().with_context_window(40_000).with_token_budget(Some(10_000)),
        )
        .prompt("go")
        .streams("long")
        .ends_with(EndTurn, usage(8_000, 100))
        .stop_hooks(Pass)
        .now("compacting")
        .summary()
        .streams("more")
        .ends_with(EndTurn, usage(100, 9_500))
        .stop_hooks(Pass)
        .ends("completed"),
        Session::new(
            "Stop hooks block at the blocking limit",
            hooked().with_context_window(40_000).with_auto_compact(false),
        )
        .prompt("go")
        .streams("long")
        .ends_with(EndTurn, usage(18_000, 50))
        .stop_hooks(Block)
        .ends("blocking_limit"),
        // Failed requests.
        Session::new("a retry, and a late block of the failed request", plain())
            .prompt("go")
            .streams("part")
            .fails(overloaded())
            .now("waiting_retry")
            .queue("q1")
            .retry_ready()
            .now("awaiting_model")
            .late_block()
            .answers("x")
            .answers("y")
            .ends("completed"),
        Session::new("retries exhausted", plain().with_max_retries(1))
            .prompt("go")
            .fails(server_error())
            .retry_ready()
            .fails(server_error())
            .ends("model_error"),
        Session::new("an error that is not retried", plain())
            .prompt("go")
            .fails(ModelError::new(Some(401), "authentication_error", "invalid x-api-key"))
            .ends("model_error"),
        Session::new("the fallback model", plain().with_model("main").with_fallback_model(Some("fallback".into())))
            .prompt("go")
            .fails(server_error())
            .now("awaiting_model")
            .answers("x")
            .ends("completed"),
        // What a response may lack.
        Session::new("output-token recoveries run out", plain())
            .prompt("go")
            .streams("a")
            .ends_with(MaxTokens, usage(100, 32_000))
            .streams("b")
            .ends_with(MaxTokens, usage(100, 32_000))
            .streams("c")
            .ends_with(MaxTokens, usage(100, 32_000))
            .streams("d")
            .ends_with(MaxTokens, usage(100, 32_000))
            .ends("model_error"),
        Session::new("an escalated output limit", plain().with_escalate_max_tokens(true))
            .prompt("go")
            .streams("a")
            .ends_with(MaxTokens, usage(100, 32_000))
            .answers("x")
            .ends("completed"),
        Session::new("a malformed tool call, twice", plain())
            .prompt("go")
            .streams("calling")
            .ends_with(ToolUse, usage(100, 20))
            .streams("calling")
            .ends_with(ToolUse, usage(100, 20))
            .ends("model_error"),
        Session::new("a token budget", plain().with_token_budget(Some(10_000)))
            .prompt("go")
            .streams("w")
            .ends_with(EndTurn, usage(100, 1_000))
            .streams("w")
            .ends_with(EndTurn, usage(100, 9_000))
            .ends("completed"),
        // The process restarts and the driver resumes the journal, in each phase.
        Session::new("resumed at idle", plain()).resume().prompt("go").resume().answers("x").ends("completed").resume(),
        Session::new("resumed while tools run", plain())
            .prompt("go")
            .asks_for(&["t1", "t2"])
            .tool_started("t1")
            .tool_done("t1")
            .tool_started("t2")
            .resume()
            .tool_done("t2")
            .answers("x")
            .ends("completed"),
        Session::new("resumed during a retry's wait", plain())
            .prompt("go")
            .fails(overloaded())
            .resume()
            .answers("x")
            .ends("completed"),
        Session::new("resumed during a compaction", plain())
            .prompt("go")
            .answers("x")
            .compact()
            .resume()
            .summary()
            .ends("completed"),
        Session::new("resumed while the Stop hooks run", hooked())
            .prompt("go")
            .answers("x")
            .resume()
            .stop_hooks(Pass)
            .ends("completed"),
        // The user aborts, in each phase; what was in flight may still arrive.
        Session::new("abort at idle", plain())
            .abort()
            .ends("aborted_streaming")
            .compact()
            .prompt("go")
            .answers("x")
            .ends("completed"),
        Session::new("abort mid-stream, then a new prompt", plain())
            .prompt("go")
            .streams("x")
            .calls(&["t1"])
            .abort()
            .ends("aborted_streaming")
            .ends_with(ToolUse, usage(100, 20))
            .abort()
            .queue("q1")
            .prompt("again")
            .answers("y")
            .ends("completed"),
        Session::new("abort while tools run", plain())
            .prompt("go")
            .asks_for(&["t1", "t2"])
            .tool_started("t1")
            .tool_done("t1")
            .abort()
            .ends("aborted_tools")
            .tool_done("t2"),
        Session::new("abort during a retry's wait", plain())
            .prompt("go")
            .fails(overloaded())
            .abort()
            .ends("aborted_streaming")
            .retry_ready(),
        two_tool_turns("abort during a compaction", plain())
            .fails(too_long())
            .abort()
            .ends("aborted_streaming")
            .summary(),
        Session::new("abort while the Stop hooks run", hooked())
            .prompt("go")
            .answers("x")
            .abort()
            .ends("aborted_streaming")
            .stop_hooks(Pass),
    ]
}

fn cost_budget() -> Config {
    let price = Price { model: "m".into(), input: 3.0, output: 15.0, cache_write: 0.0, cache_read: 0.0 };
    Config::default().with_model("m").with_prices(vec![price]).with_max_budget_usd(Some(0.001))
}
