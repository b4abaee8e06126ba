//! The dispatcher lease: one row; whoever holds it unexpired dispatches.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;

const NAME: &str = "dispatcher";

#[derive(Clone, Debug, PartialEq)]
pub struct LeaseHolder {
    pub owner: String,
    pub pid: i64,
    pub expires_at: i64,
}

impl Store {
    /// Take the lease if it is free, expired or already ours; extend it to
    /// `now + ttl_ms`. Returns whether we hold it now.
    pub fn acquire_lease(&self, owner: &str, pid: u32, now: i64, ttl_ms: i64) -> Result<bool> {
        let n = self.conn().execute(
            "INSERT INTO lease (name, owner, pid, expires_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, expires_at = excluded.expires_at
             WHERE lease.owner = excluded.owner OR lease.expires_at < ?5",
            params![NAME, owner, pid, now + ttl_ms, now],
        )?;
        if n == 1 {
            return Ok(true);
        }
        // A holder that was killed (SIGKILL, power loss of a terminal) never
        // releases its lease; waiting for it to expire would stall every
        // restart. On this host, a holder whose process is gone is taken over
        // at once (compare-and-swap on its owner id, so two newcomers cannot
        // both win).
        match self.lease_holder()? {
            Some(h)
                if h.owner != owner
                    && h.owner.starts_with(&format!("{}:", hostname()))
                    && !process_alive(h.pid) =>
            {
                let n = self.conn().execute(
                    "UPDATE lease SET owner = ?2, pid = ?3, expires_at = ?4 WHERE name = ?1 AND owner = ?5",
                    params![NAME, owner, pid, now + ttl_ms, h.owner],
                )?;
                Ok(n == 1)
            }
            _ => Ok(false),
        }
    }

    pub fn release_lease(&self, owner: &str) -> Result<()> {
        self.conn().execute(
            "DELETE FROM lease WHERE name = ?1 AND owner = ?2",
            params![NAME, owner],
        )?;
        Ok(())
    }

    pub fn lease_holder(&self) -> Result<Option<LeaseHolder>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT owner, pid, expires_at FROM lease WHERE name = ?1",
                [NAME],
                |r| {
                    Ok(LeaseHolder {
                        owner: r.get(0)?,
                        pid: r.get(1)?,
                        expires_at: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }
}

/// This machine's name (empty if unknown), part of a dispatcher's lease owner id.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it on success.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).replace(':', "_")
}

/// Whether a process with this pid exists on this host. Unknown answers
/// count as alive (the lease then simply expires).
pub fn process_alive(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}
