//! Asynchronous file system calls, run on the blocking pool.
//!
//! Operating systems offer no readiness-based file I/O (a regular file is
//! always "ready", and a read may still block on the disk), so, as in
//! tokio, every function here runs the matching [`std::fs`] call on the
//! runtime's blocking pool ([`spawn_blocking`](crate::task::spawn_blocking))
//! and awaits it: the runtime's thread goes on running tasks meanwhile.
//! Each call costs a hand-off to a pool thread and back, which suits
//! configuration files, state snapshots and logs read or written now and
//! then; it is not a path for high-rate I/O.
//!
//! Names and signatures follow `tokio::fs`. Call them inside a runtime
//! (they panic elsewhere, as `spawn_blocking` does). If the runtime shuts
//! down before the call ran, or the call panicked, the error is an
//! `io::Error` of kind `Other` that says so.
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

/// Reads the whole file at `path` into a vector of bytes: [`std::fs::read`]
/// on the blocking pool.
///
/// # Errors
///
/// Those of [`std::fs::read`] (the file is missing, unreadable, ...).
///
/// ```
/// # let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let path = std::env::temp_dir().join(format!("tempo-fs-read-{}", std::process::id()));
/// tempo::fs::write(&path, [1u8, 2, 3]).await?;
/// assert_eq!(tempo::fs::read(&path).await?, [1, 2, 3]);
/// # tempo::fs::remove_file(&path).await
/// # }).unwrap();
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read(path)).await
}

/// Reads the whole file at `path` into a string: [`std::fs::read_to_string`]
/// on the blocking pool.
///
/// # Errors
///
/// Those of [`std::fs::read_to_string`], including `InvalidData` if the
/// file is not UTF-8.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_to_string(path)).await
}

/// Writes `contents` as the whole content of the file at `path`, creating
/// it if needed and truncating it otherwise: [`std::fs::write`] on the
/// blocking pool. `contents` is copied first, so it need not be `'static`.
///
/// # Errors
///
/// Those of [`std::fs::write`] (missing directory, no permission, ...).
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    asyncify(move || std::fs::write(path, contents)).await
}

/// Creates the directory `path` and every missing parent:
/// [`std::fs::create_dir_all`] on the blocking pool. An existing directory
/// is not an error.
///
/// # Errors
///
/// Those of [`std::fs::create_dir_all`] (a parent is a file, no
/// permission, ...).
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir_all(path)).await
}

/// Removes the file at `path`: [`std::fs::remove_file`] on the blocking
/// pool.
///
/// # Errors
///
/// Those of [`std::fs::remove_file`] (`NotFound` if it does not exist, ...).
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_file(path)).await
}

/// Returns the metadata of the file or directory at `path`, following
/// symbolic links: [`std::fs::metadata`] on the blocking pool.
///
/// # Errors
///
/// Those of [`std::fs::metadata`] (`NotFound` if it does not exist, ...).
///
/// ```
/// # let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let path = std::env::temp_dir().join(format!("tempo-fs-meta-{}", std::process::id()));
/// tempo::fs::write(&path, "12345").await?;
/// let meta = tempo::fs::metadata(&path).await?;
/// assert!(meta.is_file());
/// assert_eq!(meta.len(), 5);
/// # tempo::fs::remove_file(&path).await
/// # }).unwrap();
/// ```
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::metadata(path)).await
}
