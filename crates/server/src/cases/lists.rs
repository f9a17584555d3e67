//! The case lists: those of providers and client companies (`GET /v1/trade-registration`,
//! `GET /v1/tax-registration`; docs/api/lists.md): the query read whole (every broken
//! parameter in one 422), the caller's scope, and one page from the store; and the operators'
//! ([`operator_case_page`]: the console's queues and `GET /v1/operator/trade-registrations`,
//! `/tax-registrations`; docs/adr/0024-operator-case-search.md).

use domain::Violations;
use domain::auth::Caller;
use domain::case::CaseKind;
use domain::case_state::CaseStatus;
use domain::company::Environment;
use store::{CaseCursor, CaseListFilter, CaseListItem, CaseListScope, CaseOwner, CaseSearch};
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

pub use crate::extract::{cursor, parse_cursor};

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
    CaseStatus::of(kind)
        .into_iter()
        .map(CaseStatus::as_str)
        .collect()
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
    let from = q.cursor.map(CaseCursor::Position);
    let (items, more) = read_page(state, caller, kind, &filter, from, q.limit).await?;
    let next = more
        .then(|| items.last().map(|i| cursor(i.position)))
        .flatten();
    Ok((items, next))
}

/// Up to `limit` of the cases `caller` may list from `from` on, read with one more to tell
/// whether another page follows: the cases, and whether one does.
async fn read_page(
    state: &AppState,
    caller: Caller,
    kind: CaseKind,
    filter: &CaseListFilter,
    from: Option<CaseCursor>,
    limit: i64,
) -> Result<(Vec<CaseListItem>, bool), ApiError> {
    let mut items = state
        .repo
        .list_case_page(kind, scope(caller), filter, from, limit + 1)
        .await?;
    let more = items.len() as i64 > limit;
    items.truncate(limit as usize);
    Ok((items, more))
}

/// An operator's list query as given (the console's form, the API's query string), each value
/// as its text; [`operator_case_page`] reads and checks it. A parameter given empty is not left
/// out: it is checked as given (an empty `provider_id` is no UUID), as the OpenAPI document
/// describes it; the console leaves its empty fields out. The API reads it from the query
/// string; a parameter it does not know is refused rather than ignored (a misspelt filter,
/// `state=blocked`, would list every case).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorListQuery {
    /// A status of the listed kind.
    pub status: Option<String>,
    /// `sandbox` or `production`; `production` when left out (sandbox cases are never filed).
    pub environment: Option<String>,
    /// The id of the provider whose cases to list.
    pub provider_id: Option<String>,
    /// A trade registration's receiving office (its directory key, `11000000`), a tax
    /// registration's tax office (its number, `1116`).
    pub office: Option<String>,
    /// A search ([`CaseSearch::parse`]): a case's id (or a tax registration's public id), a
    /// five-digit postal code, or words (each of at least three characters counts) found in
    /// the company name, the client reference or a person's name.
    pub q: Option<String>,
    /// `oldest` (first; the default) or `newest`.
    pub order: Option<String>,
    /// The `next_cursor` of the previous page (the id of its last case).
    pub after: Option<String>,
    /// The page's size, 1 to [`OPERATOR_MAX_LIMIT`]; [`OPERATOR_DEFAULT_LIMIT`] when left out.
    pub limit: Option<String>,
    /// Whether the page comes with the counts by status ([`OperatorPage::counts`]); not when
    /// left out.
    #[serde(default)]
    pub counts: bool,
}

/// An operator's page's size when the query names none, and the most it may name.
pub const OPERATOR_DEFAULT_LIMIT: i64 = 100;
pub const OPERATOR_MAX_LIMIT: i64 = 500;

/// The longest office key or number a query may name.
const MAX_OFFICE: usize = 64;

/// An [`OperatorListQuery`] as read: what to ask the store for.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorList {
    /// Its `company_id`, `client_reference`, `created_*` are never set.
    pub filter: CaseListFilter,
    /// The id of the case the page starts after (in the list's order).
    pub after: Option<Uuid>,
    pub limit: i64,
    pub counts: bool,
}

/// One page of an operator's list.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorPage {
    /// In the order asked for.
    pub items: Vec<CaseListItem>,
    /// The id of the page's last case when more follow: the next page's `after`.
    pub next_cursor: Option<Uuid>,
    /// When asked for: the cases of the query's environment, provider and office (not of its
    /// status or search) by status, every status of the kind in its lifecycle's order.
    pub counts: Option<Vec<(CaseStatus, i64)>>,
}

