//! The command line: `filing [serve]`, `filing migrate`, `filing providers create|list`,
//! `filing operators create|list`, `filing keys create|list|revoke`, `filing backup|restore`
//! and the rest (`filing --help`).
//!
//! Commands that print a result print exactly one JSON object on stdout; logs, the database a
//! command used and its error go to stderr.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use domain::auth::KeyKind;
use domain::company::Environment;
use serde_json::json;

use crate::config::{CommonArgs, Config, LogArgs, OperatorArgs, ServeArgs, StorageArgs};

#[derive(Debug, Parser)]
#[command(
    name = "filing",
    version,
    about = "Registration Filing Service: files German trade and tax registrations over an HTTP API",
    long_about = "Registration Filing Service: files German trade and tax registrations over an HTTP API.\n\n\
Without a subcommand it serves, as `filing serve` does: with no settings on 127.0.0.1:8080, with \
an SQLite database and documents under ./data. Every setting is a flag of the commands that use \
it and an environment variable. Commands print one JSON object on stdout; the database they used \
and any error go to stderr.",
    after_help = "`filing COMMAND --help` shows the settings of a command."
)]
pub struct Cli {
    #[command(flatten)]
    pub log: LogArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The settings of a command that opens the database.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    #[command(flatten)]
    pub storage: StorageArgs,
    /// Create the database (and the data folder) when they do not exist yet. Without it a
    /// command refuses a database that is not there: one it created would be read by no
    /// server. `filing serve` creates them on its own.
    #[arg(long, global = true)]
    pub init: bool,
}

