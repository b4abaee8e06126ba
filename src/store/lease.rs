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

    /// The dispatcher's lease, if a live process holds it unexpired.
    pub fn live_lease_holder(&self, now: i64) -> Result<Option<LeaseHolder>> {
        Ok(self
            .lease_holder()?
            .filter(|l| l.expires_at >= now && process_alive(l.pid)))
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
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    // A killed process that its parent has not reaped yet still answers
    // signal 0, but it holds nothing: it is dead.
    exists && !is_zombie(pid)
}

/// Whether `/proc/PID/stat` says the process is a zombie (or being reaped).
/// False where there is no procfs.
fn is_zombie(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_state(&stat).is_some_and(|c| c == 'Z' || c == 'X'),
        Err(_) => false,
    }
}

/// The state letter of a `/proc/PID/stat` line: the first field after the
/// command name, which is in parentheses and may itself contain ") ".
fn stat_state(stat: &str) -> Option<char> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_letter_survives_odd_command_names() {
        assert_eq!(stat_state("42 (tock) S 1 42 42 0"), Some('S'));
        assert_eq!(stat_state("42 (a) Z (b)) Z 1 2"), Some('Z'));
        assert_eq!(stat_state("garbage"), None);
    }

    #[test]
    fn an_unreaped_dead_child_is_not_alive() {
        let mut child = match std::process::Command::new("sleep").arg("30").spawn() {
            Ok(c) => c,
            Err(e) => panic!("cannot run sleep: {e}"),
        };
        let pid = i64::from(child.id());
        assert!(process_alive(pid));
        // SAFETY: signalling our own child, not reaped yet.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
        // Dead but not reaped: a zombie until wait().
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !is_zombie(pid as i32) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(is_zombie(pid as i32), "the child never became a zombie");
        assert!(!process_alive(pid), "a zombie counted as alive");
        let _ = child.wait();
        assert!(!process_alive(pid));
    }
}
