//! The one dispatch loop. Sleeps until the next due time (capped by the
//! wall-clock check), wakes at once on enqueue / change / "conversation idle".

use std::time::Duration;

use super::holder::{self, HolderExit};
use super::{DispatchState, Engine, Event, NoticeKind, lock, turn};
use crate::store::{LeaseHolder, OutboxItem};

/// A wall clock that gains this much on the monotonic clock between two
/// passes means the machine slept (or the clock was set ahead).
const SLEEP_JUMP_MS: i64 = 60_000;

pub(crate) async fn run(engine: Engine) {
    let mut shutdown = engine.inner.shutdown.subscribe();
    let mut holding = false;
    let mut last = (engine.now_ms(), tokio::time::Instant::now());
    // The other dispatcher's exit, watched while in standby; `spent` is the
    // holder whose exit already woke us (its pid may be reused by another
    // process, which must not wake us again and again).
    let mut holder_exit: Option<HolderExit> = None;
    let mut spent: Option<String> = None;
    loop {
        if *shutdown.borrow() {
            break;
        }
        let (wall, mono) = (engine.now_ms(), tokio::time::Instant::now());
        let gained = (wall - last.0) - mono.duration_since(last.1).as_millis() as i64;
        last = (wall, mono);
        if gained > SLEEP_JUMP_MS && holding {
            expire_after_sleep(&engine, wall);
        }
        // The clock was ahead and is set right: what was worked out on it
        // for series is as far ahead.
        if gained < -SLEEP_JUMP_MS && holding {
            super::series::after_clock_set_back(&engine, wall, -gained);
            conversations_written_ahead(&engine, wall);
        }
        let mut standby = None;
        let next = tick(&engine, &mut holding, &mut standby);
        match &standby {
            Some(h) if spent.as_deref() == Some(h.owner.as_str()) => holder_exit = None,
            Some(h) if holder_exit.as_ref().map(HolderExit::owner) != Some(h.owner.as_str()) => {
                holder_exit = HolderExit::watch(h);
            }
            Some(_) => {}
            None => holder_exit = None,
        }
        let now = engine.now_ms();
        let check = next_clock_check(now, engine.inner.options.clock_check);
        let wake = next.map_or(check, |t| t.min(check));
        let sleep = Duration::from_millis(wake.saturating_sub(now).max(0) as u64);
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = engine.inner.wake.notified() => {}
            _ = shutdown.changed() => {}
            _ = holder::exited(&holder_exit) => {
                spent = holder_exit.take().map(|w| w.owner().to_string());
            }
        }
    }
}

/// When the next clock check falls: the next whole multiple of `every` on
/// the wall clock (…:00 and …:30 for 30 s), not `every` after this pass. So
/// the check lands on the whole minutes at which the TUI's countdowns of an
/// hour or more change ([`crate::tui::views::label_at`]), and an idle TUI
/// wakes once for both; every tock process checks at the same instants too.
fn next_clock_check(now: i64, every: Duration) -> i64 {
    let every = i64::try_from(every.as_millis()).unwrap_or(i64::MAX).max(1);
    now.saturating_sub(now.rem_euclid(every))
        .saturating_add(every)
}

impl Engine {
    /// One pass of the dispatch loop, exactly as the loop runs it, for
    /// benchmarks: `holding` is the loop's "we hold the lease" (false the
    /// first time: the pass then takes the lease and recovers). Returns the
    /// next instant worth waking for. A due item is dispatched, which
    /// spawns its turn: call it inside a Tokio runtime.
    #[doc(hidden)]
    pub fn dispatch_pass(&self, holding: &mut bool) -> Option<i64> {
        tick(self, holding, &mut None)
    }
}

