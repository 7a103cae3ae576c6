//! Running the tool calls of one assistant message.
//!
//! Consecutive concurrency-safe calls run in parallel (at most [`MAX_PARALLEL`] at once); any
//! other call runs alone, in order, as a barrier. Each outcome is sent back as a `tool_done`
//! event when it finishes; the core puts the results back in `tool_use` order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use reloop_core::{Event, ToolOutcome, ToolResultContent, ToolUse};
use reloop_tools::{ToolContext, ToolRegistry};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub const MAX_PARALLEL: usize = 10;

/// The result of a tool call that may have changed something and was interrupted by a crash.
pub const UNFINISHED_TOOL_RESULT: &str = "<tool_use_error>The reloop process stopped before this tool call finished, \
so it may or may not have run. Check its effects before running it again.</tool_use_error>";

pub(crate) struct ToolRun {
    task: JoinHandle<()>,
    cancel: Arc<AtomicBool>,
}

impl ToolRun {
    pub(crate) fn start(
        calls: Vec<ToolUse>,
        registry: &ToolRegistry,
        ctx: &ToolContext,
        inbox: mpsc::UnboundedSender<Event>,
    ) -> Self {
        let cancel = Arc::new(AtomicBool::new(false));
        let mut ctx = ctx.clone();
        ctx.cancel = cancel.clone();
        let registry = registry.clone();
        let task = tokio::spawn(async move {
            for batch in batches(&registry, calls) {
                let runs = batch.into_iter().map(|call| {
                    let registry = registry.clone();
                    let ctx = ctx.clone();
                    let id = call.id.clone();
                    let run = tokio::task::spawn_blocking(move || registry.execute(&call.name, &call.input, &ctx));
                    async move {
                        // A tool that panicked is answered, so its call never stays open.
                        let (content, is_error) = match run.await {
                            Ok(output) => (output.content, output.is_error),
                            Err(e) => (
                                format!("<tool_use_error>Error: the tool failed unexpectedly: {e}</tool_use_error>"),
                                true,
                            ),
                        };
                        ToolOutcome { tool_use_id: id, content: ToolResultContent::Text(content), is_error }
                    }
                });
                let mut finished = futures::stream::iter(runs).buffer_unordered(MAX_PARALLEL);
                while let Some(outcome) = finished.next().await {
                    if inbox.send(Event::ToolDone(outcome)).is_err() {
                        return;
                    }
                }
                if ctx.cancel.load(Ordering::Relaxed) {
                    return;
                }
            }
        });
        ToolRun { task, cancel }
    }

    pub(crate) fn cancel(self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.task.abort();
    }
}

/// Splits calls into runs: consecutive safe calls together, each unsafe call alone.
fn batches(registry: &ToolRegistry, calls: Vec<ToolUse>) -> Vec<Vec<ToolUse>> {
    let mut out: Vec<(bool, Vec<ToolUse>)> = Vec::new();
    for call in calls {
        let safe = registry.is_concurrency_safe(&call.name, &call.input);
        match out.last_mut() {
            Some((true, batch)) if safe => batch.push(call),
            _ => out.push((safe, vec![call])),
        }
    }
    out.into_iter().map(|(_, batch)| batch).collect()
}
