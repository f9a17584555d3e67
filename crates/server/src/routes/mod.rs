//! One module per resource; `public` routes need no key, `authenticated` ones do.

pub mod cancel;
pub mod case_lists;
pub mod companies;
pub mod documents;
pub mod events;
pub mod gbr_registrations;
pub mod health;
pub mod metrics;
pub mod multipart;
pub mod offices;
pub mod operator;
pub mod sandbox;
pub mod sole_proprietor_registrations;
pub mod tax_registrations;
pub mod trade_registrations;
pub mod views;

pub mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::config::Config;
use crate::state::AppState;

pub fn public() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/livez", get(health::livez))
        .route("/readyz", get(health::readyz))
        .route(
            "/v1/documents/{document_id}/content",
            get(documents::content),
        )
        .merge(crate::openapi::routes())
}

/// The trade create: JSON, or multipart with a signed PDF per owner.
pub const TRADE_CREATE: &str = "/v1/trade-registration";
/// The corporation's tax create: JSON, or multipart with its attachments.
pub const TAX_CREATE: &str = "/v1/tax-registration";
/// An operator's upload of the issued trade licence (one PDF).
pub const TRADE_LICENCE: &str =
    "/v1/operator/trade-registrations/{trade_registration_id}/trade-licence";

/// The largest body a request to the route `template` takes: the routes that take uploads
/// have their own limits, every other route `FILING_MAX_BODY_BYTES`. The route table below
/// sets these, and the idempotency layer, which reads a body before its route does, keeps to
/// the same (it finds the template as `MatchedPath`).
pub fn body_limit(config: &Config, template: &str) -> usize {
    match template {
        TRADE_CREATE => config.max_request_bytes(),
        TAX_CREATE => config.max_tax_request_bytes(),
        TRADE_LICENCE => config.max_licence_bytes(),
        _ => config.max_body_bytes,
    }
}

pub fn authenticated(config: &Config) -> Router<Arc<AppState>> {
    let limit = |template| DefaultBodyLimit::max(body_limit(config, template));
    Router::new()
        .route(
            TRADE_CREATE,
            post(trade_registrations::create)
                .layer(limit(TRADE_CREATE))
                .get(case_lists::list_trade),
        )
        .route(
            "/v1/trade-registration/{trade_registration_id}",
            get(trade_registrations::get),
        )
        .route(
            "/v1/trade-registration/{trade_registration_id}/mark-submitted",
            post(trade_registrations::mark_submitted),
        )
        .route(
            "/v1/trade-registration/{trade_registration_id}/cancel",
            post(cancel::cancel_trade),
        )
        .route(
            "/v1/tax-registration/{tax_registration_id}/cancel",
            post(cancel::cancel_tax),
        )
        .route(
            TAX_CREATE,
            post(tax_registrations::create)
                .layer(limit(TAX_CREATE))
                .get(case_lists::list_tax),
        )
        .route(
            "/v1/tax-registration/gbr",
            post(gbr_registrations::create),
        )
        .route(
            "/v1/tax-registration/sole-proprietor",
            post(sole_proprietor_registrations::create),
        )
        .route(
            "/v1/tax-registration/{tax_registration_id}",
            get(tax_registrations::get),
        )
        .route("/v1/events", get(events::list))
        .route("/v1/trade-offices", get(offices::lookup_trade_office))
        .route("/v1/tax-offices", get(offices::lookup_tax_office))
        .route("/v1/tax-offices/{number}", get(offices::get_tax_office))
        .route("/v1/register-courts", get(offices::list_register_courts))
        .route(
            "/v1/operator/trade-registrations",
            get(operator::list_trade),
        )
        .route("/v1/operator/tax-registrations", get(operator::list_tax))
        .route(
            "/v1/operator/tax-registrations/{tax_registration_id}/transition",
            post(operator::transition_tax),
        )
        .route(
            "/v1/operator/tax-registrations/{tax_registration_id}/tax-office",
            post(operator::assign_tax_office),
        )
        .route(
            "/v1/operator/trade-registrations/{trade_registration_id}",
            axum::routing::patch(operator::patch_trade),
        )
        .route(
            "/v1/operator/trade-registrations/{trade_registration_id}/owners/{owner_index}/identity-verified",
            get(operator::identity_history)
                .post(operator::verify_identity)
                .delete(operator::clear_identity),
        )
        .route(
            "/v1/operator/trade-registrations/{trade_registration_id}/transition",
            post(operator::transition_trade),
        )
        .route(
            TRADE_LICENCE,
            post(operator::upload_trade_licence).layer(limit(TRADE_LICENCE)),
        )
        .route("/v1/operator/trade-offices", get(offices::list_directory))
        .route(
            "/v1/operator/trade-offices/{key}",
            get(offices::get_directory_entry).put(offices::put_directory_entry),
        )
        .route(
            "/v1/webhook-endpoints",
            post(webhooks::create).get(webhooks::list),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}",
            get(webhooks::get).delete(webhooks::delete),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}/rotate-secret",
            post(webhooks::rotate_secret),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}/test",
            post(webhooks::test_endpoint),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}/deliveries",
            get(webhooks::deliveries),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}/messages",
            get(webhooks::messages),
        )
        .route(
            "/v1/webhook-endpoints/{endpoint_id}/messages/{message_id}/retry",
            post(webhooks::retry_message),
        )
        .route(
            "/v1/sandbox/trade-registration/{trade_registration_id}/transition",
            post(sandbox::transition_trade),
        )
        .route(
            "/v1/sandbox/tax-registration/{tax_registration_id}/transition",
            post(sandbox::transition_tax),
        )
        .route(
            "/v1/sandbox/tax-registration/{tax_registration_id}/tax-office",
            post(sandbox::assign_tax_office),
        )
        .route(metrics::PATH, get(metrics::scrape_as_operator))
        .route("/v1/companies/{company_id}", get(companies::get_company))
        .route(
            "/v1/companies/{company_id}/api-keys",
            post(companies::create_api_key).get(companies::list_api_keys),
        )
        .route(
            "/v1/companies/{company_id}/api-keys/{key_prefix}",
            axum::routing::delete(companies::revoke_api_key),
        )
}
