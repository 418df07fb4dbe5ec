//! Runtime names on the command line: `name` or `name:T` (T a throttling
//! period in milliseconds), and why a name can be refused.

use std::time::Duration;

/// Why a runtime name was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeNameError {
    /// Not a runtime this benchmark knows.
    Unknown {
        /// The name asked for.
        name: String,
        /// The names the benchmark knows.
        known: &'static [&'static str],
    },
    /// A `:T` suffix that is not a number of milliseconds.
    BadPeriod(String),
}

impl std::fmt::Display for RuntimeNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuntimeNameError::Unknown { name, known } => {
                write!(f, "unknown runtime `{name}` (known: {})", known.join(", "))
            }
            RuntimeNameError::BadPeriod(n) => {
                write!(f, "`{n}`: expected a throttling period in ms after `:`")
            }
        }
    }
}

impl std::error::Error for RuntimeNameError {}

/// Parses the `T` of `name:T` as milliseconds.
pub fn parse_period(name: &str, ms: &str) -> Result<Duration, RuntimeNameError> {
    ms.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| Duration::from_secs_f64(v / 1e3))
        .ok_or_else(|| RuntimeNameError::BadPeriod(name.to_string()))
}

/// Milliseconds without a trailing `.0` for whole numbers.
pub fn fmt_ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms.fract() == 0.0 {
        format!("{}", ms as u64)
    } else {
        format!("{ms}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_parse_and_print_back() {
        let d = parse_period("x:2.5", "2.5").unwrap();
        assert_eq!(fmt_ms(d), "2.5");
        assert_eq!(fmt_ms(parse_period("x:20", "20").unwrap()), "20");
        assert!(parse_period("x:-1", "-1").is_err());
    }
}
