//! A streaming response's socket kept quiet between reads.
//!
//! A model streams a token at a time, each in a segment of its own, and the
//! kernel wakes the runtime's reactor for every segment that arrives — even
//! while nothing reads it. At 100 tokens/s that is 100 wake-ups a second,
//! most of what a streamed reply costs. With `SO_RCVLOWAT` raised, arriving
//! data no longer signals the socket readable until that much is queued (or
//! the peer closes), so a stream that trickles can be left unread for a
//! while and then read in one go: one wake-up per read instead of one per
//! token. Lowering it again signals at once if data is waiting
//! (`tcp_set_rcvlowat` checks), so nothing is missed.
//!
//! The socket belongs to the HTTP client, which does not hand it out; it is
//! found by the addresses the client reports for the response's connection.
//! Its four addresses name one live socket, and they are checked again
//! before the socket is quietened, so a number reused for another file or
//! socket is never touched. Linux only; elsewhere nothing is found and the
//! stream is read as it arrives.

use std::net::SocketAddr;
use std::time::Duration;

/// Queued bytes that wake a quiet socket anyway: a burst this large is a
/// fast stream, read at once.
const QUIET_LOWAT: i32 = 64 * 1024;

/// The socket of one response's connection.
#[derive(Debug)]
pub struct QuietSocket {
    fd: i32,
    local: SocketAddr,
    peer: SocketAddr,
    quiet: bool,
}

impl QuietSocket {
    /// The socket of `resp`'s connection, if it can be found.
    pub fn of(resp: &reqwest::Response) -> Option<Self> {
        let info = resp
            .extensions()
            .get::<hyper_util::client::legacy::connect::HttpInfo>()?;
        Self::find(info.local_addr(), info.remote_addr())
    }

