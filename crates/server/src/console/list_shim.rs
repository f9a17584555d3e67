//! TEMPORARY until helper L's `cases::lists::operator_case_page` lands: the same interface on
//! the filters the store has today.

use domain::Violations;
use domain::auth::Caller;
use domain::case::CaseKind;
use domain::company::Environment;
use store::{CaseListFilter, CaseListScope, CaseOwner};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

#[allow(dead_code)]
#[derive(Debug, Default, Clone)]
pub struct OperatorListQuery {
    pub status: Option<String>,
    pub environment: Option<String>,
    pub provider_id: Option<String>,
    pub office: Option<String>,
    pub q: Option<String>,
    pub order: Option<String>,
    pub after: Option<String>,
    pub limit: Option<i64>,
}

pub struct Item {
    pub id: Uuid,
    pub company_name: String,
    pub client_reference: Option<String>,
    pub status: String,
    pub package: String,
    pub legal_form: Option<String>,
    pub office_key: Option<String>,
    pub office_name: Option<String>,
    pub provider_id: Uuid,
    pub environment: String,
    pub created_at: OffsetDateTime,
}

pub struct OperatorPage {
    pub items: Vec<Item>,
    pub counts: Vec<(String, i64)>,
    pub next_cursor: Option<Uuid>,
}

pub async fn operator_case_page(
    state: &AppState,
    caller: Caller,
    kind: CaseKind,
    q: OperatorListQuery,
) -> Result<OperatorPage, ApiError> {
    crate::cases::access::operator_only(caller)?;
    let mut errs = Violations::new();
    let environment = q.environment.as_deref().and_then(|e| {
        let p = Environment::parse(e);
        if p.is_none() {
            errs.push(
                "environment",
                "invalid_value",
                "must be sandbox or production",
            );
        }
        p
    });
    let status = q.status.as_deref().and_then(|s| {
        let p = domain::case_state::CaseStatus::parse(kind, s);
        if p.is_none() {
            errs.push("status", "invalid_value", "is not a status of this kind");
        }
        p
    });
    let after = q.after.as_deref().and_then(|a| {
        let p = Uuid::try_parse(a).ok();
        if p.is_none() {
            errs.push(
                "after",
                "invalid_value",
                "must be a next_cursor of an earlier page",
            );
        }
        p
    });
    errs.finish(())?;
    let limit = q.limit.unwrap_or(50);
    let filter = CaseListFilter {
        status,
        environment,
        client_reference: q.q.clone(),
        ..Default::default()
    };
    let mut rows = state
        .repo
        .list_case_page(
            kind,
            CaseListScope {
                owner: CaseOwner::All,
            },
            &filter,
            after,
            limit + 1,
        )
        .await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = if more {
        rows.last().map(|r| r.position)
    } else {
        None
    };
    let counts = state
        .repo
        .case_counts()
        .await?
        .into_iter()
        .filter(|c| c.kind == kind && Some(c.environment) == environment.or(Some(c.environment)))
        .map(|c| (c.status, c.count))
        .collect();
    Ok(OperatorPage {
        items: rows
            .into_iter()
            .map(|r| Item {
                id: r.id,
                company_name: r.company_name,
                client_reference: r.client_reference,
                status: r.status.as_str().into(),
                package: r.package.as_str().into(),
                legal_form: r.legal_form,
                office_key: r.office_key,
                office_name: r.office_name,
                provider_id: r.provider_id,
                environment: r.environment.as_str().into(),
                created_at: r.created_at,
            })
            .collect(),
        counts,
        next_cursor,
    })
}
