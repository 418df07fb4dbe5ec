//! Asynchronous file system calls: as in tokio, each runs the matching
//! [`std::fs`] call on the runtime's blocking pool (files have no
//! readiness), costing a hand-off per call: for configuration, snapshots
//! and logs, not high-rate I/O. Call them inside a runtime (they panic
//! elsewhere); a cancelled or panicked call is an `io::Error` of kind
//! `Other`.
//!
//! ```
//! let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
//! rt.block_on(async {
//!     let dir = std::env::temp_dir().join(format!("tempo-fs-doc-{}", std::process::id()));
//!     tempo::fs::create_dir_all(&dir).await?;
//!     let file = dir.join("settings.toml");
//!     tempo::fs::write(&file, "rate = 48000\n").await?;
//!     assert_eq!(tempo::fs::read_to_string(&file).await?, "rate = 48000\n");
//!     tempo::fs::remove_file(&file).await?;
//!     std::fs::remove_dir(&dir)
//! })
//! .unwrap();
//! ```

use std::fs::Metadata;
use std::io;
use std::path::Path;

/// Runs the blocking file system call `f` on the blocking pool.
async fn asyncify<F, T>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    match crate::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(error) if error.is_panic() => Err(io::Error::other(format!(
            "the blocking file system call panicked: {error}"
        ))),
        Err(_) => Err(io::Error::other(
            "the blocking file system call was cancelled: the runtime shut down",
        )),
    }
}

/// [`std::fs::read`] on the blocking pool (the whole file as bytes), with
/// its errors.
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read(path)).await
}

/// [`std::fs::read_to_string`] on the blocking pool, with its errors
/// (`InvalidData` if not UTF-8).
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_to_string(path)).await
}

/// [`std::fs::write`] on the blocking pool, with its errors; `contents` is
/// copied first, so it need not be `'static`.
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    asyncify(move || std::fs::write(path, contents)).await
}

/// [`std::fs::create_dir_all`] on the blocking pool, with its errors.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir_all(path)).await
}

/// [`std::fs::remove_file`] on the blocking pool, with its errors.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_file(path)).await
}

/// [`std::fs::metadata`] on the blocking pool (following symbolic links),
/// with its errors.
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::metadata(path)).await
}
