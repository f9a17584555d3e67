//! The command line as a newcomer meets it: `filing --help` short and each command's help with
//! its own settings, `filing serve --listen`, commands that name their database and create one
//! only with `--init`, and the lists of providers, operators and keys.

mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::{Options, TestApp, fresh_database};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_filing");

fn filing(dir: &std::path::Path, database_url: &str, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = common::output_of(common::filing_command(dir, database_url).args(args));
    (code.unwrap_or(-1), out, err)
}

/// The one JSON object a command printed on stdout.
fn one_object(stdout: &str) -> Value {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout:?}");
    let v: Value = serde_json::from_str(lines[0]).expect("stdout is JSON");
    assert!(v.is_object());
    v
}

backend_tests! {
    async fn lists_show_what_the_cli_created(backend) {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let url = fresh_database(backend, dir.path()).await.unwrap();
        let app = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        let (_, http_key) = app.provider("Über HTTP GmbH").await;
        let mut created = Vec::new();
        for name in ["Erste GmbH", "Zweite GmbH"] {
            let (code, out, err) = filing(dir.path(), &url, &["providers", "create", "--name", name]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(err.trim(), format!("database: {}", server::config::database_label(&url)));
            created.push(one_object(&out)["company_id"].as_str().unwrap().to_string());
        }
        let (code, out, err) = filing(dir.path(), &url, &["providers", "list"]);
        assert_eq!(code, 0, "{err}");
        let list = one_object(&out);
        let names: Vec<&str> = list["providers"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Über HTTP GmbH", "Erste GmbH", "Zweite GmbH"]);
        assert_eq!(list["providers"][2]["company_id"], created[1].as_str());
        // Keys: oldest first, prefixes only; a revoked one is not listed.
        let (code, out, _) = filing(dir.path(), &url, &["keys", "create", "--company", &created[0]]);
        assert_eq!(code, 0);
        let second_key = one_object(&out)["api_key"].as_str().unwrap().to_string();
        let (code, out, _) = filing(dir.path(), &url, &["keys", "list", "--company", &created[0]]);
        assert_eq!(code, 0);
        let keys = one_object(&out);
        assert_eq!(keys["api_keys"].as_array().unwrap().len(), 2, "{keys}");
        let second_prefix = domain::auth::parse_key(&second_key).unwrap().prefix.to_string();
        assert_eq!(keys["api_keys"][1]["key_prefix"], second_prefix.as_str());
        let (code, _, err) = filing(dir.path(), &url, &["keys", "revoke", &second_prefix]);
        assert_eq!(code, 0, "{err}");
        let (_, out, _) = filing(dir.path(), &url, &["keys", "list", "--company", &created[0]]);
        assert_eq!(one_object(&out)["api_keys"].as_array().unwrap().len(), 1);
        assert!(!out.contains(&second_key) && !out.contains(&http_key));
        let (code, out, _) = filing(dir.path(), &url, &["operators", "list"]);
        assert_eq!((code, one_object(&out)["operators"].as_array().unwrap().len()), (0, 0));
        let (op, _) = app.operator("Olga").await;
        let (_, out, _) = filing(dir.path(), &url, &["operators", "list"]);
        assert_eq!(one_object(&out)["operators"], serde_json::json!([{
            "operator_id": op, "name": "Olga",
            "created_at": one_object(&out)["operators"][0]["created_at"],
        }]));
    }
}

/// The help of a command run as `args`.
fn help(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `filing --help` is a short list of commands; each command's help shows its own settings,
/// and only those: the server's with `serve`, no storage flags with `render`.
#[test]
fn help_shows_each_command_its_own_settings() {
    let top = help(&[]);
    assert!(
        top.lines().count() < 60,
        "{} lines:\n{top}",
        top.lines().count()
    );
    for want in [
        "serve",
        "migrate",
        "providers",
        "operators",
        "keys",
        "backup",
        "restore",
        "render",
    ] {
        assert!(top.contains(want), "`filing --help` lacks {want}");
    }
    assert!(
        !top.contains("--listen") && !top.contains("--data-dir"),
        "{top}"
    );

    let serve = help(&["serve"]);
    for var in [
        "--listen",
        "FILING_LISTEN",
        "FILING_DATA_DIR",
        "FILING_PUBLIC_URL",
        "DATABASE_URL",
        "FILING_DOCUMENTS_DIR",
        "FILING_MAX_BODY_BYTES",
        "FILING_MAX_UPLOAD_BYTES",
        "FILING_LOG_FORMAT",
        "FILING_SIGNING_SECRET",
        "FILING_OPERATOR_NAME",
    ] {
        assert!(serve.contains(var), "`filing serve --help` lacks {var}");
    }

    let render = help(&["render", "gewa1"]);
    assert!(render.contains("--input") && render.contains("--operator-name"));
    for storage in [
        "--data-dir",
        "--database-url",
        "--documents-url",
        "AWS_",
        "--listen",
    ] {
        assert!(
            !render.contains(storage),
            "render shows {storage}:\n{render}"
        );
    }

    // Every argument says what it takes.
    let create = help(&["providers", "create"]);
    assert!(
        create.contains("--data-dir") && create.contains("--init"),
        "{create}"
    );
    // The text after an argument's entry in the list (the first mention is in "Usage").
    let described = |help: &str, entry: &str| -> String {
        help.split(entry)
            .nth(2)
            .unwrap_or_else(|| panic!("{entry} in {help}"))
            .trim_start()
            .to_string()
    };
    assert!(
        described(&create, "--name <NAME>").starts_with("The company's name"),
        "{create}"
    );
    let revoke = help(&["keys", "revoke"]);
    assert!(
        described(&revoke, "<PREFIX>").starts_with("The key's prefix"),
        "{revoke}"
    );
    let list = help(&["keys", "list"]);
    assert!(
        described(&list, "--company <COMPANY>").starts_with("The company's id"),
        "{list}"
    );
}

/// `filing serve --listen ADDR` takes the flag after the subcommand, and `filing --listen ADDR`
/// (no subcommand) still serves.
#[test]
fn serve_takes_its_flags() {
    for args in [&["serve", "--listen"][..], &["--listen"]] {
        let dir = tempfile::tempdir().unwrap();
        let port = common::free_port();
        let mut child = Command::new(BIN)
            .args(args)
            .arg(format!("127.0.0.1:{port}"))
            .arg("--log=warn")
            .current_dir(dir.path())
            .env_remove("DATABASE_URL")
            .env_remove("FILING_LISTEN")
            .env("FILING_DATA_DIR", dir.path().join("served"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut answered = false;
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                answered = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(answered, "{args:?}: nothing listens on {port}");
        assert!(dir.path().join("served/filing.db").exists(), "{args:?}");
    }
}

/// A command that needs the database refuses to make a new one where none is (a command run
/// in the wrong folder would print a key for a database no server reads) unless `--init`;
/// each names the database it used, and a failure is printed once.
#[test]
fn commands_name_their_database_and_create_one_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |args: &[&str]| {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("FILING_DATA_DIR", &data);
        let (code, out, err) = common::output_of(&mut command);
        (code.unwrap_or(-1), out, err)
    };
    for args in [
        &["providers", "create", "--name", "P"][..],
        &["operators", "create", "--name", "O"],
        &["migrate"],
        &["providers", "list"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("does not exist")
                && err.contains("--init")
                && err.contains("filing serve"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "printed once: {err}");
        assert!(!data.exists(), "{args:?} created the data folder");
    }

    let db_line = format!("database: sqlite://{}", data.join("filing.db").display());
    let (code, out, err) = run(&["providers", "create", "--init", "--name", "Erste GmbH"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.trim(), db_line);
    let created = one_object(&out);
    let key = created["api_key"].as_str().unwrap();
    let company = created["company_id"].as_str().unwrap();
    // Now the database is there: no --init needed.
    let (code, out, err) = run(&["providers", "create", "--name", "Zweite GmbH"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.trim(), db_line);
    let second = one_object(&out)["company_id"].as_str().unwrap().to_string();

    let (code, out, err) = run(&["providers", "list"]);
    assert_eq!((code, err.trim()), (0, db_line.as_str()), "{err}");
    let list = one_object(&out);
    let providers = list["providers"].as_array().unwrap();
    let listed: Vec<(&str, &str)> = providers
        .iter()
        .map(|p| {
            (
                p["company_id"].as_str().unwrap(),
                p["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(company, "Erste GmbH"), (second.as_str(), "Zweite GmbH")]
    );
    assert!(providers[0]["created_at"].as_str().is_some());

    let (code, out, err) = run(&["keys", "list", "--company", company]);
    assert_eq!(code, 0, "{err}");
    let prefix = domain::auth::parse_key(key).unwrap().prefix;
    let keys = one_object(&out);
    assert_eq!(keys["api_keys"].as_array().unwrap().len(), 1, "{keys}");
    assert_eq!(keys["api_keys"][0]["key_prefix"], prefix);
    assert_eq!(keys["api_keys"][0]["key_type"], "provider");
    assert!(!out.contains(key), "a key is listed whole");

    let (code, out, err) = run(&["operators", "create", "--name", "Olga"]);
    assert_eq!(code, 0, "{err}");
    let operator = one_object(&out)["operator_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, out, _) = run(&["operators", "list"]);
    assert_eq!(code, 0);
    assert_eq!(
        one_object(&out)["operators"][0]["operator_id"],
        operator.as_str()
    );
    assert_eq!(one_object(&out)["operators"][0]["name"], "Olga");

    // A failure after the database was opened: the database line and the error, once each.
    let (code, out, err) = run(&["keys", "revoke", "rfs_prv_000000000000"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(lines[0], db_line);
    assert!(lines[1].starts_with("error: no active key"), "{err}");
    let (code, _, err) = run(&[
        "keys",
        "list",
        "--company",
        &uuid::Uuid::new_v4().to_string(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(err.matches("no company").count(), 1, "{err}");
}
