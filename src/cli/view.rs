//! `reloop view SESSION`: the session as one self-contained HTML page, a timeline a person
//! clicks through. The page itself (its template, and the journal walks that fill it) is
//! `reloop_serve::page`, which `reloop serve` serves too; this writes it to a file.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;

use reloop_serve::page::{write_page, PageError, Window};

use super::{current_dir, CliError};
use crate::error::Exit;
use crate::options::{JournalArg, SessionArg};
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct ViewArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// Where to write the page [default: reloop-ID.html, ID the start of the session id].
    #[arg(short, long, value_name = "FILE.html")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub journal: JournalArg,
}

pub fn run(args: ViewArgs) -> Result<Exit, CliError> {
    let (selector, output) = (args.session.session.as_str(), args.output);
    let journal = args.journal.open(&current_dir()?, crate::launch::journal::Open::Reading)?;
    let id = journal.resolve(selector)?;
    let header = journal.header(&id)?;
    let price = super::reading::price(&header);
    let path = output.unwrap_or_else(|| PathBuf::from(format!("reloop-{}.html", id.get(..8).unwrap_or(&id))));
    let written = File::create(&path).map_err(PageError::Io).and_then(|file| {
        let mut out = BufWriter::new(file);
        write_page(&mut out, &journal, &id, &price, Window::ALL)
    });
    let written = match written {
        Ok(written) => written,
        // `-o /dev/stdout` into a reader that has gone: a normal end, as for any output.
        Err(PageError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(Exit::Success),
        Err(e) => {
            // A page cut short would open as a broken timeline: better none.
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
                let _ = std::fs::remove_file(&path);
            }
            return Err(match e {
                PageError::Journal(e) => e.into(),
                PageError::Io(e) => CliError::Io(format!("cannot write {}: {e}", path.display())),
            });
        }
    };
    super::reading::warn_unpriced(&written.unpriced_models);
    outln!("wrote {} ({} steps); open it in a browser", path.display(), written.steps);
    Ok(Exit::Success)
}
