//! `tock setup`: the real binary writes a config file from answers on
//! stdin, checks the server by listing its models (a local
//! OpenAI-compatible server here), and the next command uses the model.

mod support;

use std::os::unix::fs::PermissionsExt;

use support::{MockServer, Reply, Tock};

/// `tock setup` with `answers` on stdin.
fn setup(t: &Tock, answers: &str) -> support::Out {
    t.run_with_stdin(&["setup"], answers.as_bytes())
}

/// A Tock whose config file is not there yet (setup writes it).
fn without_config(server: &MockServer) -> Tock {
    let mut t = Tock::new();
    std::fs::remove_file(&t.config).unwrap();
    t.set_env("MY_SERVER_KEY", "sk-from-the-environment");
    let _ = server;
    t
}

#[test]
fn setup_writes_a_private_config_that_the_next_command_uses() {
    let server = MockServer::start();
    server.push(Reply::text("hello from the configured server"));
    let t = without_config(&server);
    // Another OpenAI-compatible server, its URL, the key from a variable
    // (named), the model offered (the first the server lists), the name offered.
    let answers = format!("4\n{}\n1\nMY_SERVER_KEY\n\n\n", server.base_url());
    let out = setup(&t, &answers);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout
            .contains("checked: the server lists 2 models: gpt-4o, gpt-4o-mini"),
        "{}",
        out.stdout
    );
    let written = std::fs::read_to_string(&t.config).unwrap();
    assert!(written.contains("default_model = \"main\""), "{written}");
    assert!(written.contains("[models.main]"), "{written}");
    assert!(written.contains("model = \"gpt-4o\""), "{written}");
    assert!(
        written.contains("api_key_env = \"MY_SERVER_KEY\""),
        "{written}"
    );
    assert!(
        !written.contains("sk-from-the-environment"),
        "never the key"
    );
    let mode = std::fs::metadata(&t.config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // The next command talks to it, with the key from the environment.
    let asked = t.run(&["ask", "hello?"]);
    assert!(asked.status.success(), "{asked:?}");
    assert_eq!(asked.stdout, "hello from the configured server\n");
    let chat = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(chat.body["model"], "gpt-4o");
    assert_eq!(
        chat.header("authorization"),
        Some("Bearer sk-from-the-environment")
    );
}

#[test]
fn a_failed_check_is_said_and_the_file_still_written() {
    let t = {
        let mut t = Tock::new();
        std::fs::remove_file(&t.config).unwrap();
        t.set_env("PATH", "/usr/bin:/bin");
        t
    };
    // A port nothing listens on; the key from a command that is not there.
    let port = MockServer::free_port();
    let answers = format!(
        "4\nhttp://127.0.0.1:{port}/v1\n2\nno-such-password-tool show key\nmy-model\nwork\n"
    );
    let out = setup(&t, &answers);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.contains("check failed: "), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("no-such-password-tool: command not found"),
        "{}",
        out.stdout
    );
    let written = std::fs::read_to_string(&t.config).unwrap();
    assert!(written.contains("[models.work]") && written.contains("model = \"my-model\""));
    assert!(written.contains("api_key_cmd = \"no-such-password-tool show key\""));
}

#[test]
fn with_a_config_file_there_setup_changes_nothing_and_prints_the_entry() {
    let server = MockServer::start();
    let t = Tock::new();
    t.write_config("# mine\n");
    let answers = format!("4\n{}\n3\ngpt-4o-mini\nlocal\n", server.base_url());
    let out = setup(&t, &answers);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&t.config).unwrap(), "# mine\n");
    assert!(
        out.stdout
            .contains("is there already, and setup changes nothing in it")
            && out
                .stdout
                .contains("[models.local]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\""),
        "{}",
        out.stdout
    );
}

#[test]
fn wrong_answers_are_asked_again_and_input_that_ends_writes_nothing() {
    let server = MockServer::start();
    let t = without_config(&server);
    let out = setup(&t, "9\nfoo\n4\n\n");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stdout.contains("a number from 1 to 4, please"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("this one is needed"), "{}", out.stdout);
    assert_eq!(
        out.stderr.trim(),
        "tock: setup ended before it was done (no more input); nothing was written"
    );
    assert!(!t.config.exists());
}
