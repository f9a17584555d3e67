//! The command line: `filing [serve]`, `filing migrate`, `filing providers create`,
//! `filing operators create`, `filing keys revoke`.
//!
//! Commands that print a result print exactly one JSON object on stdout; logs go to stderr.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use domain::auth::KeyKind;
use domain::company::Environment;
use serde_json::json;

use crate::config::{CommonArgs, Config, ServeArgs};

#[derive(Debug, Parser)]
#[command(
    name = "filing",
    version,
    about = "Registration Filing Service: files German trade and tax registrations over an HTTP API",
    long_about = "Registration Filing Service: files German trade and tax registrations over an HTTP API.\n\n\
Without a subcommand it serves (the same as `filing serve`). Every setting can be given as a flag \
or as the environment variable shown with it; with none at all it listens on 127.0.0.1:8080 with an \
SQLite database and documents under ./data."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (the default).
    Serve,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Provider companies (API customers).
    #[command(subcommand)]
    Providers(ProvidersCommand),
    /// Operators (staff who process cases).
    #[command(subcommand)]
    Operators(OperatorsCommand),
    /// API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Render a document from a trade registration request file, without a server.
    #[command(subcommand)]
    Render(crate::render::RenderCommand),
    /// The trade office directory (contact data of the offices that receive trade notices).
    #[command(subcommand, name = "trade-offices")]
    TradeOffices(TradeOfficesCommand),
    /// The bundled reference data (postal codes, municipality register, tax offices): editions,
    /// licences and how to refresh them from a newer edition.
    Data,
    /// Document files (the document store).
    #[command(subcommand)]
    Documents(DocumentsCommand),
    /// Webhook endpoints.
    #[command(subcommand)]
    Webhooks(WebhooksCommand),
    /// Benchmark data: insert COUNT copies of an existing trade registration, each with its own
    /// client company and the template's status history (documents are not copied). For load
    /// tests on a large database; never run it against production data.
    #[command(name = "seed-trade-copies")]
    SeedTradeCopies {
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
    Import { file: std::path::PathBuf },
}

#[derive(Debug, Subcommand)]
pub enum ProvidersCommand {
    /// Create a provider company and its first API key; prints {"company_id", "api_key"}. With
    /// --environment, also a key restricted to that environment
    /// (docs/adr/0021-environment-restricted-keys.md): prints {"company_id", "api_key",
    /// "environment", "restricted_api_key"}; "api_key" stays the unrestricted key.
    Create {
        #[arg(long)]
        name: String,
        /// `sandbox` or `production`: also issue a key that creates and sees only that
        /// environment's cases and client companies (`rfs_prv_test_…`, `rfs_prv_live_…`).
        #[arg(long, value_parser = parse_environment)]
        environment: Option<Environment>,
    },
}

/// `sandbox` or `production`, as the API spells them.
fn parse_environment(s: &str) -> Result<Environment, String> {
    Environment::parse(s).ok_or_else(|| "must be sandbox or production".to_string())
}

#[derive(Debug, Subcommand)]
pub enum OperatorsCommand {
    /// Create an operator and its API key; prints {"operator_id", "api_key"}.
    Create {
        #[arg(long)]
        name: String,
    },
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
    /// Revoke a key by its prefix (`rfs_prv_xxxxxxxxxxxx`) or the whole key.
    Revoke { prefix: String },
}

