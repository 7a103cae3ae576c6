//! Hook outcomes and what they mean for the loop (filled in by the hooks work).