    #[cfg(target_os = "linux")]
    fn find(local: SocketAddr, peer: SocketAddr) -> Option<Self> {
        let dir = std::fs::read_dir("/proc/self/fd").ok()?;
        let mut found = None;
        for entry in dir.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let socket = Self {
                fd,
                local,
                peer,
                quiet: false,
            };
            if socket.is_ours() {
                if found.is_some() {
                    // Two descriptors of one connection: leave it alone.
                    return None;
                }
                found = Some(socket);
            }
        }
        found
    }

    #[cfg(not(target_os = "linux"))]
    fn find(_local: SocketAddr, _peer: SocketAddr) -> Option<Self> {
        None
    }

    /// Whether the descriptor still is this connection's socket.
    #[cfg(target_os = "linux")]
    fn is_ours(&self) -> bool {
        use std::os::fd::BorrowedFd;
        // SAFETY: the descriptor is only borrowed for the two calls below,
        // which fail harmlessly on a closed descriptor or one that is not a
        // socket; nothing is read from or written to it.
        let fd = unsafe { BorrowedFd::borrow_raw(self.fd) };
        let sock = socket2::SockRef::from(&fd);
        let same = |a: std::io::Result<socket2::SockAddr>, b: SocketAddr| {
            a.ok().and_then(|a| a.as_socket()) == Some(b)
        };
        same(sock.local_addr(), self.local) && same(sock.peer_addr(), self.peer)
    }

    #[cfg(not(target_os = "linux"))]
    fn is_ours(&self) -> bool {
        false
    }

    /// Set an int socket option; false if refused.
    fn set_option(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> bool {
        // SAFETY: setsockopt with a pointer to a live int and its size.
        let rc = unsafe {
            libc::setsockopt(
                self.fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        rc == 0
    }

    fn set_lowat(&self, bytes: i32) -> bool {
        self.set_option(libc::SOL_SOCKET, libc::SO_RCVLOWAT, bytes)
    }

    /// Stop arriving data from waking the reader. False if the socket is no
    /// longer this connection's or refused.
    pub fn quiet(&mut self) -> bool {
        if !self.quiet && self.is_ours() && self.set_lowat(QUIET_LOWAT) {
            self.quiet = true;
        }
        self.quiet
    }

    /// Back to signalling every arrival; signals at once if data is waiting,
    /// which is then read without an ACK of its own (`delay_acks`).
    pub fn listen(&mut self) {
        if std::mem::take(&mut self.quiet) && self.is_ours() {
            self.set_lowat(1);
            self.delay_acks();
        }
    }

    /// Leave the ACK for what is read next to the kernel's delayed-ACK
    /// timer. By default a read that empties the socket ACKs at once, from
    /// inside the read: a stream that only receives then pays an ACK per
    /// read (and, on loopback, the peer's handling of it too), where the
    /// timer ACKs the same data a little later, fewer times. Most servers
    /// send regardless (Nagle's algorithm off); one that leaves it on holds
    /// its next small segment until the timer's ACK, as it did while the
    /// socket was quiet anyway (the timer is bounded by about a round trip,
    /// 40 ms on loopback). A burst of full segments is still ACKed at once.
    /// The kernel leaves this mode whenever its timer fires, so it is set
    /// again before each read.
    #[cfg(target_os = "linux")]
    fn delay_acks(&self) {
        self.set_option(libc::IPPROTO_TCP, libc::TCP_QUICKACK, 0);
    }

    #[cfg(not(target_os = "linux"))]
    fn delay_acks(&self) {}

    /// Bytes waiting to be read (0 if that cannot be asked).
    pub fn waiting(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer given.
        let rc = unsafe { libc::ioctl(self.fd, libc::FIONREAD, &mut n) };
        if rc == 0 { n.max(0) as usize } else { 0 }
    }
}

/// The end of a quiet spell (and the database watcher's pause, in
/// `engine::watch`): a kernel timer in the runtime's reactor.
/// tokio's timer wheel wakes its thread an extra time for a deadline that
/// crosses one of its 64 ms blocks (to move the timer to a finer level), so
/// a 40 ms spell cost two wake-ups more often than not; a timerfd fires once.
#[derive(Debug)]
pub struct QuietTimer {
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl QuietTimer {
    /// None where there is no such timer, or outside a runtime with I/O.
    #[cfg(target_os = "linux")]
    pub fn new() -> Option<Self> {
        use std::os::fd::FromRawFd;
        // SAFETY: timerfd_create returns a new descriptor (or -1), owned here.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a descriptor this function just created.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // Registering outside a runtime would panic.
        tokio::runtime::Handle::try_current().ok()?;
        // SAFETY: the OwnedFd keeps the descriptor open, and the same, for as
        // long as the AsyncFd that owns it.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        }
        .ok()?;
        Some(Self { fd })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn new() -> Option<Self> {
        None
    }

    /// Fire once, `after` from now (replacing any earlier setting).
    #[cfg(target_os = "linux")]
    pub fn arm(&self, after: Duration) -> bool {
        use std::os::fd::AsRawFd;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                // At least 1 ns: a zero value would disarm the timer.
                tv_nsec: (after.subsec_nanos().max(1)) as libc::c_long,
            },
        };
        // SAFETY: a valid timer descriptor and a pointer to a live itimerspec.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        rc == 0
    }

    #[cfg(not(target_os = "linux"))]
    pub fn arm(&self, _after: Duration) -> bool {
        false
    }

    /// Stop the timer without its firing.
    #[cfg(target_os = "linux")]
    pub fn disarm(&self) {
        use std::os::fd::AsRawFd;
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let spec = libc::itimerspec {
            it_interval: zero,
            it_value: zero,
        };
        // SAFETY: a valid timer descriptor and a pointer to a live itimerspec.
        // Failing leaves the timer to fire once, which wakes for nothing.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    #[cfg(not(target_os = "linux"))]
    pub fn disarm(&self) {}

    /// Resolves when the timer has fired.
    pub async fn fired(&self) {
        use std::os::fd::AsRawFd;
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                return std::future::pending().await;
            };
            let read = ready.try_io(|fd| {
                let mut expirations = [0u8; 8];
                // SAFETY: reads at most 8 bytes into a live 8-byte buffer.
                let n = unsafe { libc::read(fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
                if n == 8 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
            match read {
                Ok(Ok(())) => return,
                // Not fired yet (readiness was stale) or interrupted: wait again.
                Ok(Err(_)) | Err(_) => continue,
            }
        }
    }
}

impl Drop for QuietSocket {
    /// The connection may go back to the client's pool: as it was found.
    fn drop(&mut self) {
        self.listen();
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    use super::*;

    /// A connected pair on loopback: (the client end, the server end).
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    fn found(client: &TcpStream) -> QuietSocket {
        QuietSocket::find(client.local_addr().unwrap(), client.peer_addr().unwrap())
            .expect("the socket is found by its addresses")
    }

    /// An int socket option's value.
    fn option(fd: i32, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let mut v: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt into a live int of the size given.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                level,
                name,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        v
    }

    fn lowat(fd: i32) -> i32 {
        option(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT)
    }

    /// Whether poll(2) reports the socket readable now: what the runtime's
    /// epoll is told on arrival.
    fn readable(fd: i32) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, no wait.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n == 1 && p.revents & libc::POLLIN != 0
    }

    fn settle() {
        // Loopback delivers within the write call; a moment for the softirq.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }

    #[test]
    fn found_by_its_addresses_and_only_it() {
        let (client, _server) = pair();
        let (other, _other_server) = pair();
        let socket = found(&client);
        assert_eq!(socket.fd, client.as_raw_fd());
        assert_ne!(socket.fd, other.as_raw_fd());
    }

    #[test]
    fn quiet_data_does_not_signal_until_it_listens_and_nothing_is_lost() {
        let (client, mut server) = pair();
        let fd = client.as_raw_fd();
        let mut socket = found(&client);
        assert!(socket.quiet());
        assert_eq!(lowat(fd), QUIET_LOWAT);
        server.write_all(b"data: one token\n\n").unwrap();
        settle();
        assert!(!readable(fd), "a quiet socket does not signal a trickle");
        assert_eq!(socket.waiting(), 17, "the bytes wait in the socket");
        socket.listen();
        assert_eq!(lowat(fd), 1);
        assert!(readable(fd), "listening again signals what waits");
    }

    fn quickack(fd: i32) -> libc::c_int {
        option(fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK)
    }

    #[test]
    fn what_is_read_after_a_quiet_spell_is_acked_by_the_timer_not_the_read() {
        let (client, mut server) = pair();
        let fd = client.as_raw_fd();
        assert_eq!(quickack(fd), 1, "a new connection ACKs at once");
        let mut socket = found(&client);
        assert!(socket.quiet());
        server.write_all(b"data: one token\n\n").unwrap();
        settle();
        socket.listen();
        assert_eq!(
            quickack(fd),
            0,
            "the read that follows leaves the ACK to the timer"
        );
        let mut buf = [0u8; 64];
        let n = (&client).read(&mut buf).unwrap();
        assert_eq!(
            &buf[..n],
            b"data: one token\n\n",
            "and takes the data as ever"
        );
    }

    #[test]
    fn the_peer_closing_signals_a_quiet_socket() {
        let (client, server) = pair();
        let fd = client.as_raw_fd();
        let mut socket = found(&client);
        assert!(socket.quiet());
        drop(server);
        settle();
        assert!(readable(fd), "the end of the stream is not held back");
    }

    #[test]
    fn dropped_it_is_left_as_it_was_found() {
        let (client, _server) = pair();
        let fd = client.as_raw_fd();
        let mut socket = found(&client);
        assert!(socket.quiet());
        drop(socket);
        assert_eq!(lowat(fd), 1);
    }

    #[test]
    fn a_descriptor_reused_by_another_socket_is_never_quietened() {
        let (client, server) = pair();
        let (local, peer) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
        drop(client);
        drop(server);
        // The connection is gone and its number now names another socket
        // (tests run in parallel, so the reuse is made, not waited for).
        let (other, _other_server) = pair();
        let mut socket = QuietSocket {
            fd: other.as_raw_fd(),
            local,
            peer,
            quiet: false,
        };
        assert!(!socket.quiet(), "another socket behind the same number");
        assert_eq!(lowat(other.as_raw_fd()), 1);
    }

    #[tokio::test]
    async fn the_timer_fires_once_per_arming() {
        let timer = QuietTimer::new().expect("a timerfd");
        for _ in 0..3 {
            let armed = std::time::Instant::now();
            assert!(timer.arm(Duration::from_millis(20)));
            timer.fired().await;
            assert!(armed.elapsed() >= Duration::from_millis(20));
        }
        // Not armed: it does not fire.
        let waited = tokio::time::timeout(Duration::from_millis(60), timer.fired()).await;
        assert!(waited.is_err(), "fired without being armed");
    }
}
