//! The case lists of providers and client companies (`GET /v1/trade-registration`,
//! `GET /v1/tax-registration`; docs/api/lists.md): the query read whole (every broken
//! parameter in one 422), the caller's scope, and one page from the store.

use base64::Engine;
use domain::Violations;
use domain::auth::Caller;
use domain::case::CaseKind;
use domain::case_state::CaseStatus;
use domain::company::Environment;
use store::{CaseListFilter, CaseListItem, CaseListScope, CaseOwner};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

/// A page's size when the query names none, and the most it may name.
pub const DEFAULT_LIMIT: i64 = 20;
pub const MAX_LIMIT: i64 = 100;

/// The query parameters a list takes.
pub const PARAMETERS: [&str; 8] = [
    "company_id",
    "client_reference",
    "status",
    "environment",
    "created_after",
    "created_before",
    "cursor",
    "limit",
];

/// base64url without padding; the bits past a cursor's 16 bytes are ignored, so that every
/// string of the documented pattern (22 such characters) is a cursor.
const CURSOR: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// The opaque `next_cursor` for a page that ends at `position`.
pub fn cursor(position: Uuid) -> String {
    CURSOR.encode(position.as_bytes())
}

fn parse_cursor(s: &str) -> Option<Uuid> {
    let bytes = CURSOR.decode(s).ok()?;
    Uuid::from_slice(&bytes).ok()
}

/// A list query as read: the filters, where the page starts and its size.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    pub filter: CaseListFilter,
    pub cursor: Option<Uuid>,
    pub limit: i64,
}

/// Reads a list's query string (`None`: none given) for lists of `kind`: unknown parameters,
/// parameters given twice and values that do not parse are each named in one 422.
pub fn parse_query(kind: CaseKind, query: Option<&str>) -> Result<ListQuery, ApiError> {
    let mut errs = Violations::new();
    let mut seen: Vec<String> = Vec::new();
    let mut q = ListQuery {
        filter: CaseListFilter::default(),
        cursor: None,
        limit: DEFAULT_LIMIT,
    };
    for (name, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let name = name.into_owned();
        if !PARAMETERS.contains(&name.as_str()) {
            errs.push(
                &name,
                "unknown_field",
                format!(
                    "is not a parameter of this list; it takes {}",
                    PARAMETERS.join(", ")
                ),
            );
            continue;
        }
        if seen.contains(&name) {
            errs.push(&name, "invalid_value", "is given more than once");
            continue;
        }
        seen.push(name.clone());
        let f = &mut q.filter;
        let mut bad = |code: &str, message: &str| errs.push(&name, code, message);
        let mut invalid = |message: &str| bad("invalid_value", message);
        match name.as_str() {
            "company_id" => match Uuid::try_parse(&value) {
                Ok(id) => f.company_id = Some(id),
                Err(_) => invalid("must be a UUID"),
            },
            // The longest a create takes.
            "client_reference" if value.chars().count() > 255 => {
                invalid("must be at most 255 characters")
            }
            "client_reference" => f.client_reference = Some(value.into_owned()),
            "status" => match CaseStatus::parse(kind, &value) {
                Some(s) => f.status = Some(s),
                None => invalid(&format!("must be one of: {}", statuses(kind).join(", "))),
            },
            "environment" => match Environment::parse(&value) {
                Some(e) => f.environment = Some(e),
                None => invalid("must be sandbox or production"),
            },
            "created_after" | "created_before" => match instant(&value) {
                Some(at) if name == "created_after" => f.created_after = Some(at),
                Some(at) => f.created_before = Some(at),
                None => invalid(
                    "must be an RFC 3339 time with its offset, e.g. 2026-11-20T14:05:00+01:00",
                ),
            },
            "cursor" => match parse_cursor(&value) {
                Some(c) => q.cursor = Some(c),
                None => invalid("must be a next_cursor of an earlier page"),
            },
            _ => match value.parse::<i64>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => q.limit = n,
                Ok(_) => invalid(&format!("must be 1 to {MAX_LIMIT}")),
                Err(_) => bad("invalid_type", "must be an integer"),
            },
        }
    }
    errs.finish(q).map_err(ApiError::from)
}

fn instant(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

fn statuses(kind: CaseKind) -> Vec<&'static str> {
    use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
    match kind {
        CaseKind::Trade => TradeStatus::ALL.iter().map(|s| s.as_str()).collect(),
        CaseKind::Tax => TaxStatus::ALL.iter().map(|s| s.as_str()).collect(),
    }
}

