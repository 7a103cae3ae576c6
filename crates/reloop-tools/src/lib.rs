//! reloop-tools
