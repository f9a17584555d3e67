//! The `filing` binary itself: bootstrap commands print usable keys, configuration errors name
//! their variable, and `serve` starts with no configuration and stops cleanly on SIGTERM.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::{Options, TestApp, assert_error, fresh_database, json};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_filing");

fn filing(dir: &std::path::Path, database_url: &str, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = common::output_of(common::filing_command(dir, database_url).args(args));
    (code.unwrap_or(-1), out, err)
}

/// Files below `dir`, at any depth.
fn walkdir_count(dir: &std::path::Path) -> usize {
    common::files_below(dir).len()
}

/// The one JSON object a command printed on stdout.
fn one_object(stdout: &str) -> Value {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout:?}");
    let v: Value = serde_json::from_str(lines[0]).expect("stdout is JSON");
    assert!(v.is_object());
    v
}

/// The client company of trade registration `id`, as `key` reads it.
async fn company_of_case(app: &TestApp, key: &str, id: &str) -> String {
    app.read(&format!("/v1/trade-registration/{id}"), key).await["company_id"]
        .as_str()
        .unwrap()
        .to_string()
}

backend_tests! {
    async fn trade_offices_import_is_all_or_nothing(backend) {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let url = fresh_database(backend, dir.path()).await.unwrap();
        let app = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        let good = dir.path().join("good.csv");
        std::fs::write(&good, "key,name,address,email,phone,website\n\
            072355007,\"Verbandsgemeinde Trier-Land, Gewerbeamt\",\"Gartenfeldstraße 12, 54295 Trier\",gewerbe@trier-land.de,+49 651 8279-0,https://www.trier-land.de\n\
            01001000,Stadt Flensburg,,,,\n").unwrap();
        let (code, out, err) = filing(dir.path(), &url, &["trade-offices", "import", good.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(one_object(&out)["imported"], 2);
        let e = app.state.repo.get_trade_office("072355007").await.unwrap().expect("imported");
        assert_eq!(e.name, "Verbandsgemeinde Trier-Land, Gewerbeamt");
        assert_eq!(e.email.as_deref(), Some("gewerbe@trier-land.de"));

        let bad = dir.path().join("bad.csv");
        std::fs::write(&bad, "key,name,address,email,phone,website\n11000000,Berlin,,,,\n12,,,,,\n").unwrap();
        let (code, out, err) = filing(dir.path(), &url, &["trade-offices", "import", bad.to_str().unwrap()]);
        assert_eq!(code, 1);
        assert!(out.is_empty());
        assert!(err.contains("line 3"), "{err}");
        assert_eq!(app.state.repo.get_trade_office("11000000").await.unwrap(), None, "nothing imported");

        let (code, out, _) = filing(dir.path(), &url, &["data"]);
        assert_eq!(code, 0);
        let v = one_object(&out);
        assert_eq!(v["data_sets"].as_array().unwrap().len(), 3);
        assert!(v["refresh"].as_str().unwrap().contains("refresh.py"));
    }

    async fn documents_sweep_removes_only_files_no_record_names(backend) {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let url = fresh_database(backend, dir.path()).await.unwrap();
        let app = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(
            app.post("/v1/trade-registration", Some(&key))
                .json(&domain::rule_cases::example("self"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let docs_dir = app.state.config.storage.documents_dir.clone();
        let count_files = || walkdir_count(&docs_dir);
        let recorded = count_files();
        assert!(recorded >= 1);
        // Debris of a create killed after writing its files: an orphan, and an unfinished
        // staging file beside a recorded document.
        // The folder of the case's (only) document, found before the orphan is added.
        let beside = common::files_below(&docs_dir)[0].parent().unwrap().to_path_buf();
        let orphan = format!("trade/{}/trade-licence-application-0.pdf", uuid::Uuid::now_v7());
        std::fs::create_dir_all(docs_dir.join(&orphan).parent().unwrap()).unwrap();
        std::fs::write(docs_dir.join(&orphan), b"%PDF-1.7 orphan").unwrap();
        let staging = beside.join("half.pdf#12");
        std::fs::write(&staging, b"%PDF-1.7 half").unwrap();

        // Files younger than a request could still be a create in progress.
        let (code, out, err) = filing(dir.path(), &url, &["documents", "sweep", "--older-than", "0"]);
        assert_eq!(code, 1, "{out}");
        assert!(err.contains("--force"), "{err}");
        let (code, out, err) = filing(dir.path(), &url, &["documents", "sweep"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!((v["checked"].as_u64(), v["removed"].as_array().map(Vec::len)), (Some(0), Some(0)), "{v}");
        assert_eq!(count_files(), recorded + 2);

        let (code, out, err) = filing(dir.path(), &url, &["documents", "sweep", "--older-than", "0", "--force", "--dry-run"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v["removed"], serde_json::json!([orphan]), "{v}");
        assert_eq!(v["dry_run"], true);
        assert_eq!(count_files(), recorded + 2, "a dry run removed files");

        let (code, out, err) = filing(dir.path(), &url, &["documents", "sweep", "--older-than", "0", "--force"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v["removed"], serde_json::json!([orphan]), "{v}");
        assert_eq!(v["staging_removed"], 1, "{v}");
        assert_eq!(v["checked"].as_u64(), Some(recorded as u64 + 1), "{v}");
        assert_eq!(v["kept"].as_u64(), Some(recorded as u64), "{v}");
        assert!(!docs_dir.join(&orphan).exists() && !staging.exists());
        assert_eq!(count_files(), recorded);

        // The case's own documents are untouched and download whole.
        let (s, case) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{case}");
        let documents = case["response"]["documents"].as_array().unwrap();
        assert_eq!(documents.len(), recorded);
        for doc in documents {
            let bytes = common::download(&app, doc).await;
            let end = bytes.len().saturating_sub(8);
            assert!(bytes.starts_with(b"%PDF-") && bytes[end..].windows(5).any(|w| w == b"%%EOF"));
        }
    }

    async fn cli_prints_usable_keys_while_the_server_runs(backend) {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let url = fresh_database(backend, dir.path()).await.unwrap();
        // The server is up first: the CLI works on the same database beside it.
        let app = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;

        let (code, out, err) = filing(dir.path(), &url, &["providers", "create", "--name", "Gründerplattform GmbH"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
        let company = v["company_id"].as_str().unwrap().to_string();
        let key = v["api_key"].as_str().unwrap().to_string();
        assert!(key.starts_with("rfs_prv_"));

        let (s, b) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["name"], "Gründerplattform GmbH");

        // A provider that revoked its only key over HTTP gets a new one from the CLI.
        let prefix = domain::auth::parse_key(&key).unwrap().prefix.to_string();
        let res = app.client.delete(app.url(&format!("/v1/companies/{company}/api-keys/{prefix}"))).bearer_auth(&key).send().await.unwrap();
        assert_eq!(res.status(), 204);
        let (s, _) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 401);
        let (code, out, err) = filing(dir.path(), &url, &["keys", "create", "--company", &company]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v["company_id"], company.as_str());
        let key = v["api_key"].as_str().unwrap().to_string();
        assert!(key.starts_with("rfs_prv_"), "{key}");
        let (s, b) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (code, _, err) = filing(dir.path(), &url, &["keys", "create", "--company", &uuid::Uuid::new_v4().to_string()]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("no company"), "{err}");

        let (code, out, err) = filing(dir.path(), &url, &["operators", "create", "--name", "Olga Operator"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert!(v["operator_id"].as_str().is_some());
        let okey = v["api_key"].as_str().unwrap().to_string();
        assert!(okey.starts_with("rfs_opr_"));
        let (s, _) = json(app.get(&format!("/v1/companies/{company}"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200);

        // Revoke by prefix: the key stops working at once.
        let prefix = domain::auth::parse_key(&key).unwrap().prefix.to_string();
        let (code, out, err) = filing(dir.path(), &url, &["keys", "revoke", &prefix]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(one_object(&out)["revoked"], prefix);
        let (s, b) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        // Twice, or an unknown prefix: a failure exit, nothing on stdout.
        let (code, out, err) = filing(dir.path(), &url, &["keys", "revoke", &prefix]);
        assert_eq!(code, 1);
        assert!(out.is_empty());
        assert!(err.contains("no active key"), "{err}");

        let (code, out, _) = filing(dir.path(), &url, &["migrate"]);
        assert_eq!(code, 0);
        assert_eq!(one_object(&out)["migrated"], true);

        let (code, _, err) = filing(dir.path(), &url, &["providers", "create", "--name", "  "]);
        assert_ne!(code, 0);
        assert!(err.contains("--name"), "{err}");
    }

    async fn providers_create_with_an_environment_prints_a_restricted_key_beside_the_unrestricted_one(backend) {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let url = fresh_database(backend, dir.path()).await.unwrap();
        let app = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;

        let (code, out, err) = filing(dir.path(), &url, &["providers", "create", "--name", "P GmbH", "--environment", "sandbox"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v.as_object().unwrap().len(), 4, "{v}");
        assert_eq!(v["environment"], "sandbox");
        let company = v["company_id"].as_str().unwrap().to_string();
        let open = v["api_key"].as_str().unwrap().to_string();
        let test = v["restricted_api_key"].as_str().unwrap().to_string();
        assert_eq!(domain::auth::parse_key(&open).unwrap().environment, None, "{open}");
        assert!(test.starts_with("rfs_prv_test_"), "{test}");
        // Both work; the listing of the unrestricted key shows both, each with its environment.
        let page = app.read(&format!("/v1/companies/{company}/api-keys"), &open).await;
        let envs: Vec<&Value> = page["api_keys"].as_array().unwrap().iter().map(|k| &k["environment"]).collect();
        assert_eq!(envs.len(), 2, "{page}");
        assert!(envs.contains(&&Value::Null) && envs.contains(&&Value::from("sandbox")), "{page}");
        // The restricted key's creates are sandbox cases by default.
        let mut body = domain::rule_cases::example("self");
        body.as_object_mut().unwrap().remove("environment");
        let (s, b) = app.post_json("/v1/trade-registration", &test, &body).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        assert_eq!(app.read(&format!("/v1/trade-registration/{id}"), &open).await["environment"], "sandbox");

        let (code, out, err) = filing(dir.path(), &url, &["providers", "create", "--name", "Q GmbH", "--environment", "production"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v["environment"], "production");
        assert!(v["restricted_api_key"].as_str().unwrap().starts_with("rfs_prv_live_"), "{v}");

        // `keys create --environment` issues one restricted key.
        let (code, out, err) = filing(dir.path(), &url, &["keys", "create", "--company", &company, "--environment", "production"]);
        assert_eq!(code, 0, "{err}");
        let v = one_object(&out);
        assert_eq!(v["environment"], "production");
        let live = v["api_key"].as_str().unwrap().to_string();
        assert!(live.starts_with("rfs_prv_live_"), "{live}");
        let (s, b) = app.get_json(&format!("/v1/trade-registration/{id}"), &live).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        // A client company's key: of the company's environment only.
        let client = company_of_case(&app, &open, &id).await;
        let (code, _, err) = filing(dir.path(), &url, &["keys", "create", "--company", &client, "--environment", "production"]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("sandbox company"), "{err}");

        let (code, out, err) = filing(dir.path(), &url, &["providers", "create", "--name", "R GmbH", "--environment", "staging"]);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty());
        assert!(err.contains("sandbox or production"), "{err}");
        // Revoking by the whole restricted key works as for any key.
        let (code, out, err) = filing(dir.path(), &url, &["keys", "revoke", &test]);
        assert_eq!(code, 0, "{err}");
        assert!(one_object(&out)["revoked"].as_str().unwrap().starts_with("rfs_prv_test_"));
    }
}

#[test]
fn bad_configuration_names_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    for (var, value) in [
        ("FILING_LISTEN", "localhost"),
        ("FILING_PUBLIC_URL", "filing.example.com"),
        ("DATABASE_URL", "mysql://root@localhost/x"),
        ("FILING_MAX_BODY_BYTES", "-1"),
        ("FILING_LOG_FORMAT", "yaml"),
        // ELSTER's test manufacturer id never goes into a production document.
        ("FILING_ELSTER_HERSTELLER_ID", "74931"),
        ("FILING_ELSTER_HERSTELLER_ID", "4041"),
        ("FILING_ELSTER_DATENLIEFERANT", "Łódź Filing"),
    ] {
        let out = Command::new(BIN)
            .arg("serve")
            .current_dir(dir.path())
            .env(var, value)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}: {err}");
        assert!(err.contains(var), "{var}: {err}");
        assert!(out.stdout.is_empty());
    }
    // Nothing was created by a refused start.
    assert!(!dir.path().join("data").exists());
}

/// `filing` with no subcommand and no configuration but the address: creates ./data with the
/// database, documents folder and signing secret, answers /healthz, logs JSON when asked (with
/// the address it bound, here a port the system picked, which the default public URL names),
/// and exits 0 on SIGTERM.
#[test]
fn zero_configuration_start_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .env_remove("DATABASE_URL")
        .env_remove("FILING_DATA_DIR")
        .env("FILING_LISTEN", "127.0.0.1:0")
        .env("FILING_LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, received) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let json = |line: &str| -> Value {
        serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    };

    // The "listening" line names the port.
    let mut lines = Vec::new();
    let address = loop {
        let line = received
            .recv_timeout(Duration::from_secs(20))
            .expect("server did not log that it listens");
        let v = json(&line);
        lines.push(line);
        if v["fields"]["message"] == "listening" {
            break v["fields"]["address"].as_str().unwrap().to_owned();
        }
    };
    let port: u16 = address.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "{address}");
    // Without FILING_PUBLIC_URL, download links name the port that answers, not port 0.
    let starting = lines
        .iter()
        .map(|l| json(l))
        .find(|v| v["fields"]["message"] == "starting")
        .expect("no starting line");
    assert_eq!(
        starting["fields"]["public_url"],
        format!("http://127.0.0.1:{port}"),
        "{starting}"
    );
    let body = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    };
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    let data = dir.path().join("data");
    for f in ["filing.db", "signing-secret", "documents"] {
        assert!(data.join(f).exists(), "{f} missing in ./data");
    }
    let secret = std::fs::read(data.join("signing-secret")).unwrap();

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit {exit:?}");
    reader.join().unwrap();
    lines.extend(received.try_iter());
    let messages: Vec<String> = lines
        .iter()
        .map(|l| {
            json(l)["fields"]["message"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    for want in [
        "starting",
        "listening",
        "shutting down: draining in-flight requests",
        "stopped",
    ] {
        assert!(
            messages.iter().any(|m| m == want),
            "no {want:?} in {messages:?}"
        );
    }

    // A second start keeps the same secret (links stay valid across restarts).
    let mut again = Command::new(BIN)
        .current_dir(dir.path())
        .env_remove("DATABASE_URL")
        .env_remove("FILING_DATA_DIR")
        .arg("migrate")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(again.wait().unwrap().success());
    assert_eq!(std::fs::read(data.join("signing-secret")).unwrap(), secret);
}

fn workspace_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn pdf_file_text(path: &std::path::Path) -> String {
    common::pdf_text(&std::fs::read(path).unwrap())
}

fn pdf_pages(path: &std::path::Path) -> usize {
    common::read_back::read(&std::fs::read(path).unwrap())
        .pages
        .len()
}

/// `filing render` previews the documents of a request file without a server, reproducibly.
#[test]
fn render_commands_write_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env("FILING_OPERATOR_NAME", "Muster Filing GmbH")
            .env("FILING_OPERATOR_ADDRESS", "Beispielweg 5, 10117 Berlin")
            .output()
            .unwrap()
    };
    let self_json = workspace_file("examples/production/trade-registration-self.json");
    let assisted_json = workspace_file("examples/production/trade-registration-assisted.json");
    let request: Value = serde_json::from_slice(&std::fs::read(&self_json).unwrap()).unwrap();

    // The GewA 1 of the self-package example on a fixed date with an office in its head, and
    // `more` arguments.
    let fixed_gewa1 = |out: &std::path::Path, more: &[&str]| {
        let (input, out) = (self_json.to_str().unwrap(), out.to_str().unwrap());
        let office = "Bezirksamt Mitte von Berlin";
        let date = ["--date", "2025-03-20", "--trade-office", office];
        let args = ["render", "gewa1", "--input", input, "--out", out];
        run(&[&args[..], &date, &["--municipality-key", "11000000"], more].concat())
    };
    let gewa1 = dir.path().join("form.pdf");
    let out = fixed_gewa1(&gewa1, &["--owner", "0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = one_object(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        printed["bytes"].as_u64().unwrap() as usize,
        std::fs::metadata(&gewa1).unwrap().len() as usize
    );
    assert_eq!(pdf_pages(&gewa1), 2);
    let text = pdf_file_text(&gewa1);
    for want in [
        request["owners"][0]["last_name"].as_str().unwrap(),
        request["owners"][0]["first_name"].as_str().unwrap(),
        request["registered_office"]["street"].as_str().unwrap(),
        "Bezirksamt Mitte von Berlin",
        "11000000",
        "20.03.2025",
    ] {
        assert!(text.contains(want), "{want:?} not in the GewA 1");
    }
    // A fixed date gives the same bytes again.
    let again = dir.path().join("again.pdf");
    let out = fixed_gewa1(&again, &[]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&gewa1).unwrap(),
        std::fs::read(&again).unwrap()
    );

    let poa = dir.path().join("poa.pdf");
    let out = run(&[
        "render",
        "power-of-attorney",
        "--input",
        assisted_json.to_str().unwrap(),
        "--owner",
        "1",
        "--out",
        poa.to_str().unwrap(),
        "--date",
        "2025-03-20",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pdf_pages(&poa), 1);
    let text = pdf_file_text(&poa);
    assert!(
        text.contains("Muster Filing GmbH"),
        "operator from configuration"
    );
    assert!(text.contains("Vollmacht"));

    // Errors: an owner that does not exist, a self-package request has no power of attorney,
    // a broken request names the field. Nothing is written.
    let none = dir.path().join("none.pdf");
    let fails = |args: &[&str]| {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1));
        assert!(!none.exists());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // The GewA 1 of `request`, written to the file `name` first.
    let gewa1_of = |name: &str, request: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, request.to_string()).unwrap();
        let (input, out) = (path.to_str().unwrap(), none.to_str().unwrap());
        fails(&["render", "gewa1", "--input", input, "--out", out])
    };
    for (args, want) in [
        (
            vec![
                "render",
                "gewa1",
                "--input",
                self_json.to_str().unwrap(),
                "--owner",
                "7",
                "--out",
                none.to_str().unwrap(),
            ],
            "no owner with index 7",
        ),
        (
            vec![
                "render",
                "power-of-attorney",
                "--input",
                self_json.to_str().unwrap(),
                "--out",
                none.to_str().unwrap(),
            ],
            "signature",
        ),
    ] {
        let err = fails(&args);
        assert!(err.contains(want), "{err}");
    }
    let mut broken = request.clone();
    broken["owners"][0]["dob"] = Value::from("31.01.1980");
    let err = gewa1_of("broken.json", &broken);
    assert!(err.contains("owners[0].dob"), "{err}");

    // A request the API rejects is not rendered: the renderer applies the API's rules (a
    // character outside DIN 91379, a postal code that is no German one) and prints the same
    // field errors as the 422 would, with their codes.
    let mut refused = request.clone();
    refused["owners"][0]["last_name"] = Value::from("Иванов");
    refused["registered_office"]["zip"] = Value::from("1011");
    refused["owners"][0]["nationality"] = Value::from("AQ");
    let err = gewa1_of("refused.json", &refused);
    let api =
        domain::trade_request::parse(&refused, time::macros::date!(2026 - 11 - 26)).unwrap_err();
    assert_eq!(api.len(), 3, "{api}");
    for e in api.iter() {
        let line = format!("{}: {} ({})", e.field, e.message, e.code);
        assert!(err.contains(&line), "{line:?} not in {err}");
    }
}

/// Started with umask 022 (files 0644, folders 0755 by default), `filing serve` still creates
/// the database, its WAL files, the secrets, the spool and the documents with their folders
/// owner-only (0600 / 0700).
#[tokio::test]
async fn files_are_owner_only_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = format!("sqlite://{}", data.join("filing.db").display());
    // The provider first (the CLI runs under the same umask and is owner-only too).
    let (code, out, err) = common::output_of(
        Command::new("sh")
            .args([
                "-c",
                &format!("umask 022; exec {BIN} providers create --init --name P"),
            ])
            .current_dir(dir.path())
            .env("FILING_DATA_DIR", &data)
            .env("DATABASE_URL", &url),
    );
    assert_eq!(code, Some(0), "{err}");
    let key = one_object(&out)["api_key"].as_str().unwrap().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("sh")
        .args(["-c", &format!("umask 022; exec {BIN} serve")])
        .current_dir(dir.path())
        .env("FILING_DATA_DIR", &data)
        .env("DATABASE_URL", &url)
        .env("FILING_LISTEN", format!("127.0.0.1:{port}"))
        .env("FILING_LOG", "warn")
        .env("FILING_OPERATOR_NAME", "Muster Filing GmbH")
        .env("FILING_OPERATOR_ADDRESS", "Beispielweg 5, 10117 Berlin")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    server::webhooks::install_tls();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let mut up = false;
    for _ in 0..200 {
        if client.get(format!("{base}/healthz")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "the server did not come up");
    let body = domain::rule_cases::example("assisted");
    let res = common::post_trade(&client, &base, &key, &body).await;
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());

    // While it runs (the WAL files exist now), and after it stopped.
    let check = |when: &str| {
        let mut seen = Vec::new();
        let mut todo = vec![data.clone()];
        while let Some(d) = todo.pop() {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{when}: folder {d:?} is {mode:o}");
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    todo.push(p);
                } else {
                    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
                    assert_eq!(mode, 0o600, "{when}: file {p:?} is {mode:o}");
                    seen.push(p.file_name().unwrap().to_string_lossy().into_owned());
                }
            }
        }
        seen
    };
    let running = check("running");
    for name in [
        "filing.db",
        "filing.db-wal",
        "filing.db-shm",
        "signing-secret",
        "webhook-sealing-key",
    ] {
        assert!(
            running.iter().any(|s| s == name),
            "{name} not in {running:?}"
        );
    }
    assert!(
        running
            .iter()
            .filter(|s| s.ends_with(".pdf") || !s.contains('.'))
            .count()
            > 3,
        "documents: {running:?}"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    check("stopped");
}
