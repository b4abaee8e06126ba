//! The approval policy: whether a tool call runs at once (`allow`), waits for
//! the user's answer as a durable approval row (`ask`), or is refused at once
//! with an error result the model reads (`deny`).
//!
//! Where the answer comes from, first match wins:
//! 1. the config's `[approvals] rules` (and `auto_approve`, as `allow` rules);
//!    among several matching patterns the most specific one decides — an exact
//!    name, then the pattern with the most literal characters; on a tie the
//!    stricter decision (`deny` over `ask` over `allow`);
//! 2. the `allow` rules the user saved with `tock approve ID --always` (kept
//!    in the settings table, so the user's config file is never rewritten);
//! 3. tock's own tools' built-in answers: `list_scheduled` only reads and is
//!    allowed, `schedule_task` and `cancel_scheduled` ask;
//! 4. with `[approvals] allow_read_only = true`, an MCP tool that declares
//!    itself read-only (`readOnlyHint`) is allowed;
//! 5. `[approvals] default` (`ask` unless set).
//!
//! MCP tools are named `server__tool`, so `files__*` is a rule for a whole
//! server and `files__read_*` for some of its tools.
//!
//! Patterns support only `*` (any run of characters, also none). A full glob
//! crate was rejected: tool names are short identifiers and nothing else
//! (classes, `?`, braces) has been asked for.

use crate::config::{Config, Decision};

use super::tools::{CANCEL_SCHEDULED, LIST_SCHEDULED, SCHEDULE_TASK};

/// The settings key of the saved `allow` rules (a JSON array of tool names).
pub const SAVED_RULES_KEY: &str = "approvals.allow";

/// Where a decision came from (shown by `tock approve --always` when a config
/// rule keeps the saved one from applying).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A config rule, by its pattern.
    Config(String),
    /// A rule saved with `--always`.
    Saved,
    BuiltIn,
    /// The tool declares itself read-only and `allow_read_only` is on.
    ReadOnly,
    Default,
}

#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Config rules: `[approvals] rules`, then `auto_approve` as `allow`
    /// (an explicit rule for the same pattern wins).
    rules: Vec<(String, Decision)>,
    saved: Vec<String>,
    default: Decision,
    allow_read_only: bool,
}

impl Policy {
    /// The policy of `config`, with the saved `allow` rules.
    pub fn new(config: &Config, saved: Vec<String>) -> Self {
        let mut rules: Vec<(String, Decision)> = config
            .approvals
            .rules
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for tool in &config.auto_approve {
            if !rules.iter().any(|(k, _)| k == tool) {
                rules.push((tool.clone(), Decision::Allow));
            }
        }
        Self {
            rules,
            saved,
            default: config.approvals.default,
            allow_read_only: config.approvals.allow_read_only,
        }
    }

    pub fn decide(&self, tool: &str) -> Decision {
        self.explain(tool).0
    }

    /// The decision for a tool that may declare itself read-only.
    pub fn decide_tool(&self, tool: &str, read_only: bool) -> Decision {
        self.explain_tool(tool, read_only).0
    }

    pub fn explain(&self, tool: &str) -> (Decision, Source) {
        self.explain_tool(tool, false)
    }

    pub fn explain_tool(&self, tool: &str, read_only: bool) -> (Decision, Source) {
        let best = self
            .rules
            .iter()
            .filter(|(pattern, _)| glob_match(pattern, tool))
            .max_by_key(|(pattern, d)| (specificity(pattern), strictness(*d)));
        if let Some((pattern, d)) = best {
            return (*d, Source::Config(pattern.clone()));
        }
        if self.saved.iter().any(|p| glob_match(p, tool)) {
            return (Decision::Allow, Source::Saved);
        }
        match tool {
            LIST_SCHEDULED => (Decision::Allow, Source::BuiltIn),
            SCHEDULE_TASK | CANCEL_SCHEDULED => (Decision::Ask, Source::BuiltIn),
            _ if read_only && self.allow_read_only => (Decision::Allow, Source::ReadOnly),
            _ => (self.default, Source::Default),
        }
    }
}

/// Exact names first, then the pattern with the most literal characters.
fn specificity(pattern: &str) -> (bool, usize) {
    (
        !pattern.contains('*'),
        pattern.chars().filter(|c| *c != '*').count(),
    )
}

