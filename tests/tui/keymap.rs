//! The keymap table and the help popup agree.

use super::*;

#[test]
fn every_listed_binding_is_reachable_and_labelled() {
    let keys = Keymap::default();
    let mut listed = 0;
    for b in keys.bindings() {
        for k in &b.keys {
            listed += 1;
            let ev = KeyEvent::new(k.code, k.mods);
            assert_eq!(
                keys.action(b.scope, &ev),
                Some(b.action),
                "{:?} {} is shadowed by an earlier binding",
                b.scope,
                k.label()
            );
        }
    }
    assert!(listed >= 60, "only {listed} keys bound");
    // A main key works wherever the composer has focus: no composer binding hides it
    // (Tab completes a /command first, and falls back to moving focus).
    for g in keys.bindings().iter().filter(|b| b.scope == Scope::Main) {
        for k in &g.keys {
            let hidden = keys.action(Scope::Composer, &KeyEvent::new(k.code, k.mods));
            assert!(
                hidden.is_none() || k.code == KeyCode::Tab,
                "the composer hides {} ({:?})",
                k.label(),
                g.action
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_help_popup_lists_every_binding() {
    let mut ui = Ui::new(vec![]);
    ui.ch('?');
    assert!(ui.app.popup() == Some(ViewKind::Help));
    // Tall enough to show everything.
    let s = ui.screen(140, 170);
    for (_, keys, help) in ui.app.keys.help_rows(false) {
        assert!(
            s.lines().any(|l| l.contains(&keys)
                && l.contains(&help.split(' ').take(3).collect::<Vec<_>>().join(" "))),
            "{keys:?} missing from help:\n{s}"
        );
    }
    for c in COMMANDS {
        assert!(s.contains(c.usage), "{} missing from help", c.usage);
    }
    // Shift+Enter is not advertised until the terminal shows it can report it.
    assert!(!s.contains("Shift+Enter"), "{s}");
}
