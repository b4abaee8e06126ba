//! The scriptable CLI, end to end: the real `tock` binary on a temp database,
//! talking to a local OpenAI-compatible server (or the offline echo model).

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};
use support::{MockServer, Reply, SENTINEL, Tock, now_ms, rfc_ms, wait_until};

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// An RFC 3339 string in UTC (`Z` or `+00:00`), or null.
fn assert_time(v: &Value, what: &str) {
    if v.is_null() {
        return;
    }
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{what}: not a string: {v}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "{what}: not RFC 3339: {s}"
    );
    assert!(
        s.ends_with('Z') || s.ends_with("+00:00"),
        "{what}: not UTC: {s}"
    );
}

fn item(items: &[Value], id: i64) -> Option<&Value> {
    items.iter().find(|i| i["id"] == id)
}

#[test]
fn send_prints_an_id_and_json_outputs_have_exactly_the_spec_fields() {
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let before = now_ms();
    let id = t.send(&["--new", "Plans", "--in", "1h", "water", "the", "plants"]);
    let queued = t.send(&["--conv", "Plans", "right away"]);
    assert!(id > 0 && queued > id, "ids {id}, {queued}");

    let list = t.json(&["list", "--json"]);
    let items = list.as_array().expect("list --json is an array");
    assert_eq!(items.len(), 2, "{list:#}");
    let spec = set(&[
        "id",
        "conversation_id",
        "kind",
        "text",
        "status",
        "state",
        "due_at",
        "attempts",
        "last_error",
        "created_at",
        "sent_at",
        // Beyond the first version's fields: when a back-off ends, and why
        // a pending item waits.
        "next_attempt_at",
        "waiting",
    ]);
    for i in items {
        assert_eq!(keys(i), spec, "list --json item fields: {i:#}");
        for k in ["due_at", "created_at", "sent_at", "next_attempt_at"] {
            assert_time(&i[k], k);
        }
        assert!(i["id"].is_i64() && i["conversation_id"].is_i64() && i["attempts"].is_i64());
    }
    let s = item(items, id).unwrap();
    assert_eq!(s["text"], "water the plants", "words are joined");
    assert_eq!(s["kind"], "message");
    assert_eq!(s["status"], "pending");
    assert_eq!(s["state"], "scheduled", "the state the TUI shows too");
    assert_eq!(s["attempts"], 0);
    assert!(s["last_error"].is_null() && s["sent_at"].is_null());
    let due = rfc_ms(&s["due_at"]).unwrap();
    let after = now_ms();
    assert!(
        due >= before + 3_600_000 - 1000 && due <= after + 3_600_000 + 1000,
        "due {due} not ~1h from now"
    );
    let created = rfc_ms(&s["created_at"]).unwrap();
    assert!(created >= before - 1000 && created <= after + 1000);
    let q = item(items, queued).unwrap();
    assert_eq!(q["kind"], "queued");
    assert!(q["due_at"].is_null());
    assert_eq!(q["conversation_id"], s["conversation_id"]);

    let convs = t.json(&["conversations", "--json"]);
    let convs = convs.as_array().expect("conversations --json is an array");
    assert_eq!(convs.len(), 1);
    assert_eq!(keys(&convs[0]), set(&["id", "title", "updated_at"]));
    assert_eq!(convs[0]["title"], "Plans");
    assert_eq!(convs[0]["id"], s["conversation_id"]);
    assert_time(&convs[0]["updated_at"], "updated_at");
    assert!(convs[0]["updated_at"].is_string());

    // Deliver the queued one (echo model) so `show` has messages.
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the queued item sent", || {
        (t.item(queued)["status"] == "sent").then_some(())
    });
    let shown = wait_until(Duration::from_secs(15), "a complete reply", || {
        let v = t.show("Plans");
        let done = v["messages"]
            .as_array()
            .is_some_and(|m| m.len() == 2 && m[1]["status"] == "complete");
        done.then_some(v)
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());

    assert_eq!(keys(&shown), set(&["id", "title", "messages", "usage"]));
    assert_eq!(shown["id"], s["conversation_id"]);
    assert_eq!(shown["title"], "Plans");
    let msgs = shown["messages"].as_array().unwrap();
    for m in msgs {
        // `error` says why a reply was interrupted; `hidden` marks an earlier
        // attempt at a reply that views collapse; `cut_off` a reply stored
        // as streaming that no live tock writes; `attachments`, the
        // `tool_calls` a reply made and the `tool` of a result, and `usage`
        // (token counts of a reply, null when none were reported);
        // `reasoning`, what a reasoning model thought (null: none kept).
        assert_eq!(
            keys(m),
            set(&[
                "id",
                "role",
                "content",
                "status",
                "created_at",
                "error",
                "hidden",
                "cut_off",
                "attachments",
                "tool_calls",
                "tool",
                "usage",
                "reasoning"
            ])
        );
        assert_eq!(m["tool_calls"], json!([]), "no tool was called");
        assert!(m["reasoning"].is_null(), "the echo model does not reason");
        assert!(m["tool"].is_null(), "not a tool's result");
        assert_time(&m["created_at"], "message created_at");
        assert!(m["created_at"].is_string());
    }
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs[0]["content"], "right away");
    assert_eq!(msgs[1]["role"], "assistant");
    assert!(msgs[1]["content"].as_str().unwrap().contains("right away"));
    let sent = t.item(queued);
    assert_eq!(sent["status"], "sent");
    assert_time(&sent["sent_at"], "sent_at");
    assert!(sent["sent_at"].is_string());
    // The scheduled one is untouched.
    assert_eq!(t.item(id)["status"], "pending");
}

#[test]
fn conv_and_show_take_an_id_or_the_exact_title() {
    let t = Tock::new();
    let a = t.send(&["--new", "Project X", "--in", "1h", "one"]);
    let conv = t.item(a)["conversation_id"].as_i64().unwrap();
    let b = t.send(&["--conv", "Project X", "--in", "1h", "two"]);
    let c = t.send(&["--conv", &conv.to_string(), "--in", "1h", "three"]);
    assert_eq!(t.item(b)["conversation_id"], conv);
    assert_eq!(t.item(c)["conversation_id"], conv);
    // A send with neither starts a new conversation.
    let d = t.send(&["--in", "1h", "four"]);
    assert_ne!(t.item(d)["conversation_id"], conv);

    assert_eq!(t.show("Project X")["id"], conv);
    assert_eq!(t.show(&conv.to_string())["id"], conv);
    assert_eq!(t.show(&conv.to_string())["title"], "Project X");
    // Not a prefix, not case-insensitive: exact title only.
    t.fails(&["show", "Project", "--json"]);
    t.fails(&["send", "--conv", "project x", "five"]);
    let human = t.ok(&["show", "Project X"]);
    assert!(human.contains("Project X"), "{human}");
}

#[test]
fn every_bad_input_exits_non_zero_with_one_line_on_stderr() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    let ok = t.send(&["--new", "Real", "--in", "1h", "a real item"]);

    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["cancel", "999"], "999"),
        (vec!["edit", "999", "new text"], "999"),
        (vec!["retry", "999"], "999"),
        (vec!["reschedule", "999", "10m"], "999"),
        (vec!["send", "--in", "blah", "hello"], ""),
        (vec!["send", "--at", "2001-01-01 09:00", "hello"], ""),
        (vec!["send", "--at", "tomorrow-ish", "hello"], ""),
        (vec!["send", ""], ""),
        (vec!["send", "   "], ""),
        (vec!["send", "--conv", "no such conversation", "hello"], ""),
        (vec!["send", "--conv", "4242", "hello"], ""),
        (vec!["show", "no such conversation"], ""),
        (vec!["show", "4242", "--json"], ""),
        (vec!["reschedule", "1", "blah"], ""),
        (vec!["reschedule", "1", "2001-01-01 09:00"], ""),
        (vec!["edit", "1", " "], ""),
        (vec!["retry", "1"], ""),
        (vec!["prune", "--older-than", "blah"], ""),
    ];
    for (args, mention) in &cases {
        let line = t.fails(args);
        assert!(
            line.len() < 400,
            "{args:?}: the reason should be one short line: {line}"
        );
        assert!(
            line.contains(mention),
            "{args:?}: the reason should mention {mention:?}: {line}"
        );
        assert!(!line.contains(SENTINEL), "{args:?} leaked the key: {line}");
    }
    // Nothing was enqueued by the refused sends, and the real item is untouched.
    let items = t.items();
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0]["id"], ok);
    assert_eq!(items[0]["status"], "pending");
    assert_eq!(items[0]["text"], "a real item");
    assert_eq!(server.count(), 0);
}