/// Reads an operator's list query for lists of `kind`: every value that does not parse named
/// in one 422 (in the order status, environment, provider_id, office, q, order, after, limit).
pub fn operator_list(kind: CaseKind, query: &OperatorListQuery) -> Result<OperatorList, ApiError> {
    let mut errs = Violations::new();
    let given = |v: &Option<String>| v.as_deref().map(str::trim).map(str::to_owned);
    let mut filter = CaseListFilter::default();
    if let Some(s) = given(&query.status) {
        match CaseStatus::parse(kind, &s) {
            Some(s) => filter.status = Some(s),
            None => errs.push(
                "status",
                "invalid_value",
                format!("must be one of: {}", statuses(kind).join(", ")),
            ),
        }
    }
    // Production by default: the work queue holds the cases to file. Sandbox cases are never
    // filed, and one listed among them could be by mistake.
    match given(&query.environment) {
        None => filter.environment = Some(Environment::Production),
        Some(e) => match Environment::parse(&e) {
            Some(e) => filter.environment = Some(e),
            None => errs.push(
                "environment",
                "invalid_value",
                "must be sandbox or production",
            ),
        },
    }
    if let Some(p) = given(&query.provider_id) {
        match Uuid::try_parse(&p) {
            Ok(p) => filter.provider_id = Some(p),
            Err(_) => errs.push("provider_id", "invalid_value", "must be a UUID"),
        }
    }
    if let Some(o) = given(&query.office) {
        let raw = query.office.as_deref().unwrap_or_default();
        if raw.is_empty() || raw.chars().count() > MAX_OFFICE || raw.chars().any(char::is_control) {
            errs.push(
                "office",
                "invalid_value",
                format!(
                    "must be an office's key or number: 1 to {MAX_OFFICE} characters, \
                     no control characters"
                ),
            );
        } else {
            filter.office = Some(o);
        }
    }
    // The length as sent (the schema's `maxLength`), before the search trims it.
    let q_too_long = query
        .q
        .as_deref()
        .is_some_and(|q| q.chars().count() > CaseSearch::MAX_LEN);
    if let Some(q) = given(&query.q) {
        match CaseSearch::parse(&q).filter(|_| !q_too_long) {
            Some(search) => filter.search = Some(search),
            None => errs.push(
                "q",
                "invalid_value",
                format!(
                    "must be a case id, a five-digit postal code, or words of which one has at \
                     least {} characters (at most {} characters, no control characters)",
                    CaseSearch::MIN_WORD,
                    CaseSearch::MAX_LEN
                ),
            ),
        }
    }
    match given(&query.order).as_deref() {
        None | Some("oldest") => filter.oldest_first = true,
        Some("newest") => filter.oldest_first = false,
        Some(_) => errs.push("order", "invalid_value", "must be oldest or newest"),
    }
    let mut after = None;
    if let Some(a) = given(&query.after) {
        match Uuid::try_parse(&a) {
            Ok(a) => after = Some(a),
            Err(_) => errs.push(
                "after",
                "invalid_value",
                "must be a next_cursor of an earlier page",
            ),
        }
    }
    let mut limit = OPERATOR_DEFAULT_LIMIT;
    if let Some(l) = given(&query.limit) {
        match l.parse::<i64>() {
            Ok(n) if (1..=OPERATOR_MAX_LIMIT).contains(&n) => limit = n,
            Ok(_) => errs.push(
                "limit",
                "invalid_value",
                format!("must be 1 to {OPERATOR_MAX_LIMIT}"),
            ),
            Err(_) => errs.push("limit", "invalid_type", "must be an integer"),
        }
    }
    errs.finish(OperatorList {
        filter,
        after,
        limit,
        counts: query.counts,
    })
    .map_err(ApiError::from)
}

