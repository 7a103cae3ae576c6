//! Sending spans over OTLP (HTTP/protobuf) with `opentelemetry-otlp`: at once for an export,
//! or through the SDK's batch processor while a session runs.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, Status, TraceFlags, TraceState};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanData, SpanEvents, SpanExporter as _, SpanLinks, SpanProcessor,
};
use opentelemetry_sdk::Resource;

use crate::error::OtelError;
use crate::span::{AttrValue, SpanKind, SpanRecord, SpanStatus};

/// The standard variable naming the traces endpoint itself (used as given).
pub const TRACES_ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
/// The standard variable naming the OTLP base endpoint (`/v1/traces` is added).
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// How long one export request may take before it is given up: a receiver that accepts and
/// never answers costs at most this.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most spans a live run keeps waiting for the exporter; past it new spans are dropped (and
/// counted by the SDK) rather than held, so a dead endpoint cannot grow the run's memory.
pub const LIVE_QUEUE: usize = 4096;

/// The traces URL to send to: `flag` (a base endpoint, as `OTEL_EXPORTER_OTLP_ENDPOINT` is,
/// `/v1/traces` added unless it ends so already), else [`TRACES_ENDPOINT_ENV`] as given, else
/// [`ENDPOINT_ENV`] with `/v1/traces` added; `None` when none is set (no export). `env` reads a
/// variable, so the choice is tested without the process's environment.
pub fn resolve_endpoint(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    if let Some(flag) = flag.filter(|f| !f.trim().is_empty()) {
        return Some(traces_url(flag));
    }
    if let Some(url) = set(env(TRACES_ENDPOINT_ENV)) {
        return Some(url);
    }
    set(env(ENDPOINT_ENV)).map(|base| traces_url(&base))
}

fn traces_url(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

/// The resource every span is reported under: service `reloop`.
fn resource() -> Resource {
    Resource::builder_empty().with_service_name("reloop").build()
}

fn exporter(endpoint: &str) -> Result<opentelemetry_otlp::SpanExporter, OtelError> {
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(OtelError::Endpoint {
            endpoint: endpoint.to_string(),
            why: "give an http:// or https:// URL".into(),
        });
    }
    // The HTTP client's TLS (rustls, shared with the MCP client) has its crypto chosen by the
    // program: ring, as reloop-mcp installs it; a second install is a no-op.
    let _ = rustls::crypto::ring::default_provider().install_default();
    opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| OtelError::Build(e.to_string()))
}

/// Sends `spans` to `endpoint` and waits for the receiver's answer, in batches of 512. Runs on
/// a thread of its own: the blocking HTTP client must not run on an async runtime's thread.
pub fn send(endpoint: &str, spans: Vec<SpanRecord>) -> Result<usize, OtelError> {
    let endpoint = endpoint.to_string();
    let worker = std::thread::Builder::new().name("reloop-otlp-export".into()).spawn(move || {
        let mut exporter = exporter(&endpoint)?;
        exporter.set_resource(&resource());
        let count = spans.len();
        let mut data: Vec<SpanData> = spans.iter().map(span_data).collect();
        while !data.is_empty() {
            let rest = data.split_off(data.len().min(512));
            futures::executor::block_on(exporter.export(data))
                .map_err(|e| OtelError::Send { endpoint: endpoint.clone(), why: e.to_string() })?;
            data = rest;
        }
        let _ = exporter.shutdown();
        Ok(count)
    });
    let worker = worker.map_err(|e| OtelError::Build(format!("cannot start the export thread: {e}")))?;
    worker.join().unwrap_or_else(|_| Err(OtelError::Build("the export thread panicked".into())))
}

/// A live run's exporter: spans handed to [`LiveExporter::send`] go into the SDK's batch
/// processor, which exports them from its own thread every half second. `send` never blocks:
/// a full queue drops the span.
#[derive(Debug)]
pub struct LiveExporter {
    processor: BatchSpanProcessor,
    endpoint: String,
    failed: Arc<Mutex<Option<String>>>,
}

/// The OTLP exporter, with its last failure kept: the batch processor logs a failed export of
/// its own timer and goes on, and the run must still be able to say that spans were lost.
#[derive(Debug)]
struct Watched {
    inner: opentelemetry_otlp::SpanExporter,
    failed: Arc<Mutex<Option<String>>>,
}

