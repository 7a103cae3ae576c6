//! A few connections kept for reuse: a page takes one (or opens one when none is idle) on a
//! blocking thread, and gives it back.

use std::sync::{Arc, Mutex};

/// Opens a new connection; its error in words.
pub(crate) type Make<T> = Arc<dyn Fn() -> Result<T, String> + Send + Sync>;

/// The most idle connections kept.
const KEEP: usize = 8;

pub(crate) struct Pool<T> {
    idle: Mutex<Vec<T>>,
    make: Make<T>,
}

impl<T> Pool<T> {
    pub(crate) fn new(idle: Vec<T>, make: Make<T>) -> Self {
        Pool { idle: Mutex::new(idle), make }
    }

    /// Runs `f` on a connection; a connection whose call failed is dropped, not kept.
    pub(crate) fn run<R, E>(&self, f: impl FnOnce(&mut T) -> Result<R, E>) -> Result<R, String>
    where
        E: std::fmt::Display,
    {
        let taken = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut conn = match taken {
            Some(conn) => conn,
            None => (self.make)()?,
        };
        let out = f(&mut conn).map_err(|e| e.to_string());
        if out.is_ok() {
            if let Ok(mut idle) = self.idle.lock() {
                if idle.len() < KEEP {
                    idle.push(conn);
                }
            }
        }
        out
    }
}
