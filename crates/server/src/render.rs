//! `filing render`: documents from a request file, so integrators can preview their data
//! without a server.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use domain::trade::TradeRegistration;
use time::{Date, OffsetDateTime, Time};

#[derive(Debug, clap::Subcommand)]
pub enum RenderCommand {
    /// The GewA 1 an owner is on: his own two A4 pages, or a legal person's one form with a
    /// supplementary sheet per further legal representative.
    Gewa1(RenderArgs),
    /// The power of attorney of one owner (package `assisted`).
    PowerOfAttorney(RenderArgs),
}

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The request: the JSON the API takes as `data` (see examples/); checked against every
    /// rule of the API as of the creation date, a broken one is refused with its field errors.
    #[arg(long)]
    pub input: std::path::PathBuf,
    /// Which owner, counted from 0.
    #[arg(long, default_value_t = 0)]
    pub owner: usize,
    /// Where to write the PDF.
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// Creation date printed on the document (YYYY-MM-DD); default today. A fixed date makes
    /// the output byte-for-byte reproducible.
    #[arg(long)]
    pub date: Option<String>,
    /// GewA 1 head: name of the receiving trade office.
    #[arg(long)]
    pub trade_office: Option<String>,
    /// GewA 1 head: 8-digit municipality key (AGS) of the establishment.
    #[arg(long)]
    pub municipality_key: Option<String>,
}

fn parse_date(s: &str) -> anyhow::Result<Date> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(s, &format).map_err(|_| anyhow!("--date must be a date YYYY-MM-DD, got {s:?}"))
}

/// Reads the request file and applies every rule of `POST /v1/trade-registration` to it, as
/// if it were sent on `today`; a broken request fails with the API's field errors, one per
/// line (`field: message (code)`).
pub fn read_request(path: &std::path::Path, today: Date) -> anyhow::Result<TradeRegistration> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value = crate::extract::decode_json(&bytes).map_err(|e| match e {
        crate::error::ApiError::Validation(v) => anyhow!("{}: {v}", path.display()),
        other => anyhow!("{}: {other}", path.display()),
    })?;
    domain::trade_request::parse(&value, today)
        .map(|request| request.registration)
        .map_err(|violations| {
            let lines: Vec<String> = violations
                .iter()
                .map(|e| format!("  {}: {} ({})", e.field, e.message, e.code))
                .collect();
            anyhow!(
                "{}: the request breaks {} rule(s) of the API:\n{}",
                path.display(),
                lines.len(),
                lines.join("\n")
            )
        })
}

/// Renders the requested document; returns the path written and its size. A production
/// power of attorney needs the operator (`FILING_OPERATOR_NAME`, `FILING_OPERATOR_ADDRESS`).
pub fn run(
    cmd: RenderCommand,
    operator: Option<forms::Operator>,
) -> anyhow::Result<(PathBuf, usize)> {
    let (args, is_gewa1) = match cmd {
        RenderCommand::Gewa1(a) => (a, true),
        RenderCommand::PowerOfAttorney(a) => (a, false),
    };
    let RenderArgs {
        input,
        owner,
        out,
        date,
        trade_office,
        municipality_key,
    } = args;
    let (created_on, timestamp) = match date {
        Some(d) => {
            let d = parse_date(&d)?;
            (d, d.with_time(Time::MIDNIGHT).assume_utc())
        }
        None => {
            let now = OffsetDateTime::now_utc();
            (domain::calendar::date_in_germany(now), now)
        }
    };
    let reg = read_request(&input, created_on)?;
    let pdf = if is_gewa1 {
        forms::render_gewa1(
            &reg,
            owner,
            &forms::Gewa1Context {
                trade_office_name: trade_office,
                municipality_key,
                main_office: None,
                created_on,
                timestamp,
            },
        )
    } else {
        forms::render_power_of_attorney(
            &reg,
            owner,
            &forms::PowerOfAttorneyContext {
                operator,
                place: None,
                created_on,
                timestamp,
            },
        )
    }
    .map_err(|e| match e {
        forms::RenderError::OperatorNotConfigured => anyhow!(
            "a production power of attorney names the operator: set FILING_OPERATOR_NAME and \
             FILING_OPERATOR_ADDRESS (or --operator-name and --operator-address)"
        ),
        other => other.into(),
    })?;
    std::fs::write(&out, &pdf).with_context(|| format!("cannot write {}", out.display()))?;
    Ok((out, pdf.len()))
}
