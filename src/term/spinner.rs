//! A sign of life while a live run waits for the model or a tool: a spinner with what it waits
//! for and for how long, on stderr.
//!
//! Only in text mode and only when stderr is a terminal: JSON and stream-json are for programs,
//! and a log file must not fill with redraws. The spinner is cleared before anything else is
//! printed and drawn again after, so it never mixes into the run's own lines.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the spinner turns and its clock updates.
const TICK: Duration = Duration::from_millis(120);

/// The spinner of one run; a no-op when disabled.
pub struct Spinner {
    enabled: bool,
    bar: Option<ProgressBar>,
    label: String,
}

impl Spinner {
    /// A spinner that shows only if `wanted` and stderr is a terminal.
    pub fn new(wanted: bool) -> Self {
        Spinner { enabled: wanted && std::io::stderr().is_terminal(), bar: None, label: String::new() }
    }

    /// A spinner that never shows.
    pub fn off() -> Self {
        Spinner { enabled: false, bar: None, label: String::new() }
    }

    /// Runs `print` with the spinner off the screen, then draws it again.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Shows `label` with a clock that starts now, unless it already shows `label`.
    pub fn show(&mut self, label: &str) {
        if !self.enabled || (self.bar.is_some() && self.label == label) {
            return;
        }
        self.label = label.to_string();
        if let Some(bar) = &self.bar {
            bar.set_message(label.to_string());
            bar.reset_elapsed();
            return;
        }
        let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
        bar.set_message(label.to_string());
        bar.enable_steady_tick(TICK);
        self.bar = Some(bar);
    }

    /// Takes the spinner off the screen until the next [`Spinner::show`].
    pub fn hide(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.hide();
    }
}
