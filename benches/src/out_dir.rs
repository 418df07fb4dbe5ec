//! Where a benchmark run writes its files.
//!
//! The committed results in `benches/results/` are a reference run; a run started without `--out` must not overwrite them by
//! accident. So a full run writes to a fresh directory of its own,
//! `benches/results/runs/<name>-<UTC date and time>/` (ignored by git), and
//! only an explicit `--out benches/results` replaces the committed files.
//! `--quick` (the smoke run CI checks) keeps its fixed place,
//! `benches/results/quick/`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `benches/results/` of this source tree.
pub fn results_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// The output directory of a run: `out` if given, `results/quick/` for a
/// quick run, else a fresh `results/runs/<name>-<timestamp>/`.
pub fn output_dir(out: Option<String>, quick: bool, name: &str) -> PathBuf {
    match out {
        Some(dir) => PathBuf::from(dir),
        None if quick => results_dir().join("quick"),
        None => fresh_dir(&results_dir().join("runs"), name, SystemTime::now()),
    }
}

/// `<parent>/<name>-<YYYY-MM-DDTHH-MM-SSZ>`, with `-2`, `-3`, ... appended
/// if that already exists (two runs in the same second).
pub fn fresh_dir(parent: &Path, name: &str, now: SystemTime) -> PathBuf {
    let base = format!("{name}-{}", utc_timestamp(now));
    let mut dir = parent.join(&base);
    let mut n = 2;
    while dir.exists() {
        dir = parent.join(format!("{base}-{n}"));
        n += 1;
    }
    dir
}

/// `YYYY-MM-DDTHH-MM-SSZ` (UTC; `-` instead of `:`, which some file
/// systems refuse).
pub fn utc_timestamp(now: SystemTime) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since the Unix epoch (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00-00-00Z");
        // An afternoon: the seconds since the epoch, and their calendar date.
        let t = UNIX_EPOCH + Duration::from_secs(1_795_451_405);
        assert_eq!(utc_timestamp(t), "2026-11-23T16-30-05Z");
        // A leap day.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_timestamp(leap), "2000-02-29T00-00-00Z");
    }

    #[test]
    fn default_output_never_is_the_committed_results() {
        let dir = output_dir(None, false, "udp");
        assert!(dir.starts_with(results_dir().join("runs")));
        assert_ne!(dir, results_dir());
        assert_eq!(output_dir(None, true, "udp"), results_dir().join("quick"));
        assert_eq!(
            output_dir(Some("/tmp/x".into()), false, "udp"),
            PathBuf::from("/tmp/x")
        );
    }

    #[test]
    fn a_taken_name_gets_a_suffix() {
        let parent = std::env::temp_dir().join(format!("tempo-out-dir-{}", std::process::id()));
        let now = UNIX_EPOCH;
        let first = fresh_dir(&parent, "udp", now);
        std::fs::create_dir_all(&first).unwrap();
        let second = fresh_dir(&parent, "udp", now);
        assert_ne!(first, second);
        assert!(second.to_string_lossy().ends_with("-2"));
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
