//! The list's filters: read from a URL's query (so a link carries them), checked (a bad value
//! is a clear error, a 400, never a panic), and turned into one SQL condition both databases
//! run with their own placeholders and search.

use std::collections::BTreeMap;

/// The most rows one page lists.
pub const MAX_PER_PAGE: i64 = 200;

/// Which state a session is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// A writer holds it now.
    Running,
    /// Ended, any way.
    Finished,
    /// Neither ended nor written (a crash, a queued session not claimed yet).
    Unfinished,
    /// Ended with this terminal reason (`completed`, `max_turns`, ...).
    Reason(String),
}

/// What the list shows: every field optional, all of them together (AND).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// Words every listed session's texts hold (prompts, the model's text, tool inputs and results).
    pub q: Option<String>,
    /// Created at or after (ms since the epoch).
    pub from_ms: Option<i64>,
    /// Created before (ms since the epoch).
    pub to_ms: Option<i64>,
    /// Its state.
    pub status: Option<Status>,
    /// The model that answered, or the one asked for.
    pub model: Option<String>,
    /// run, fork, rerun, agent, import, prop.
    pub kind: Option<String>,
    /// Cost bounds, USD.
    pub cost_min: Option<f64>,
    /// Cost bounds, USD.
    pub cost_max: Option<f64>,
    /// Total token bounds (input, cache and output).
    pub tokens_min: Option<i64>,
    /// Total token bounds (input, cache and output).
    pub tokens_max: Option<i64>,
    /// Sessions whose parent this is (its forks, reruns and subagents).
    pub parent: Option<String>,
    /// The page, from 1.
    pub page: i64,
    /// Rows per page, 1 to [`MAX_PER_PAGE`].
    pub per: i64,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            q: None,
            from_ms: None,
            to_ms: None,
            status: None,
            model: None,
            kind: None,
            cost_min: None,
            cost_max: None,
            tokens_min: None,
            tokens_max: None,
            parent: None,
            page: 1,
            per: 50,
        }
    }
}

/// The kinds of session the `source` filter takes.
pub const KINDS: [&str; 6] = ["run", "fork", "rerun", "agent", "import", "prop"];

/// The query keys the list understands; any other is refused, so a typo is not silently ignored.
pub const KEYS: [&str; 13] = [
    "q",
    "from",
    "to",
    "status",
    "model",
    "source",
    "cost_min",
    "cost_max",
    "tokens_min",
    "tokens_max",
    "parent",
    "page",
    "per",
];

/// A value of the filter (a placeholder's).
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// Text.
    Text(String),
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
}

impl Filter {
    /// The filter a URL's query asks for; an empty value is no filter. `Err` says which key is
    /// wrong and why.
    pub fn parse(query: &BTreeMap<String, String>) -> Result<Filter, String> {
        let mut f = Filter::default();
        for (key, value) in query {
            if !KEYS.contains(&key.as_str()) {
                return Err(format!("unknown parameter {key:?} (known: {})", KEYS.join(", ")));
            }
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            if value.len() > 1000 {
                return Err(format!("{key}: longer than 1000 characters"));
            }
            let number = |what: &str| -> Result<f64, String> {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .ok_or_else(|| format!("{key}: {value:?} is not {what}"))
            };
            let int = |lo: i64, hi: i64| -> Result<i64, String> {
                value
                    .parse::<i64>()
                    .ok()
                    .filter(|n| (lo..=hi).contains(n))
                    .ok_or_else(|| format!("{key}: {value:?} is not a whole number from {lo} to {hi}"))
            };
            match key.as_str() {
                "q" => f.q = Some(value.to_string()),
                "from" => f.from_ms = Some(date_ms(value).map_err(|e| format!("from: {e}"))?),
                "to" => f.to_ms = Some(date_ms(value).map_err(|e| format!("to: {e}"))? + end_of(value)),
                "status" => {
                    f.status = Some(match value {
                        "running" => Status::Running,
                        "finished" => Status::Finished,
                        "unfinished" => Status::Unfinished,
                        r if r.chars().all(|c| c.is_ascii_lowercase() || c == '_') => Status::Reason(r.to_string()),
                        _ => return Err(format!("status: {value:?} is no state or terminal reason")),
                    })
                }
                "model" => f.model = Some(value.to_string()),
                "source" if KINDS.contains(&value) => f.kind = Some(value.to_string()),
                "source" => return Err(format!("source: {value:?} is not one of {}", KINDS.join(", "))),
                "cost_min" => f.cost_min = Some(number("a cost in USD")?),
                "cost_max" => f.cost_max = Some(number("a cost in USD")?),
                "tokens_min" => f.tokens_min = Some(int(0, i64::MAX)?),
                "tokens_max" => f.tokens_max = Some(int(0, i64::MAX)?),
                "parent" => f.parent = Some(value.to_string()),
                "page" => f.page = int(1, 1_000_000)?,
                _ => f.per = int(1, MAX_PER_PAGE)?,
            }
        }
        Ok(f)
    }