#[test]
fn cancel_hides_the_item_except_with_all_and_reschedule_edit_change_it() {
    let t = Tock::new();
    let a = t.send(&["--new", "C", "--in", "1h", "to cancel"]);
    let b = t.send(&["--conv", "C", "--in", "1h", "to move"]);
    t.ok(&["cancel", &a.to_string()]);

    let open = t.json(&["list", "--json"]);
    let open = open.as_array().unwrap();
    assert!(item(open, a).is_none(), "canceled shows without --all");
    assert!(item(open, b).is_some());
    let all = t.items();
    assert_eq!(item(&all, a).unwrap()["status"], "canceled");
    // Shown with --all, it keeps its time and counts down to nothing.
    let human = t.ok(&["list", "--all"]);
    let row = human
        .lines()
        .find(|l| l.contains("to cancel"))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(!row.contains("(in "), "{row}");
    // Canceling twice, or editing a canceled item, is refused, saying what
    // each takes; so is retrying one that still waits for its time.
    let line = t.fails(&["cancel", &a.to_string()]);
    assert!(
        line.contains(&format!(
            "item {a} is canceled; only waiting, failed or expired items can be canceled"
        )),
        "{line}"
    );
    t.fails(&["edit", &a.to_string(), "x"]);
    let line = t.fails(&["retry", &b.to_string()]);
    assert!(
        line.contains(&format!(
            "item {b} is scheduled; only failed, expired or canceled items can be retried"
        )),
        "{line}"
    );
    // A series' id (series are listed among the items) says what it is.
    let series = t.send(&["--conv", "C", "--every", "daily 9am", "a series"]);
    let line = t.fails(&["retry", &series.to_string()]);
    assert!(line.contains("is a recurring series"), "{line}");

    let old_due = rfc_ms(&t.item(b)["due_at"]).unwrap();
    t.ok(&["reschedule", &b.to_string(), "3h"]);
    let new_due = rfc_ms(&t.item(b)["due_at"]).unwrap();
    let want = now_ms() + 3 * 3_600_000;
    assert!(
        (new_due - want).abs() < 5_000 && new_due > old_due + 3_500_000,
        "due moved from {old_due} to {new_due}, want ~{want}"
    );
    // `now` is at once, as its hint says (it was refused as past).
    t.ok(&["reschedule", &b.to_string(), "now"]);
    let due = rfc_ms(&t.item(b)["due_at"]).unwrap();
    assert!((due - now_ms()).abs() < 5_000, "due {due}");
    t.ok(&["reschedule", &b.to_string(), "2030-01-02 03:04"]);
    let due = t.item(b)["due_at"].clone();
    let local = chrono::DateTime::parse_from_rfc3339(due.as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Local);
    assert_eq!(
        local.format("%Y-%m-%d %H:%M").to_string(),
        "2030-01-02 03:04"
    );

    t.ok(&["edit", &b.to_string(), "moved", "and", "edited"]);
    assert_eq!(t.item(b)["text"], "moved and edited");
    assert_eq!(t.item(b)["status"], "pending");
    // A canceled item can be brought back with reschedule.
    t.ok(&["reschedule", &a.to_string(), "10m"]);
    assert_eq!(t.item(a)["status"], "pending");
}

/// `--older-than` takes what a user writes for how long ago: weeks,
/// months (30 days) and years (365 days) too; what it cannot read, or
/// cannot tell apart (`6m`: minutes or months?), is refused naming what
/// it takes, before anything is deleted.
#[test]
fn prune_older_than_takes_weeks_months_and_years() {
    let t = Tock::new();
    let canceled = t.send(&["--new", "P", "--in", "1h", "nope"]);
    t.ok(&["cancel", &canceled.to_string()]);
    for age in [
        "1y", "2 years", "1 year", "6mo", "6 months", "1y 6mo", "2w", "3 weeks", "30d",
    ] {
        let out = t.ok(&["prune", "--older-than", age]);
        assert!(out.contains("pruned 0"), "{age}: {out}");
    }
    assert_eq!(
        t.items().len(),
        1,
        "the canceled row is younger than all of them"
    );
    let line = t.fails(&["prune", "--older-than", "6m"]);
    assert!(line.contains("minutes or months"), "{line}");
    assert!(line.contains("6min") && line.contains("6mo"), "{line}");
    let line = t.fails(&["prune", "--older-than", "a fortnight"]);
    assert!(line.contains("\"a fortnight\""), "{line}");
    for accepted in ["30d", "2w", "6mo", "1y"] {
        assert!(line.contains(accepted), "{line} should name {accepted}");
    }
    assert_eq!(t.items().len(), 1);
}

/// A number alone is no age (hours? days? years?): refused naming the
/// units with that number, as `0` is not (0 of anything is 0). An error
/// quotes what was typed, not its lower case (`1M` was quoted "1m").
#[test]
fn prune_older_than_a_bare_number_and_errors_quote_what_was_typed() {
    let t = Tock::new();
    let canceled = t.send(&["--new", "P", "--in", "1h", "nope"]);
    t.ok(&["cancel", &canceled.to_string()]);
    for bare in ["1", "30", "1.5"] {
        let line = t.fails(&["prune", "--older-than", bare]);
        assert!(line.contains(&format!("\"{bare}\" has no unit")), "{line}");
        for unit in ["h", "d", "w", "mo", "y"] {
            assert!(
                line.contains(&format!("{bare}{unit}")),
                "{line} should name {bare}{unit}"
            );
        }
        assert!(!line.contains('\n'), "{line}");
    }
    assert_eq!(t.items().len(), 1, "nothing was pruned");
    let line = t.fails(&["prune", "--older-than", "1M"]);
    assert!(
        line.contains("\"1M\" could be minutes or months — say 1min or 1mo"),
        "{line}"
    );
    let line = t.fails(&["prune", "--older-than", "1Y 6M"]);
    assert!(line.contains("\"6M\" could be"), "{line}");
    let line = t.fails(&["prune", "--older-than", "Blah"]);
    assert!(line.contains("\"Blah\""), "{line}");
    assert_eq!(t.items().len(), 1, "nothing was pruned");
    let out = t.ok(&["prune", "--older-than", "0"]);
    assert!(out.contains("pruned 1"), "{out}");
}

#[test]
fn prune_removes_finished_rows_only() {
    let mut t = Tock::new();
    t.set_env("TOCK_ECHO_DELAY_MS", "0");
    let pending = t.send(&["--new", "P", "--in", "1h", "later"]);
    let canceled = t.send(&["--conv", "P", "--in", "1h", "nope"]);
    t.ok(&["cancel", &canceled.to_string()]);
    let sent = t.send(&["--conv", "P", "now please"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the item sent", || {
        (t.item(sent)["status"] == "sent").then_some(())
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());
    // Let the rows' last change be strictly in the past.
    std::thread::sleep(Duration::from_millis(20));

    // A long horizon keeps everything.
    let out = t.ok(&["prune"]);
    assert!(out.contains('0'), "{out}");
    assert_eq!(t.items().len(), 3);

    let out = t.ok(&["prune", "--older-than", "0s"]);
    assert!(out.contains('2'), "prune should report 2 rows: {out}");
    let ids: Vec<i64> = t
        .items()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![pending]);
    // The conversation history is not touched by pruning the outbox.
    let msgs = t.show("P")["messages"].as_array().unwrap().len();
    assert_eq!(msgs, 2);
}

#[test]
fn status_reports_the_dispatcher_and_sigterm_stops_the_daemon_quickly() {
    let t = Tock::new();
    let st = t.json(&["status", "--json"]);
    assert!(st["dispatcher"].is_null(), "{st:#}");
    assert!(t.ok(&["status"]).contains("none"));

    let mut d = t.spawn_daemon();
    let pid = d.pid() as i64;
    wait_until(
        Duration::from_secs(10),
        "the daemon holding the lease",
        || (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid).then_some(()),
    );
    assert!(t.ok(&["status"]).contains(&pid.to_string()));

    let t0 = std::time::Instant::now();
    d.signal(libc::SIGTERM);
    let st = d.wait_timeout(Duration::from_secs(5));
    assert!(st.is_some(), "daemon still running 5 s after SIGTERM");
    assert!(
        t0.elapsed() < Duration::from_millis(2500),
        "daemon took {:?} to exit on SIGTERM",
        t0.elapsed()
    );
    assert!(st.unwrap().success(), "daemon exit status");
    assert!(t.json(&["status", "--json"])["dispatcher"].is_null());

    // Killed without a chance to release the lease: status does not report a
    // dead dispatcher, and a new daemon takes over at once.
    let mut d = t.spawn_daemon();
    let pid = d.pid() as i64;
    wait_until(
        Duration::from_secs(10),
        "the daemon holding the lease",
        || (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid).then_some(()),
    );
    d.kill9();
    assert!(t.json(&["status", "--json"])["dispatcher"].is_null());
    let d2 = t.spawn_daemon();
    let pid2 = d2.pid() as i64;
    wait_until(Duration::from_secs(3), "the new daemon taking over", || {
        (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid2).then_some(())
    });
}

/// `tock reschedule` of a series to a rule typed on its own keeps the end
/// it had (`for N times`, `until DATE`): "take pill for 2 weeks" became
/// endless. A rule that names an end replaces it. The JSON `expression` is
/// the whole schedule, end and all, as `--every` takes it back.
#[test]
fn rescheduling_a_series_keeps_its_end_unless_the_rule_names_one() {
    let t = Tock::new();
    let id = t.send(&[
        "--new",
        "pills",
        "--every",
        "every day 9am for 3 times until 2036-12-20",
        "take pill",
    ]);
    let out = t.ok(&["reschedule", &id.to_string(), "every day 10am"]);
    assert!(
        out.contains("3 left") && out.contains("until"),
        "the end is said: {out}"
    );
    let list = t.json(&["list", "--json"]);
    let s = item(list.as_array().unwrap(), id).unwrap();
    assert_eq!(s["remaining"], 3, "{s:#}");
    assert!(s["until_at"].as_str().is_some(), "{s:#}");
    let expr = s["expression"].as_str().unwrap().to_string();
    assert!(
        expr.contains("for 3 times") && expr.ends_with("until 2036-12-20"),
        "{expr}"
    );
    // A rule with an end of its own.
    t.ok(&["reschedule", &id.to_string(), "every day 10am for 2 times"]);
    let list = t.json(&["list", "--json"]);
    let s = item(list.as_array().unwrap(), id).unwrap();
    assert_eq!(s["remaining"], 2, "{s:#}");
    assert!(s["until_at"].is_null(), "{s:#}");
}

/// A series made under one `TZ` keeps its times when listed (or sent) by
/// a tock under another: "every day at 2:30" made in Berlin is 01:30 UTC
/// in winter, also for a process in UTC.
#[test]
fn a_series_keeps_the_zone_of_the_tock_that_made_it() {
    let mut t = Tock::new();
    t.set_env("TZ", "Europe/Berlin");
    let id = t.send(&[
        "--new",
        "dst",
        "--every",
        "every day at 2:30",
        "series zone",
    ]);
    t.set_env("TZ", "UTC");
    let list = t.json(&["list", "--json"]);
    let s = item(list.as_array().unwrap(), id).unwrap();
    assert_eq!(s["zone"], "Europe/Berlin", "{s:#}");
    for at in s["upcoming"].as_array().unwrap() {
        let utc = chrono::DateTime::parse_from_rfc3339(at.as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc);
        // 02:30 in Berlin: 01:30 UTC in winter, 00:30 in summer.
        assert!(
            matches!(utc.format("%H:%M").to_string().as_str(), "01:30" | "00:30"),
            "{s:#}"
        );
    }
}

