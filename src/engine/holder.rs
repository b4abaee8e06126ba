//! Waiting for the dispatcher of another tock on this machine to exit.
//!
//! A dispatcher killed without a word (kill -9, a closed terminal) writes
//! nothing, so nothing wakes the tock in standby: it took over at its next
//! clock check, up to 30 s later, and until then said another process was
//! sending. A pidfd becomes readable when its process exits, so the standby
//! takes over at once and costs nothing while it waits (no polling).

use crate::store::LeaseHolder;

/// An open watch on the lease holder's process.
#[derive(Debug)]
pub(crate) struct HolderExit {
    owner: String,
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl HolderExit {
    /// A watch on `holder`'s process, if it runs on this machine (a pid of
    /// another host names some unrelated local process) and the kernel has
    /// pidfds (Linux 5.3). None otherwise: the standby then notices at its
    /// clock check, as before.
    #[cfg(target_os = "linux")]
    pub(crate) fn watch(holder: &LeaseHolder) -> Option<Self> {
        use std::os::fd::FromRawFd;
        if !holder
            .owner
            .starts_with(&format!("{}:", crate::store::hostname()))
        {
            return None;
        }
        let pid = libc::pid_t::try_from(holder.pid).ok().filter(|p| *p > 0)?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new
        // descriptor (or -1); no memory is passed.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let raw = i32::try_from(raw).ok().filter(|r| *r >= 0)?;
        // SAFETY: `raw` is a descriptor the call above just created, owned here.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // Registering outside a runtime would panic.
        tokio::runtime::Handle::try_current().ok()?;
        // SAFETY: the OwnedFd keeps the descriptor open, and the same, for as
        // long as the AsyncFd that owns it.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        }
        .ok()?;
        Some(Self {
            owner: holder.owner.clone(),
            fd,
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn watch(_holder: &LeaseHolder) -> Option<Self> {
        None
    }

    /// The lease owner this watch is for.
    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }

    /// Resolves when the process has exited.
    #[cfg(target_os = "linux")]
    pub(crate) async fn exited(&self) {
        // A pidfd stays readable once its process is gone; an error means
        // the same for our purpose (there is nothing more to wait for).
        let _ = self.fd.readable().await;
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) async fn exited(&self) {
        std::future::pending::<()>().await
    }
}

/// Resolves when the watched holder exits; never without a watch.
pub(crate) async fn exited(watch: &Option<HolderExit>) {
    match watch {
        Some(w) => w.exited().await,
        None => std::future::pending().await,
    }
}