fn strictness(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // The last `*` seen and the name position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            // Let the star take one more character.
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Parse the stored saved rules; an unreadable value counts as none.
pub fn parse_saved(value: Option<&str>) -> Vec<String> {
    value
        .and_then(|v| serde_json::from_str::<Vec<String>>(v).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApprovalsConfig;

    fn config(default: Decision, rules: &[(&str, Decision)], auto: &[&str]) -> Config {
        Config {
            approvals: ApprovalsConfig {
                default,
                rules: rules.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                ..Default::default()
            },
            auto_approve: auto.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn glob_matches_stars_anywhere() {
        assert!(glob_match("files__read_*", "files__read_file"));
        assert!(glob_match("files__read_*", "files__read_"));
        assert!(!glob_match("files__read_*", "files__write_file"));
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("shell__*", "shell__run"));
        assert!(!glob_match("shell__*", "myshell__run"));
        assert!(glob_match("*__list_*", "files__list_directory"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(glob_match("a*b*c", "abbbc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("schedule_task", "schedule_task"));
        assert!(!glob_match("schedule_task", "schedule_tasks"));
        assert!(!glob_match("schedule_tasks", "schedule_task"));
        assert!(glob_match("**", "x"));
        assert!(glob_match("é*", "éclair"));
    }

    #[test]
    fn without_rules_tocks_own_tools_keep_their_answers_and_others_follow_the_default() {
        let p = Policy::new(&config(Decision::Allow, &[], &[]), vec![]);
        assert_eq!(p.decide(SCHEDULE_TASK), Decision::Ask);
        assert_eq!(p.decide(CANCEL_SCHEDULED), Decision::Ask);
        assert_eq!(p.decide(LIST_SCHEDULED), Decision::Allow);
        assert_eq!(p.decide("files__read_file"), Decision::Allow);
        let p = Policy::new(&Config::default(), vec![]);
        assert_eq!(p.decide("files__read_file"), Decision::Ask);
        assert_eq!(p.decide(SCHEDULE_TASK), Decision::Ask);
    }

    #[test]
    fn the_most_specific_config_rule_wins_and_ties_go_to_the_stricter() {
        let p = Policy::new(
            &config(
                Decision::Ask,
                &[
                    ("files__*", Decision::Deny),
                    ("files__read_*", Decision::Allow),
                    ("files__read_secret", Decision::Deny),
                    ("x*", Decision::Allow),
                    ("*x", Decision::Deny),
                    ("*", Decision::Allow),
                ],
                &[],
            ),
            vec![],
        );
        assert_eq!(p.decide("files__read_file"), Decision::Allow);
        assert_eq!(p.decide("files__read_secret"), Decision::Deny);
        assert_eq!(p.decide("files__write_file"), Decision::Deny);
        assert_eq!(p.decide("xx"), Decision::Deny, "same specificity: stricter");
        assert_eq!(p.decide("other"), Decision::Allow);
        // A rule that matches tock's own tool replaces its built-in answer.
        assert_eq!(p.decide(SCHEDULE_TASK), Decision::Allow);
        assert_eq!(
            p.explain("files__read_file").1,
            Source::Config("files__read_*".into())
        );
    }

    #[test]
    fn auto_approve_is_an_allow_rule_and_an_explicit_rule_for_the_same_tool_wins() {
        let p = Policy::new(&config(Decision::Ask, &[], &["schedule_task"]), vec![]);
        assert_eq!(p.decide(SCHEDULE_TASK), Decision::Allow);
        let p = Policy::new(
            &config(
                Decision::Ask,
                &[("schedule_task", Decision::Deny)],
                &["schedule_task", "mcp__*"],
            ),
            vec![],
        );
        assert_eq!(p.decide(SCHEDULE_TASK), Decision::Deny);
        assert_eq!(p.decide("mcp__tool"), Decision::Allow);
    }

    #[test]
    fn saved_rules_apply_after_the_configs_own_rules_but_before_built_ins_and_default() {
        let cfg = config(
            Decision::Deny,
            &[("shell__*", Decision::Deny), ("files__*", Decision::Ask)],
            &[],
        );
        let saved = vec![
            "shell__run".to_string(),
            "files__read_file".to_string(),
            "schedule_task".to_string(),
            "web__fetch".to_string(),
        ];
        let p = Policy::new(&cfg, saved);
        assert_eq!(p.decide("shell__run"), Decision::Deny);
        assert_eq!(p.decide("files__read_file"), Decision::Ask);
        assert_eq!(p.explain(SCHEDULE_TASK), (Decision::Allow, Source::Saved));
        assert_eq!(p.decide("web__fetch"), Decision::Allow);
        assert_eq!(p.decide("web__other"), Decision::Deny);
    }

    #[test]
    fn read_only_tools_are_allowed_only_when_asked_for_and_rules_still_win() {
        let mut cfg = config(
            Decision::Ask,
            &[("files__read_secret", Decision::Deny)],
            &[],
        );
        let p = Policy::new(&cfg, vec![]);
        assert_eq!(p.decide_tool("files__read_file", true), Decision::Ask);
        cfg.approvals.allow_read_only = true;
        let p = Policy::new(&cfg, vec![]);
        assert_eq!(
            p.explain_tool("files__read_file", true),
            (Decision::Allow, Source::ReadOnly)
        );
        assert_eq!(p.decide_tool("files__write_file", false), Decision::Ask);
        assert_eq!(p.decide_tool("files__read_secret", true), Decision::Deny);
        // tock's own tools keep their built-in answers.
        assert_eq!(p.decide_tool(SCHEDULE_TASK, true), Decision::Ask);
    }

    #[test]
    fn saved_rules_parse_leniently() {
        assert_eq!(parse_saved(None), Vec::<String>::new());
        assert_eq!(parse_saved(Some("not json")), Vec::<String>::new());
        assert_eq!(parse_saved(Some(r#"["a","b"]"#)), vec!["a", "b"]);
    }
}
