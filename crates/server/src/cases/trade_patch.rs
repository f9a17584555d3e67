//! An operator's changes to a trade registration: its office (which re-heads the GewA 1 forms
//! while they follow it), the trade office's fee, the payment and the source product.

use std::sync::Arc;

use domain::Violations;
use serde_json::Value;
use uuid::Uuid;

use crate::cases::documents::remove_files;
use crate::cases::offices::{TradeOfficeView, directory_entry};
use crate::error::ApiError;
use crate::state::AppState;
use domain::lifecycle::Actor;

/// Reads an operator's changes to a trade registration (every field optional): the office
/// (checked against the directory and the municipality register), the fee, the payment and the
/// source product; every broken field in one 422.
pub async fn trade_patch(
    state: &AppState,
    body: &Value,
) -> Result<(store::TradePatch, Option<OfficeHead>), ApiError> {
    use domain::rules;
    let mut errs = Violations::new();
    let Some(o) = rules::object(
        body,
        "",
        &["trade_office", "city_fee", "is_paid", "source_product"],
        &mut errs,
    ) else {
        return Err(errs.into());
    };
    let mut patch = store::TradePatch::default();
    let mut head: Option<OfficeHead> = None;
    if let Some(v) = o.opt("trade_office")
        && let Some(t) = rules::object(v, "trade_office", &["key", "municipality_key"], &mut errs)
    {
        let key = t
            .req("key", &mut errs)
            .and_then(|k| rules::string(k, "trade_office.key", &mut errs))
            .map(str::to_string);
        let municipality = t
            .req("municipality_key", &mut errs)
            .and_then(|m| rules::string(m, "trade_office.municipality_key", &mut errs))
            .and_then(|m| {
                let found = domain::offices::Municipality::by_key(m);
                if found.is_none() {
                    errs.push(
                        "trade_office.municipality_key",
                        "unknown_municipality",
                        "is not an 8-digit municipality key of the register",
                    );
                }
                found
            });
        let entry = match &key {
            Some(k) => {
                // The directory's entry, or a district office the service ships.
                let e = directory_entry(state, k).await?;
                if e.is_none() {
                    errs.push(
                        "trade_office.key",
                        "unknown_trade_office",
                        "is not in the trade office directory (add it first)",
                    );
                }
                e
            }
            None => None,
        };
        if let (Some(entry), Some(m)) = (entry, municipality) {
            head = Some(OfficeHead {
                name: entry.name.clone(),
                municipality_key: m.key.to_string(),
            });
            let view = TradeOfficeView {
                key: entry.key.clone(),
                name: entry.name.clone(),
                kind: None,
                municipality_key: m.key.to_string(),
                municipality_name: Some(m.display_name()),
                address: None,
                email: None,
                phone: None,
                website: None,
                note: None,
            };
            patch.trade_office = serde_json::to_value(view).ok();
        }
    }
    patch.city_fee_cents = o
        .opt("city_fee")
        .and_then(|v| rules::euro_cents(v, "city_fee", &mut errs));
    patch.is_paid = o
        .opt("is_paid")
        .and_then(|v| rules::boolean(v, "is_paid", &mut errs));
    if o.has("source_product") || body.get("source_product").is_some() {
        patch.source_product = match o.opt("source_product") {
            None => Some(None),
            Some(serde_json::Value::String(s)) if s == "gbr" => Some(Some("gbr".into())),
            Some(_) => {
                errs.push("source_product", "invalid_value", "must be gbr or null");
                None
            }
        };
    }
    errs.finish(())?;
    Ok((patch, head))
}

/// Writes `actor`'s changes (an operator's), with the history entry that names each field whose
/// value changes (old and new) in the same write, none when nothing changes; one that assigns
/// an office re-heads the forms ([`assign_trade_office`]). 404 for an unknown case.
pub async fn patch_trade(
    state: &Arc<AppState>,
    id: Uuid,
    patch: store::TradePatch,
    head: Option<OfficeHead>,
    actor: Actor,
) -> Result<(), ApiError> {
    match head {
        None => {
            let outcome = state
                .repo
                .patch_trade_registration(id, &patch, None, &[], actor)
                .await?;
            if outcome == store::TradePatchOutcome::NotFound {
                return Err(ApiError::NotFound);
            }
            Ok(())
        }
        Some(head) => assign_trade_office(state, id, &patch, head, actor).await,
    }
}

/// An assigned trade office as the GewA 1 head prints it.
pub struct OfficeHead {
    pub name: String,
    pub municipality_key: String,
}

/// Writes `patch`, which assigns the office `head`, and, while the case's forms follow its
/// office ([`domain::trade::Package::forms_follow_office`]), replaces the GewA 1 forms the service
/// rendered with ones under the new head where that changes them, in the same write. The forms
/// are rendered from a read of the case, one assignment of the case at a time on this
/// instance; a write that finds the case moved or reassigned since then (by a transition or
/// another instance) is discarded and done again (docs/api/offices.md).
async fn assign_trade_office(
    state: &Arc<AppState>,
    id: Uuid,
    patch: &store::TradePatch,
    head: OfficeHead,
    actor: Actor,
) -> Result<(), ApiError> {
    let _held = state.case_locks.lock(id).await;
    for _ in 0..3 {
        let case = crate::cases::access::any_trade_case(state, id).await?;
        let (documents, written) = if case.package.forms_follow_office(case.status) {
            crate::cases::trade::rerender_gewa1(
                state,
                &case,
                head.name.clone(),
                head.municipality_key.clone(),
            )
            .await?
        } else {
            (Vec::new(), Vec::new())
        };
        let guard = store::TradeCaseGuard {
            status: case.status,
            trade_office: case.trade_office.clone(),
        };
        let outcome = state
            .repo
            .patch_trade_registration(id, patch, Some(&guard), &documents, actor)
            .await;
        match outcome {
            Ok(store::TradePatchOutcome::Applied { replaced }) => {
                if !documents.is_empty() {
                    // Its `documents.updated` event is in the outbox.
                    state.wake_webhooks();
                }
                remove_files(state, &replaced).await;
                return Ok(());
            }
            Ok(store::TradePatchOutcome::Stale) => {
                remove_files(state, &written).await;
            }
            Ok(store::TradePatchOutcome::NotFound) => {
                remove_files(state, &written).await;
                return Err(ApiError::NotFound);
            }
            Err(e) => {
                remove_files(state, &written).await;
                return Err(e.into());
            }
        }
    }
    Err(ApiError::Overloaded(
        "the case kept changing while the office was assigned; retry",
    ))
}