/// One page of an operator's list of `kind` (the console's queues and the operator API call
/// this, so both list alike): operator keys only (403 for any other), the query read by
/// [`operator_list`] (422), every case of the environment that the filters select, in the
/// order asked for, and the counts by status when asked for.
pub async fn operator_case_page(
    state: &AppState,
    caller: Caller,
    kind: CaseKind,
    query: &OperatorListQuery,
) -> Result<OperatorPage, ApiError> {
    crate::cases::access::operator_only(caller)?;
    let list = operator_list(kind, query)?;
    let from = list.after.map(CaseCursor::Case);
    let (items, more) = read_page(state, caller, kind, &list.filter, from, list.limit).await?;
    let next_cursor = more.then(|| items.last().map(|i| i.id)).flatten();
    let counts = if list.counts {
        Some(state.repo.count_cases_by_status(kind, &list.filter).await?)
    } else {
        None
    };
    Ok(OperatorPage {
        items,
        next_cursor,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields and codes of a refusal of every broken parameter.
    fn broken<T: std::fmt::Debug>(read: Result<T, ApiError>) -> Vec<(String, String)> {
        match read {
            Err(ApiError::Validation(v)) => v
                .iter()
                .map(|e| (e.field.clone(), e.code.to_string()))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    fn fields(kind: CaseKind, query: &str) -> Vec<(String, String)> {
        broken(parse_query(kind, Some(query)))
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

    fn operator_fields(kind: CaseKind, query: &OperatorListQuery) -> Vec<(String, String)> {
        broken(operator_list(kind, query))
    }

    #[test]
    fn an_operators_query_is_read_whole() {
        let text = |s: &str| Some(s.to_owned());
        let broken = OperatorListQuery {
            status: text("validated"),
            environment: text("live"),
            provider_id: text("p"),
            office: text(&"1".repeat(65)),
            q: text("ab"),
            order: text("up"),
            after: text("x"),
            limit: text("abc"),
            counts: true,
        };
        assert_eq!(
            operator_fields(CaseKind::Trade, &broken),
            [
                ("status", "invalid_value"),
                ("environment", "invalid_value"),
                ("provider_id", "invalid_value"),
                ("office", "invalid_value"),
                ("q", "invalid_value"),
                ("order", "invalid_value"),
                ("after", "invalid_value"),
                ("limit", "invalid_type"),
            ]
            .map(|(f, c)| (f.to_owned(), c.to_owned()))
        );
        // `validated` is a tax status; 0 and 501 are out of range.
        let q = OperatorListQuery {
            limit: text("0"),
            ..broken.clone()
        };
        assert!(
            operator_fields(CaseKind::Tax, &q).contains(&("limit".into(), "invalid_value".into()))
        );
        assert!(
            !operator_fields(CaseKind::Tax, &q)
                .iter()
                .any(|(f, _)| f == "status")
        );

        // Defaults: production, oldest first, 100; empty values count as left out.
        let list = operator_list(CaseKind::Trade, &OperatorListQuery::default()).unwrap();
        assert_eq!(list.filter.environment, Some(Environment::Production));
        assert!(list.filter.oldest_first);
        assert_eq!(
            (list.limit, list.after, list.counts),
            (OPERATOR_DEFAULT_LIMIT, None, false)
        );
        let empty = OperatorListQuery {
            status: text(""),
            environment: text(" "),
            provider_id: text(""),
            office: text(""),
            q: text("  "),
            order: text(""),
            after: text(""),
            limit: text(""),
            counts: false,
        };
        // Given empty, each is checked as given (the schema's rule), in the documented order.
        let Err(ApiError::Validation(v)) = operator_list(CaseKind::Trade, &empty) else {
            panic!("empty values are refused");
        };
        let named: Vec<&str> = v.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            named,
            [
                "status",
                "environment",
                "provider_id",
                "office",
                "q",
                "order",
                "after",
                "limit"
            ]
        );

        let id = Uuid::now_v7();
        let given = OperatorListQuery {
            status: text("submitted"),
            environment: text("sandbox"),
            provider_id: text(&id.to_string()),
            office: text(" 11000000 "),
            q: text(" Müller GmbH "),
            order: text("newest"),
            after: text(&id.to_string()),
            limit: text("500"),
            counts: true,
        };
        let list = operator_list(CaseKind::Trade, &given).unwrap();
        let f = &list.filter;
        assert_eq!(f.status.map(|s| s.as_str()), Some("submitted"));
        assert_eq!(f.environment, Some(Environment::Sandbox));
        assert_eq!(f.provider_id, Some(id));
        assert_eq!(f.office.as_deref(), Some("11000000"));
        assert_eq!(f.search, Some(CaseSearch::Text("Müller GmbH".into())));
        assert!(!f.oldest_first);
        assert_eq!((list.after, list.limit, list.counts), (Some(id), 500, true));
        let q = OperatorListQuery {
            q: text("10115"),
            ..Default::default()
        };
        assert_eq!(
            operator_list(CaseKind::Tax, &q).unwrap().filter.search,
            Some(CaseSearch::PostalCode("10115".into()))
        );
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
