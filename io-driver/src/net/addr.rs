//! Address resolution: [`ToSocketAddrs`], [`lookup_host`], and the
//! [`Resolve`] seam. std's `ToSocketAddrs` runs a blocking `getaddrinfo`
//! on the calling thread, which would stall every task of a runtime; as
//! tokio's, this sealed trait tells addresses (used at once, no
//! allocation) from names (resolved by the driver's [`Resolve`], the
//! `tempo` runtime's blocking pool, or inline without one).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::Arc;

use crate::socket_settings::SocketSettings;
pub use crate::socket_settings::{Resolve, Resolving};
use crate::Handle;

/// Addresses to bind, connect or send to (tokio's sealed
/// `tokio::net::ToSocketAddrs`, for the types std's `ToSocketAddrs` takes):
/// IP addresses are used at once, host names go to the driver's
/// [`Resolve`].
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use std::net::{Ipv4Addr, SocketAddr};
/// use tempo_io::net::UdpSocket;
///
/// let a = UdpSocket::bind("127.0.0.1:0").await?;                     // parsed, no lookup
/// let b = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;          // no lookup
/// let c = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
/// let d = UdpSocket::bind("localhost:0").await?;                     // a name: resolved
/// # drop((a, b, c, d)); Ok(()) }).unwrap();
/// ```
pub trait ToSocketAddrs: sealed::ToSocketAddrsPriv {}

pub(crate) mod sealed {
    use super::Addrs;

    /// What an argument is: addresses, or a name to resolve.
    #[derive(Debug)]
    pub enum Lookup<'a> {
        /// Already addresses.
        Addrs(Addrs<'a>),
        /// A `host:port` name for the resolver.
        Name(String),
    }

    /// The sealed half of [`ToSocketAddrs`](super::ToSocketAddrs).
    pub trait ToSocketAddrsPriv {
        fn lookup(&self) -> Lookup<'_>;
    }
}

use sealed::{Lookup, ToSocketAddrsPriv};

/// The addresses an argument stands for, borrowed or owned.
#[derive(Debug)]
pub enum Addrs<'a> {
    One(Option<SocketAddr>),
    Slice(std::iter::Copied<std::slice::Iter<'a, SocketAddr>>),
    Owned(std::vec::IntoIter<SocketAddr>),
}

impl Iterator for Addrs<'_> {
    type Item = SocketAddr;

    fn next(&mut self) -> Option<SocketAddr> {
        match self {
            Addrs::One(one) => one.take(),
            Addrs::Slice(slice) => slice.next(),
            Addrs::Owned(owned) => owned.next(),
        }
    }
}

/// Implements the trait for types that convert to one `SocketAddr`.
macro_rules! one_address {
    ($($ty:ty),*) => {$(
        impl ToSocketAddrs for $ty {}
        impl ToSocketAddrsPriv for $ty {
            fn lookup(&self) -> Lookup<'_> {
                Lookup::Addrs(Addrs::One(Some(SocketAddr::from(*self))))
            }
        }
    )*};
}

one_address!(
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
    (IpAddr, u16),
    (Ipv4Addr, u16),
    (Ipv6Addr, u16)
);

impl ToSocketAddrs for [SocketAddr] {}
impl ToSocketAddrsPriv for [SocketAddr] {
    fn lookup(&self) -> Lookup<'_> {
        Lookup::Addrs(Addrs::Slice(self.iter().copied()))
    }
}

impl ToSocketAddrs for str {}
impl ToSocketAddrsPriv for str {
    fn lookup(&self) -> Lookup<'_> {
        match self.parse::<SocketAddr>() {
            Ok(addr) => Lookup::Addrs(Addrs::One(Some(addr))),
            Err(_) => Lookup::Name(self.to_owned()),
        }
    }
}

impl ToSocketAddrs for String {}
impl ToSocketAddrsPriv for String {
    fn lookup(&self) -> Lookup<'_> {
        self.as_str().lookup()
    }
}

