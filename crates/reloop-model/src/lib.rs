//! reloop-model