/// One pass: hold the lease, recover if we just got it, dispatch what is ready.
/// Returns the next instant worth waking for; `standby` is set to the
/// lease's holder when another process holds it.
fn tick(engine: &Engine, holding: &mut bool, standby: &mut Option<LeaseHolder>) -> Option<i64> {
    let inner = &engine.inner;
    inner
        .passes
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tell_config_changes(engine);
    // The lease was let go during a stop: taken again as anew (recovered),
    // or the tock that took it meanwhile is stood by.
    if engine.take_stepped_aside() {
        *holding = false;
    }
    let cfg = inner.config.get();
    let now = engine.now_ms();
    let store = engine.store();
    let state = if !cfg.outbox.enabled {
        if *holding {
            let _ = store.release_lease(&inner.owner);
            *holding = false;
        }
        DispatchState::Disabled
    } else {
        let ttl = inner.options.lease_ttl.as_millis() as i64;
        match store.acquire_lease(&inner.owner, std::process::id(), now, ttl) {
            Ok(true) => {
                if !*holding {
                    *holding = true;
                    recover(engine, now, cfg.outbox.grace().as_millis() as i64);
                    super::series::written_ahead_of_clock(engine, now, SLEEP_JUMP_MS);
                    conversations_written_ahead(engine, now);
                }
                DispatchState::Dispatching
            }
            Ok(false) => {
                *holding = false;
                *standby = store.lease_holder().ok().flatten();
                let pid = standby.as_ref().map_or(0, |h| h.pid);
                DispatchState::Standby { pid }
            }
            Err(e) => {
                // Not a crash: our turns keep running and our claims stay
                // ours (recovery must not take them back); the renewal is
                // tried again on the next pass.
                tracing::warn!("renewing the dispatcher lease: {e:#}");
                DispatchState::Error(crate::store::error_line(&e))
            }
        }
    };
    set_state(engine, state.clone());
    if state != DispatchState::Dispatching {
        // What falls due meanwhile is the dispatcher's to tell.
        inner
            .last_dispatch_pass
            .store(0, std::sync::atomic::Ordering::Relaxed);
    }
    if let DispatchState::Standby { .. } = state {
        // The dispatcher can die without a word (kill -9): nothing is written
        // then, so nothing wakes us. Look again when the next item falls due,
        // and every second while due items wait, to take over in time.
        let waiting = store
            .dispatchable(now)
            .map(|v| !v.is_empty())
            .unwrap_or(false);
        let next = store.next_ready_at(now).ok().flatten();
        let series = next_series(store, now);
        return [waiting.then_some(now + 1000), next, series]
            .into_iter()
            .flatten()
            .min();
    }
    if state != DispatchState::Dispatching {
        // Try the lease again soon rather than at the next clock check.
        return matches!(state, DispatchState::Error(_)).then_some(now + 1000);
    }
    let only = inner.options.only_conversation;
    // Due occurrences become outbox rows first, so they dispatch in this pass.
    let more_series = only.is_none()
        && super::series::advance(engine, now, cfg.outbox.grace().as_millis() as i64);
    let approval_due = super::approved::pass(engine, now);
    match store.dispatchable(now) {
        Ok(items) => {
            for item in items
                .into_iter()
                .filter(|i| only.is_none() || i.conversation_id == only)
            {
                dispatch(engine, item, now);
            }
        }
        Err(e) => tracing::error!("reading the outbox: {e:#}"),
    }
    if only.is_none() {
        tell_due_behind_approval(engine, now);
    }
    let next = store.next_ready_at(now).unwrap_or_else(|e| {
        tracing::error!("reading the outbox: {e:#}");
        None
    });
    if more_series {
        return Some(now);
    }
    [next, next_series(store, now), approval_due]
        .into_iter()
        .flatten()
        .min()
}