/// `(host, port)`: an address if `host` is an IP, else a name.
fn host_and_port(host: &str, port: u16) -> Lookup<'static> {
    match host.parse::<IpAddr>() {
        Ok(ip) => Lookup::Addrs(Addrs::One(Some(SocketAddr::new(ip, port)))),
        Err(_) => Lookup::Name(format!("{host}:{port}")),
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl ToSocketAddrsPriv for (&str, u16) {
    fn lookup(&self) -> Lookup<'_> {
        host_and_port(self.0, self.1)
    }
}

impl ToSocketAddrs for (String, u16) {}
impl ToSocketAddrsPriv for (String, u16) {
    fn lookup(&self) -> Lookup<'_> {
        host_and_port(&self.0, self.1)
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: ToSocketAddrs + ?Sized> ToSocketAddrsPriv for &T {
    fn lookup(&self) -> Lookup<'_> {
        (**self).lookup()
    }
}

/// The addresses `addr` stands for: at once for IP addresses; for a name,
/// through the resolver of the driver whose `settings` these are, or
/// inline if there is none.
pub(crate) async fn resolve<'a, A: ToSocketAddrs + ?Sized>(
    addr: &'a A,
    settings: Option<&SocketSettings>,
) -> io::Result<Addrs<'a>> {
    let name = match addr.lookup() {
        Lookup::Addrs(addrs) => return Ok(addrs),
        Lookup::Name(name) => name,
    };
    let addrs = match settings.and_then(|settings| settings.resolver.get()) {
        Some(resolver) => resolver.resolve(name).await?,
        None => std::net::ToSocketAddrs::to_socket_addrs(&name)?.collect(),
    };
    Ok(Addrs::Owned(addrs.into_iter()))
}

/// Calls `f` with each address `addr` stands for (resolved through
/// the driver's `settings`), returning the first success or the last error.
pub(crate) async fn each_addr<A: ToSocketAddrs + ?Sized, T>(
    addr: &A,
    settings: &SocketSettings,
    mut f: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last_error = None;
    for addr in resolve(addr, Some(settings)).await? {
        match f(addr) {
            Ok(value) => return Ok(value),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(no_address))
}

/// The first address `addr` stands for (for `send_to`).
pub(crate) async fn first_addr<A: ToSocketAddrs + ?Sized>(
    addr: &A,
    settings: &SocketSettings,
) -> io::Result<SocketAddr> {
    resolve(addr, Some(settings))
        .await?
        .next()
        .ok_or_else(no_address)
}

/// The error for a name that resolved to nothing.
pub(crate) fn no_address() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "could not resolve to any address",
    )
}

/// Resolves `host` to its addresses, as tokio's `lookup_host`: IP addresses
/// at once, names through the current driver's [`Resolve`], or inline
/// when no driver or resolver is current.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// for addr in tempo_io::net::lookup_host("localhost:8080").await? {
///     println!("localhost:8080 is {addr}");
/// }
/// let mut addrs = tempo_io::net::lookup_host("127.0.0.1:53").await?; // no lookup
/// assert_eq!(addrs.next(), Some("127.0.0.1:53".parse().unwrap()));
/// # Ok(()) }).unwrap();
/// ```
pub async fn lookup_host<T: ToSocketAddrs>(
    host: T,
) -> io::Result<impl Iterator<Item = SocketAddr>> {
    let handle = Handle::try_current().ok();
    let addrs: Vec<SocketAddr> = resolve(&host, handle.as_ref().map(Handle::settings))
        .await?
        .collect();
    Ok(addrs.into_iter())
}

impl Handle {
    /// Installs the resolver the sockets of this driver use for host names
    /// (replacing any previous one); without one, names are resolved inline
    /// on the calling thread. The `tempo` runtime installs one.
    pub fn set_resolver(&self, resolver: Arc<dyn Resolve>) {
        self.settings().resolver.set(resolver);
    }
}