impl opentelemetry_sdk::trace::SpanExporter for Watched {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        if let Err(e) = &result {
            if let Ok(mut failed) = self.failed.lock() {
                *failed = Some(e.to_string());
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl LiveExporter {
    /// An exporter to `endpoint` (a traces URL, see [`resolve_endpoint`]).
    pub fn new(endpoint: &str) -> Result<Self, OtelError> {
        let failed = Arc::new(Mutex::new(None));
        let exporter = Watched { inner: exporter(endpoint)?, failed: failed.clone() };
        let config = BatchConfigBuilder::default()
            .with_max_queue_size(LIVE_QUEUE)
            .with_max_export_batch_size(512)
            .with_scheduled_delay(Duration::from_millis(500))
            .build();
        let mut processor = BatchSpanProcessor::new(exporter, config);
        processor.set_resource(&resource());
        Ok(LiveExporter { processor, endpoint: endpoint.to_string(), failed })
    }

    /// Queues a finished span for export.
    pub fn send(&self, span: &SpanRecord) {
        self.processor.on_end(span_data(span));
    }

    /// Exports what is queued and stops, waiting at most `timeout`: an endpoint that is down or
    /// stalls gives an error here, never a longer wait.
    pub fn finish(self, timeout: Duration) -> Result<(), OtelError> {
        let shut = self.processor.shutdown_with_timeout(timeout).map_err(|e| e.to_string());
        let failed = self.failed.lock().ok().and_then(|mut f| f.take());
        match (shut, failed) {
            (Err(why), _) | (Ok(()), Some(why)) => Err(OtelError::Send { endpoint: self.endpoint.clone(), why }),
            (Ok(()), None) => Ok(()),
        }
    }
}

fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn value(value: &AttrValue) -> Value {
    match value {
        AttrValue::Str(s) => Value::from(s.clone()),
        AttrValue::Int(n) => Value::I64(*n),
        AttrValue::Bool(b) => Value::Bool(*b),
        AttrValue::StrArray(items) => {
            Value::Array(Array::String(items.iter().map(|s| StringValue::from(s.clone())).collect()))
        }
    }
}

fn key_values(attributes: &[(&'static str, AttrValue)]) -> Vec<KeyValue> {
    attributes.iter().map(|(k, v)| KeyValue::new(*k, value(v))).collect()
}

/// The SDK's form of a span record.
pub fn span_data(span: &SpanRecord) -> SpanData {
    let mut events = SpanEvents::default();
    events.events = span
        .events
        .iter()
        .map(|e| opentelemetry::trace::Event::new(e.name, time(e.at_ms), key_values(&e.attributes), 0))
        .collect();
    SpanData {
        span_context: SpanContext::new(span.trace_id, span.span_id, TraceFlags::SAMPLED, false, TraceState::default()),
        parent_span_id: span.parent.unwrap_or(SpanId::INVALID),
        parent_span_is_remote: false,
        span_kind: match span.kind {
            SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
            SpanKind::Client => opentelemetry::trace::SpanKind::Client,
        },
        name: Cow::Owned(span.name.clone()),
        start_time: time(span.start_ms),
        end_time: time(span.end_ms),
        attributes: key_values(&span.attributes),
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status: match &span.status {
            SpanStatus::Unset => Status::Unset,
            SpanStatus::Error(why) => Status::error(why.clone()),
        },
        instrumentation_scope: InstrumentationScope::builder("reloop").with_version(env!("CARGO_PKG_VERSION")).build(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_flag_wins_then_the_traces_variable_then_the_base_variable() {
        let both = [(TRACES_ENDPOINT_ENV, "http://t:1/custom"), (ENDPOINT_ENV, "http://b:2")];
        assert_eq!(resolve_endpoint(Some("http://f:3/"), env(&both)).as_deref(), Some("http://f:3/v1/traces"));
        assert_eq!(resolve_endpoint(None, env(&both)).as_deref(), Some("http://t:1/custom"));
        assert_eq!(resolve_endpoint(None, env(&both[1..])).as_deref(), Some("http://b:2/v1/traces"));
        assert_eq!(resolve_endpoint(Some("http://f:3/v1/traces"), env(&[])).as_deref(), Some("http://f:3/v1/traces"));
        assert_eq!(resolve_endpoint(None, env(&[(ENDPOINT_ENV, " ")])), None);
        assert_eq!(resolve_endpoint(None, env(&[])), None);
    }

    #[test]
    fn an_endpoint_that_is_no_http_url_is_refused() {
        let err = LiveExporter::new("localhost:4318").unwrap_err();
        assert!(err.to_string().contains("http://"), "{err}");
    }
}