/// Reload the config file if it changed, and tell what changed: a problem
/// reading it when it starts or changes (also one found at start, which
/// holds the outbox), its end, a reload. Once each, not at every pass.
fn tell_config_changes(engine: &Engine) {
    let config = &engine.inner.config;
    let before = config.get();
    let reloaded = config.reload_if_changed();
    // The models changed (an endpoint, a key, which one is the default):
    // what waits out a back-off is tried now, not minutes after the error
    // it names ("cannot connect to 127.0.0.1:18999") was fixed.
    if reloaded {
        let after = config.get();
        if before.models != after.models || before.default_model != after.default_model {
            match engine.store().end_back_offs(engine.now_ms()) {
                Ok(ids) if !ids.is_empty() => engine.emit(Event::OutboxRows(ids)),
                Ok(_) => {}
                Err(e) => tracing::error!("trying again after the config changed: {e:#}"),
            }
        }
    }
    let problem = config.error();
    let told = std::mem::replace(&mut *lock(&engine.inner.config_problem), problem.clone());
    match (told, problem) {
        (told, Some(problem)) if told.as_ref() != Some(&problem) => {
            engine.notify_config_state(NoticeKind::ConfigUnreadable, problem);
        }
        (Some(_), None) => {
            let told_here = engine.notify_config_state(
                NoticeKind::ConfigReadable,
                "configuration reloaded: the config file can be read again".into(),
            );
            // Another tock on the file told it; the front ends here hear
            // that one, and of the reload here (the TUI re-reads its theme).
            if !told_here {
                engine.emit(Event::ConfigReloaded);
            }
            if let Some(p) = config.get().problems().first() {
                engine.notify(NoticeKind::Failed, None, format!("config: {p}"));
            }
        }
        // Gone (deleted, or moved away): the built-in defaults are in
        // effect, other models and all, which deserves more than "reloaded".
        _ if reloaded => match (
            config.path().filter(|p| !p.exists()),
            config.get().problems().first(),
        ) {
            (Some(gone), _) => engine.notify(
                NoticeKind::Failed,
                None,
                format!(
                    "config {} is gone: the built-in defaults are in effect until it is back",
                    gone.display()
                ),
            ),
            (None, Some(p)) => engine.notify(
                NoticeKind::Failed,
                None,
                format!("configuration reloaded; {p}"),
            ),
            (None, None) => engine.notify(NoticeKind::Info, None, "configuration reloaded"),
        },
        _ => {}
    }
}

/// A message or task that falls due in a conversation whose tool call waits
/// for an answer is held until it is answered: a reminder would pass
/// unnoticed, so it is told (once, when it falls due).
fn tell_due_behind_approval(engine: &Engine, now: i64) {
    let after = engine
        .inner
        .last_dispatch_pass
        .swap(now, std::sync::atomic::Ordering::Relaxed);
    if after == 0 {
        return;
    }
    let held = match engine.store().due_behind_approval(after, now) {
        Ok(h) => h,
        Err(e) => {
            tracing::error!("reading what an approval holds: {e:#}");
            return;
        }
    };
    for (_, conversation, what) in held {
        let what = crate::sanitize::sanitize_line(&what)
            .chars()
            .take(60)
            .collect::<String>();
        engine.notify(
            NoticeKind::Approval,
            Some(conversation),
            format!(
                "“{what}” is due and waits for your answer to the tool call in its conversation"
            ),
        );
    }
}

/// When the next series occurrence falls due. One still due after a pass
/// (the database was locked) is retried in a second, not in a busy loop.
fn next_series(store: &crate::store::Store, now: i64) -> Option<i64> {
    match store.next_series_due() {
        Ok(t) => t.map(|t| if t <= now { now + 1000 } else { t }),
        Err(e) => {
            tracing::error!("reading the series: {e:#}");
            None
        }
    }
}

fn set_state(engine: &Engine, state: DispatchState) {
    let mut cur = lock(&engine.inner.dispatch);
    if *cur != state {
        tracing::info!(?state, "dispatch state");
        *cur = state.clone();
        drop(cur);
        engine.emit(Event::Dispatch(state));
    }
}

/// The grace rule of a start-up, applied after the machine woke up.
fn expire_after_sleep(engine: &Engine, now: i64) {
    let grace = engine.config().get().outbox.grace().as_millis() as i64;
    match engine.store().expire_after_sleep(now, grace) {
        Ok(expired) => {
            for item in &expired {
                let what = crate::sanitize::sanitize_line(&item.text)
                    .chars()
                    .take(60)
                    .collect::<String>();
                engine.notify(
                    NoticeKind::Expired,
                    item.conversation_id,
                    format!("expired (the computer was asleep when it was due): {what}"),
                );
            }
            if !expired.is_empty() {
                engine.emit(Event::Outbox);
            }
        }
        Err(e) => tracing::error!("expiring overdue items after a sleep: {e:#}"),
    }
}

