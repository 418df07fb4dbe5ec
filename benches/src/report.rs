//! One result row as CSV: named fields in a fixed order.
//!
//! Every benchmark binary prints its result as one CSV row on stdout (and the
//! header line before it with `--header`), human-readable text on stderr. The
//! sweep reads a child's two lines back into a [`CsvRow`] and picks fields by
//! name, so adding a column never breaks the sweep.

use std::fmt::Display;

/// An ordered list of `(column name, value)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvRow {
    fields: Vec<(String, String)>,
}

impl CsvRow {
    /// An empty row.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a column. Values must not contain commas or newlines (names of
    /// runtimes, numbers): they are replaced by `;` and ` ` to keep the row valid.
    pub fn push(&mut self, name: &str, value: impl Display) -> &mut Self {
        let value = value.to_string().replace(',', ";").replace('\n', " ");
        self.fields.push((name.to_string(), value));
        self
    }

    /// Appends a float column with `decimals` digits after the point.
    pub fn push_f64(&mut self, name: &str, value: f64, decimals: usize) -> &mut Self {
        self.push(name, format!("{value:.decimals$}"))
    }

    /// The header line (column names), without a newline.
    pub fn header(&self) -> String {
        self.fields
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The values line, without a newline.
    pub fn values(&self) -> String {
        self.fields
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Rebuilds a row from a header line and a values line.
    pub fn parse(header: &str, values: &str) -> Result<CsvRow, String> {
        let names: Vec<&str> = header.trim().split(',').collect();
        let vals: Vec<&str> = values.trim().split(',').collect();
        if names.len() != vals.len() {
            return Err(format!(
                "header has {} columns, row has {}",
                names.len(),
                vals.len()
            ));
        }
        Ok(CsvRow {
            fields: names
                .into_iter()
                .zip(vals)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        })
    }

    /// The value of column `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of column `name` as a number, if present and numeric.
    pub fn get_f64(&self, name: &str) -> Option<f64> {
        self.get(name)?.parse().ok()
    }

    /// The column names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }
}

/// Writes rows (all with the same columns) as a CSV file.
pub fn write_csv(path: &std::path::Path, rows: &[CsvRow]) -> Result<(), String> {
    let mut text = String::new();
    if let Some(first) = rows.first() {
        text.push_str(&first.header());
        text.push('\n');
    }
    for r in rows {
        text.push_str(&r.values());
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_header_and_values() {
        let mut row = CsvRow::new();
        row.push("runtime", "mio-throttled:20")
            .push("streams", 2000)
            .push_f64("cpu_pct", 12.3456, 2);
        assert_eq!(row.header(), "runtime,streams,cpu_pct");
        assert_eq!(row.values(), "mio-throttled:20,2000,12.35");
        let back = CsvRow::parse(&row.header(), &row.values()).unwrap();
        assert_eq!(back, row);
        assert_eq!(back.get_f64("cpu_pct"), Some(12.35));
        assert_eq!(back.get("missing"), None);
    }

    #[test]
    fn writes_header_once_then_rows() {
        let dir = std::env::temp_dir().join(format!("tempo-benches-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut a = CsvRow::new();
        a.push("x", 1);
        let mut b = CsvRow::new();
        b.push("x", 2);
        write_csv(&path, &[a, b]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\n1\n2\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn commas_in_values_do_not_break_the_row() {
        let mut row = CsvRow::new();
        row.push("note", "a,b");
        assert_eq!(row.values(), "a;b");
        assert!(CsvRow::parse("a,b", "1").is_err());
    }
}