/// `--at` a time that happens twice (clocks go back in the night) is the first
/// of the two: under TZ=Europe/Berlin, 02:30 on the last Sunday of October
/// is 00:30 UTC (summer time), not the second 02:30 an hour later.
#[test]
fn at_a_time_that_happens_twice_is_the_first() {
    let (t, last_sunday) = support::berlin_and_next_years_fold();
    let at = format!("{last_sunday} 02:30");
    let id = t.send(&["--new", "fold", "--at", &at, "in the fold"]);
    let list = t.json(&["list", "--json"]);
    let due = item(list.as_array().unwrap(), id).unwrap()["due_at"].clone();
    assert_eq!(
        due.as_str().unwrap(),
        format!("{last_sunday}T00:30:00.000Z"),
        "{at}"
    );
}

/// A series at a time the clocks pass twice fires at the first of the two,
/// also in the time it stores when it is made (the local zone's rules, not
/// only its IANA name's): `every year oct D 02:30` on the night Berlin's
/// clocks go back is due at 00:30 UTC.
#[test]
fn a_series_at_a_time_that_happens_twice_is_due_at_the_first() {
    let (t, last_sunday) = support::berlin_and_next_years_fold();
    let rule = format!(
        "every year oct {} 02:30",
        chrono::Datelike::day(&last_sunday)
    );
    let id = t.send(&["--new", "fold", "--every", &rule, "yearly in the fold"]);
    let list = t.json(&["list", "--json"]);
    let s = item(list.as_array().unwrap(), id).unwrap();
    // Next year's night is among the three upcoming (this year's October
    // may still be ahead), and the stored due time is the first of them.
    let upcoming: Vec<&str> = s["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(
        upcoming.contains(&format!("{last_sunday}T00:30:00.000Z").as_str()),
        "{rule}: {s:#}"
    );
    assert_eq!(s["due_at"].as_str(), upcoming.first().copied(), "{s:#}");
}

/// `--every` takes `every N months` and `every N years` (both were
/// refused): listed in words, stored so that the list reads them back,
/// their times that many calendar months apart at the same local time.
#[test]
fn send_every_n_months_and_years() {
    use chrono::{Datelike, Timelike};
    let t = Tock::new();
    let local = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
            .unwrap()
            .with_timezone(&chrono::Local)
    };
    let months = t.send(&[
        "--new",
        "Care",
        "--every",
        "every 6 months on the 15th 9am",
        "book the dentist",
    ]);
    let years = t.send(&["--conv", "Care", "--every", "every 2 years", "renew"]);
    let list = t.json(&["list", "--json"]);
    let list = list.as_array().unwrap();
    let s = item(list, months).unwrap();
    assert_eq!(s["rule"], "every 6 months on the 15th at 09:00", "{s:#}");
    assert_eq!(s["expression"], "every 6 months on the 15th at 09:00");
    let up: Vec<_> = s["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(local)
        .collect();
    assert_eq!(up.len(), 3, "{s:#}");
    for w in up.windows(2) {
        let apart = (w[1].year() - w[0].year()) * 12 + w[1].month() as i32 - w[0].month() as i32;
        assert_eq!(apart, 6, "{up:?}");
    }
    assert!(
        up.iter()
            .all(|t| (t.day(), t.hour(), t.minute()) == (15, 9, 0)),
        "{up:?}"
    );
    let s = item(list, years).unwrap();
    let up: Vec<_> = s["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(local)
        .collect();
    assert_eq!(
        s["rule"],
        format!("every 2 years on {} at 09:00", up[0].format("%-d %b")),
        "{s:#}"
    );
    assert_eq!(up[1].year() - up[0].year(), 2, "{up:?}");
    assert_eq!(
        up[1].format("%m-%d %H:%M").to_string(),
        up[0].format("%m-%d %H:%M").to_string()
    );
    // `every 2 years` on 29 Feb would skip to a leap year; any other day
    // is the day it was said on (or, past 09:00, the same day two years on).
    let today = chrono::Local::now().date_naive();
    assert!(
        up[0].date_naive() == today
            || (up[0].month(), up[0].day()) == (today.month(), today.day())
            || (today.month(), today.day()) == (2, 29),
        "{up:?}"
    );
}

/// With no tock running on the database, `send` says who will send what
/// it kept (on stderr: stdout is the id); with one running, nothing.
#[test]
fn send_says_when_no_tock_runs_to_send_it() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    for args in [
        vec!["send", "--new", "Before", "kept for later"],
        vec![
            "send",
            "--conv",
            "Before",
            "--every",
            "daily 9am",
            "stretch",
        ],
    ] {
        let out = t.run(&args);
        assert!(out.status.success(), "{}", out.stderr);
        assert!(out.stdout.trim().parse::<i64>().is_ok(), "{}", out.stdout);
        assert!(
            out.stderr.contains(
                "no tock runs on this database now: it is sent once `tock` or `tock daemon` runs"
            ),
            "{}",
            out.stderr
        );
    }
    let _d = t.spawn_daemon();
    wait_until(Duration::from_secs(10), "the daemon dispatching", || {
        (!t.json(&["status", "--json"])["dispatcher"].is_null()).then_some(())
    });
    let out = t.run(&["send", "--conv", "Before", "--in", "1h", "a daemon runs"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(!out.stderr.contains("no tock runs"), "{}", out.stderr);
}

#[test]
fn send_while_a_daemon_runs_is_dispatched_at_once_and_in_at_due() {
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    let _d = t.spawn_daemon();
    wait_until(Duration::from_secs(10), "the daemon dispatching", || {
        (!t.json(&["status", "--json"])["dispatcher"].is_null()).then_some(())
    });

    // Immediate: the daemon is woken by the database watch.
    let t0 = now_ms();
    let id = t.send(&["--new", "Now", "right now please"]);
    let reqs = server.wait_requests(1, Duration::from_secs(10));
    let latency = reqs[0].at_ms - t0;
    assert!(
        latency < 1000,
        "dispatch took {latency} ms after `tock send` (the daemon should be woken at once)"
    );
    eprintln!("`tock send` to request at the server: {latency} ms");
    assert_eq!(
        reqs[0].last_user_text().as_deref(),
        Some("right now please")
    );
    wait_until(Duration::from_secs(10), "sent", || {
        (t.item(id)["status"] == "sent").then_some(())
    });

    // Scheduled: not before its due time, and not much after.
    let id = t.send(&["--conv", "Now", "--in", "2s", "two seconds later"]);
    let due = rfc_ms(&t.item(id)["due_at"]).unwrap();
    let reqs = server.wait_requests(2, Duration::from_secs(10));
    let r = &reqs[1];
    assert_eq!(r.last_user_text().as_deref(), Some("two seconds later"));
    eprintln!("due to request at the server: {} ms", r.at_ms - due);
    assert!(r.at_ms >= due, "received {} ms before due", due - r.at_ms);
    assert!(
        r.at_ms - due < 1000,
        "received {} ms after due (want well under a second)",
        r.at_ms - due
    );
}

#[test]
fn acceptance_scheduled_send_survives_a_server_that_is_down_at_first() {
    // The acceptance flow: `tock send --in 2s` + `tock daemon`, the
    // provider unreachable (connection refused) at first, then up: retried
    // with back-off, visible in `list --json`, delivered exactly once, on time.
    let port = MockServer::free_port();
    let mut t = Tock::with_openai(&format!("http://127.0.0.1:{port}/v1"));
    t.set_env("TOCK_LOG", "trace");
    t.write_config("[outbox]\nmax_attempts = 20\nbackoff_base_secs = 1\n");
    let text = "acceptance: remind me about the build";
    let sent_at_cli = now_ms();
    let id = t.send(&["--new", "Acceptance", "--in", "2s", text]);
    let due = rfc_ms(&t.item(id)["due_at"]).unwrap();
    assert!(due >= sent_at_cli + 1500 && due <= now_ms() + 2500);

    let mut json_seen = Vec::new();
    let mut d = t.spawn_daemon();
    // Down: attempts are counted and the reason is shown, the item stays pending.
    // (attempts count from the claim, so wait for the row back in pending.)
    let it = wait_until(Duration::from_secs(20), "two failed attempts", || {
        let it = t.item(id);
        let failed_twice = it["attempts"].as_i64().unwrap_or(0) >= 2
            && it["status"] == "pending"
            && it["last_error"].is_string();
        failed_twice.then_some(it)
    });
    json_seen.push(it.to_string());
    assert_eq!(it["status"], "pending", "{it:#}");
    let err = it["last_error"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        err.contains("connect") || err.contains("refused"),
        "last_error should say the provider is unreachable: {it:#}"
    );
    assert!(it["sent_at"].is_null());
    assert!(now_ms() >= due);
    let human = t.ok(&["list"]);
    assert!(
        human.contains("retrying") || human.contains("queued"),
        "the state, as the TUI shows it (back-off running or over): {human}"
    );

    // Up: the next retry gets through.
    let server = MockServer::start_on(port);
    server.push(Reply::slow(
        "Here is your reminder about the build. All done.",
        Duration::from_millis(20),
    ));
    let it = wait_until(Duration::from_secs(30), "the item sent", || {
        let it = t.item(id);
        (it["status"] == "sent").then_some(it)
    });
    json_seen.push(it.to_string());
    let conv = it["conversation_id"].as_i64().unwrap().to_string();
    let shown = wait_until(Duration::from_secs(10), "a complete reply", || {
        let v = t.show(&conv);
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        (m.len() == 2 && m[1]["status"] == "complete").then_some(v)
    });
    json_seen.push(shown.to_string());
    let msgs = shown["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs[0]["content"], text);
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(
        msgs[1]["content"],
        "Here is your reminder about the build. All done."
    );
    // Exactly once at the server, after the due time, with the key as a bearer token.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    let r = &reqs[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.body["model"], "gpt-4o-mini");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.last_user_text().as_deref(), Some(text));
    assert!(r.at_ms >= due, "received before due");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {SENTINEL}").as_str())
    );
    assert!(it["attempts"].as_i64().unwrap() >= 3);
    assert!(it["last_error"].is_null(), "{it:#}");

    // A while later, still exactly once.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.count(), 1);
    let user_msgs = t.show(&conv)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(user_msgs, 1);

    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());
    json_seen.push(t.ok(&["list", "--all", "--json"]));
    json_seen.push(t.ok(&["conversations", "--json"]));
    json_seen.push(t.ok(&["status", "--json"]));
    assert_no_secret(&t, &json_seen, &d.stderr());
}

#[test]
fn the_api_key_never_reaches_the_database_logs_json_or_stderr() {
    // A hostile provider echoes the key back in its errors: 401 (permanent),
    // a 500 (transient) and an error event mid-stream.
    let server = MockServer::start();
    let mut t = Tock::with_openai(&server.base_url());
    t.set_env("TOCK_LOG", "trace");
    t.write_config("[outbox]\nmax_attempts = 2\nbackoff_base_secs = 1\n");
    let leak = format!("Incorrect API key provided: {SENTINEL}. Find yours at example.");
    server.push(Reply::Status(401, leak.clone()));
    server.push(Reply::Status(500, leak.clone()));
    server.push(Reply::Status(503, leak.clone()));
    server.push(Reply::StreamError {
        chunks: vec!["partial ".into(), "answer ".into()],
        gap: Duration::from_millis(10),
        message: leak.clone(),
    });

    let a = t.send(&["--new", "Secrets", "first"]);
    let mut d = t.spawn_daemon();
    let ia = wait_until(Duration::from_secs(15), "the 401 item failed", || {
        let it = t.item(a);
        (it["status"] == "failed").then_some(it)
    });
    assert_eq!(ia["attempts"], 1, "a 401 is not retried: {ia:#}");
    let b = t.send(&["--conv", "Secrets", "second"]);
    // Sent a moment after the failure, it waits behind it (as one typed
    // before the failure could be seen); resumed, it goes.
    t.ok(&["resume", "--conv", "Secrets"]);
    let ib = wait_until(Duration::from_secs(15), "the 5xx item failed", || {
        let it = t.item(b);
        (it["status"] == "failed").then_some(it)
    });
    assert_eq!(ib["attempts"], 2, "max_attempts = 2: {ib:#}");
    let c = t.send(&["--conv", "Secrets", "third"]);
    t.ok(&["resume", "--conv", "Secrets"]);
    wait_until(Duration::from_secs(15), "the cut reply recorded", || {
        let v = t.show("Secrets");
        let m = v["messages"].as_array().cloned().unwrap_or_default();
        m.iter()
            .any(|m| m["role"] == "assistant" && m["status"] == "interrupted")
            .then_some(())
    });
    // The cut reply is generated again (the error event is transient).
    wait_until(Duration::from_secs(15), "the reply generated again", || {
        (t.item(c)["status"] == "sent").then_some(())
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());

    for it in [&ia, &ib] {
        let e = it["last_error"].as_str().unwrap_or_default();
        assert!(!e.is_empty(), "failed items say why: {it:#}");
    }
    let jsons = vec![
        t.ok(&["list", "--all", "--json"]),
        t.ok(&["list", "--all"]),
        t.ok(&["show", "Secrets", "--json"]),
        t.ok(&["show", "Secrets"]),
        t.ok(&["conversations", "--json"]),
        t.ok(&["status", "--json"]),
        t.ok(&["status"]),
    ];
    // A bad command's stderr, too.
    let line = t.fails(&["retry", "12345"]);
    assert_no_secret(&t, &jsons, &format!("{}\n{line}", d.stderr()));
    // 401, 500 + 503 (two attempts), the cut reply and its regeneration.
    assert_eq!(server.count(), 5);
}

#[test]
fn a_key_with_whitespace_around_it_is_trimmed_and_never_leaks() {
    // `EVIL_KEY="sk-… "`: a server that echoes the Authorization it got in
    // its 401 (which its message trims) once leaked the key everywhere.
    let server = MockServer::start();
    server.respond_with(|r| {
        let auth = r.header("authorization").unwrap_or_default();
        let key = auth.strip_prefix("Bearer ").unwrap_or(auth);
        Reply::Status(401, format!("Incorrect API key provided: {key} "))
    });
    let mut t = Tock::new();
    t.set_env("TOCK_LOG", "trace");
    t.set_env("EVIL_KEY", &format!("{SENTINEL} "));
    t.write_config(&format!(
        "default_model = \"evil\"\n\n[models.evil]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\nbase_url = \"{}\"\napi_key_env = \"EVIL_KEY\"\n",
        server.base_url()
    ));
    let a = t.send(&["--new", "Secrets", "first"]);
    let mut d = t.spawn_daemon();
    let it = wait_until(Duration::from_secs(15), "the 401 item failed", || {
        let it = t.item(a);
        (it["status"] == "failed").then_some(it)
    });
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(3)).is_some());
    let e = it["last_error"].as_str().unwrap_or_default();
    assert!(
        e.contains("401") && e.ends_with("provided: <redacted>"),
        "{it:#}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {SENTINEL}").as_str())
    );
    let outputs = vec![
        t.ok(&["list", "--all", "--json"]),
        t.ok(&["list", "--all"]),
        t.ok(&["show", "Secrets", "--json"]),
    ];
    assert_no_secret(&t, &outputs, &d.stderr());
}

