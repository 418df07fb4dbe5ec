//! `tempo::fs` on both schedulers: each call does what its `std::fs`
//! counterpart does, from inside a task, with std's errors.

use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

mod support;
use support::*;

/// A fresh directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "tempo-fs-test-{}-{test}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The kind of the error `result` holds.
fn kind<T: std::fmt::Debug>(result: std::io::Result<T>) -> ErrorKind {
    result.unwrap_err().kind()
}

on_each_flavor! {
    #[test]
    fn write_then_read_back() {
        let mut builder = builder();
        builder.enable_all();
        let dir = TempDir::new("rw");
        let rt = builder.build().unwrap();
        let file = dir.0.join("config.toml");
        rt.block_on(async {
            tempo::fs::write(&file, "rate = 48000\n").await.unwrap();
            assert_eq!(tempo::fs::read(&file).await.unwrap(), b"rate = 48000\n");
            assert_eq!(tempo::fs::read_to_string(&file).await.unwrap(), "rate = 48000\n");
            // Writing again truncates.
            tempo::fs::write(&file, vec![1u8, 2]).await.unwrap();
            assert_eq!(tempo::fs::read(&file).await.unwrap(), [1, 2]);
        });
        assert_eq!(std::fs::read(&file).unwrap(), [1, 2]);
    }

    #[test]
    fn create_dirs_stat_and_remove() {
        let mut builder = builder();
        builder.enable_all();
        let dir = TempDir::new("dirs");
        let rt = builder.build().unwrap();
        let nested = dir.0.join("a").join("b");
        let file = nested.join("state.json");
        rt.block_on(async {
            tempo::fs::create_dir_all(&nested).await.unwrap();
            // Again: an existing directory is fine.
            tempo::fs::create_dir_all(&nested).await.unwrap();
            assert!(tempo::fs::metadata(&nested).await.unwrap().is_dir());
            tempo::fs::write(&file, "{}").await.unwrap();
            let meta = tempo::fs::metadata(&file).await.unwrap();
            assert!(meta.is_file());
            assert_eq!(meta.len(), 2);
            tempo::fs::remove_file(&file).await.unwrap();
        });
        assert!(!file.exists());
    }

    #[test]
    fn errors_are_std_errors() {
        let mut builder = builder();
        builder.enable_all();
        let dir = TempDir::new("errors");
        let rt = builder.build().unwrap();
        let missing = dir.0.join("missing");
        let binary = dir.0.join("binary");
        rt.block_on(async {
            assert_eq!(kind(tempo::fs::read(&missing).await), ErrorKind::NotFound);
            assert_eq!(kind(tempo::fs::read_to_string(&missing).await), ErrorKind::NotFound);
            assert_eq!(kind(tempo::fs::metadata(&missing).await), ErrorKind::NotFound);
            assert_eq!(kind(tempo::fs::remove_file(&missing).await), ErrorKind::NotFound);
            assert_eq!(
                kind(tempo::fs::write(missing.join("file"), "x").await),
                ErrorKind::NotFound
            );
            tempo::fs::write(&binary, [0xff, 0xfe]).await.unwrap();
            assert_eq!(kind(tempo::fs::read_to_string(&binary).await), ErrorKind::InvalidData);
        });
    }

    #[test]
    fn many_calls_at_once_with_few_threads() {
        let mut builder = builder();
        builder.enable_all();
        let dir = TempDir::new("many");
        let rt = builder.max_blocking_threads(2).build().unwrap();
        let root = dir.0.clone();
        rt.block_on(async move {
            let writers: Vec<_> = (0..16)
                .map(|i| {
                    let path = root.join(format!("{i}.txt"));
                    tempo::spawn(async move {
                        tempo::fs::write(&path, i.to_string()).await.unwrap();
                        tempo::fs::read_to_string(&path).await.unwrap()
                    })
                })
                .collect();
            for (i, writer) in writers.into_iter().enumerate() {
                assert_eq!(writer.await.unwrap(), i.to_string());
            }
        });
    }
}
