//! A finished span as plain data: what the mapper produces and the tests read, before the
//! exporter turns it into the SDK's `SpanData`.

use opentelemetry::trace::{SpanId, TraceId};

/// An attribute's value: the few types the mapper writes.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// An integer (token counts, numbers of things).
    Int(i64),
    /// A flag.
    Bool(bool),
    /// A list of strings (finish reasons, hook commands).
    StrArray(Vec<String>),
}

impl std::fmt::Display for AttrValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttrValue::Str(s) => write!(f, "{s:?}"),
            AttrValue::Int(n) => write!(f, "{n}"),
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::StrArray(items) => write!(f, "{items:?}"),
        }
    }
}

/// Who the span's work was done by, as OpenTelemetry's span kinds say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside reloop (the session, turns, tools, hooks).
    Internal,
    /// A request to a model provider.
    Client,
}

/// How the span's work ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanStatus {
    /// Nothing to say (OpenTelemetry's `Unset`).
    Unset,
    /// It failed, with why.
    Error(String),
}

/// A point in a span's time with attributes: a decision of the loop.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// The event's name ([`crate::semconv::DECISION_EVENT`]).
    pub name: &'static str,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Its attributes.
    pub attributes: Vec<(&'static str, AttrValue)>,
}

/// One finished span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanRecord {
    /// The session's trace.
    pub trace_id: TraceId,
    /// This span.
    pub span_id: SpanId,
    /// The span it belongs under; `None` for the session's root span.
    pub parent: Option<SpanId>,
    /// Its name, after the GenAI conventions ([`crate::semconv::SPAN_NAMES`]).
    pub name: String,
    /// Client or internal.
    pub kind: SpanKind,
    /// Start, in milliseconds since the Unix epoch, from the journal.
    pub start_ms: u64,
    /// End, likewise.
    pub end_ms: u64,
    /// Its attributes, in the order they were set.
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// Decisions taken during it.
    pub events: Vec<SpanEvent>,
    /// Whether it failed.
    pub status: SpanStatus,
}

impl SpanRecord {
    /// The value of attribute `key`, if set.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// The spans as an indented tree, children under their parent in start order, each with its
/// times relative to the first span's start, status, attributes and events: a readable form
/// for snapshots and for people.
pub fn render_tree(spans: &[SpanRecord]) -> String {
    let origin = spans.iter().map(|s| s.start_ms).min().unwrap_or(0);
    let mut out = String::new();
    let roots: Vec<&SpanRecord> =
        spans.iter().filter(|s| s.parent.is_none_or(|p| !spans.iter().any(|o| o.span_id == p))).collect();
    for root in sorted(roots) {
        render(root, spans, origin, 0, &mut out);
    }
    out
}

fn sorted(mut spans: Vec<&SpanRecord>) -> Vec<&SpanRecord> {
    spans.sort_by_key(|s| (s.start_ms, s.end_ms, s.name.clone()));
    spans
}

fn render(span: &SpanRecord, all: &[SpanRecord], origin: u64, depth: usize, out: &mut String) {
    use std::fmt::Write;
    let pad = "  ".repeat(depth);
    let kind = match span.kind {
        SpanKind::Internal => "",
        SpanKind::Client => " client",
    };
    let status = match &span.status {
        SpanStatus::Unset => String::new(),
        SpanStatus::Error(why) => format!(" ERROR {why:?}"),
    };
    let (start, end) = (span.start_ms - origin, span.end_ms.saturating_sub(origin));
    let _ = writeln!(out, "{pad}{} [+{start}ms..+{end}ms]{kind}{status}", span.name);
    for (key, value) in &span.attributes {
        let _ = writeln!(out, "{pad}  {key} = {value}");
    }
    for event in &span.events {
        let _ = writeln!(out, "{pad}  @+{}ms {}", event.at_ms.saturating_sub(origin), event.name);
        for (key, value) in &event.attributes {
            let _ = writeln!(out, "{pad}    {key} = {value}");
        }
    }
    let children = all.iter().filter(|c| c.parent == Some(span.span_id)).collect();
    for child in sorted(children) {
        render(child, all, origin, depth + 1, out);
    }
}