/// The sentinel key appears nowhere tock wrote.
fn assert_no_secret(t: &Tock, outputs: &[String], stderr: &str) {
    // The main file, the WAL and the shm, as written.
    let db = t.db_bytes();
    assert!(!db.is_empty());
    assert!(
        !support::contains_bytes(&db, SENTINEL.as_bytes()),
        "the API key is in the database file"
    );
    // A distinctive part of the key (a redaction that keeps a prefix/suffix is fine, the middle is not).
    let middle = &SENTINEL[8..24];
    assert!(!support::contains_bytes(&db, middle.as_bytes()));
    let log = t.log_bytes();
    assert!(!log.is_empty(), "tock wrote no log file in {:?}", t.log_dir);
    assert!(
        !support::contains_bytes(&log, middle.as_bytes()),
        "the API key is in the log"
    );
    for o in outputs {
        assert!(!o.contains(middle), "the API key is in CLI output: {o}");
    }
    assert!(!stderr.contains(middle), "the API key is on stderr");
}

#[test]
fn a_standby_daemon_takes_over_in_time_when_the_dispatcher_is_killed() {
    // Two tocks on one database: one dispatches, the other stands by. When
    // the dispatcher is killed (no chance to release its lease, nothing
    // written), the one standing by must still send the next item on time.
    let server = MockServer::start();
    let t = Tock::with_openai(&server.base_url());
    let mut a = t.spawn(&["daemon"], "daemon-a");
    let pid_a = a.pid() as i64;
    wait_until(Duration::from_secs(10), "daemon A dispatching", || {
        (t.json(&["status", "--json"])["dispatcher"]["pid"] == pid_a).then_some(())
    });
    let b = t.spawn(&["daemon"], "daemon-b");
    wait_until(Duration::from_secs(10), "daemon B standing by", || {
        b.stderr().contains("Standby").then_some(())
    });
    let id = t.send(&[
        "--new",
        "Takeover",
        "--in",
        "4s",
        "sent by whoever is alive",
    ]);
    let due = rfc_ms(&t.item(id)["due_at"]).unwrap();
    // Let both daemons see that write and go back to sleep; then the
    // dispatcher dies and nothing else happens until the item is due.
    std::thread::sleep(Duration::from_millis(1000));
    a.kill9();
    let reqs = server.wait_requests(1, Duration::from_secs(40));
    let late = reqs[0].at_ms - due;
    assert!(late >= 0, "sent {} ms early", -late);
    assert!(
        late < 1500,
        "the standby daemon sent the item {late} ms after it was due"
    );
    assert_eq!(
        t.json(&["status", "--json"])["dispatcher"]["pid"],
        b.pid() as i64
    );
}

