//! What the sockets of one driver share besides the reactor
//! ([`SocketSettings`]): the throttled flag and the host-name resolver.
//! Settings of the socket layer, kept below `handle.rs` and `net/` so
//! that the [`Handle`](crate::Handle) carries them to every socket.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The settings a driver's sockets share, behind one `Arc` held by the
/// driver and every [`Handle`](crate::Handle) (so by every socket).
#[derive(Debug, Default)]
pub(crate) struct SocketSettings {
    /// The driver is throttled: datagram sockets made now follow the
    /// throttled receive rule (`net/recv_rule.rs`).
    pub(crate) throttled: AtomicBool,
    /// Resolves host names for this driver's sockets (`net/addr.rs`).
    pub(crate) resolver: ResolverSlot,
}

/// A host-name lookup in progress: what [`Resolve::resolve`] returns.
pub type Resolving = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send>>;

/// Resolves host names for the sockets of one driver, off the thread that
/// asks; installed with
/// [`Handle::set_resolver`](crate::Handle::set_resolver).
///
/// Only names reach it: addresses that are already IPs never do (see
/// [`ToSocketAddrs`](crate::net::ToSocketAddrs)). The `tempo` runtime installs one that runs
/// `std::net::ToSocketAddrs` on its blocking pool.
///
/// ```
/// use std::net::SocketAddr;
/// use std::sync::Arc;
/// use tempo_io::net::{Resolve, Resolving};
///
/// /// Resolves every name to localhost: a test double.
/// struct Localhost;
///
/// impl Resolve for Localhost {
///     fn resolve(&self, host_and_port: String) -> Resolving {
///         let port = host_and_port.rsplit(':').next().and_then(|p| p.parse().ok());
///         Box::pin(async move {
///             let port = port.ok_or(std::io::ErrorKind::InvalidInput)?;
///             Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
///         })
///     }
/// }
///
/// let driver = tempo_io::Driver::new()?;
/// driver.handle().set_resolver(Arc::new(Localhost));
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait Resolve: Send + Sync + 'static {
    /// Resolves `host_and_port` (`"example.com:443"`, any string
    /// `std::net::ToSocketAddrs` accepts) to its addresses.
    fn resolve(&self, host_and_port: String) -> Resolving;
}

/// The resolver of a driver, if one was installed.
#[derive(Default)]
pub(crate) struct ResolverSlot(parking_lot::RwLock<Option<Arc<dyn Resolve>>>);

impl ResolverSlot {
    pub(crate) fn set(&self, resolver: Arc<dyn Resolve>) {
        *self.0.write() = Some(resolver);
    }

    pub(crate) fn get(&self) -> Option<Arc<dyn Resolve>> {
        self.0.read().clone()
    }
}

impl fmt::Debug for ResolverSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolverSlot")
            .field("installed", &self.0.read().is_some())
            .finish()
    }
}
