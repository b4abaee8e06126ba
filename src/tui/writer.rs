//! The TUI's database writes run on a thread of their own, one at a time
//! and in the order they were asked for, so a write that waits for another
//! process's lock (up to the store's busy timeout) never holds up a key or
//! a frame.
//!
//! A write is waited for at most [`INLINE_WAIT`]: almost always it is done
//! by then, and what follows it (a status line, a reload) happens at once,
//! as if it had run on the UI thread. When it is not, the key returns and
//! what follows is applied when the result arrives: the event loop wakes
//! for it, and [`Writer::wait_idle`] takes what is due at exit and in tests.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::engine::Engine;

/// How long a key waits for its write before moving on (under a frame).
pub const INLINE_WAIT: Duration = Duration::from_millis(12);

type Job = Box<dyn FnOnce(&Engine) -> Box<dyn Any + Send> + Send>;
type Done = (u64, Box<dyn Any + Send>);

/// What to do with a result that came after its key had returned.
pub type Later<A> = Box<dyn FnOnce(&mut A, Box<dyn Any + Send>)>;

/// A write's result, if it came within the inline wait.
pub enum Outcome<T> {
    Ready(T),
    /// Still running (or waiting for the lock): its result comes later.
    Pending(u64),
}

/// A handle on the writer thread (cheap to clone; UI thread only).
pub struct Writer<A> {
    inner: Rc<Inner<A>>,
}

impl<A> Clone for Writer<A> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<A> {
    jobs: mpsc::Sender<(u64, Job)>,
    results: mpsc::Receiver<Done>,
    /// Results taken while waiting for a later one (they come in order).
    arrived: RefCell<VecDeque<Done>>,
    later: RefCell<HashMap<u64, Later<A>>>,
    next: Cell<u64>,
    /// Tickets sent and not yet taken back.
    in_flight: Cell<usize>,
    /// Wakes the event loop when a result is ready (taken by it once).
    wake: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<()>>>,
}

impl<A> Writer<A> {
    pub fn new(engine: Engine) -> Self {
        let (jobs, job_rx) = mpsc::channel::<(u64, Job)>();
        let (done_tx, results) = mpsc::channel::<Done>();
        let (wake_tx, wake_rx) = tokio::sync::mpsc::unbounded_channel();
        // Inside the runtime's context: the engine's clock and anything it
        // spawns work as they do on the runtime's own threads (and a test's
        // paused clock is the same clock here).
        let runtime = tokio::runtime::Handle::try_current().ok();
        let spawned = std::thread::Builder::new()
            .name("tock-ui-writes".into())
            .spawn(move || {
                let _context = runtime.as_ref().map(|h| h.enter());
                while let Ok((ticket, job)) = job_rx.recv() {
                    let result = job(&engine);
                    if done_tx.send((ticket, result)).is_err() {
                        break;
                    }
                    let _ = wake_tx.send(());
                }
            });
        if let Err(e) = spawned {
            // Without the thread every write would wait forever: say so in the log;
            // `run` then runs each job on the caller's thread.
            tracing::error!("cannot start the UI's writer thread: {e}");
        }
        Self {
            inner: Rc::new(Inner {
                jobs,
                results,
                arrived: RefCell::new(VecDeque::new()),
                later: RefCell::new(HashMap::new()),
                next: Cell::new(1),
                in_flight: Cell::new(0),
                wake: RefCell::new(Some(wake_rx)),
            }),
        }
    }

    /// Run `job` on the writer thread; wait for it at most [`INLINE_WAIT`].
    pub fn run<T: Send + 'static>(
        &self,
        engine: &Engine,
        job: impl FnOnce(&Engine) -> T + Send + 'static,
    ) -> Outcome<T> {
        let i = &self.inner;
        let ticket = i.next.get();
        i.next.set(ticket + 1);
        let boxed: Job = Box::new(move |e| Box::new(job(e)) as Box<dyn Any + Send>);
        if let Err(mpsc::SendError((_, job))) = i.jobs.send((ticket, boxed)) {
            // No writer thread: the caller waits, as it did before it had one.
            return Outcome::Ready(downcast(job(engine)));
        }
        i.in_flight.set(i.in_flight.get() + 1);
        let deadline = Instant::now() + INLINE_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match i.results.recv_timeout(left) {
                Ok((t, result)) => {
                    i.in_flight.set(i.in_flight.get().saturating_sub(1));
                    if t == ticket {
                        return Outcome::Ready(downcast(result));
                    }
                    i.arrived.borrow_mut().push_back((t, result));
                }
                Err(_) => return Outcome::Pending(ticket),
            }
        }
    }

    /// What to do with `ticket`'s result when it comes.
    pub fn then(&self, ticket: u64, later: Later<A>) {
        self.inner.later.borrow_mut().insert(ticket, later);
    }

    /// Results that are in, with what to do with each (nothing waits).
    pub fn take_ready(&self) -> Vec<(Later<A>, Box<dyn Any + Send>)> {
        let i = &self.inner;
        let mut done: Vec<Done> = i.arrived.borrow_mut().drain(..).collect();
        while let Ok(d) = i.results.try_recv() {
            i.in_flight.set(i.in_flight.get().saturating_sub(1));
            done.push(d);
        }
        self.pair(done)
    }

    /// Wait (at most `limit`) until every write sent so far is done, and
    /// return what is to be done with their results.
    pub fn wait_idle(&self, limit: Duration) -> Vec<(Later<A>, Box<dyn Any + Send>)> {
        let i = &self.inner;
        let mut done: Vec<Done> = i.arrived.borrow_mut().drain(..).collect();
        let deadline = Instant::now() + limit;
        while i.in_flight.get() > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            match i.results.recv_timeout(left) {
                Ok(d) => {
                    i.in_flight.set(i.in_flight.get().saturating_sub(1));
                    done.push(d);
                }
                Err(_) => break,
            }
        }
        self.pair(done)
    }

    /// Writes sent and not finished.
    pub fn busy(&self) -> bool {
        self.inner.in_flight.get() > 0 || !self.inner.arrived.borrow().is_empty()
    }

    /// The event loop's wake-up for results (given once).
    pub fn take_wake(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<()>> {
        self.inner.wake.borrow_mut().take()
    }

    fn pair(&self, done: Vec<Done>) -> Vec<(Later<A>, Box<dyn Any + Send>)> {
        let mut later = self.inner.later.borrow_mut();
        done.into_iter()
            .filter_map(|(t, r)| later.remove(&t).map(|k| (k, r)))
            .collect()
    }
}

fn downcast<T: 'static>(b: Box<dyn Any + Send>) -> T {
    match b.downcast::<T>() {
        Ok(t) => *t,
        // Each ticket's job and its reader are made together with one `T`.
        Err(_) => unreachable!("a write's result has the type it was sent with"),
    }
}

/// `later` for a result of type `T`.
pub fn typed<A: 'static, T: 'static>(f: impl FnOnce(&mut A, T) + 'static) -> Later<A> {
    Box::new(move |a, r| f(a, downcast::<T>(r)))
}
