//! `reloop diff A B`: where two sessions part ways.

use reloop_journal::StepRecord;

use super::reading::open;
use super::CliError;
use crate::error::Exit;
use crate::options::{reword, JournalArg, JsonArg};
use crate::term::out;

#[derive(clap::Args, Debug)]
#[command(mut_args(reword(&[("json", "The difference as JSON, for tools")])))]
pub struct DiffArgs {
    /// The first session (id, unique prefix, `last`, or a session file).
    pub a: String,
    /// The second session; a fork and its parent are compared from the fork point.
    pub b: String,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

/// `reloop diff A B`: exit 0 when the sessions agree, 1 when they part ways. Both sessions are
/// walked a step at a time (A twice), so sessions of any length compare in the memory of a hash
/// a compared step.
pub fn run(args: DiffArgs) -> Result<Exit, CliError> {
    let (journal, a, b, json) = (&args.journal, args.a.as_str(), args.b.as_str(), args.json.json);
    let opened = open(journal)?;
    let (id_a, id_b) = (opened.resolve(a)?, opened.resolve(b)?);
    let (header_a, header_b) = (opened.header(&id_a)?, opened.header(&id_b)?);
    let (price_a, price_b) = (super::reading::price(&header_a), super::reading::price(&header_b));
    let walker = |id: &str| {
        let (opened, id) = (&opened, id.to_string());
        move |visit: &mut dyn FnMut(&StepRecord) -> bool| {
            opened.visit_steps(&id, &mut |step| Ok(visit(&step))).map(|_| ())
        }
    };
    let (mut walk_a, mut walk_b) = (walker(&id_a), walker(&id_b));
    let mut side_a = reloop_inspect::diff::Side { header: &header_a, price: &price_a, walk: &mut walk_a };
    let mut side_b = reloop_inspect::diff::Side { header: &header_b, price: &price_b, walk: &mut walk_b };
    let d = reloop_inspect::diff::diff(&mut side_a, &mut side_b)?;
    if json {
        crate::term::json_line(&d, true).map_err(|e| CliError::Io(e.to_string()))?;
    } else {
        let unpriced: std::collections::BTreeSet<&String> =
            d.after_a.spend.unpriced_models.iter().chain(&d.after_b.spend.unpriced_models).collect();
        super::reading::warn_unpriced(unpriced);
        out!("{}", reloop_inspect::diff::text(&d));
    }
    Ok(if d.first_difference.is_some() { Exit::Failed } else { Exit::Success })
}
