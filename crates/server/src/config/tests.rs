use super::*;

/// The configuration the flags `args` give (flags win over the environment), or the message of
/// the first refused value (from its parser) or of every cross-setting problem.
fn parse(args: &[&str]) -> Result<Config, String> {
    let matches = settings_command()
        .try_get_matches_from(std::iter::once("filing").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    let common = CommonArgs::from_arg_matches(&matches).map_err(|e| e.to_string())?;
    let serve = ServeArgs::from_arg_matches(&matches).map_err(|e| e.to_string())?;
    Config::from_args(&common, &serve).map_err(|e| e.to_string())
}

/// `parse(args)` is refused with a message naming `var`.
fn refused(args: &[&str], var: &str) -> String {
    let Err(e) = parse(args) else {
        panic!("{args:?} accepted");
    };
    assert!(e.contains(var), "{args:?}: {e}");
    e
}

#[test]
fn a_documents_url_names_a_bucket_and_a_prefix() {
    let s3 = |url: &str| {
        parse(&["--documents-url", url])
            .unwrap()
            .storage
            .documents_s3
            .expect("S3 settings")
    };
    let eu = s3("s3://filing-docs/prod/eu/");
    assert_eq!(
        (eu.bucket.as_str(), eu.prefix.as_str()),
        ("filing-docs", "prod/eu")
    );
    assert_eq!(eu.timeout, Duration::from_secs(30));
    assert!(eu.credentials.is_none() && eu.endpoint.is_none() && !eu.allow_http);
    let whole = s3("s3://my.bucket-1");
    assert_eq!(
        (whole.bucket.as_str(), whole.prefix.as_str()),
        ("my.bucket-1", "")
    );
    assert!(
        StorageArgs::default()
            .storage()
            .unwrap()
            .documents_s3
            .is_none()
    );

    for bad in [
        "s3://",
        "s3://ab",
        "s3://Upper",
        "s3://under_score/x",
        "https://b.example/x",
        "bucket",
    ] {
        let e = refused(&["--documents-url", bad], "FILING_DOCUMENTS_URL");
        assert!(e.contains("s3://BUCKET"), "{bad}: {e}");
    }
    let both = StorageArgs {
        documents_dir: Some("/srv/docs".into()),
        ..StorageArgs::default()
    };
    let both = StorageArgs {
        documents_url: Some(parse::S3Location {
            bucket: "filing-docs".into(),
            prefix: String::new(),
        }),
        ..both
    };
    let e = both.storage().unwrap_err().to_string();
    assert!(
        e.contains("not both") && e.contains("FILING_DOCUMENTS_URL"),
        "{e}"
    );
    for timeout in ["0", "soon"] {
        // Checked with or without a bucket.
        for url in [&["--documents-url", "s3://filing-docs"][..], &[]] {
            let args = [&["--documents-timeout-secs", timeout][..], url].concat();
            refused(&args, "FILING_DOCUMENTS_TIMEOUT_SECS");
        }
    }
}

#[test]
fn defaults_are_valid() {
    let c = Config::from_args(&CommonArgs::default(), &ServeArgs::default()).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(c.public_url, "http://127.0.0.1:8080");
    assert_eq!(c.storage.database_url, "sqlite://./data/filing.db");
    assert_eq!(c.storage.documents_dir, PathBuf::from("./data/documents"));
    let schedule: Vec<u64> = c
        .webhooks
        .retry_schedule
        .iter()
        .map(|d| d.as_secs())
        .collect();
    assert_eq!(schedule, domain::webhook::DEFAULT_RETRY_SCHEDULE);
    assert!(!c.webhooks.allow_private_targets);
    assert_eq!(c.webhooks.timeout, Duration::from_secs(15));
    assert_eq!(
        c.webhooks.limits,
        super::DeliveryLimits {
            in_flight: 32,
            per_provider: 8,
            per_endpoint: 2
        }
    );
    assert_eq!(
        c.webhooks.breaker,
        super::Breaker {
            failures: 5,
            cooldown: Duration::from_secs(60)
        }
    );
    assert_eq!(c.db_timeout, Duration::from_secs(5));
    assert_eq!(c.db_pool_size, 8);
    assert_eq!(c.db_startup_wait, Duration::from_secs(60));
    assert_eq!(c.header_read_timeout, Duration::from_secs(10));
    assert_eq!(c.body_read_timeout, Duration::from_secs(30));
    assert_eq!(c.body_min_rate, 65536);
    assert_eq!(c.max_concurrent_uploads, 16);
    // Rate limiting is on by default since 2026-12-02 (issue 52.5): 50 a second, 200 at once.
    assert_eq!(
        c.rate_limit.map(|r| (r.per_second.get(), r.burst.get())),
        Some((50, 200))
    );
    assert_eq!(
        c.address_rate_limit
            .map(|r| (r.per_second.get(), r.burst.get())),
        Some((30, 30))
    );
    assert_eq!(c.client_address_header, None);
    assert_eq!((c.upload_reserve, c.max_uploads_per_provider), (0, 16));
    assert_eq!(c.max_keys_per_company, 100);
}

#[test]
fn rate_limit_settings() {
    let limit = |rate: &str, burst: Option<&str>| {
        let mut args = vec![format!("--rate-limit-per-second={rate}")];
        args.extend(burst.map(|b| format!("--rate-limit-burst={b}")));
        parse(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .map(|c| c.rate_limit.map(|r| (r.per_second.get(), r.burst.get())))
    };
    assert_eq!(limit("0", Some("5")), Ok(None));
    assert_eq!(limit("10", None), Ok(Some((10, 40))));
    assert_eq!(limit("1", Some("2")), Ok(Some((1, 2))));
    let e = limit("-1", None).unwrap_err();
    assert!(e.contains("FILING_RATE_LIMIT_PER_SECOND"), "{e}");
    let e = limit("1", Some("0")).unwrap_err();
    assert!(e.contains("FILING_RATE_LIMIT_BURST"), "{e}");
}

#[test]
fn bad_values_name_their_variable() {
    // 31 bytes, and a list whose second key is no key.
    const SHORT_KEY: &str = "--webhook-secrets-key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";
    const OLD_KEYS: &str =
        "--webhook-secrets-old-keys=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,short";
    let cases = [
        ("--listen=localhost", "FILING_LISTEN"),
        ("--public-url=ftp://x", "FILING_PUBLIC_URL"),
        ("--max-body-bytes=0", "FILING_MAX_BODY_BYTES"),
        ("--max-upload-bytes=lots", "FILING_MAX_UPLOAD_BYTES"),
        ("--directory-cache-secs=-1", "FILING_DIRECTORY_CACHE_SECS"),
        ("--max-keys-per-company=0", "FILING_MAX_KEYS_PER_COMPANY"),
        (
            "--client-address-header=bad header",
            "FILING_CLIENT_ADDRESS_HEADER",
        ),
        ("--upload-reserve=16", "FILING_UPLOAD_RESERVE"),
        ("--signing-secret=short", "FILING_SIGNING_SECRET"),
        (
            "--webhook-retry-schedule=5,soon",
            "FILING_WEBHOOK_RETRY_SCHEDULE",
        ),
        (
            "--webhook-allow-private-targets=maybe",
            "FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS",
        ),
        ("--webhook-timeout-secs=0", "FILING_WEBHOOK_TIMEOUT_SECS"),
        (SHORT_KEY, "FILING_WEBHOOK_SECRETS_KEY"),
        (
            "--webhook-secrets-key=not base64!",
            "FILING_WEBHOOK_SECRETS_KEY",
        ),
        (OLD_KEYS, "FILING_WEBHOOK_SECRETS_OLD_KEYS"),
        ("--webhook-worker=off-ish", "FILING_WEBHOOK_WORKER"),
        ("--webhook-max-in-flight=0", "FILING_WEBHOOK_MAX_IN_FLIGHT"),
        (
            "--webhook-max-in-flight-per-provider=0",
            "FILING_WEBHOOK_MAX_IN_FLIGHT_PER_PROVIDER",
        ),
        (
            "--webhook-max-in-flight-per-endpoint=many",
            "FILING_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT",
        ),
        (
            "--webhook-breaker-failures=0",
            "FILING_WEBHOOK_BREAKER_FAILURES",
        ),
        (
            "--webhook-breaker-cooldown-secs=0",
            "FILING_WEBHOOK_BREAKER_COOLDOWN_SECS",
        ),
        ("--db-timeout-secs=0", "FILING_DB_TIMEOUT_SECS"),
        ("--db-pool-size=0", "FILING_DB_POOL_SIZE"),
        ("--db-pool-size=1001", "FILING_DB_POOL_SIZE"),
        (
            "--db-startup-wait-secs=86401",
            "FILING_DB_STARTUP_WAIT_SECS",
        ),
        ("--db-startup-wait-secs=-1", "FILING_DB_STARTUP_WAIT_SECS"),
        (
            "--header-read-timeout-secs=soon",
            "FILING_HEADER_READ_TIMEOUT_SECS",
        ),
        (
            "--body-read-timeout-secs=0",
            "FILING_BODY_READ_TIMEOUT_SECS",
        ),
        (
            "--body-min-bytes-per-sec=-1",
            "FILING_BODY_MIN_BYTES_PER_SEC",
        ),
        (
            "--body-min-bytes-per-sec=1",
            "FILING_BODY_MIN_BYTES_PER_SEC",
        ),
        (
            "--request-timeout-secs=18446744073709551615",
            "FILING_REQUEST_TIMEOUT_SECS",
        ),
        (
            "--body-read-timeout-secs=86401",
            "FILING_BODY_READ_TIMEOUT_SECS",
        ),
        (
            "--max-concurrent-uploads=0",
            "FILING_MAX_CONCURRENT_UPLOADS",
        ),
        (
            "--max-concurrent-uploads=3000000000000000000",
            "FILING_MAX_CONCURRENT_UPLOADS",
        ),
        ("--log-format=xml", "FILING_LOG_FORMAT"),
    ];
    for (arg, var) in cases {
        let e = refused(&[arg], var);
        let (flag, value) = arg.split_once('=').unwrap();
        assert!(e.contains(flag), "{e}");
        // Secrets are not repeated.
        assert!(!flag.contains("secret") || !e.contains(value), "{e}");
    }
    let e = refused(&["--database-url=mysql://x:secret@y/z"], "DATABASE_URL");
    assert!(!e.contains("secret"), "{e}");
    // A check of two settings names both, and every such problem is reported.
    let uploads = ["--max-concurrent-uploads=8", "--max-uploads-per-provider=9"];
    let e = refused(&uploads, "FILING_MAX_UPLOADS_PER_PROVIDER");
    assert!(e.contains("FILING_MAX_CONCURRENT_UPLOADS (8)"), "{e}");
    let documents = [
        "--documents-dir=/srv/docs",
        "--documents-url=s3://filing-docs",
    ];
    let e = refused(
        &[uploads, documents].concat(),
        "FILING_MAX_UPLOADS_PER_PROVIDER",
    );
    assert!(
        e.contains("FILING_DOCUMENTS_URL") && e.lines().count() == 2,
        "{e}"
    );
}

#[test]
fn prices_in_euros() {
    assert_eq!(parse::euros("49.00"), Ok(4900));
    assert_eq!(parse::euros("49.5"), Ok(4950));
    assert_eq!(parse::euros("0"), Ok(0));
    for bad in ["", "49,00", "49.", "-1", "1.234", "abc", "99999999"] {
        assert!(parse::euros(bad).is_err(), "{bad}");
    }
}

#[test]
fn redacts_passwords() {
    assert_eq!(redact_url("postgres://u:pw@h/db"), "postgres://u:***@h/db");
    assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
}

#[test]
fn log_filter_must_parse_and_name_levels() {
    let log = |filter: &str| {
        let matches = settings_command()
            .try_get_matches_from(["filing", "--log", filter])
            .map_err(|e| e.to_string())?;
        LogArgs::from_arg_matches(&matches)
            .map(|c| c.log)
            .map_err(|e| e.to_string())
    };
    for good in [
        "info",
        "WARN",
        "off",
        "info,server=debug,sqlx=warn",
        "server::app=trace",
    ] {
        assert_eq!(log(good).as_deref(), Ok(good));
    }
    for (bad, says) in [
        // A typo of a level would be a target with every level: nothing else logged.
        ("inof", "is not a level"),
        ("info,sqlx", "is not a level"),
        ("server=loud", "expected a level"),
        ("info,=debug", "expected a level"),
    ] {
        let e = log(bad).unwrap_err();
        assert!(e.contains("FILING_LOG") && e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn metrics_listen_is_an_address_of_its_own() {
    assert_eq!(parse(&[]).unwrap().metrics_listen, None);
    let c = parse(&["--metrics-listen", "0.0.0.0:9100"]).unwrap();
    assert_eq!(c.metrics_listen, Some("0.0.0.0:9100".parse().unwrap()));
    let e = refused(
        &["--metrics-listen", "localhost:9100"],
        "FILING_METRICS_LISTEN",
    );
    assert!(e.contains("IP:PORT"), "{e}");
    let same = [
        "--listen",
        "127.0.0.1:8080",
        "--metrics-listen",
        "127.0.0.1:8080",
    ];
    let e = refused(&same, "FILING_METRICS_LISTEN");
    assert!(e.contains("FILING_LISTEN"), "{e}");
}
