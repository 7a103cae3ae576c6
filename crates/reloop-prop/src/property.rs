//! The user's properties: CEL expressions over a case's [`Summary`] and the configuration.

use std::sync::Arc;

use cel::{Context, Env, Program, Value as CelValue};

use crate::Summary;

/// A property's text was wrong, or it said something other than true or false.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PropertyError {
    /// `--property` without `NAME: EXPR`.
    #[error("property {text:?}: expected NAME: EXPR")]
    Shape {
        /// The text given.
        text: String,
    },
    /// The expression does not parse.
    #[error("property {name}: line {line}, column {column}: {message}")]
    Parse {
        /// The property's name.
        name: String,
        /// 1-based line of the expression.
        line: i64,
        /// 1-based column.
        column: i64,
        /// What the parser said.
        message: String,
    },
    /// Evaluating it failed (an unknown variable, a wrong type) or gave no boolean.
    #[error("property {name}: {message}")]
    Eval {
        /// The property's name.
        name: String,
        /// What went wrong.
        message: String,
    },
}

/// One named property: a boolean CEL expression every case must make true.
#[derive(Debug)]
pub struct Property {
    /// Its name, as reports show it.
    pub name: String,
    /// The expression's text.
    pub expr: String,
    program: Program,
}

impl Property {
    /// The property `name` holding `expr`.
    pub fn parse(name: &str, expr: &str) -> Result<Property, PropertyError> {
        let program = Program::compile(expr).map_err(|errors| {
            let first = errors.errors.first();
            PropertyError::Parse {
                name: name.to_string(),
                line: first.map_or(1, |e| e.pos.0 as i64),
                column: first.map_or(1, |e| e.pos.1 as i64 + 1),
                message: first.map_or_else(|| errors.to_string(), |e| e.msg.clone()),
            }
        })?;
        Ok(Property { name: name.to_string(), expr: expr.to_string(), program })
    }

    /// A property written `NAME: EXPR` (a `--property` value or a line of a properties file).
    pub fn parse_line(text: &str) -> Result<Property, PropertyError> {
        let shape = || PropertyError::Shape { text: text.to_string() };
        let (name, expr) = text.split_once(':').ok_or_else(shape)?;
        let name = name.trim();
        if name.is_empty() || expr.trim().is_empty() || name.contains(char::is_whitespace) {
            return Err(shape());
        }
        Property::parse(name, expr.trim())
    }

    /// Properties from a file: one `NAME: EXPR` a line; blank lines and `#` comments skipped.
    pub fn parse_file(text: &str) -> Result<Vec<Property>, PropertyError> {
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(Property::parse_line).collect()
    }
}

/// Evaluates properties over summaries, sharing one CEL environment.
pub(crate) struct Evaluator {
    env: Arc<Env>,
    config: serde_json::Value,
}

impl Evaluator {
    pub(crate) fn new(config: serde_json::Value) -> Self {
        Evaluator { env: Arc::new(Env::stdlib()), config }
    }

    /// Whether `property` holds for `summary`.
    pub(crate) fn holds(&self, property: &Property, summary: &Summary) -> Result<bool, PropertyError> {
        let eval = |message: String| PropertyError::Eval { name: property.name.clone(), message };
        let mut context = Context::with_env(self.env.clone());
        let vars = serde_json::to_value(summary).map_err(|e| eval(e.to_string()))?;
        if let serde_json::Value::Object(vars) = vars {
            for (key, value) in vars {
                context.add_variable_from_value(key, cel_value(value));
            }
        }
        context.add_variable_from_value("config", cel_value(self.config.clone()));
        match property.program.execute(&context) {
            Ok(CelValue::Bool(b)) => Ok(b),
            Ok(other) => Err(eval(format!("gives {other:?}, not true or false"))),
            Err(e) => Err(eval(e.to_string())),
        }
    }
}

/// A JSON value as CEL sees it, every whole number an `int` so `requests <= 3` compares
/// like with like (CEL has no implicit conversion between `uint` and `int`).
fn cel_value(value: serde_json::Value) -> CelValue {
    use serde_json::Value as J;
    match value {
        J::Null => CelValue::Null,
        J::Bool(b) => CelValue::Bool(b),
        J::Number(n) => match n.as_i64() {
            Some(i) => CelValue::Int(i),
            None => CelValue::Float(n.as_f64().unwrap_or(f64::MAX)),
        },
        J::String(s) => CelValue::String(Arc::new(s)),
        J::Array(items) => CelValue::List(Arc::new(items.into_iter().map(cel_value).collect())),
        J::Object(map) => {
            let map: std::collections::HashMap<String, CelValue> =
                map.into_iter().map(|(k, v)| (k, cel_value(v))).collect();
            CelValue::from(map)
        }
    }
}
