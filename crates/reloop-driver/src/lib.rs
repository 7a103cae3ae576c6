//! reloop-driver
