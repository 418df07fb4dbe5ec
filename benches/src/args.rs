//! A small command-line parser for the benchmark binaries: `--name value`
//! options with defaults, `--flag` switches, and an error for anything unknown
//! (a typo in a benchmark option must not silently measure the default).

use std::collections::VecDeque;
use std::str::FromStr;

/// Arguments not consumed yet.
#[derive(Debug)]
pub struct Args {
    rest: VecDeque<String>,
}

impl Args {
    /// The process arguments, without the program name.
    pub fn from_env() -> Args {
        Args::from_vec(std::env::args().skip(1).collect())
    }

    /// Arguments from a list (without a program name).
    pub fn from_vec(args: Vec<String>) -> Args {
        Args { rest: args.into() }
    }

    /// Removes and returns the first argument if it is not an option (a
    /// subcommand).
    pub fn subcommand(&mut self) -> Option<String> {
        match self.rest.front() {
            Some(a) if !a.starts_with('-') => self.rest.pop_front(),
            _ => None,
        }
    }

    /// Removes `--help` (or `-h`) and reports whether it was there: a
    /// binary checks this first and prints its usage instead of running.
    pub fn help(&mut self) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != "--help" && a != "-h");
        self.rest.len() != before
    }

    /// Removes `--name` and reports whether it was there.
    pub fn flag(&mut self, name: &str) -> bool {
        let key = format!("--{name}");
        match self.rest.iter().position(|a| *a == key) {
            Some(i) => {
                self.rest.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes `--name value` (or `--name=value`) and returns the raw value.
    pub fn raw(&mut self, name: &str) -> Result<Option<String>, String> {
        let key = format!("--{name}");
        let prefix = format!("{key}=");
        if let Some(i) = self.rest.iter().position(|a| a.starts_with(&prefix)) {
            let a = self.rest.remove(i).unwrap_or_default();
            return Ok(Some(a[prefix.len()..].to_string()));
        }
        match self.rest.iter().position(|a| *a == key) {
            Some(i) => {
                self.rest.remove(i);
                self.rest
                    .remove(i)
                    .map(Some)
                    .ok_or_else(|| format!("{key} needs a value"))
            }
            None => Ok(None),
        }
    }

    /// Removes `--name value` and parses it, or returns `default`.
    pub fn value<T: FromStr>(&mut self, name: &str, default: T) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        match self.raw(name)? {
            Some(v) => v.parse().map_err(|e| format!("--{name} {v}: {e}")),
            None => Ok(default),
        }
    }

    /// Removes `--name a,b,c` and parses each item, or returns `default`.
    pub fn list<T: FromStr>(&mut self, name: &str, default: Vec<T>) -> Result<Vec<T>, String>
    where
        T::Err: std::fmt::Display,
    {
        match self.raw(name)? {
            Some(v) => v
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.trim().parse().map_err(|e| format!("--{name} {s}: {e}")))
                .collect(),
            None => Ok(default),
        }
    }

    /// Fails if any argument was not consumed.
    pub fn finish(self) -> Result<(), String> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "unknown arguments: {}",
                self.rest.into_iter().collect::<Vec<_>>().join(" ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Args {
        Args::from_vec(s.split_whitespace().map(String::from).collect())
    }

    #[test]
    fn values_flags_lists_and_defaults() {
        let mut a = args("run --streams 500 --burst --runtimes=tokio,threads --secs 2.5");
        assert_eq!(a.subcommand().as_deref(), Some("run"));
        assert_eq!(a.value("streams", 1usize).unwrap(), 500);
        assert!(a.flag("burst"));
        assert!(!a.flag("quick"));
        assert_eq!(
            a.list::<String>("runtimes", vec![]).unwrap(),
            vec!["tokio".to_string(), "threads".to_string()]
        );
        assert_eq!(a.value("secs", 1.0f64).unwrap(), 2.5);
        assert_eq!(a.value("size", 160usize).unwrap(), 160);
        assert!(a.finish().is_ok());
    }

    #[test]
    fn help_is_found_anywhere_and_consumed() {
        let mut a = args("--streams 5 --help");
        assert!(a.help());
        assert_eq!(a.value("streams", 1usize).unwrap(), 5);
        assert!(a.finish().is_ok());
        assert!(args("-h").help());
        assert!(!args("--quick").help());
    }

    #[test]
    fn errors_are_reported() {
        assert!(args("--streams x").value("streams", 1usize).is_err());
        assert!(args("--streams").value("streams", 1usize).is_err());
        assert!(args("--bogus 1").finish().is_err());
    }
}