#[test]
fn processes_starting_together_on_a_new_database_all_succeed() {
    // The TUI, a daemon and scripts starting at the same moment on a
    // database that does not exist yet: none may fail with "locked".
    let mut failures = Vec::new();
    for round in 0..20 {
        let t = Tock::new();
        let children: Vec<_> = [
            &["status", "--json"][..],
            &["list", "--json"],
            &["conversations", "--json"],
            &["send", "--in", "1h", "hello"],
            &["status"],
            &["list"],
        ]
        .into_iter()
        .map(|args| {
            t.command(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            if !o.status.success() {
                failures.push(format!(
                    "round {round}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_new_database_being_written_by_another_process_is_waited_for() {
    // Deterministic form of the race above: another process holds the write
    // lock of a brand-new database (still in rollback-journal mode) while
    // tock opens it and switches it to WAL. tock must wait, not fail.
    let t = Tock::new();
    std::fs::create_dir_all(t.db.parent().unwrap()).unwrap();
    let other = rusqlite::Connection::open(&t.db).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; CREATE TABLE other_process (x);")
        .unwrap();
    let child = t
        .command(&["send", "--in", "1h", "hello"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    other.execute_batch("COMMIT").unwrap();
    drop(other);
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "tock gave up instead of waiting: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(t.items().len(), 1);
}

#[test]
fn a_broken_config_file_warns_in_one_line_and_keeps_what_is_sent() {
    let t = Tock::new();
    t.write_config("default_model = [unclosed\n");
    let out = t.run(&["send", "--new", "x", "hello"]);
    assert!(
        out.status.success(),
        "a bad config must not stop tock: {}",
        out.stderr
    );
    assert!(out.stderr.contains("warning: config"), "{}", out.stderr);
    // One line about the config (the other says no tock runs to send it).
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| !l.contains("no tock runs"))
            .count(),
        1,
        "one line: {}",
        out.stderr
    );
    assert_eq!(t.items().len(), 1);
}

/// A tock whose config (returned, to be written) names one model, "real",
/// on `server`, its key in the environment.
fn with_a_real_model(server: &MockServer) -> (Tock, String) {
    let mut t = Tock::new();
    t.set_env("REAL_KEY", "sk-real-key-for-the-test");
    let good = format!(
        "default_model = \"real\"\n[models.real]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"REAL_KEY\"\n",
        server.base_url()
    );
    (t, good)
}

/// `default_model = "rael"` beside `[models.real]`, with OPENAI_API_KEY
/// exported: a typo, held as a file that cannot be read. The environment's
/// provider took it as a model id of its own, and what was sent went to
/// api.openai.com with that key, where the user had configured a server.
/// `tock status` does not ask that provider either.
#[test]
fn a_default_model_one_typo_from_an_entry_holds_the_outbox() {
    let server = MockServer::start();
    let (mut t, good) = with_a_real_model(&server);
    t.set_env("OPENAI_API_KEY", "sk-exported-elsewhere");
    t.write_config(&good.replace("default_model = \"real\"", "default_model = \"rael\""));
    let out = t.run(&["send", "--new", "T", "for my configured server"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("default_model = \"rael\" is no entry of [models]: did you mean \"real\"?")
            && out.stderr.contains("nothing is sent until it is fixed"),
        "{}",
        out.stderr
    );
    let status = t.ok(&["status"]);
    assert!(
        status.contains("provider: unknown here: the config file cannot be read"),
        "{status}"
    );
    assert!(!status.contains("api.openai.com"), "{status}");
    // A default that is no near miss of an entry is the environment's
    // provider's model, as before.
    t.write_config(&good.replace("default_model = \"real\"", "default_model = \"gpt-4o\""));
    assert!(!t.ok(&["status"]).contains("cannot be read"));
}

/// Offline, `tock status` says how to reach a real model, with the path of
/// the config file it reads (nothing named the variables or the path).
#[test]
fn offline_status_says_how_to_reach_a_real_model() {
    let t = Tock::new();
    let status = t.ok(&["status"]);
    let config = t.config.display().to_string();
    assert!(
        status.contains(&format!(
            "to talk to a real model: run `tock setup`, or export OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST, or write {config}"
        )),
        "{status}"
    );
}

/// A config file named by TOCK_CONFIG (or --config) that is not there is
/// said on every command: it was passed over in silence, and what was sent
/// went to the offline model and was marked sent.
#[test]
fn a_named_config_file_that_is_not_there_is_said() {
    let mut t = Tock::new();
    let typo = t.path("confg.toml");
    t.set_env("TOCK_CONFIG", &typo.display().to_string());
    let out = t.run(&["send", "important question for my real model"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "there is no config file at {} (named by --config or TOCK_CONFIG)",
            typo.display()
        )),
        "{}",
        out.stderr
    );
    // The harness's own file exists (empty): nothing is said.
    let t = Tock::new();
    assert!(!t.run(&["status"]).stderr.contains("no config file"));
}

/// Every command's `--help` says what each argument is: `cancel`, `pause`,
/// `edit`, `retry`, `approve`, `deny` and `resume` showed a bare `<ID>`.
#[test]
fn every_argument_in_help_says_what_it_is() {
    let t = Tock::new();
    let help = t.ok(&["--help"]);
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 10, "{help}");
    // The defaults are this machine's paths, and an unset variable does not
    // read as set to nothing (`[env: TOCK_DB=]`).
    let home = t.path("home");
    let db = home.join(".local/share/tock/tock.db");
    let config = home.join(".config/tock/config.toml");
    assert!(
        help.contains(&format!("[default: {}]", db.display()))
            && help.contains(&format!("[default: {}]", config.display())),
        "{help}"
    );
    for c in &commands {
        let text = t.ok(&[c.as_str(), "--help"]);
        assert!(!text.contains("=]"), "tock {c} --help: {text}");
        for line in text
            .lines()
            .skip_while(|l| !l.starts_with("Arguments:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
        {
            assert!(
                line.split_whitespace().count() > 1,
                "tock {c} --help: {line:?} says nothing"
            );
        }
    }
}

/// A message waiting out a back-off after "cannot connect" is tried as
/// soon as the config file's models change (the endpoint fixed): it waited
/// out its minute, the error it named gone.
#[test]
fn a_config_fix_ends_the_back_off_of_what_waits() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("reached after the fix"));
    let (t, good) = with_a_real_model(&server);
    let outbox = "[outbox]\nbackoff_base_secs = 120\n";
    let closed = good.replace(&server.base_url(), "http://127.0.0.1:9/v1");
    t.write_config(&format!("{closed}{outbox}"));
    let id = t.send(&["--new", "B", "for the server I am about to fix"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the first attempt failed", || {
        (t.item(id)["attempts"].as_i64() == Some(1)).then_some(())
    });
    assert_eq!(t.item(id)["status"], "pending");
    t.write_config(&format!("{good}{outbox}"));
    wait_until(Duration::from_secs(15), "sent after the fix", || {
        (t.item(id)["status"] == "sent").then_some(())
    });
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// `OLLAMA_HOST=127.0.0.1`, as Ollama's own docs write it, is Ollama's
/// port 11434 (it was port 80), as a config entry without `base_url` is.
#[test]
fn ollama_host_without_a_port_is_ollamas_port() {
    let mut t = Tock::new();
    t.set_env("OLLAMA_HOST", "127.0.0.1");
    assert!(t.ok(&["status"]).contains("provider: 127.0.0.1:11434"));
    t.write_config(
        "default_model = \"local\"\n[models.local]\nprovider = \"ollama\"\nmodel = \"llama3.2\"\n",
    );
    assert!(t.ok(&["status"]).contains("provider: 127.0.0.1:11434"));
}

/// The config file broken while a tock that read it dispatches: that tock
/// keeps the settings it read and goes on sending, and the CLI says so. It
/// said nothing was sent, named the offline echo model as the model, and
/// tagged every item "nothing is sent", while the daemon sent them.
#[test]
fn a_config_broken_under_a_running_dispatcher_is_told_as_it_is() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("from the real model"));
    let (t, good) = with_a_real_model(&server);
    t.write_config(&good);
    let mut d = t.spawn_daemon();
    let first = t.send(&["--new", "S", "before the typo"]);
    wait_until(Duration::from_secs(15), "the first sent", || {
        (t.item(first)["status"] == "sent").then_some(())
    });
    std::thread::sleep(Duration::from_millis(20));
    t.write_config(&format!("{good}this is [[[ not toml\n"));
    wait_until(Duration::from_secs(10), "the daemon read it", || {
        d.stderr().contains("config reload failed").then_some(())
    });
    let out = t.run(&["send", "--conv", "S", "after the typo"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        !out.stderr.contains("nothing is sent until it is fixed")
            && out
                .stderr
                .contains("goes on with the settings it read before"),
        "{}",
        out.stderr
    );
    let second: i64 = out.stdout.trim().parse().unwrap();
    wait_until(Duration::from_secs(15), "the second sent", || {
        (t.item(second)["status"] == "sent").then_some(())
    });
    let later = t.send(&["--conv", "S", "--in", "1h", "later on"]);
    let status = t.ok(&["status"]);
    assert!(
        status.contains("outbox: the config file cannot be read here; the tock running as pid")
            && status.contains("model: unknown here: the config file cannot be read")
            && !status.contains("echo"),
        "{status}"
    );
    let list = t.ok(&["list"]);
    assert!(!list.contains("nothing is sent"), "{list}");
    assert_eq!(t.item(later)["status"], "pending");
    d.signal(libc::SIGTERM);
    assert!(d.wait_timeout(Duration::from_secs(5)).is_some());
}

/// A config file that cannot be read holds what is due instead of sending it
/// on the defaults: its models unknown, the defaults sent it to the offline
/// echo model and marked it sent. Once the file is fixed it goes to the
/// model the file names. The warning names the line.
#[test]
fn a_config_that_cannot_be_read_holds_what_is_due_until_it_is_fixed() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("from the real model"));
    let (t, good) = with_a_real_model(&server);
    t.write_config(&format!("{good}[ui]\nmax_width = -3\n"));
    let out = t.run(&["send", "--new", "S", "important"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stderr.contains("line 7") && out.stderr.contains("nothing is sent until it is fixed"),
        "{}",
        out.stderr
    );
    // Not "no tock runs": none would send it until the file is fixed.
    assert!(!out.stderr.contains("no tock runs"), "{}", out.stderr);
    let status = t.ok(&["status"]);
    assert!(status.contains("outbox: nothing is sent until the config file is fixed"));
    // Not "start tock": one may well be open, holding the outbox too.
    assert!(!status.contains("start `tock`"), "{status}");
    assert!(
        status.contains("dispatcher: none while the outbox is held"),
        "{status}"
    );
    let first = out.stdout.trim().parse::<i64>().unwrap();
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the daemon's warning", || {
        d.stderr().contains("nothing is sent").then_some(())
    });
    // The item was due at once; a dispatching daemon sends it within
    // milliseconds. A second pass (woken by another send) holds it too.
    let second = t.send(&["--conv", "S", "and this"]);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(t.item(first)["status"], "pending", "{:#}", t.item(first));
    assert_eq!(t.item(second)["status"], "pending");
    assert_eq!(server.count(), 0);
    assert!(!String::from_utf8_lossy(&t.db_bytes()).contains("offline model"));

    // Fixed: the daemon sees the file change at once (well before its
    // 30 s clock check) and sends what it held.
    t.write_config(&good);
    wait_until(
        Duration::from_secs(10),
        "the held two sent after the fix",
        || {
            [first, second]
                .iter()
                .all(|id| t.item(*id)["status"] == "sent")
                .then_some(())
        },
    );
    let third = t.send(&["--conv", "S", "after the fix"]);
    wait_until(Duration::from_secs(15), "all three sent", || {
        [first, second, third]
            .iter()
            .all(|id| t.item(*id)["status"] == "sent")
            .then_some(())
    });
    let shown = t.show("S");
    let replies: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        !replies.is_empty() && replies.iter().all(|r| *r == "from the real model"),
        "{shown:#}"
    );
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(3));
}

/// A model that cannot be used as the config and the daemon's environment
/// stand (its key variable not set where the daemon was started, as a
/// service's or cron's environment lacks the shell's exports): what is
/// due is held, not failed at once, and goes once the config is fixed.
#[test]
fn a_missing_key_holds_what_is_due_until_the_config_is_fixed() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("from the real model"));
    let t = Tock::new();
    let keyless = format!(
        "default_model = \"real\"\n[models.real]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"TOCK_TEST_KEY_NOT_SET\"\n",
        server.base_url()
    );
    t.write_config(&keyless);
    let id = t.send(&["--new", "K", "needs its key"]);
    let mut d = t.spawn_daemon();
    // Said as it starts.
    wait_until(Duration::from_secs(15), "the daemon's warning", || {
        d.stderr()
            .contains("model real: TOCK_TEST_KEY_NOT_SET is not set where tock daemon runs")
            .then_some(())
    });
    wait_until(Duration::from_secs(15), "held", || {
        let it = t.item(id);
        it["last_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("held: TOCK_TEST_KEY_NOT_SET is not set"))
            .then_some(it)
    });
    std::thread::sleep(Duration::from_millis(500));
    let it = t.item(id);
    assert_eq!(it["status"], "pending", "{it:#}");
    assert_eq!(it["attempts"], 0, "nothing was sent: {it:#}");
    assert_eq!(server.count(), 0);
    let list = t.ok(&["list"]);
    assert!(
        list.contains("held: TOCK_TEST_KEY_NOT_SET is not set"),
        "{list}"
    );
    // Fixed: the key given in the file. The daemon reads it at once and
    // sends what it held.
    t.write_config(&keyless.replace(
        "api_key_env = \"TOCK_TEST_KEY_NOT_SET\"",
        "api_key = \"sk-in-the-file\"",
    ));
    wait_until(Duration::from_secs(10), "sent after the fix", || {
        (t.item(id)["status"] == "sent").then_some(())
    });
    assert_eq!(server.count(), 1);
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(3));
}

