//! Servers that live inside the host process (the Agent SDK's in-process servers, `"type":
//! "sdk"`): reloop reaches them only through the host's own channel, one JSON-RPC message per
//! exchange, the host answering each with the server's reply. This is an rmcp [`Transport`], so
//! the MCP client (handshake, `tools/list`, `tools/call`) is rmcp's, as for stdio and HTTP.
//!
//! The host is untrusted: an exchange that fails, outlasts its bound, or answers something that
//! is not the reply to that request becomes a JSON-RPC error for that request alone, so the
//! waiting call fails with a sentence instead of hanging or taking another request's answer.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use tokio::sync::mpsc;

/// How an in-process server's messages travel: the host (the Agent SDK) carries each JSON-RPC
/// message to the server it names and hands back what the server answered.
pub trait SdkChannel: Send + Sync + 'static {
    /// Sends `message` to the host's server `server` *now*, before the future is first polled
    /// (so messages reach the host in the order they were given), and resolves to the host's
    /// answer: the server's JSON-RPC reply (for a notification, an acknowledgement to ignore), or
    /// why there is none.
    fn exchange(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// Why a message could not be handed to the host.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ChannelError(String);

/// One server's side of the host channel, as rmcp's client sees it.
pub(crate) struct ChannelTransport {
    server: String,
    channel: Arc<dyn SdkChannel>,
    /// The longest one exchange may take; past it the request fails (its caller has given up).
    bound: Duration,
    replies_tx: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    replies: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
}

impl ChannelTransport {
    pub(crate) fn new(server: &str, channel: Arc<dyn SdkChannel>, bound: Duration) -> Self {
        let (replies_tx, replies) = mpsc::unbounded_channel();
        ChannelTransport { server: server.to_string(), channel, bound, replies_tx, replies }
    }
}

impl Transport<RoleClient> for ChannelTransport {
    type Error = ChannelError;

    fn name() -> Cow<'static, str> {
        "sdk".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        // The message leaves now, in the order rmcp sends (a request must never overtake the
        // `initialized` notification before it).
        let answer = serde_json::to_value(&item)
            .map(|message| self.channel.exchange(&self.server, message))
            .map_err(|e| ChannelError(format!("cannot encode an MCP message: {e}")));
        let (server, bound, replies) = (self.server.clone(), self.bound, self.replies_tx.clone());
        async move {
            let answer = answer?;
            let outcome = match tokio::time::timeout(bound, answer).await {
                Ok(outcome) => outcome,
                Err(_) => Err(format!("no answer within {} ms", bound.as_millis())),
            };
            // A notification's (or a response's) acknowledgement carries nothing.
            let Some(id) = id else { return Ok(()) };
            let reply = match outcome {
                Ok(answer) => reply_to(&server, &id, answer),
                Err(why) => failure(&id, format!("the SDK did not carry the message to MCP server {server:?}: {why}")),
            };
            // The receiver is gone only when the client has stopped: nobody waits for the reply.
            let _ = replies.send(reply);
            Ok(())
        }
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.replies.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.replies.close();
        Ok(())
    }
}

/// The reply to request `id` in the host's `answer`; anything else is an error for that request.
fn reply_to(server: &str, id: &RequestId, answer: Value) -> ServerJsonRpcMessage {
    let garbage = |what: &str| {
        let shown: String = answer.to_string().chars().take(200).collect();
        failure(id, format!("MCP server {server:?} answered with {what}: {shown}"))
    };
    let parsed: ServerJsonRpcMessage = match serde_json::from_value(answer.clone()) {
        Ok(parsed) => parsed,
        Err(_) => return garbage("something that is not a JSON-RPC reply"),
    };
    match parsed {
        JsonRpcMessage::Response(response) if &response.id == id => JsonRpcMessage::Response(response),
        JsonRpcMessage::Error(error) if error.id.as_ref().is_none_or(|answered| answered == id) => {
            // An error that could not name the request (a parse error) is still this request's.
            JsonRpcMessage::Error(rmcp::model::JsonRpcError { id: Some(id.clone()), ..error })
        }
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => garbage("the reply to another request"),
        JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => garbage("a message that is not a reply"),
    }
}

fn failure(id: &RequestId, message: String) -> ServerJsonRpcMessage {
    JsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id.clone()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_reply_to_the_request_is_taken() {
        let id = RequestId::Number(3);
        let ok = reply_to("s", &id, json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}));
        assert!(matches!(ok, JsonRpcMessage::Response(r) if r.id == id));
        let error =
            reply_to("s", &id, json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}));
        assert!(matches!(error, JsonRpcMessage::Error(e) if e.error.message == "nope"));
        let idless = reply_to("s", &id, json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse"}}));
        assert!(matches!(idless, JsonRpcMessage::Error(e) if e.id == Some(id.clone())));
        for (garbage, said) in [
            (json!("text"), "something that is not a JSON-RPC reply"),
            (json!({"jsonrpc": "2.0", "id": 0, "result": {}}), "the reply to another request"),
            (json!({"jsonrpc": "2.0", "method": "notifications/x"}), "a message that is not a reply"),
        ] {
            match reply_to("s", &id, garbage) {
                JsonRpcMessage::Error(e) => {
                    assert_eq!(e.id, Some(id.clone()));
                    assert!(e.error.message.contains(said), "{}", e.error.message);
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
