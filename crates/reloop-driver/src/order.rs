//! One model provider for a session and its subagents.
//!
//! With a cassette, every session of a tree reads the same cassette in the order the requests are
//! made: a tree-wide count numbers each request (the scripted provider answers by number), so one
//! cassette scripts a parent and its children. The count starts at the requests the tree had
//! completed, so a resumed tree goes on where it stopped: a request whose answer was never
//! journaled was, as far as the tree knows, never answered. Other providers keep each session's
//! own numbers.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use futures::stream::BoxStream;
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};
use tokio::sync::watch;

/// The tree's provider and its request count.
pub(crate) struct RequestOrder {
    inner: Arc<dyn ModelProvider>,
    made: AtomicU32,
    renumber: bool,
}

impl RequestOrder {
    pub(crate) fn new(inner: Arc<dyn ModelProvider>, completed: u32, renumber: bool) -> Arc<Self> {
        Arc::new(RequestOrder { inner, made: AtomicU32::new(completed), renumber })
    }

    /// Whether requests are numbered tree-wide (a scripted provider): concurrent sessions of the
    /// tree would then take answers in whichever order they asked.
    pub(crate) fn renumbers(&self) -> bool {
        self.renumber
    }

    /// The provider one session of the tree asks; its receiver turns true at the first request.
    pub(crate) fn view(self: &Arc<Self>) -> (Arc<dyn ModelProvider>, watch::Receiver<bool>) {
        let (asked, first) = watch::channel(false);
        (Arc::new(SessionView { order: self.clone(), asked }), first)
    }
}

struct SessionView {
    order: Arc<RequestOrder>,
    asked: watch::Sender<bool>,
}

impl ModelProvider for SessionView {
    fn name(&self) -> &str {
        self.order.inner.name()
    }

    fn in_process(&self) -> bool {
        self.order.inner.in_process()
    }

    fn stream(&self, mut request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let number = self.order.made.fetch_add(1, Ordering::SeqCst).saturating_add(1);
        if self.order.renumber {
            request.request_number = number;
        }
        self.asked.send_replace(true);
        self.order.inner.stream(request)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures::stream::{self, StreamExt};
    use reloop_core::History;

    use super::*;

    /// Records the numbers it is asked under and answers nothing.
    #[derive(Default)]
    struct Numbers(Mutex<Vec<u32>>);

    impl ModelProvider for Numbers {
        fn name(&self) -> &str {
            "scripted"
        }
        fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
            self.0.lock().unwrap().push(request.request_number);
            stream::empty().boxed()
        }
    }

    fn ask(provider: &Arc<dyn ModelProvider>, own_number: u32) {
        drop(provider.stream(ModelRequest::new("m", 1, History::default(), own_number)));
    }

    #[test]
    fn the_sessions_of_a_tree_take_cassette_numbers_in_the_order_they_ask() {
        let inner = Arc::new(Numbers::default());
        // The tree had completed 3 requests before this process.
        let order = RequestOrder::new(inner.clone(), 3, true);
        let (parent, _) = order.view();
        let (child, mut first) = order.view();
        assert!(!*first.borrow_and_update());
        ask(&parent, 2);
        ask(&child, 1);
        ask(&child, 2);
        ask(&parent, 3);
        assert_eq!(*inner.0.lock().unwrap(), vec![4, 5, 6, 7]);
        assert!(*first.borrow_and_update(), "the child's first request is seen");
    }

    #[test]
    fn other_providers_keep_each_sessions_own_numbers() {
        let inner = Arc::new(Numbers::default());
        let order = RequestOrder::new(inner.clone(), 0, false);
        let ((parent, _), (child, _)) = (order.view(), order.view());
        ask(&parent, 1);
        ask(&child, 1);
        ask(&parent, 2);
        assert_eq!(*inner.0.lock().unwrap(), vec![1, 1, 2]);
    }
}
