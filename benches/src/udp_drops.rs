//! Kernel receive drops per UDP socket, from the `drops` column of `/proc/net/udp`.
//!
//! When a socket's receive buffer is full the kernel discards the datagram and
//! counts it on that socket. That counter is the ground truth for receive loss:
//! sequence gaps alone cannot tell a datagram the kernel dropped from one the
//! sender never sent, and they miss losses after the last datagram received.
//! The benchmark's sockets are the ones bound to 127.0.0.1 on a known range of
//! ports (bind fails if another socket holds one of them), so the sum over
//! that range is the receiver's loss.

use std::io;
use std::ops::Range;

/// `127.0.0.1` as `/proc/net/udp` prints it (network order read as a
/// little-endian hex word).
const LOOPBACK_HEX: &str = "0100007F";

/// Sum of the `drops` column over sockets bound to 127.0.0.1 on `ports`, read
/// now from `/proc/net/udp`.
pub fn loopback_drops(ports: Range<u16>) -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/net/udp")?;
    Ok(sum_drops(&text, ports))
}

/// Sum of the `drops` column over the lines of a `/proc/net/udp` text whose
/// local address is 127.0.0.1 with a port in `ports`.
pub fn sum_drops(proc_net_udp: &str, ports: Range<u16>) -> u64 {
    proc_net_udp
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let local = fields.nth(1)?;
            let drops = line.split_whitespace().last()?;
            let (addr, port) = local.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            if addr == LOOPBACK_HEX && ports.contains(&port) {
                drops.parse::<u64>().ok()
            } else {
                None
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  142: 0100007F:4E20 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1001 2 0000000000000000 5
  143: 0100007F:4E21 00000000:0000 07 00000000:00000A00 00:00000000 00000000     0        0 1002 2 0000000000000000 17
  144: 00000000:4E22 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1003 2 0000000000000000 1000
  145: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1004 2 0000000000000000 9
";

    #[test]
    fn sums_only_loopback_sockets_in_range() {
        // 0x4E20 = 20000, 0x4E21 = 20001; 0x4E22 is on 0.0.0.0; 53 is out of range.
        assert_eq!(sum_drops(SAMPLE, 20000..20010), 22);
        assert_eq!(sum_drops(SAMPLE, 20001..20002), 17);
        assert_eq!(sum_drops(SAMPLE, 30000..30010), 0);
    }

    #[test]
    fn reads_a_real_bound_socket() {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = sock.local_addr().unwrap().port();
        assert_eq!(loopback_drops(port..port + 1).unwrap(), 0);
    }
}