/// The notices about the config file kept in the database, oldest first:
/// (kind, text); none before the daemon made the database.
fn config_notices(t: &Tock) -> Vec<(String, String)> {
    if !t.db.exists() {
        return Vec::new();
    }
    let db = t.sql();
    let Ok(mut stmt) =
        db.prepare("SELECT kind, text FROM notices WHERE kind LIKE 'config%' ORDER BY id")
    else {
        return Vec::new();
    };
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// A daemon started on a config file it cannot read says so as a notice,
/// not only on its stderr: kept in the database (a TUI beside it lists it in
/// F3 and shows it in its status bar) and passed to `notify_command`, taken
/// from the file when only another value in it is wrong. Once per problem:
/// the file saved again with the same problem, or a restart of the daemon,
/// tells nothing new; the file fixed is told once too.
#[test]
fn a_daemon_on_a_config_it_cannot_read_tells_it_once_and_tells_when_it_is_fixed() {
    let t = Tock::new();
    let ran = t.path("notified");
    let command = format!(
        "notify_command = [\"sh\", \"-c\", \"echo \\\"$TOCK_EVENT: $TOCK_TEXT\\\" >> {}\"]\n",
        ran.display()
    );
    let broken = format!("{command}[ui]\nmax_width = -3\n");
    t.write_config(&broken);
    let told = || -> Vec<String> {
        std::fs::read_to_string(&ran)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let mut d = t.spawn_daemon();
    let kept = wait_until(Duration::from_secs(15), "the problem kept", || {
        let kept = config_notices(&t);
        (!kept.is_empty()).then_some(kept)
    });
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "config_unreadable");
    assert!(
        kept[0].1.contains("line 3") && kept[0].1.contains("nothing is sent until it is fixed"),
        "{kept:?}"
    );
    let lines = wait_until(Duration::from_secs(10), "notify_command run", || {
        let lines = told();
        (!lines.is_empty()).then_some(lines)
    });
    assert!(
        lines[0].starts_with("failed: ") && lines[0].contains("line 3"),
        "{lines:?}"
    );

    // The same problem, saved again: read again, not told again.
    std::thread::sleep(Duration::from_millis(20));
    t.write_config(&broken);
    wait_until(Duration::from_secs(10), "the file read again", || {
        d.stderr().contains("config reload failed").then_some(())
    });
    // A restart on the same file: the problem was told.
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(5));
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the second daemon's look", || {
        d.stderr().contains("told already").then_some(())
    });
    assert_eq!(config_notices(&t).len(), 1, "{:?}", config_notices(&t));

    // Another problem is another notice.
    std::thread::sleep(Duration::from_millis(20));
    t.write_config(&format!("{command}[ui]\nmax_width = \"wide\"\n"));
    let kept = wait_until(Duration::from_secs(10), "the new problem kept", || {
        let kept = config_notices(&t);
        (kept.len() == 2).then_some(kept)
    });
    assert_eq!(kept[1].0, "config_unreadable", "{kept:?}");

    // Fixed: told once, and what was held goes.
    std::thread::sleep(Duration::from_millis(20));
    t.write_config(&command);
    let kept = wait_until(Duration::from_secs(10), "the fix kept", || {
        let kept = config_notices(&t);
        (kept.len() == 3).then_some(kept)
    });
    assert_eq!(kept[2].0, "config_readable", "{kept:?}");
    let lines = wait_until(
        Duration::from_secs(10),
        "notify_command run for the fix",
        || {
            let lines = told();
            (lines.len() == 3).then_some(lines)
        },
    );
    assert!(
        lines[2].starts_with("info: ") && lines[2].contains("can be read again"),
        "{lines:?}"
    );
    wait_until(Duration::from_secs(10), "the daemon dispatching", || {
        (t.json(&["status", "--json"])["dispatcher"]["pid"] == d.pid() as i64).then_some(())
    });
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(5));
}

/// `--json` output escapes what a terminal acts on beyond C0 (a C1 CSI, a
/// bidi override, DEL) as `\uXXXX`: the JSON means the same, and printed to
/// a terminal it is inert.
#[test]
fn json_output_never_carries_a_raw_c1_control_or_bidi_override() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("red \u{9b}31m here \u{202e}desrever\u{7f} end"));
    let t = Tock::with_openai(&server.base_url());
    let id = t.send(&["--new", "J", "say something \u{9b}2J odd"]);
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "the reply", || {
        let v = t.show("J");
        let done = v["messages"]
            .as_array()
            .is_some_and(|m| m.len() == 2 && m[1]["status"] == "complete");
        done.then_some(())
    });
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(3));
    let bad = |c: char| matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}');
    for args in [
        vec!["show", "J", "--json"],
        vec!["list", "--all", "--json"],
        vec!["search", "odd", "--json"],
        vec!["conversations", "--json"],
    ] {
        let out = t.ok(&args);
        assert!(!out.contains(bad), "{args:?}: {out:?}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let text = v.to_string();
        // show and list carry the text as stored (search's snippet and the
        // title are made inert, as on screen).
        assert!(
            !matches!(args[0], "show" | "list") || text.contains('\u{9b}'),
            "{args:?} means the same: {text}"
        );
    }
    assert_eq!(t.item(id)["status"], "sent");
}

/// With `catchup_grace = "0s"` and no tock running, `send` does not promise
/// what the next start will not do: a message due by then is marked expired.
#[test]
fn send_with_no_catch_up_says_a_late_item_expires() {
    let t = Tock::new();
    t.write_config("[outbox]\ncatchup_grace = \"0s\"\n");
    let out = t.run(&["send", "--new", "G", "now or never"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stderr.contains("catchup_grace is 0s") && !out.stderr.contains("it is sent once"),
        "{}",
        out.stderr
    );
}

/// One bad `[keys]` or `[ui.colors]` entry keeps only that entry's default:
/// the rest of the file (its models) is in effect, and a colour written as a
/// number (`accent = 24`) is the 256-colour index it looks like.
#[test]
fn a_bad_key_or_colour_entry_leaves_the_rest_of_the_config_in_effect() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("from the real model"));
    let mut t = Tock::new();
    t.set_env("REAL_KEY", "sk-real-key-for-the-test");
    t.write_config(&format!(
        "default_model = \"real\"\n[models.real]\nprovider = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"REAL_KEY\"\n[keys]\n\"main.quit\" = 5\n[ui.colors]\naccent = 24\nwarning = true\n",
        server.base_url()
    ));
    let out = t.run(&["send", "--new", "K", "hello"]);
    assert!(!out.stderr.contains("warning: config"), "{}", out.stderr);
    let id = out.stdout.trim().parse::<i64>().unwrap();
    let mut d = t.spawn_daemon();
    wait_until(Duration::from_secs(15), "sent to the real model", || {
        (t.item(id)["status"] == "sent" && server.count() == 1).then_some(())
    });
    d.signal(libc::SIGTERM);
    d.wait_timeout(Duration::from_secs(3));
}

/// `send` with no conversation starts one, named after the message at
/// once also when the message goes later or repeats (it was "Conversation
/// N" until the first occurrence).
#[test]
fn send_without_a_conversation_names_the_new_one_after_the_message() {
    let t = Tock::new();
    t.send(&["--every", "every month on the 1st 9am", "monthly thing"]);
    t.send(&["--in", "2h", "later thing"]);
    let convs = t.json(&["conversations", "--json"]);
    let mut titles: Vec<String> = convs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["title"].as_str().map(str::to_string))
        .collect();
    titles.sort();
    assert_eq!(titles, vec!["later thing", "monthly thing"], "{convs:#}");
    assert!(
        t.ok(&["send", "--help"])
            .contains("starts a new conversation")
    );
    // A text longer than the table's column says it was cut.
    let long = format!("a long one {}", "word ".repeat(20));
    t.send(&["--conv", "later thing", "--in", "3h", &long]);
    let table = t.ok(&["list"]);
    let row = table
        .lines()
        .find(|l| l.contains("a long one"))
        .unwrap_or("");
    assert!(row.trim_end().ends_with('…'), "{table}");
}