/// The cases a caller's lists hold: a provider's its own, a client company's those of its
/// company, an operator's every case (a restricted key's: of its environment, see [`page`]).
pub fn scope(caller: Caller) -> CaseListScope {
    let owner = match caller {
        Caller::Operator { .. } => CaseOwner::All,
        Caller::Provider { company_id, .. } => CaseOwner::Provider(company_id),
        Caller::Client { company_id, .. } => CaseOwner::Company(company_id),
    };
    CaseListScope { owner }
}

/// One page: its cases, newest first, and the cursor of the next page when there is one.
pub async fn page(
    state: &AppState,
    caller: Caller,
    kind: CaseKind,
    q: &ListQuery,
) -> Result<(Vec<CaseListItem>, Option<String>), ApiError> {
    // No stored client reference has a NUL (requests refuse control characters), and
    // PostgreSQL takes none in a text.
    if q.filter
        .client_reference
        .as_deref()
        .is_some_and(|r| r.contains('\0'))
    {
        return Ok((Vec::new(), None));
    }
    // A key restricted to one environment lists that environment's cases only; asking for the
    // other is 409 ENVIRONMENT_MISMATCH (docs/adr/0021-environment-restricted-keys.md).
    let filter = CaseListFilter {
        environment: crate::cases::access::environment_for(caller, q.filter.environment)?,
        ..q.filter.clone()
    };
    let mut items = state
        .repo
        .list_case_page(kind, scope(caller), &filter, q.cursor, q.limit + 1)
        .await?;
    let more = items.len() as i64 > q.limit;
    items.truncate(q.limit as usize);
    let next = if more {
        items.last().map(|i| cursor(i.position))
    } else {
        None
    };
    Ok((items, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(kind: CaseKind, query: &str) -> Vec<(String, String)> {
        match parse_query(kind, Some(query)) {
            Err(ApiError::Validation(v)) => v
                .iter()
                .map(|e| (e.field.clone(), e.code.to_string()))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_broken_parameter_is_named() {
        assert_eq!(
            fields(
                CaseKind::Trade,
                &format!(
                    "state=blocked&status=validated&limit=0&cursor=x&company_id=1&created_after=today&environment=live&status=blocked&limit=abc&client_reference={}",
                    "x".repeat(256)
                )
            ),
            [
                ("state", "unknown_field"),
                ("status", "invalid_value"),
                ("limit", "invalid_value"),
                ("cursor", "invalid_value"),
                ("company_id", "invalid_value"),
                ("created_after", "invalid_value"),
                ("environment", "invalid_value"),
                ("status", "invalid_value"),
                ("limit", "invalid_value"),
                ("client_reference", "invalid_value"),
            ]
            .map(|(f, c)| (f.to_owned(), c.to_owned()))
        );
        // `validated` is a tax status.
        let q = parse_query(CaseKind::Tax, Some("status=validated&limit=100")).unwrap();
        assert_eq!(q.limit, 100);
        assert_eq!(q.filter.status.map(|s| s.as_str()), Some("validated"));
    }

    #[test]
    fn defaults_and_cursors() {
        let q = parse_query(CaseKind::Trade, None).unwrap();
        assert_eq!((q.limit, q.cursor), (DEFAULT_LIMIT, None));
        let id = Uuid::now_v7();
        let c = cursor(id);
        assert_eq!(c.len(), 22);
        assert_eq!(parse_cursor(&c), Some(id));
        // Any 22 characters of the alphabet are a cursor (the schema's pattern).
        assert!(parse_cursor("zzzzzzzzzzzzzzzzzzzzzz").is_some());
        assert!(parse_cursor("zzzzzzzzzzzzzzzzzzzzz").is_none());
        let q = parse_query(
            CaseKind::Trade,
            Some(&format!(
                "cursor={c}&created_after=2026-11-20T14:05:00%2B01:00&client_reference=a%20b"
            )),
        )
        .unwrap();
        assert_eq!(q.cursor, Some(id));
        assert_eq!(q.filter.client_reference.as_deref(), Some("a b"));
        assert_eq!(
            q.filter.created_after,
            Some(time::macros::datetime!(2026-11-20 13:05 UTC))
        );
    }
}