/// Runs the command; the exit code is 0 on success, 1 on failure, 2 for bad configuration.
pub fn run(cli: Cli) -> ExitCode {
    let log_format = cli.common.log_format;
    let serving = matches!(cli.command, None | Some(Command::Serve));
    // Administrative commands log only warnings, so their output stays one JSON line.
    let filter = if serving {
        cli.common.log.as_str()
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
            Err(Failure::Other(e)) => {
                tracing::error!(error = ?e, "failed");
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

async fn open_store(common: &CommonArgs) -> Result<std::sync::Arc<dyn store::Repository>, Failure> {
    let storage = common.storage()?;
    if storage.database_url.starts_with("sqlite:") {
        std::fs::create_dir_all(&storage.data_dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", storage.data_dir.display()))?;
    }
    Ok(store::connect(&storage.database_url).await?)
}

fn print(value: serde_json::Value) {
    println!("{value}");
}

async fn execute(cli: Cli) -> Result<(), Failure> {
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let mut config = Config::from_args(&cli.common, &cli.serve)?;
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
            if cli.serve.public_url.is_none() {
                config.public_url = format!("http://{address}");
            }
            tracing::info!(
                database = %crate::config::redact_url(&config.storage.database_url),
                data_dir = %config.storage.data_dir.display(),
                public_url = %config.public_url,
                "starting"
            );
            if config.operator.name == crate::config::DEFAULT_OPERATOR_NAME {
                tracing::warn!(
                    "FILING_OPERATOR_NAME and FILING_OPERATOR_ADDRESS are not set: powers of attorney name a placeholder operator"
                );
            }
            let state = crate::app::build_state(config).await?;
            let listener = socket.listen(1024).map_err(cannot)?;
            tracing::info!(%address, "listening");
            crate::app::serve(state, listener, crate::app::shutdown_signal()).await?;
            tracing::info!("stopped");
        }
        Command::Migrate => {
            let repo = open_store(&cli.common).await?;
            print(json!({"migrated": true, "database": repo.backend()}));
        }
        Command::Providers(ProvidersCommand::Create { name, environment }) => {
            let name = non_empty_name(&name)?;
            let repo = open_store(&cli.common).await?;
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
        Command::Operators(OperatorsCommand::Create { name }) => {
            let name = non_empty_name(&name)?;
            let repo = open_store(&cli.common).await?;
            let operator = repo.create_operator(name).await?;
            let key = crate::auth::issue_key(repo.as_ref(), KeyKind::Operator, operator.id).await?;
            print(json!({"operator_id": operator.id, "api_key": key.api_key}));
        }
        Command::Render(cmd) => {
            let written = crate::render::run(cmd, cli.common.operator())?;
            print(json!({"written": written.0.display().to_string(), "bytes": written.1}));
        }
        Command::TradeOffices(TradeOfficesCommand::Import { file }) => {
            let entries = crate::directory::read_csv(&file)?;
            let repo = open_store(&cli.common).await?;
            for e in &entries {
                repo.upsert_trade_office(e).await?;
            }
            print(json!({"imported": entries.len()}));
        }
        Command::Data => {
            print(crate::directory::data_sources());
        }
        Command::Webhooks(WebhooksCommand::Reseal) => {
            // The key a server here would seal with; never a new one (a command run away from
            // the servers' data folder would seal everything with a key no server has).
            let keys = crate::sealing::keys_with_default(
                cli.serve.sealing_keys(),
                cli.serve.signing_secret.as_deref(),
                &cli.common.data_dir,
                false,
            )
            .map_err(|e| anyhow::anyhow!("cannot read the webhook sealing key: {e}"))?;
            if keys.current.is_none() {
                return Err(anyhow::anyhow!(
                    "no sealing key here: set FILING_WEBHOOK_SECRETS_KEY (or FILING_SIGNING_SECRET) \
                     as the servers have it, or run where their data folder is ({} holds no {})",
                    cli.common.data_dir.display(),
                    crate::sealing::SEALING_KEY_FILE
                )
                .into());
            }
            let repo = open_store(&cli.common).await?;
            let report = crate::webhooks::reseal_all(repo.as_ref(), &keys).await?;
            // The answers kept for replay (24 hours) are sealed with the same key, or with one
            // derived from the signing secret (`idempotency::answer_keys`).
            let secret = crate::links::existing_secret(
                cli.serve.signing_secret.as_deref(),
                &cli.common.data_dir,
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
        Command::Documents(DocumentsCommand::Sweep {
            older_than,
            dry_run,
            force,
        }) => {
            if older_than < 600 && !force {
                return Err(anyhow::anyhow!(
                    "--older-than {older_than} could remove the files of a create still in \
                     progress; use at least 600, or --force when no server runs"
                )
                .into());
            }
            let storage = cli.common.storage()?;
            let repo = open_store(&cli.common).await?;
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
        Command::SeedTradeCopies { from, count } => {
            let repo = open_store(&cli.common).await?;
            let started = std::time::Instant::now();
            let Some(inserted) = repo.seed_trade_copies(from, count).await? else {
                return Err(anyhow::anyhow!("no trade registration {from}").into());
            };
            print(json!({"inserted": inserted, "seconds": started.elapsed().as_secs_f64()}));
        }
        Command::Keys(KeysCommand::Create {
            company,
            environment,
        }) => {
            let repo = open_store(&cli.common).await?;
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
        Command::Keys(KeysCommand::Revoke { prefix }) => {
            let prefix = match domain::auth::parse_key(&prefix) {
                Some(parsed) => parsed.prefix.to_string(),
                None => prefix,
            };
            let repo = open_store(&cli.common).await?;
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
