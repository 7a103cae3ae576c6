//! A predicate over paths that hides files from tools and from the sandbox's masks. It has its
//! own module so that the sandbox's confinement ([`crate::confine`]) and the tool contract
//! ([`crate::tool`], which holds a confinement) both use it without depending on each other.

use std::path::Path;
use std::sync::Arc;

/// A predicate over paths, shared between calls (see [`crate::ToolContext::hidden`]).
#[derive(Clone)]
pub struct PathFilter(Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl PathFilter {
    /// A filter hiding the paths for which `hides` is true. The closure sits behind an `Arc`,
    /// so the clone each call's context takes shares it.
    pub fn new(hides: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        PathFilter(Arc::new(hides))
    }

    /// Whether `path` (as the walk found it) is hidden.
    pub fn hides(&self, path: &Path) -> bool {
        (self.0)(path)
    }
}

impl std::fmt::Debug for PathFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PathFilter(..)")
    }
}
