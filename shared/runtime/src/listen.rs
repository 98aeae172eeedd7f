//! The service's listening socket, with an accept queue deep enough for a crowd connecting at
//! once.
//!
//! tokio's `TcpListener::bind` asks the kernel for a backlog of 1,024 connections. When more
//! than that have completed their handshake and wait to be accepted (a crowd arriving at a sale's
//! opening; or, once answers slow, every client opening new connections for its next requests),
//! the kernel drops the next handshakes, and each of those clients tries again only after its
//! SYN timeout: one second, then three. Those seconds add to the very requests that were already
//! late, more clients open more connections, and the service can stay behind at a load it
//! otherwise keeps up with (`TcpExtListenOverflows` in `nstat` counts the drops).

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// Connections the kernel may hold, handshake done, until the service accepts them. Linux caps
/// it at `net.core.somaxconn` (4,096 by default since Linux 5.4); raise that too to go further.
pub const LISTEN_BACKLOG: u32 = 4_096;

/// Binds `addr` (port 0 for any free port) as `TcpListener::bind` does, address reuse included,
/// with a backlog of [`LISTEN_BACKLOG`]. Must be called inside the tokio runtime.
pub fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::net::TcpStream;
    use tokio::task::JoinSet;

    /// How many connections wait, handshake done, on the listening socket of `port`: the
    /// `rx_queue` of its LISTEN line in `/proc/net/tcp`.
    fn waiting(port: u16) -> usize {
        let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
        let local = format!(":{port:04X}");
        table
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .find(|fields| fields[1].ends_with(&local) && fields[3] == "0A")
            .and_then(|fields| fields[4].split(':').nth(1).map(str::to_owned))
            .map(|queue| usize::from_str_radix(&queue, 16).expect("hex"))
            .expect("the listening socket")
    }

    /// Half again as many connections as tokio's default backlog admits complete their handshake
    /// while the service accepts none: the kernel queues them all, where it would drop the
    /// handshakes past 1,025 (and each of those clients would try again only after a second).
    #[tokio::test]
    async fn the_kernel_queues_more_connections_than_the_default_backlog() {
        let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .expect("somaxconn")
            .trim()
            .parse()
            .expect("a number");
        let clients = 1_536;
        assert!(
            somaxconn >= clients,
            "net.core.somaxconn is {somaxconn}: the kernel caps every backlog below {clients}"
        );
        let listener = listen("127.0.0.1:0".parse().expect("addr")).expect("listen");
        let addr = listener.local_addr().expect("local addr");
        let mut connects = JoinSet::new();
        for _ in 0..clients {
            // A handshake the kernel dropped is tried again after 1 s, 3 s, 7 s: give up then.
            connects.spawn(tokio::time::timeout(
                Duration::from_secs(10),
                TcpStream::connect(addr),
            ));
        }
        let mut streams = Vec::with_capacity(clients);
        while let Some(connected) = connects.join_next().await {
            if let Ok(Ok(stream)) = connected.expect("task") {
                streams.push(stream);
            }
        }
        assert_eq!(streams.len(), clients, "every client connected");
        assert_eq!(
            waiting(addr.port()),
            clients,
            "every connection waits to be accepted"
        );
    }
}