/// `tock send TEXT` names the conversation it makes after the message at
/// once, as `--help` says, also with no tock running to send it: it was
/// "Conversation N" until sent, and `tock show TEXT` found nothing.
#[test]
fn a_conversation_send_makes_is_named_after_the_message_at_once() {
    let t = Tock::new();
    t.send(&["queued plain message"]);
    assert!(t.ok(&["conversations"]).contains("queued plain message"));
    assert_eq!(
        t.show("queued plain message")["messages"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
}

/// An untitled conversation is listed as "Conversation N": that name
/// finds it (show and send refused it: its title is empty).
#[test]
fn an_untitled_conversation_is_found_by_the_name_it_is_listed_under() {
    let t = Tock::new();
    let store = tock::store::Store::open(&t.db).unwrap();
    let id = store.create_conversation(None, "user", 1).unwrap();
    drop(store);
    let listed = t.ok(&["conversations"]);
    let name = format!("Conversation {id}");
    assert!(listed.contains(&name), "{listed}");
    t.send(&["--conv", &name, "hello"]);
    let shown = t.show(&name);
    assert_eq!(shown["id"], id);
    // A conversation with a title is not found by that name.
    t.send(&["--new", "Named", "hi"]);
    let named_id = t.show("Named")["id"].as_i64().unwrap();
    assert!(
        t.fails(&["show", &format!("Conversation {named_id}")])
            .contains("no conversation")
    );
}

/// `status`'s "next:" line names what goes first by itself, a series'
/// occurrence too (it named the item due later).
#[test]
fn status_next_is_a_series_when_it_comes_first() {
    let t = Tock::new();
    let tick = t.send(&["--new", "Ticks", "--every", "30m", "tick"]);
    t.send(&["--conv", "Ticks", "--in", "2h", "the later item"]);
    let status = t.ok(&["status"]);
    let next = status
        .lines()
        .find(|l| l.starts_with("next:"))
        .unwrap_or("");
    assert!(
        next.starts_with(&format!("next: recurring #{tick} ")) && next.ends_with(": tick"),
        "{status}"
    );
}

#[test]
fn recurring_series_from_the_cli_list_pause_resume_cancel() {
    let t = Tock::new();
    let id = t.send(&[
        "--new",
        "Mornings",
        "--every",
        "every weekday 9am",
        "standup",
        "notes",
    ]);
    let ping = t.send(&[
        "--conv",
        "Mornings",
        "--every",
        "2h",
        "--until",
        "2099-12-31",
        "check the queue",
    ]);
    let once = t.send(&["--conv", "Mornings", "--in", "1h", "one-off"]);
    assert!(
        id > 0 && ping > id && once > ping,
        "one id space: {id} {ping} {once}"
    );

    let list = t.json(&["list", "--json"]);
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{list:#}");
    let s = item(rows, id).unwrap();
    assert_eq!(
        keys(s),
        set(&[
            "id",
            "conversation_id",
            "kind",
            "text",
            "status",
            "state",
            "due_at",
            "attempts",
            "last_error",
            "created_at",
            "sent_at",
            "next_attempt_at",
            "waiting",
            "rule",
            "expression",
            "next_due_at",
            "upcoming",
            "occurrences",
            "skipped",
            "remaining",
            "until_at",
            "occurrence_kind",
            "zone",
        ]),
        "{s:#}"
    );
    assert_eq!(s["kind"], "recurring");
    assert_eq!(s["rule"], "every weekday at 09:00");
    assert_eq!(s["expression"], "every weekday at 09:00");
    assert_eq!(s["text"], "standup notes");
    assert_eq!(s["status"], "active");
    assert_eq!(s["state"], "active");
    assert_eq!(s["occurrences"], 0);
    assert_eq!(s["occurrence_kind"], "message");
    assert_eq!(s["due_at"], s["next_due_at"]);
    for k in ["due_at", "next_due_at", "until_at", "created_at"] {
        assert_time(&s[k], k);
    }
    assert_eq!(s["upcoming"].as_array().unwrap().len(), 3);
    let p = item(rows, ping).unwrap();
    assert_eq!(
        p["rule"].as_str().unwrap().split(',').next(),
        Some("every 2 hours")
    );
    let next = rfc_ms(&p["next_due_at"]).unwrap();
    assert!((next - now_ms() - 2 * 3_600_000).abs() < 60_000, "{p:#}");
    assert_time(&p["until_at"], "until_at");
    // The plain one-off item has exactly the spec fields.
    assert!(item(rows, once).unwrap().get("rule").is_none());
    // The table is in due order too: the series due in 2 h between the
    // items due in 1 h and 3 h (series were listed after every item).
    let late = t.send(&["--conv", "Mornings", "--in", "3h", "the late one"]);
    let table = t.ok(&["list"]);
    let at = |needle: &str| {
        table
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}:\n{table}"))
    };
    assert!(at("one-off") < at("check the queue"), "{table}");
    assert!(at("check the queue") < at("the late one"), "{table}");
    // Counting down as F2 does (whole units left, not rounded up): the
    // item sent --in 1h a moment ago is due in 59m and some seconds.
    assert!(table.contains("(in 59m "), "{table}");
    t.ok(&["cancel", &late.to_string()]);

    let st = t.json(&["status", "--json"]);
    assert_eq!(st["series"]["active"], 2, "{st:#}");
    assert_eq!(
        rfc_ms(&st["series"]["next_due_at"]),
        rfc_ms(&p["next_due_at"]).min(rfc_ms(&s["next_due_at"]))
    );
    assert!(t.ok(&["status"]).contains("recurring: 2 active, 0 paused"));

    let text = t.ok(&["list"]);
    assert!(
        text.contains("recurring") && text.contains("every weekday at 09:00"),
        "{text}"
    );
    // A series has no attempts of its own: its TRY column says so.
    let row = text
        .lines()
        .find(|l| l.contains("every weekday at 09:00"))
        .unwrap_or_default();
    assert!(row.contains(" recurring active      -  "), "{row}");

    assert!(t.ok(&["pause", &id.to_string()]).contains("paused series"));
    let row = |t: &Tock| {
        t.ok(&["list"])
            .lines()
            .find(|l| l.contains("every weekday at 09:00"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row(&t).contains(" (paused)"), "{}", row(&t));
    // Paused past its next time: no time that has gone (resuming skips
    // it), as F2 shows none.
    {
        let db = rusqlite::Connection::open(&t.db).unwrap();
        let next: i64 = db
            .query_row("SELECT next_due_at FROM series WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        db.execute(
            "UPDATE series SET next_due_at = ?2 WHERE id = ?1",
            rusqlite::params![id, now_ms() - 3_600_000],
        )
        .unwrap();
        assert!(row(&t).contains(" - (paused) "), "{}", row(&t));
        db.execute(
            "UPDATE series SET next_due_at = ?2 WHERE id = ?1",
            rusqlite::params![id, next],
        )
        .unwrap();
    }
    assert_eq!(
        item(&t.json(&["list", "--json"]).as_array().unwrap().clone(), id).unwrap()["status"],
        "paused"
    );
    assert!(
        t.fails(&["pause", &id.to_string()])
            .contains("already paused")
    );
    assert!(
        t.ok(&["resume", &id.to_string()])
            .contains("resumed series")
    );
    assert!(
        t.ok(&["edit", &id.to_string(), "stand-up", "notes"])
            .contains("edited series")
    );
    assert!(
        t.ok(&["reschedule", &id.to_string(), "every", "mon", "10:00"])
            .contains("every Monday at 10:00")
    );
    let rows = t.json(&["list", "--json"]);
    let s = item(rows.as_array().unwrap(), id).unwrap().clone();
    assert_eq!(
        (s["status"].as_str(), s["text"].as_str(), s["rule"].as_str()),
        (
            Some("active"),
            Some("stand-up notes"),
            Some("every Monday at 10:00")
        )
    );

    assert!(t.ok(&["cancel", &id.to_string()]).contains("ended series"));
    let open = t.json(&["list", "--json"]);
    assert!(item(open.as_array().unwrap(), id).is_none());
    let all = t.json(&["list", "--all", "--json"]);
    let ended = item(all.as_array().unwrap(), id).unwrap();
    assert_eq!(ended["status"], "ended");
    assert!(ended["next_due_at"].is_null());
    assert!(
        t.fails(&["cancel", &id.to_string()])
            .contains("already ended")
    );
    // Pruning finished rows removes ended series too.
    t.ok(&["prune", "--older-than", "0s"]);
    let all = t.json(&["list", "--all", "--json"]);
    assert!(item(all.as_array().unwrap(), id).is_none(), "{all:#}");
    assert!(item(all.as_array().unwrap(), ping).is_some());
    // The one-off item is still an item.
    assert!(
        t.fails(&["pause", &once.to_string()])
            .contains("not a recurring series")
    );
    assert!(
        t.ok(&["cancel", &once.to_string()])
            .contains(&format!("canceled {once}"))
    );
}

/// A series still going says how many went so far; one that has ended
/// says how many times it ran, and that it ended.
#[test]
fn an_ended_series_reads_as_finished_in_list() {
    let t = Tock::new();
    let going = t.send(&["--new", "S", "--every", "every 1 minute", "drink water"]);
    let done = t.send(&[
        "--conv",
        "S",
        "--every",
        "every 1 minute for 2 times",
        "stretch",
    ]);
    // As the scheduler leaves them: one went three times so far, the
    // other ran its two times and ended.
    let db = rusqlite::Connection::open(&t.db).unwrap();
    db.execute("UPDATE series SET occurrences = 3 WHERE id = ?1", [going])
        .unwrap();
    db.execute(
        "UPDATE series SET occurrences = 2, remaining = 0, next_due_at = NULL, \
         status = 'ended' WHERE id = ?1",
        [done],
    )
    .unwrap();
    drop(db);
    let table = t.ok(&["list", "--all"]);
    let row = |text: &str| {
        table
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text}:\n{table}"))
            .to_string()
    };
    assert!(
        row("drink water").ends_with("[every minute; 3 so far]"),
        "{table}"
    );
    assert!(
        row("stretch").ends_with("[every minute; ran 2 times, ended]"),
        "{table}"
    );
}

/// A flag's time or rule that reads only in part says where it stops, as
/// the composer does, in the command line's terms: it said only "can't
/// read … — try …".
#[test]
fn a_time_or_rule_read_only_in_part_says_where_it_stops() {
    let t = Tock::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["send", "--every", "weekday at 9am and 5pm", "x"],
            "\"and 5pm\" after \"weekday at 9am\": one time per rule — make two series, every \"weekday at 9am\" and every \"weekday 5pm\"",
        ),
        (
            &["send", "--at", "9am and 5pm", "x"],
            "\"and 5pm\" after \"9am\": one time per message — send two, one at \"9am\" and one at \"5pm\"",
        ),
        (
            &["send", "--at", "tomorrow 9am foo", "x"],
            "can't read \"tomorrow 9am foo\" as a time: \"tomorrow 9am\" is one, and \"foo\" after it is not part of it",
        ),
        (
            &["send", "--every", "friday 6pm evening", "x"],
            "can't read \"friday 6pm evening\" as a rule: \"friday 6pm\" is one, and \"evening\" after it is not part of it",
        ),
        (
            &["send", "--at", "9am PST", "x"],
            "\"PST\" after \"9am\": tock reads times in your local zone",
        ),
        (&["send", "--every", "9am PST", "x"], "has a time zone"),
    ];
    for (args, said) in cases {
        let line = t.fails(args);
        assert!(line.contains(said), "{args:?}: {line}");
        // The composer's ways out are not the command line's.
        assert!(!line.contains("/at") && !line.contains("--"), "{line}");
    }
    // A series rescheduled to such a rule is told the same.
    let out = t.ok(&["send", "--every", "every day at 9am", "x"]);
    let id = out
        .split_whitespace()
        .last()
        .unwrap()
        .trim_start_matches('#');
    let line = t.fails(&["reschedule", id, "weekday 9am and 5pm"]);
    assert!(line.contains("one time per rule"), "{line}");
    // What does not read at all still says what would.
    assert!(t.fails(&["send", "--at", "zzz", "x"]).contains("try 10m"));
}

#[test]
fn bad_recurring_input_exits_non_zero_with_one_line() {
    let t = Tock::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["send", "--every", "every 10 seconds", "x"],
            "once a minute",
        ),
        (&["send", "--every", "every blah", "x"], "can't read"),
        (
            &["send", "--every", "cron \"0 0 30 2 *\"", "x"],
            "never fires",
        ),
        (
            &["send", "--every", "every day at 9am for 0 times", "x"],
            "never fires",
        ),
        (
            &[
                "send",
                "--every",
                "every day 9am",
                "--until",
                "2001-01-01",
                "x",
            ],
            "past",
        ),
        (
            &["send", "--every", "every 2h", "--until", "in 1 hour", "x"],
            "ends before it starts",
        ),
        (&["pause", "4242"], "no series 4242"),
        (&["resume", "4242"], "no series 4242"),
    ];
    for (args, mention) in cases {
        let line = t.fails(args);
        assert!(line.contains(mention), "{args:?}: {line}");
        assert!(line.len() < 400, "{args:?}: {line}");
        // Said once, not again as its own cause.
        assert_eq!(line.matches(mention).count(), 1, "{args:?}: {line}");
    }
    let line = t.fails(&["send", "--every", "daily 18:00 until yesterday", "x"]);
    assert_eq!(line.matches("in the past").count(), 1, "{line}");
    // Option conflicts are refused by the argument parser.
    for args in [
        &["send", "--until", "dec 24", "x"][..],
        &["send", "--every", "2h", "--in", "1h", "x"][..],
        &["send", "--every", "2h", "--at", "9am", "x"][..],
    ] {
        let o = t.run(args);
        assert!(!o.status.success(), "{args:?}");
        assert!(o.stderr.contains("--every"), "{args:?}: {}", o.stderr);
    }
    assert_eq!(t.json(&["list", "--all", "--json"]), serde_json::json!([]));
}

