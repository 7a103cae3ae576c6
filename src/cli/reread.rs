//! A file read more than once: a session dump is checked whole, then written or replayed, a step
//! at a time each. A pipe (`<(...)`, `/dev/stdin`) can be read only once, so it is first copied
//! to an anonymous temporary file; a regular file is read where it is.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::path::Path;

pub(crate) struct Rereadable(File);

impl Rereadable {
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        if file.metadata()?.is_file() {
            return Ok(Rereadable(file));
        }
        let mut spool = tempfile::tempfile()?;
        io::copy(&mut &file, &mut spool)?;
        Ok(Rereadable(spool))
    }

    /// The file, from its start again.
    pub(crate) fn read(&self) -> io::Result<&File> {
        (&self.0).seek(SeekFrom::Start(0))?;
        Ok(&self.0)
    }
}
