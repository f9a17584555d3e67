//! What the sandbox supplies where an operator would: a provider completing its own sandbox
//! trade case gets a sample licence and demo office, fee and payment (docs/api/sandbox.md). The
//! step itself is the operator's ([`crate::cases::steps`]).

use axum::body::Bytes;
use domain::calendar::date_in_germany;
use domain::lifecycle::TradeStatus;
use store::{DocumentRecord, TradePatch, TradeRegistrationRecord};

use crate::cases::offices::TradeOfficeView;
use domain::lifecycle::Actor;

use crate::cases::steps::{self, Moved, TradeStep};
use crate::cases::trade::stored_trade;
use crate::error::ApiError;
use crate::state::AppState;

/// The demo trade office of a case that has none.
fn demo_trade_office() -> TradeOfficeView {
    use domain::sandbox::*;
    TradeOfficeView {
        key: DEMO_TRADE_OFFICE_KEY.into(),
        name: DEMO_TRADE_OFFICE_NAME.into(),
        kind: None,
        municipality_key: DEMO_TRADE_OFFICE_KEY.into(),
        municipality_name: None,
        address: Some(DEMO_TRADE_OFFICE_ADDRESS.into()),
        email: None,
        phone: None,
        website: None,
        note: Some(DEMO_TRADE_OFFICE_NOTE.into()),
    }
}

/// `completed` in the sandbox: the office, fee and payment the case has (demo values where it
/// has none, which are stored), a sample licence rendered from them, stored and the case
/// completed in the operator's one write.
///
/// The demo values are written in the same transaction as the move, so a move that loses a
/// race leaves nothing behind.
pub async fn complete_with_sample_licence(
    state: &AppState,
    case: &TradeRegistrationRecord,
    step: TradeStep,
    actor: Actor,
) -> Result<(Moved<TradeStatus>, DocumentRecord), ApiError> {
    // Nothing is rendered or filled in for a case that cannot be completed (409).
    steps::check_completable(case, actor)?;
    let reg = stored_trade(case)?;
    let now = crate::clock::now_micros();
    let mut patch = TradePatch::default();
    let determined = case
        .trade_office
        .as_ref()
        .and_then(TradeOfficeView::stored)
        .map(|view| view.with_directory(case.trade_office_entry.clone()));
    let office = match determined {
        Some(office) => office,
        None => {
            let demo = demo_trade_office();
            patch.trade_office =
                Some(serde_json::to_value(&demo).map_err(|e| ApiError::Internal(e.into()))?);
            demo
        }
    };
    let fee_cents = match case.city_fee_cents {
        Some(c) => c,
        None => {
            patch.city_fee_cents = Some(domain::sandbox::DEMO_CITY_FEE_CENTS);
            domain::sandbox::DEMO_CITY_FEE_CENTS
        }
    };
    if !case.is_paid {
        patch.is_paid = Some(true);
    }
    let ctx = forms::TradeLicenceContext {
        trade_office_name: office.name.clone(),
        trade_office_address: office.address.clone(),
        municipality_key: (office.municipality_key != domain::sandbox::DEMO_TRADE_OFFICE_KEY)
            .then(|| office.municipality_key.clone()),
        reference: format!("SANDBOX-{}", case.id),
        received_on: case
            .history
            .iter()
            .rev()
            .find(|h| h.status == TradeStatus::Submitted.into())
            .map(|h| date_in_germany(h.at)),
        issued_on: date_in_germany(now),
        fee_cents: Some(fee_cents),
        fee_paid: true,
        timestamp: now,
    };
    let reg_for_render = reg.clone();
    let pdf =
        tokio::task::spawn_blocking(move || forms::render_trade_licence(&reg_for_render, &ctx))
            .await
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("sample licence failed: {e}")))?;
    let fields = store::CaseFields {
        tax_number: None,
        trade: (patch != TradePatch::default()).then_some(TradePatch {
            updated_at: Some(now),
            ..patch
        }),
    };
    steps::complete_trade_with_licence(
        state,
        case,
        Bytes::from(pdf),
        format!("Gewerbeschein (Muster) - {}.pdf", reg.name),
        actor,
        Some(match step.reason {
            Some(r) => format!("sample trade licence generated; {r}"),
            None => "sample trade licence generated".into(),
        }),
        fields,
    )
    .await
}
