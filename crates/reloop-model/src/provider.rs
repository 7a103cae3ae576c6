//! The provider contract the driver codes against.

use futures::stream::BoxStream;
use reloop_core::{ContentBlock, History, ModelError, StopReason, ToolSpec, Usage};

/// One block of system prompt. Kept as blocks (not one string) so a provider can mark the
/// stable prefix for prompt caching.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemBlock {
    /// The prompt text.
    pub text: String,
    /// Ask the provider to put a cache breakpoint after this block (Anthropic always marks the
    /// last system block too).
    pub cache: bool,
}

impl SystemBlock {
    /// A block with no cache breakpoint of its own.
    pub fn new(text: impl Into<String>) -> Self {
        SystemBlock { text: text.into(), cache: false }
    }

    /// A block the provider caches up to: the end of the stable prefix.
    pub fn cached(text: impl Into<String>) -> Self {
        SystemBlock { text: text.into(), cache: true }
    }
}

/// Everything a provider needs for one model request. Cheap to clone: the history is shared.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The model's name as the provider knows it.
    pub model: String,
    /// The cap on the response's tokens; the response's size caps derive from it too.
    pub max_tokens: u32,
    /// The system prompt, in blocks.
    pub system: Vec<SystemBlock>,
    /// The conversation so far, as the core's history holds it.
    pub messages: History,
    /// The tools offered, shared: a session builds its specs once, not for every request.
    pub tools: std::sync::Arc<[ToolSpec]>,
    /// Sent verbatim as `thinking` when `Some`.
    pub thinking: Option<serde_json::Value>,
    /// 1-based count of model requests in the session, retries included. The scripted provider
    /// answers by this number, so a resumed or forked session picks up where it was.
    pub request_number: u32,
    /// Ask for the answer streamed (the default) or whole (`"stream": false`; Claude Code's last
    /// try after streams that broke off). Providers that only stream ignore it.
    pub stream: bool,
    /// A whole-answer request says so with `"stream": false` (`true`, the default) or by having
    /// no `stream` key at all (`false`: Claude Code 2.1.197).
    pub stream_key: bool,
    /// Sent verbatim as `output_config` when `Some` (Claude Code's `{"effort": …}`).
    pub output_config: Option<serde_json::Value>,
    /// Sent as the `X-Stainless-Timeout` header (seconds) when `Some`, as Claude Code's SDK does.
    pub timeout_header: Option<u32>,
    /// The message that carries the cache breakpoint, counted from the end: 0, the last (every
    /// main request); 1, the one before (Claude Code's summary request, whose last message
    /// holds the instruction appended after the cached conversation).
    pub cache_from_end: usize,
    /// Every `role: "system"` message goes as a plain string and the cache breakpoint skips
    /// them (Claude Code 2.1.197); otherwise only the last one goes as blocks, and may carry it.
    pub system_as_string: bool,
    /// A compaction's summary message (one text block opening with Claude Code's summary
    /// preamble) goes as a plain string, as 2.1.332 sends it.
    pub summary_as_string: bool,
    /// The first `role: "system"` message carries [`Self::output_config`] too, as 2.1.332 sends
    /// it on its context message.
    pub output_config_on_first_system: bool,
    /// The version whose `anthropic-beta` list is sent, and with it the `context_management`
    /// beside a thinking that is on ([`reloop_core::profile::BetaRule`]); `None`: the 1M-context
    /// beta alone, when asked for.
    pub betas: Option<reloop_core::profile::BetaRule>,
    /// A run of user messages goes as one message, as Claude Code merges them
    /// ([`reloop_core::profile::WireRule::merge_user_messages`]).
    pub merge_user_messages: bool,
    /// A summary request's first try of its shape: 2.1.332 adds its fallback-credit beta
    /// ([`reloop_core::profile::BetaRule::with_fallback_credit`]).
    pub fallback_credit: bool,
    /// What the request goes without after refusals ([`reloop_core::profile::RequestGuess`]):
    /// the betas those guesses name are left out (the thinking's `display` is left out of
    /// [`Self::thinking`] by whoever builds the request).
    pub shed: reloop_core::profile::RequestGuesses,
    /// `ENABLE_TOOL_SEARCH` turned tool search off: 2.1.332 then sends no
    /// `advanced-tool-use` beta (`error_endings/invalid_request_no_tool_search`).
    pub without_tool_search: bool,
}

impl ModelRequest {
    /// A streamed request with no system prompt, tools or thinking; the `with_*` methods add
    /// them (the struct is `non_exhaustive`).
    pub fn new(model: impl Into<String>, max_tokens: u32, messages: History, request_number: u32) -> Self {
        ModelRequest {
            model: model.into(),
            max_tokens,
            system: Vec::new(),
            messages,
            tools: std::sync::Arc::from(Vec::new()),
            thinking: None,
            request_number,
            stream: true,
            stream_key: true,
            output_config: None,
            timeout_header: None,
            cache_from_end: 0,
            system_as_string: false,
            summary_as_string: false,
            output_config_on_first_system: false,
            betas: None,
            merge_user_messages: false,
            fallback_credit: false,
            shed: Default::default(),
            without_tool_search: false,
        }
    }