/// A number after a day or a date in `--at` / `--every` is an hour: 13 to
/// 23 is taken (never a two-digit year), 1 to 12 is asked about.
#[test]
fn a_bare_hour_after_a_day_is_an_hour_or_a_question() {
    let mut t = Tock::new();
    t.set_env("TZ", "UTC");
    // The day after tomorrow by its name: `tomorrow 21` said before 04:00
    // is asked about (today's 21:00, or the next day's?).
    let day = chrono::Utc::now().date_naive() + chrono::Days::new(2);
    let at = format!("{} 21", day.format("%a"));
    let id = t.send(&["--new", "Bins", "--at", &at, "take out bins"]);
    let christmas = t.send(&["--conv", "Bins", "--at", "dec 25 21", "carols"]);
    let series = t.send(&["--conv", "Bins", "--every", "daily 21", "lights"]);
    let list = t.json(&["list", "--json"]);
    let rows = list.as_array().unwrap();
    assert_eq!(
        item(rows, id).unwrap()["due_at"],
        format!("{day}T21:00:00.000Z")
    );
    assert!(
        item(rows, christmas).unwrap()["due_at"]
            .as_str()
            .unwrap()
            .ends_with("-12-25T21:00:00.000Z"),
        "{list:#}"
    );
    assert_eq!(item(rows, series).unwrap()["rule"], "every day at 21:00");
    for (flag, when) in [("--at", "tomorrow 9"), ("--every", "daily 9")] {
        let line = t.fails(&["send", "--conv", "Bins", flag, when, "x"]);
        assert!(line.contains("say 9am, 9pm or 21:00"), "{when}: {line}");
    }
}

/// A message written on a clock that was ahead (3 hours) happened by now:
/// `tock show` and `tock search` print it at now, not at a time to come;
/// `--json` keeps the time stored.
#[test]
fn a_time_written_on_a_clock_ahead_is_printed_as_now() {
    let t = Tock::new();
    let now = chrono::Utc::now().timestamp_millis();
    let ahead = now + 3 * 3_600_000;
    let store = tock::store::Store::open(&t.db).unwrap();
    let id = store
        .create_conversation(Some("Ahead"), "user", ahead)
        .unwrap();
    let m = tock::store::NewMessage {
        role: Some(tock::store::Role::User),
        content: "penguins from the future",
        ..Default::default()
    };
    store.insert_message(id, &m, ahead).unwrap();
    drop(store);
    let stamp = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .with_timezone(&chrono::Local)
            .format("%H:%M")
            .to_string()
    };
    let (later, soon) = (stamp(ahead), stamp(now + 60_000));
    for out in [t.ok(&["show", "Ahead"]), t.ok(&["search", "penguins"])] {
        assert!(!out.contains(&later), "{later} in: {out}");
        assert!(out.contains(&stamp(now)) || out.contains(&soon), "{out}");
    }
    let json = t.ok(&["show", "Ahead", "--json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let stored = v["messages"][0]["created_at"].as_str().unwrap().to_string();
    let at = chrono::DateTime::parse_from_rfc3339(&stored).unwrap();
    assert_eq!(at.timestamp_millis() / 1000, ahead / 1000, "{stored}");
}

/// `tock status` checks the server of every model configured, not only the
/// default's: a conversation set to another goes nowhere while its server
/// is down. Models on one server are checked once, together.
#[test]
fn status_checks_the_server_of_every_model_configured() {
    let server = MockServer::start();
    let closed = MockServer::free_port();
    let mut t = Tock::new();
    t.write_config(&format!(
        "default_model = \"main\"\n\
         [models.main]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\nbase_url = \"{url}\"\napi_key_env = \"K\"\n\
         [models.big]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\nbase_url = \"{url}\"\napi_key_env = \"K\"\n\
         [models.nokey]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\nbase_url = \"{url}\"\napi_key_env = \"NO_SUCH_KEY_U\"\n\
         [models.gone]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:{closed}/v1\"\napi_key_env = \"K\"\n\
         [models.other]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:{closed}/v1\"\napi_key_env = \"NO_SUCH_KEY_T\"\n",
        url = server.base_url()
    ));
    // Where requests would go is known with the key missing too.
    let out = t.ok(&["status"]);
    assert!(out.contains("K is not set"), "{out}");
    assert!(out.contains("provider: 127.0.0.1:"), "{out}");
    t.set_env("K", "sk-test");
    let out = t.ok(&["status"]);
    assert!(out.contains("provider: 127.0.0.1:"), "{out}");
    assert!(
        out.contains(&format!(
            "also: gone, other — 127.0.0.1:{closed} NOT reachable; other: NO_SUCH_KEY_T is not set"
        )),
        "{out}"
    );
    // `big` is on the default's server: checked with it. An entry there
    // without its key is named on that line.
    assert!(!out.contains("big"), "{out}");
    let provider = out
        .lines()
        .find(|l| l.starts_with("provider: "))
        .unwrap_or_default();
    assert!(
        provider.ends_with("; nokey: NO_SUCH_KEY_U is not set"),
        "{out}"
    );
    let v = t.json(&["status", "--json"]);
    assert_eq!(
        v["other_servers"],
        json!([{"models": ["gone", "other"], "reachability": format!("127.0.0.1:{closed} NOT reachable; other: NO_SUCH_KEY_T is not set")}])
    );
    assert_eq!(server.count(), 0, "a check sends no request");
}