fn recover(engine: &Engine, now: i64, grace_ms: i64) {
    match engine
        .store()
        .recover_as(now, grace_ms, Some(&engine.inner.owner))
    {
        Ok(rec) => {
            if !rec.reset_sending.is_empty() || !rec.interrupted_replies.is_empty() {
                tracing::info!(?rec.reset_sending, ?rec.interrupted_replies, "recovered after an unclean stop");
            }
            for item in &rec.expired {
                let what = crate::sanitize::sanitize_line(&item.text)
                    .chars()
                    .take(60)
                    .collect::<String>();
                engine.notify(
                    NoticeKind::Expired,
                    item.conversation_id,
                    format!("expired (tock was not running when it was due): {what}"),
                );
            }
            if !rec.reset_sending.is_empty()
                || !rec.interrupted_replies.is_empty()
                || !rec.expired.is_empty()
            {
                engine.emit(Event::Outbox);
                engine.emit(Event::Conversations);
            }
            // Calls cut by the stop were answered ("its result was lost"),
            // and the calls the stopped process ran are over: front ends
            // read it all again (one showed "running …" for good).
            if !rec.unanswered_calls.is_empty() {
                tracing::info!(?rec.unanswered_calls, "answered calls cut by an unclean stop");
                engine.emit(Event::External);
            }
        }
        Err(e) => tracing::error!("recovery failed: {e:#}"),
    }
}

fn dispatch(engine: &Engine, item: OutboxItem, now: i64) {
    let inner = &engine.inner;
    let key = item.conversation_id.unwrap_or(-item.id);
    let mut busy = lock(&inner.busy);
    if busy.contains_key(&key) {
        return;
    }
    match engine.store().claim(item.id, &inner.owner, now) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::error!("claiming {}: {e:#}", item.id);
            return;
        }
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(None);
    busy.insert(key, stop_tx);
    drop(busy);
    engine.emit(Event::OutboxRows(vec![item.id]));
    let e = engine.clone();
    let handle = tokio::spawn(async move {
        let conv = turn::run(&e, item, stop_rx).await;
        {
            let mut busy = lock(&e.inner.busy);
            busy.remove(&key);
            if let Some(c) = conv {
                busy.remove(&c);
            }
        }
        e.wake();
    });
    let mut turns = lock(&inner.turns);
    turns.retain(|h| !h.is_finished());
    turns.push(handle);
}

/// Conversations written on a clock that was ahead (set right now, or while
/// no tock ran) come back to `now`: otherwise they would head the list
/// until the real time caught up with them.
fn conversations_written_ahead(engine: &Engine, now: i64) {
    match engine
        .store()
        .bring_back_conversations_ahead(now, SLEEP_JUMP_MS)
    {
        Ok(0) => {}
        Ok(_) => engine.emit(Event::Conversations),
        Err(e) => tracing::error!("conversations after the clock was set back: {e:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_check_falls_on_whole_multiples_of_its_period() {
        let every = Duration::from_secs(30);
        // 2026-12-01 06:00:00 UTC, a whole minute.
        let minute = 1_796_104_800_000;
        assert_eq!(next_clock_check(minute, every), minute + 30_000);
        assert_eq!(next_clock_check(minute + 1, every), minute + 30_000);
        assert_eq!(next_clock_check(minute + 29_999, every), minute + 30_000);
        assert_eq!(next_clock_check(minute + 30_000, every), minute + 60_000);
        assert_eq!(next_clock_check(minute + 59_999, every), minute + 60_000);
        // Never before now, never more than a period ahead, at any period.
        for ms in [1, 50, 1_000, 3_600_000] {
            let every = Duration::from_millis(ms);
            for now in [0, 1, 12_345, minute + 7, i64::MAX - 10_000_000] {
                let at = next_clock_check(now, every);
                assert!(at > now && at - now <= ms as i64, "{ms} {now} {at}");
                assert_eq!(at % ms as i64, 0, "{ms} {now} {at}");
            }
        }
    }
}