/// The settings of `filing serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeCommand {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (what `filing` alone does).
    ///
    /// Creates the data folder and the SQLite database when they do not exist.
    Serve(Box<ServeCommand>),
    /// Apply pending database migrations and exit.
    Migrate(DbArgs),
    /// Provider companies (API customers).
    Providers {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: ProvidersCommand,
    },
    /// Operators (staff who process cases).
    Operators {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: OperatorsCommand,
    },
    /// API keys.
    Keys {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Render a document from a trade registration request file, without a server.
    Render {
        #[command(flatten)]
        operator: OperatorArgs,
        #[command(subcommand)]
        command: crate::render::RenderCommand,
    },
    /// The trade office directory (contacts of the offices that receive trade notices).
    #[command(name = "trade-offices")]
    TradeOffices {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: TradeOfficesCommand,
    },
    /// The bundled reference data: editions, licences, how to refresh them.
    ///
    /// Postal codes, municipality register, tax offices: their editions, licences and how to
    /// refresh them from a newer edition.
    Data,
    /// Document files (the document store).
    Documents {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: DocumentsCommand,
    },
    /// Webhook endpoints.
    Webhooks {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: WebhooksCommand,
    },
    /// Copy an SQLite deployment (database, documents, secrets) while servers run.
    ///
    /// Copies into a new folder while servers run and write: the database through SQLite's online backup API as of one moment, then
    /// every document file it names, then the secrets of the data folder, with a manifest of
    /// their SHA-256 digests. Prints {"out", "counts", "documents", "bytes", "secrets",
    /// "seconds"}. PostgreSQL and S3 deployments are backed up with their own tools
    /// (docs/operations.md, "Backups").
    Backup {
        #[command(flatten)]
        storage: StorageArgs,
        /// The folder to write (created; an existing one must be empty). It holds the secrets:
        /// keep it as safe as the data folder.
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Put a backup made by `filing backup` into an empty FILING_DATA_DIR.
    ///
    /// Writes the data folder (and the database and documents folder the settings name),
    /// which must not exist or be empty; every file is
    /// checked against the manifest's SHA-256 first. Prints {"restored", "counts", "documents",
    /// "secrets"}. Start the server on it afterwards.
    Restore {
        #[command(flatten)]
        storage: StorageArgs,
        /// The folder `filing backup --out` wrote.
        from: std::path::PathBuf,
    },
    /// Benchmark data: COUNT copies of a trade registration.
    ///
    /// Inserts COUNT copies of an existing trade registration, each with its own client company and the template's status history (documents are not copied). For load
    /// tests on a large database; never run it against production data.
    #[command(name = "seed-trade-copies")]
    SeedTradeCopies {
        #[command(flatten)]
        db: DbArgs,
        /// The trade registration to copy.
        #[arg(long)]
        from: uuid::Uuid,
        /// How many copies.
        #[arg(long)]
        count: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum DocumentsCommand {
    /// Remove the files no document record names: those of creates killed between writing
    /// their files and committing (a failed create removes its own), and unfinished staging
    /// files. Prints {"checked", "kept", "removed", "staging_removed", "dry_run"}. Safe while
    /// servers run as long as --older-than is longer than any request (a create writes its
    /// files before its record); run it from cron, e.g. daily.
    Sweep {
        /// Only files last written more than this many seconds ago (at least 600 unless
        /// --force).
        #[arg(long, default_value_t = 3600)]
        older_than: u64,
        /// List what would be removed, remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Allow --older-than below 600 s: only when no server is running on this storage.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Seal every stored endpoint secret with the current key (FILING_WEBHOOK_SECRETS_KEY, or
    /// without it the key in the data folder that `serve` generates): after a change of key
    /// (the one before in FILING_WEBHOOK_SECRETS_OLD_KEYS), and the answers kept for idempotent
    /// replay with it. Secrets kept in clear are sealed (servers do that at start as well).
    /// Safe while servers run. Prints {"endpoints", "resealed", "unchanged", "unreadable",
    /// "answers": {"answers", "resealed", "unchanged", "unreadable"}}; exits 1 when a secret
    /// opens with none of the keys (listed under "unreadable"; what can be opened is resealed,
    /// the rest left as it is). Kept answers that open with none expire within 24 hours:
    /// counted only. Sealing cannot be turned off.
    Reseal,
}

#[derive(Debug, Subcommand)]
pub enum TradeOfficesCommand {
    /// Import (insert or replace) entries from a CSV file with the header
    /// `key,name,address,email,phone,website` (key: 8-digit AGS or 9-digit Gemeindeverband key).
    /// Nothing is imported when any row is invalid.
    Import {
        /// The CSV file (UTF-8, comma-separated, with the header line).
        file: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProvidersCommand {
    /// Create a provider company and its first API key; prints {"company_id", "api_key"}. With
    /// --environment, also a key restricted to that environment
    /// (docs/adr/0021-environment-restricted-keys.md): prints {"company_id", "api_key",
    /// "environment", "restricted_api_key"}; "api_key" stays the unrestricted key.
    Create {
        /// The company's name as its keys' owner (1 to 200 printable characters), e.g.
        /// "Gründerplattform GmbH".
        #[arg(long)]
        name: String,
        /// `sandbox` or `production`: also issue a key that creates and sees only that
        /// environment's cases and client companies (`rfs_prv_test_…`, `rfs_prv_live_…`).
        #[arg(long, value_parser = parse_environment)]
        environment: Option<Environment>,
    },
    /// List the provider companies, oldest first; prints {"providers": [{"company_id",
    /// "name", "created_at"}]}. Their keys: `filing keys list --company ID`.
    List,
}

/// `sandbox` or `production`, as the API spells them.
fn parse_environment(s: &str) -> Result<Environment, String> {
    Environment::parse(s).ok_or_else(|| "must be sandbox or production".to_string())
}

#[derive(Debug, Subcommand)]
pub enum OperatorsCommand {
    /// Create an operator and its API key; prints {"operator_id", "api_key"}.
    Create {
        /// The operator's name as shown in case histories (1 to 200 printable characters).
        #[arg(long)]
        name: String,
    },
    /// List the operators, oldest first; prints {"operators": [{"operator_id", "name",
    /// "created_at"}]}.
    List,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Issue a further key for an existing company (a provider's or a client company's), e.g.
    /// for a provider that revoked its last key over HTTP. Prints {"company_id", "api_key"}.
    /// Counts towards the company's cap of live keys but is never refused by it.
    Create {
        /// The company's id.
        #[arg(long)]
        company: uuid::Uuid,
        /// Restrict the key to `sandbox` or `production` (a client company's key: the
        /// company's own environment only). Prints {"company_id", "api_key", "environment"}.
        #[arg(long, value_parser = parse_environment)]
        environment: Option<Environment>,
    },
    /// Revoke a key by its prefix (`rfs_prv_xxxxxxxxxxxx`) or the whole key; prints
    /// {"revoked"}. Running servers refuse it within FILING_KEY_CACHE_SECS.
    Revoke {
        /// The key's prefix as `keys list` and the API's key listing show it
        /// (`rfs_prv_xxxxxxxxxxxx`), or the whole key.
        prefix: String,
    },
    /// List a company's unrevoked keys, oldest first: prefixes only, never a key. Prints
    /// {"company_id", "api_keys": [{"key_prefix", "key_type", "environment", "created_at",
    /// "last_used_at"}]}.
    List {
        /// The company's id (a provider's or a client company's).
        #[arg(long)]
        company: uuid::Uuid,
    },
}

/// The command line of this process. `filing` alone serves, and so does `filing` with only
/// the flags of `serve` (`filing --listen ADDR`, as before `serve` had flags of its own).
pub fn parse() -> Cli {
    parse_from(std::env::args_os())
}

/// [`parse`] of `args` (the program's name first); exits with clap's message (and code 2)
/// when they do not parse.
pub fn parse_from(args: impl IntoIterator<Item = std::ffi::OsString>) -> Cli {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let serving = || {
        let mut with_serve = args.clone();
        with_serve.insert(1.min(args.len()), "serve".into());
        Cli::try_parse_from(with_serve)
    };
    match Cli::try_parse_from(&args) {
        Ok(cli) if cli.command.is_some() => cli,
        Ok(_) => serving().unwrap_or_else(|e| e.exit()),
        // `filing --listen ADDR`: the flags of `serve` without it. A value `serve` refuses is
        // its error; an argument `serve` does not know either is the first one.
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => match serving() {
            Ok(cli) => cli,
            Err(refused) if refused.kind() != clap::error::ErrorKind::UnknownArgument => {
                refused.exit()
            }
            Err(_) => e.exit(),
        },
        Err(e) => e.exit(),
    }
}

/// Runs the command; the exit code is 0 on success, 1 on failure, 2 for bad configuration.
/// A failure is reported once: a server's in its log, a command's on stderr.
pub fn run(cli: Cli) -> ExitCode {
    let log_format = cli.log.log_format;
    let serving = matches!(cli.command, None | Some(Command::Serve(_)));
    // Administrative commands log only warnings, so their output stays one JSON line.
    let filter = if serving {
        cli.log.log.as_str()
    } else {
        "warn"
    };
    crate::telemetry::init(log_format, filter);

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        match execute(cli).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Config(e)) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
            // A server's failure goes to its log, unless its filter hides errors.
            Err(Failure::Other(e)) if serving && tracing::enabled!(tracing::Level::ERROR) => {
                tracing::error!(error = %format!("{e:#}"), "failed");
                ExitCode::FAILURE
            }
            Err(Failure::Other(e)) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        }
    })
}

enum Failure {
    Config(crate::config::ConfigErrors),
    Other(anyhow::Error),
}

impl From<crate::config::ConfigErrors> for Failure {
    fn from(e: crate::config::ConfigErrors) -> Self {
        Failure::Config(e)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

impl From<store::StoreError> for Failure {
    fn from(e: store::StoreError) -> Self {
        Failure::Other(e.into())
    }
}

/// Opens the database of `db`'s settings, saying on stderr which one. An SQLite file that does
/// not exist is created only with `--init`: a command run in the wrong folder, or with another
/// FILING_DATA_DIR than the servers', would otherwise make a database no server reads, and
/// print a key for it.
async fn open_store(db: &DbArgs) -> Result<std::sync::Arc<dyn store::Repository>, Failure> {
    let storage = db.storage.storage()?;
    let label = crate::config::database_label(&storage.database_url);
    if let Some(file) = crate::config::sqlite_file(&storage.database_url)
        && !file.exists()
    {
        let data_dir = std::path::absolute(&storage.data_dir).unwrap_or(storage.data_dir.clone());
        if !db.init {
            let why = if data_dir.exists() {
                format!("there is no database at {label}")
            } else {
                format!(
                    "the data folder {} does not exist (no database at {label})",
                    data_dir.display()
                )
            };
            return Err(anyhow::anyhow!(
                "{why}: start the server first (`filing serve` creates it), set FILING_DATA_DIR \
                 or DATABASE_URL to the server's, or pass --init to create a new one"
            )
            .into());
        }
        for folder in [Some(storage.data_dir.as_path()), file.parent()]
            .into_iter()
            .flatten()
            .filter(|f| !f.as_os_str().is_empty())
        {
            std::fs::create_dir_all(folder)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", folder.display()))?;
        }
    }
    eprintln!("database: {label}");
    Ok(store::connect(&storage.database_url).await?)
}

fn print(value: serde_json::Value) {
    println!("{value}");
}

async fn execute(cli: Cli) -> Result<(), Failure> {
    // `parse` makes `filing` alone `filing serve`; a `Cli` built otherwise serves with the
    // settings of the environment.
    let command = match cli.command {
        Some(command) => command,
        None => Command::Serve(
            crate::config::from_env()
                .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim_end()))?,
        ),
    };
    match command {
        Command::Serve(cmd) => {
            let mut config = Config::from_args(&cmd.common, &cmd.serve)?;
            let listen = config.listen;
            // Bound now, listening only once the state is built (until then a connection is
            // refused, not left hanging while the database is waited for). The bound address,
            // not the configured one: with port 0 the system picks it at the bind, and
            // download links must name the port that answers.
            let cannot = |e: std::io::Error| anyhow::anyhow!("cannot listen on {listen}: {e}");
            let socket = if listen.is_ipv4() {
                tokio::net::TcpSocket::new_v4()
            } else {
                tokio::net::TcpSocket::new_v6()
            }
            .map_err(cannot)?;
            socket.set_reuseaddr(true).map_err(cannot)?;
            socket.bind(listen).map_err(cannot)?;
            let address = socket.local_addr().unwrap_or(listen);
            if cmd.serve.public_url.is_none() {
                config.public_url = format!("http://{address}");
            }
            tracing::info!(
                database = %crate::config::database_label(&config.storage.database_url),
                data_dir = %config.storage.data_dir.display(),
                public_url = %config.public_url,
                "starting"
            );
            if config.operator.is_none() {
                tracing::warn!(
                    "FILING_OPERATOR_NAME and FILING_OPERATOR_ADDRESS are not set: production assisted trade registrations are refused (503 SERVICE_NOT_CONFIGURED) until they are, as their powers of attorney name the operator; sandbox ones name a sandbox placeholder"
                );
            }
            // One server per SQLite file (issue 53.5): held until the process ends.
            let _serving = crate::app::lock_sqlite_for_serving(&config.storage.database_url)?;
            let state = crate::app::build_state(config).await?;
            let listener = socket.listen(1024).map_err(cannot)?;
            tracing::info!(%address, "listening");
            crate::app::serve(state, listener, crate::app::shutdown_signal()).await?;
            tracing::info!("stopped");
        }
        Command::Migrate(db) => {
            let repo = open_store(&db).await?;
            print(json!({"migrated": true, "database": repo.backend()}));
        }
        Command::Providers {
            db,
            command: ProvidersCommand::Create { name, environment },
        } => {
            let name = non_empty_name(&name)?;
            let repo = open_store(&db).await?;
            let company = repo.create_provider(name).await?;
            let key = crate::auth::issue_key(repo.as_ref(), KeyKind::Provider, company.id).await?;
            let mut out = json!({"company_id": company.id, "api_key": key.api_key});
            if let Some(environment) = environment {
                let restricted = crate::auth::issue_restricted_key(
                    repo.as_ref(),
                    KeyKind::Provider,
                    company.id,
                    Some(environment),
                )
                .await?;
                out["environment"] = json!(environment);
                out["restricted_api_key"] = json!(restricted.api_key);
            }
            print(out);
        }
        Command::Providers {
            db,
            command: ProvidersCommand::List,
        } => {
            let repo = open_store(&db).await?;
            print(json!({"providers": crate::lists::providers(repo.as_ref()).await?}));
        }
        Command::Operators {
            db,
            command: OperatorsCommand::List,
        } => {
            let repo = open_store(&db).await?;
            print(json!({"operators": crate::lists::operators(repo.as_ref()).await?}));
        }
        Command::Keys {
            db,
            command: KeysCommand::List { company },
        } => {
            let repo = open_store(&db).await?;
            repo.get_company(company)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no company {company}"))?;
            let keys = crate::lists::keys(repo.as_ref(), company).await?;
            print(json!({"company_id": company, "api_keys": keys}));
        }
        Command::Backup { storage, out } => {
            let done = crate::backup::backup(&storage.storage()?, &out).await?;
            print(done.report);
            if !done.problems.is_empty() {
                return Err(anyhow::anyhow!(
                    "the backup in {} is complete but for:\n  {}",
                    out.display(),
                    done.problems.join("\n  ")
                )
                .into());
            }
        }
        Command::Restore { storage, from } => {
            print(crate::backup::restore(&storage.storage()?, &from).await?);
        }
        Command::Operators {
            db,
            command: OperatorsCommand::Create { name },
        } => {
            let name = non_empty_name(&name)?;
            let repo = open_store(&db).await?;
            let operator = repo.create_operator(name).await?;
            let key = crate::auth::issue_key(repo.as_ref(), KeyKind::Operator, operator.id).await?;
            print(json!({"operator_id": operator.id, "api_key": key.api_key}));
        }
        Command::Render { operator, command } => {
            let written = crate::render::run(command, operator.operator())?;
            print(json!({"written": written.0.display().to_string(), "bytes": written.1}));
        }
        Command::TradeOffices {
            db,
            command: TradeOfficesCommand::Import { file },
        } => {
            let entries = crate::directory::read_csv(&file)?;
            let repo = open_store(&db).await?;
            for e in &entries {
                repo.upsert_trade_office(e).await?;
            }
            print(json!({"imported": entries.len()}));
        }
        Command::Data => {
            print(crate::directory::data_sources());
        }
        Command::Webhooks {
            db,
            command: WebhooksCommand::Reseal,
        } => {
            // The keys as the servers have them: from their variables.
            let serve: ServeArgs = crate::config::from_env()
                .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim_end()))?;
            // The key a server here would seal with; never a new one (a command run away from
            // the servers' data folder would seal everything with a key no server has).
            let keys = crate::sealing::keys_with_default(
                serve.sealing_keys(),
                serve.signing_secret.as_deref(),
                &db.storage.data_dir,
                false,
            )
            .map_err(|e| anyhow::anyhow!("cannot read the webhook sealing key: {e}"))?;
            if keys.current.is_none() {
                return Err(anyhow::anyhow!(
                    "no sealing key here: set FILING_WEBHOOK_SECRETS_KEY (or FILING_SIGNING_SECRET) \
                     as the servers have it, or run where their data folder is ({} holds no {})",
                    db.storage.data_dir.display(),
                    crate::sealing::SEALING_KEY_FILE
                )
                .into());
            }
            let repo = open_store(&db).await?;
            let report = crate::webhooks::reseal_all(repo.as_ref(), &keys).await?;
            // The answers kept for replay (24 hours) are sealed with the same key, or with one
            // derived from the signing secret (`idempotency::answer_keys`).
            let secret = crate::links::existing_secret(
                serve.signing_secret.as_deref(),
                &db.storage.data_dir,
            )
            .map_err(|e| anyhow::anyhow!("cannot read the signing secret: {e}"))?;
            let answers = match secret {
                Some(secret) => {
                    let answer_keys = crate::idempotency::answer_keys(&keys, &secret);
                    Some(crate::idempotency::reseal_answers(repo.as_ref(), &answer_keys).await?)
                }
                None => {
                    eprintln!(
                        "answers kept for replay were left as they are: no signing secret here \
                         (FILING_SIGNING_SECRET, or the one in the data folder); they expire \
                         within 24 hours, keep the old keys until then"
                    );
                    None
                }
            };
            print(json!({
                "endpoints": report.endpoints,
                "resealed": report.resealed,
                "unchanged": report.unchanged,
                "unreadable": report.unreadable,
                "answers": answers,
            }));
            if !report.unreadable.is_empty() {
                return Err(anyhow::anyhow!(
                    "{} endpoint secret(s) open with none of the keys in \
                     FILING_WEBHOOK_SECRETS_KEY and FILING_WEBHOOK_SECRETS_OLD_KEYS",
                    report.unreadable.len()
                )
                .into());
            }
        }
        Command::Documents {
            db,
            command:
                DocumentsCommand::Sweep {
                    older_than,
                    dry_run,
                    force,
                },
        } => {
            if older_than < 600 && !force {
                return Err(anyhow::anyhow!(
                    "--older-than {older_than} could remove the files of a create still in \
                     progress; use at least 600, or --force when no server runs"
                )
                .into());
            }
            let storage = db.storage.storage()?;
            let repo = open_store(&db).await?;
            let documents = crate::app::open_documents(&storage, std::time::Duration::ZERO).await?;
            // An age beyond the representable past keeps every file.
            let cutoff = i64::try_from(older_than)
                .ok()
                .and_then(|secs| {
                    time::OffsetDateTime::now_utc().checked_sub(time::Duration::seconds(secs))
                })
                .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
            // Key by key as the listing arrives: only the keys removed are kept in memory.
            let mut keys = documents.keys_written_before(cutoff);
            let mut checked = 0usize;
            let mut removed = Vec::new();
            while let Some(key) = futures::StreamExt::next(&mut keys).await {
                let key = key?;
                checked += 1;
                if !repo.storage_key_known(&key).await? {
                    if !dry_run {
                        documents.delete(&key).await?;
                    }
                    removed.push(key);
                }
            }
            let staging_removed = if dry_run {
                0
            } else {
                documents.remove_staging_before(cutoff).await?
            };
            print(json!({
                "checked": checked,
                "kept": checked - removed.len(),
                "removed": removed,
                "staging_removed": staging_removed,
                "dry_run": dry_run,
            }));
        }
        Command::SeedTradeCopies { db, from, count } => {
            let repo = open_store(&db).await?;
            let started = std::time::Instant::now();
            let Some(inserted) = repo.seed_trade_copies(from, count).await? else {
                return Err(anyhow::anyhow!("no trade registration {from}").into());
            };
            print(json!({"inserted": inserted, "seconds": started.elapsed().as_secs_f64()}));
        }
        Command::Keys {
            db,
            command:
                KeysCommand::Create {
                    company,
                    environment,
                },
        } => {
            let repo = open_store(&db).await?;
            let found = repo
                .get_company(company)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no company {company}"))?;
            let kind = match found.kind {
                domain::company::CompanyKind::Provider => KeyKind::Provider,
                domain::company::CompanyKind::Client => KeyKind::Client,
            };
            if let (Some(asked), Some(own)) = (environment, found.environment)
                && asked != own
            {
                return Err(anyhow::anyhow!(
                    "company {company} is a {} company; its key cannot be restricted to {}",
                    own.as_str(),
                    asked.as_str()
                )
                .into());
            }
            let key = crate::auth::issue_restricted_key(repo.as_ref(), kind, found.id, environment)
                .await?;
            let mut out = json!({"company_id": found.id, "api_key": key.api_key});
            if let Some(environment) = environment {
                out["environment"] = json!(environment);
            }
            print(out);
        }
        Command::Keys {
            db,
            command: KeysCommand::Revoke { prefix },
        } => {
            let prefix = match domain::auth::parse_key(&prefix) {
                Some(parsed) => parsed.prefix.to_string(),
                None => prefix,
            };
            let repo = open_store(&db).await?;
            if !repo
                .revoke_api_key(&prefix, time::OffsetDateTime::now_utc())
                .await?
            {
                return Err(anyhow::anyhow!("no active key with prefix {prefix:?}").into());
            }
            print(json!({"revoked": prefix}));
        }
    }
    Ok(())
}

fn non_empty_name(name: &str) -> Result<&str, Failure> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.chars().count() > 200 || trimmed.chars().any(char::is_control)
    {
        return Err(anyhow::anyhow!("--name must be 1 to 200 printable characters").into());
    }
    Ok(trimmed)
}
