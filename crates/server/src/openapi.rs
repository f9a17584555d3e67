//! The OpenAPI 3.1 document, generated from the handlers and types, served at `/openapi.json`,
//! with Swagger UI at `/docs` (its assets are vendored into the binary: no internet needed).

use std::sync::Arc;

use axum::Router;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::app::AppState;
use crate::routes::{
    companies, documents, gbr_registrations, health, offices, operator, sandbox, tax_registrations,
    trade_registrations, webhooks,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Registration Filing Service",
        description = "Files German trade registrations (Gewerbeanmeldung, GewA 1) and tax registrations \
(Fragebogen zur steuerlichen Erfassung, ELSTER) on behalf of a provider's client companies.\n\n\
Every body is wrapped in `{\"response\": {...}}` with `result` (`success` | `error`) and `message`. \
Errors carry a stable `code`, and validation errors list every broken field in `errors`.",
    ),
    paths(
        health::healthz,
        companies::get_company,
        companies::create_api_key,
        trade_registrations::create,
        trade_registrations::get,
        trade_registrations::mark_submitted,
        tax_registrations::create,
        gbr_registrations::create,
        tax_registrations::get,
        documents::content,
        offices::lookup_trade_office,
        offices::lookup_tax_office,
        offices::get_tax_office,
        operator::list_trade,
        operator::list_tax,
        operator::transition_trade,
        operator::patch_trade,
        operator::verify_identity,
        operator::transition_tax,
        operator::assign_tax_office,
        operator::upload_trade_licence,
        offices::list_directory,
        offices::get_directory_entry,
        offices::put_directory_entry,
        webhooks::create,
        webhooks::list,
        webhooks::get,
        webhooks::delete,
        webhooks::rotate_secret,
        webhooks::deliveries,
        sandbox::transition_trade,
        sandbox::transition_tax,
        sandbox::assign_tax_office,
    ),
    components(schemas(WebhookEvent, WebhookEventData)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "health", description = "Liveness"),
        (name = "companies", description = "Provider and client companies, API keys"),
        (name = "trade registration", description = "Gewerbeanmeldung: GewA 1 per owner, power of attorney for `assisted`"),
        (name = "documents", description = "Document downloads through signed links"),
        (name = "tax registration", description = "Fragebogen zur steuerlichen Erfassung (UG, GmbH; GbR, eGbR): ELSTER XML validated against XSD, summary PDF"),
        (name = "offices", description = "Which trade office and tax office receive a filing"),
        (name = "operator", description = "For the service's operators (operator keys only)"),
        (name = "webhooks", description = "Standard Webhooks: every status change of a provider's cases is POSTed \
to its endpoints as a `WebhookEvent`, with the headers `webhook-id`, `webhook-timestamp` and `webhook-signature` \
(`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the decoded `whsec_` secret). Retried on any \
non-2xx, timeout or connection error; redirects are not followed; one case's events arrive in order."),
        (name = "sandbox", description = "A provider simulates the operator's steps on its own sandbox cases, to test its handling (webhooks included) end to end"),
    )
)]
pub struct ApiDoc;

/// The body of every webhook delivery.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct WebhookEvent {
    /// `registration.initiated`, `registration.form-rendered`, `registration.submitted`,
    /// `registration.completed`, `registration.blocked`, `tax-registration.validated`,
    /// `tax-registration.submitted`, `tax-registration.completed` or `tax-registration.rejected`.
    #[schema(rename = "type", example = "registration.submitted")]
    pub event_type: String,
    /// When the status changed (RFC 3339).
    #[schema(format = DateTime)]
    pub timestamp: String,
    pub data: WebhookEventData,
}

/// What changed.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct WebhookEventData {
    /// Trade registration events only.
    pub trade_registration_id: Option<uuid::Uuid>,
    /// Tax registration events only.
    pub tax_registration_id: Option<uuid::Uuid>,
    pub company_id: uuid::Uuid,
    pub status: String,
    /// Null for the first status of a case.
    pub previous_status: Option<String>,
    /// `sandbox` or `production`.
    pub environment: String,
    pub client_reference: Option<String>,
    /// The reason recorded with the change (e.g. why a case is blocked or rejected).
    pub reason: Option<String>,
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.description = Some(
            "An API key: `rfs_prv_...` (provider), `rfs_cli_...` (client company) or `rfs_opr_...` (operator)."
                .into(),
        );
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

pub fn routes() -> Router<Arc<AppState>> {
    Router::new().merge(SwaggerUi::new("/docs").url("/openapi.json", document()))
}