    /// The words of the search, each a parameter of its own: a session matches when its texts
    /// hold every one, in one text or spread over several. A word with no letter or digit is no
    /// word (it would match nothing, or everything); at most 32 count.
    pub fn words(&self) -> Vec<String> {
        let q = self.q.as_deref().unwrap_or_default();
        q.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).take(32).map(str::to_string).collect()
    }

    /// The condition (`1=1` for none) with its parameters, placeholders made by `ph` from their
    /// 1-based number; `search` is the condition that the session holds each word (given each
    /// word's placeholder), which the two databases write differently, and `word` the
    /// parameter a word is searched as. A search of no word matches nothing.
    pub fn condition(
        &self,
        ph: &dyn Fn(usize) -> String,
        search: &dyn Fn(&[String]) -> String,
        word: &dyn Fn(&str) -> String,
    ) -> (String, Vec<Param>) {
        let mut c = Condition { parts: vec!["1=1".to_string()], params: Vec::new(), ph };
        if self.q.is_some() {
            let words = self.words();
            if words.is_empty() {
                c.parts.push("1=0".into());
            } else {
                let mut placeholders = Vec::new();
                for w in &words {
                    c.params.push(Param::Text(word(w)));
                    placeholders.push((c.ph)(c.params.len()));
                }
                c.parts.push(search(&placeholders));
            }
        }
        if let Some(v) = self.from_ms {
            c.add(&|p| format!("created_at_ms >= {p}"), Param::Int(v));
        }
        if let Some(v) = self.to_ms {
            c.add(&|p| format!("created_at_ms < {p}"), Param::Int(v));
        }
        match &self.status {
            Some(Status::Running) => c.parts.push("writer IS NOT NULL".into()),
            Some(Status::Finished) => c.parts.push("terminal_reason IS NOT NULL AND writer IS NULL".into()),
            Some(Status::Unfinished) => c.parts.push("terminal_reason IS NULL AND writer IS NULL".into()),
            Some(Status::Reason(r)) => c.add(&|p| format!("terminal_reason = {p}"), Param::Text(r.clone())),
            None => {}
        }
        if let Some(m) = &self.model {
            c.add(&|p| format!("(model = {p} OR requested_model = {p})"), Param::Text(m.clone()));
        }
        if let Some(k) = &self.kind {
            c.add(&|p| format!("kind = {p}"), Param::Text(k.clone()));
        }
        if let Some(v) = self.cost_min {
            c.add(&|p| format!("unpriced = 0 AND cost_usd >= {p}"), Param::Real(v));
        }
        if let Some(v) = self.cost_max {
            c.add(&|p| format!("unpriced = 0 AND cost_usd <= {p}"), Param::Real(v));
        }
        if let Some(v) = self.tokens_min {
            c.add(&|p| format!("input_tokens + output_tokens >= {p}"), Param::Int(v));
        }
        if let Some(v) = self.tokens_max {
            c.add(&|p| format!("input_tokens + output_tokens <= {p}"), Param::Int(v));
        }
        if let Some(v) = &self.parent {
            c.add(&|p| format!("parent_id = {p}"), Param::Text(v.clone()));
        }
        let Condition { parts, params, .. } = c;
        (parts.join(" AND "), params)
    }

    /// The row the page starts at.
    pub fn offset(&self) -> i64 {
        (self.page - 1).saturating_mul(self.per)
    }
}

