//! reloop-journal
