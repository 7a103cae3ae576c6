//! Where a session's background children (flag 44, [`crate::background`]) are counted and
//! their ends queued, in the order they ended, for the parent's loop to tell.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use reloop_core::Event;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A session's background children: how many still run, and where their ends are queued.
pub(crate) struct Backgrounded {
    notices: mpsc::UnboundedSender<Event>,
    live: Arc<AtomicUsize>,
    /// Cancelled when the parent session ends: its background children stop.
    pub ended: CancellationToken,
    /// The tasks following them, so a stopping parent can wait for their ends to be journaled.
    pub followers: Mutex<Vec<JoinHandle<()>>>,
}

/// The parent loop's end of [`Backgrounded`]: the notifications to send, in the order the
/// children ended.
pub(crate) struct Notices {
    queued: mpsc::UnboundedReceiver<Event>,
    live: Arc<AtomicUsize>,
}

impl Backgrounded {
    pub(crate) fn new() -> (Self, Notices) {
        let (notices, queued) = mpsc::unbounded_channel();
        let live = Arc::new(AtomicUsize::new(0));
        let followers = Mutex::new(Vec::new());
        (
            Backgrounded { notices, live: live.clone(), ended: CancellationToken::new(), followers },
            Notices { queued, live },
        )
    }
}

impl Notices {
    /// Whether a notification is queued or a child still runs that will queue one.
    pub(crate) fn pending(&self) -> bool {
        self.live.load(Ordering::SeqCst) > 0 || !self.queued.is_empty()
    }

    /// The next notification; `None` once no child is left to send one.
    pub(crate) async fn next(&mut self) -> Option<Event> {
        if !self.pending() {
            return None;
        }
        self.queued.recv().await
    }
}

impl Backgrounded {
    /// A child starts in the background.
    pub(crate) fn launched(&self) {
        self.live.fetch_add(1, Ordering::SeqCst);
    }

    /// A child's end is queued (`gone`: it had been counted as running).
    pub(crate) fn tell(&self, notice: Event, gone: bool) {
        let _ = self.notices.send(notice);
        if gone {
            self.live.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