    /// The profile's `anthropic-beta` list for this request, in its order (empty under a
    /// profile that names none): what it asks, less what refusals and the environment took out.
    pub fn profile_betas(&self) -> Vec<&'static str> {
        let Some(rule) = self.betas else { return Vec::new() };
        let mut betas = rule.betas(&self.model, self.thinking.as_ref(), self.output_config.is_some());
        if self.fallback_credit {
            betas = rule.with_fallback_credit(betas);
        }
        reloop_core::profile::shed_betas(&mut betas, self.shed);
        if self.without_tool_search {
            betas.retain(|b| *b != reloop_core::profile::ADVANCED_TOOL_USE_BETA);
        }
        betas
    }

    /// See [`ModelRequest::shed`].
    pub fn with_shed(mut self, shed: reloop_core::profile::RequestGuesses) -> Self {
        self.shed = shed;
        self
    }

    /// See [`ModelRequest::without_tool_search`].
    pub fn with_tool_search(mut self, on: bool) -> Self {
        self.without_tool_search = !on;
        self
    }

    /// See [`ModelRequest::fallback_credit`].
    pub fn with_fallback_credit(mut self, first_try: bool) -> Self {
        self.fallback_credit = first_try;
        self
    }

    /// See [`ModelRequest::cache_from_end`].
    pub fn with_cache_from_end(mut self, from_end: usize) -> Self {
        self.cache_from_end = from_end;
        self
    }

    /// See [`ModelRequest::stream`].
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The request with this system prompt.
    pub fn with_system(mut self, system: Vec<SystemBlock>) -> Self {
        self.system = system;
        self
    }

    /// The request offering these tools.
    pub fn with_tools(mut self, tools: impl Into<std::sync::Arc<[ToolSpec]>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// See [`ModelRequest::thinking`].
    pub fn with_thinking(mut self, thinking: Option<serde_json::Value>) -> Self {
        self.thinking = thinking;
        self
    }

    /// How the request is worded where Claude Code's versions differ (see [`WireStyle`]).
    pub fn with_style(mut self, style: WireStyle) -> Self {
        self.stream_key = style.stream_key;
        self.output_config = style.effort.map(|effort| serde_json::json!({ "effort": effort }));
        self.timeout_header = style.timeout_header;
        self.system_as_string = style.system_as_string;
        self.summary_as_string = style.summary_as_string;
        self.output_config_on_first_system = style.output_config_on_first_system;
        self.betas = style.betas;
        self.merge_user_messages = style.merge_user_messages;
        self
    }
}

/// The request details a session's profile decides: the driver fills them in, the provider
/// only writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireStyle {
    /// See [`ModelRequest::stream_key`].
    pub stream_key: bool,
    /// `output_config.effort`, if any.
    pub effort: Option<&'static str>,
    /// See [`ModelRequest::timeout_header`].
    pub timeout_header: Option<u32>,
    /// See [`ModelRequest::system_as_string`].
    pub system_as_string: bool,
    /// See [`ModelRequest::summary_as_string`].
    pub summary_as_string: bool,
    /// See [`ModelRequest::output_config_on_first_system`].
    pub output_config_on_first_system: bool,
    /// See [`ModelRequest::betas`].
    pub betas: Option<reloop_core::profile::BetaRule>,
    /// See [`ModelRequest::merge_user_messages`].
    pub merge_user_messages: bool,
}

/// What a provider streams back. Order: at most one `Started`, any `TextDelta`/`Block`…, then
/// exactly one `Done` or one `Failed`, then the stream ends.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The response began (the Messages API's `message_start`): its id and the usage it opened
    /// with, as the server wrote it, for a caller that shows the response's head as it came
    /// (Claude Code's partial messages).
    Started {
        /// The response's id, when the server gave one.
        id: Option<String>,
        /// The `usage` object of `message_start`, as sent.
        usage: Option<serde_json::Value>,
    },
    /// Text as it arrives, for the caller's live output. The completed `Block` carries the
    /// authoritative text.
    TextDelta {
        /// The content block the text belongs to.
        index: usize,
        /// The new text.
        text: String,
    },
    /// One completed content block, emitted in order of completion.
    Block {
        /// Its position in the response's content.
        index: usize,
        /// The block, whole.
        block: ContentBlock,
    },
    /// The response is complete.
    Done {
        /// The response's id, when the server gave one.
        id: Option<String>,
        /// The model that answered, as the server named it.
        model: Option<String>,
        /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, ...), when it said.
        stop_reason: Option<StopReason>,
        /// The tokens the request and the response counted.
        usage: Usage,
    },
    /// The request failed; any blocks already emitted belong to an abandoned response.
    Failed(ModelError),
}

impl StreamEvent {
    /// `Done` and `Failed` end a stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Failed(_))
    }

    pub(crate) fn invalid_stream(message: impl Into<String>) -> Self {
        StreamEvent::Failed(ModelError::new(None, "invalid_stream", message))
    }
}

/// A source of model responses.
pub trait ModelProvider: Send + Sync {
    /// `"scripted"`, `"anthropic"`, `"openai"`.
    fn name(&self) -> &str;

    /// Starts the request. Dropping the stream cancels it promptly (the HTTP response is dropped
    /// with it).
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent>;

    /// Whether a request is seen by nothing outside this process (a scripted model): the
    /// journal's write-ahead rule then lets the driver ask before the step that asks is
    /// committed, since a crash in between leaves nothing outside to disagree with the journal.
    fn in_process(&self) -> bool {
        false
    }
}