/// A condition being built: its parts, their parameters, and how a placeholder is written.
struct Condition<'a> {
    parts: Vec<String>,
    params: Vec<Param>,
    ph: &'a dyn Fn(usize) -> String,
}

impl Condition<'_> {
    /// Adds the part `sql` writes around the next parameter's placeholder.
    fn add(&mut self, sql: &dyn Fn(&str) -> String, p: Param) {
        self.params.push(p);
        self.parts.push(sql(&(self.ph)(self.params.len())));
    }
}

/// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]`, UTC, as ms since the epoch.
fn date_ms(value: &str) -> Result<i64, String> {
    let civil = if value.len() == 10 {
        value.parse::<jiff::civil::Date>().map(|d| d.to_datetime(jiff::civil::Time::midnight()))
    } else {
        value.parse::<jiff::civil::DateTime>()
    };
    let civil = civil.map_err(|_| format!("{value:?} is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC)"))?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map(|z| z.timestamp().as_millisecond())
        .map_err(|e| format!("{value:?}: {e}"))
}

/// A day given as `to` includes that whole day.
fn end_of(value: &str) -> i64 {
    if value.len() == 10 {
        86_400_000
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Filter, String> {
        Filter::parse(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn empty_values_are_no_filter_and_bad_ones_say_what_is_wrong() {
        assert_eq!(parse(&[("q", ""), ("cost_min", " ")]).unwrap(), Filter::default());
        let f = parse(&[("from", "2026-01-02"), ("to", "2026-01-02"), ("status", "max_turns"), ("per", "10")]).unwrap();
        assert_eq!(f.to_ms.unwrap() - f.from_ms.unwrap(), 86_400_000);
        assert_eq!((f.status, f.per), (Some(Status::Reason("max_turns".into())), 10));
        for (k, v, said) in [
            ("per", "100000", "per: \"100000\" is not a whole number from 1 to 200"),
            ("page", "-1", "page:"),
            ("cost_min", "NaN", "cost_min:"),
            ("from", "yesterday", "from: \"yesterday\" is not a date"),
            ("source", "x", "source:"),
            ("status", "<b>", "status:"),
            ("bogus", "1", "unknown parameter \"bogus\""),
        ] {
            let e = parse(&[(k, v)]).unwrap_err();
            assert!(e.starts_with(said), "{e}");
        }
    }

    #[test]
    fn the_condition_numbers_its_placeholders_in_order() {
        let f = parse(&[("q", "login * bug"), ("model", "m"), ("tokens_min", "5"), ("status", "running")]).unwrap();
        let (sql, params) =
            f.condition(&|n| format!("${n}"), &|p| format!("MATCH({})", p.join(",")), &|w| format!("'{w}'"));
        assert_eq!(
            sql,
            "1=1 AND MATCH($1,$2) AND writer IS NOT NULL AND (model = $3 OR requested_model = $3) AND input_tokens + output_tokens >= $4"
        );
        let text = |s: &str| Param::Text(s.into());
        assert_eq!(params, vec![text("'login'"), text("'bug'"), text("m"), Param::Int(5)]);
        let nothing = parse(&[("q", "\")(*")]).unwrap();
        assert_eq!(nothing.condition(&|n| format!("${n}"), &|_| unreachable!(), &|w| w.into()).0, "1=1 AND 1=0");
    }
}
