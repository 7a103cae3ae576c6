//! Where a session's background children (flag 44, [`crate::background`]) are counted and
//! their ends queued, in the order they ended, for the parent's loop to tell.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use reloop_core::Event;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A session's background children: how many still run, and where their ends are queued.
pub(crate) struct Backgrounded {
    notices: mpsc::UnboundedSender<Event>,
    live: Arc<AtomicUsize>,
    /// Woken as each running child is gone, told or not.
    gone: Arc<Notify>,
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
    gone: Arc<Notify>,
}

/// One running background child, counted until it is dropped: after its end is queued, or when
/// its task is gone without telling (a panic), so the parent never waits for a notice that
/// cannot come.
pub(crate) struct Running {
    live: Arc<AtomicUsize>,
    gone: Arc<Notify>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
        self.gone.notify_one();
    }
}

impl Backgrounded {
    pub(crate) fn new() -> (Self, Notices) {
        let (notices, queued) = mpsc::unbounded_channel();
        let (live, gone) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
        let followers = Mutex::new(Vec::new());
        let ended = CancellationToken::new();
        (
            Backgrounded { notices, live: live.clone(), gone: gone.clone(), ended, followers },
            Notices { queued, live, gone },
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
        loop {
            if let Ok(notice) = self.queued.try_recv() {
                return Some(notice);
            }
            if self.live.load(Ordering::SeqCst) == 0 {
                return None;
            }
            tokio::select! {
                notice = self.queued.recv() => return notice,
                () = self.gone.notified() => {}
            }
        }
    }
}

impl Backgrounded {
    /// A child starts in the background: it counts as running while the guard lives.
    pub(crate) fn launched(&self) -> Running {
        self.live.fetch_add(1, Ordering::SeqCst);
        Running { live: self.live.clone(), gone: self.gone.clone() }
    }

    /// A child's end, queued for the parent to tell.
    pub(crate) fn tell(&self, notice: Event) {
        let _ = self.notices.send(notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child counted as running that is gone without a notice (its task panicked) does not
    /// keep the parent waiting; one that told is heard first.
    #[tokio::test]
    async fn the_parent_waits_only_for_children_that_can_still_tell() {
        let (background, mut notices) = Backgrounded::new();
        assert_eq!(notices.next().await, None, "no child: nothing to wait for");
        let told = background.launched();
        let lost = background.launched();
        background.tell(Event::user_input(vec![reloop_core::ContentBlock::text("ended")]));
        drop(told);
        assert!(matches!(notices.next().await, Some(Event::UserInput { .. })));
        let waiting = tokio::spawn(async move { notices.next().await });
        drop(lost);
        let next = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await;
        assert_eq!(next.expect("the wait ends").expect("joined"), None);
    }
}
