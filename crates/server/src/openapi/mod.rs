//! The OpenAPI 3.1 document, generated from the handlers and types, served at `/openapi.json`,
//! with Swagger UI at `/docs` (its assets are vendored into the binary: no internet needed).

use std::sync::Arc;

use axum::Router;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::routes::{
    cancel, case_lists, companies, documents, events, gbr_registrations, health, metrics, offices,
    operator, sandbox, sole_proprietor_registrations, tax_registrations, trade_registrations,
    webhooks,
};
use crate::state::AppState;
use webhook_section::Webhooks;

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
        health::livez,
        health::readyz,
        metrics::scrape_as_operator,
        companies::get_company,
        companies::create_api_key,
        companies::list_api_keys,
        companies::revoke_api_key,
        trade_registrations::create,
        trade_registrations::get,
        case_lists::list_trade,
        trade_registrations::mark_submitted,
        cancel::cancel_trade,
        tax_registrations::create,
        gbr_registrations::create,
        sole_proprietor_registrations::create,
        tax_registrations::get,
        cancel::cancel_tax,
        case_lists::list_tax,
        documents::content,
        offices::lookup_trade_office,
        offices::lookup_tax_office,
        offices::get_tax_office,
        offices::list_register_courts,
        operator::list_trade,
        operator::list_tax,
        operator::transition_trade,
        operator::patch_trade,
        operator::verify_identity,
        operator::identity_history,
        operator::clear_identity,
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
        webhooks::test_endpoint,
        webhooks::deliveries,
        webhooks::messages,
        webhooks::retry_message,
        events::list,
        sandbox::transition_trade,
        sandbox::transition_tax,
        sandbox::assign_tax_office,
    ),
    components(schemas(
        WebhookEvent,
        WebhookEventData,
        WebhookPing,
        WebhookPingData,
        WebhookDocument,
        domain::lifecycle::TradeStatus,
        domain::lifecycle::TaxStatus,
        trade_registrations::SignedPdf,
    )),
    modifiers(&BearerAuth, &CommonResponses, &SharedLinks, &LinkOperationIds, &Webhooks, &NamedVariants),
    security(("bearer" = [])),
    tags(
        (name = "health", description = "Liveness and readiness probes for orchestrators (`/livez`, `/readyz`) and `/healthz`"),
        (name = "companies", description = "Provider and client companies, API keys"),
        (name = "trade registration", description = "Gewerbeanmeldung: GewA 1 per owner, power of attorney for `assisted`"),
        (name = "documents", description = "Document downloads through signed links"),
        (name = "tax registration", description = "Fragebogen zur steuerlichen Erfassung (UG, GmbH; GbR, eGbR): ELSTER XML validated against XSD, summary PDF"),
        (name = "offices", description = "Which trade office and tax office receive a filing"),
        (name = "operator", description = "For the service's operators (operator keys only)"),
        (name = "webhooks", description = "Standard Webhooks: every status change of a provider's cases, and every \
document an office assigned later brings (`documents.updated`), is POSTed to its endpoints as a `WebhookEvent`, with the headers `webhook-id`, `webhook-timestamp` and `webhook-signature` \
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
    /// `tax-registration.submitted`, `tax-registration.completed`, `tax-registration.rejected`
    /// (status changes) or `documents.updated` (documents a case got or had replaced without a
    /// status change: an office assigned later).
    #[schema(rename = "type", example = "registration.submitted")]
    pub event_type: String,
    /// When the status changed, or the documents were written (RFC 3339).
    #[schema(format = DateTime)]
    pub timestamp: String,
    pub data: WebhookEventData,
}

/// The body of a test ping (`POST /v1/webhook-endpoints/{endpoint_id}/test`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct WebhookPing {
    /// Always `ping`.
    #[schema(rename = "type", example = "ping")]
    pub event_type: String,
    /// When it was sent (RFC 3339).
    #[schema(format = DateTime)]
    pub timestamp: String,
    pub data: WebhookPingData,
}

/// Which endpoint was pinged.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct WebhookPingData {
    pub endpoint_id: uuid::Uuid,
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
    /// The status entered; for `documents.updated` the case's status, unchanged.
    pub status: String,
    /// Status events only; null for the first status of a case.
    pub previous_status: Option<String>,
    /// `sandbox` or `production`.
    pub environment: String,
    pub client_reference: Option<String>,
    /// The reason recorded with the change (e.g. why a case is blocked or rejected); for
    /// `documents.updated` `trade office assigned` or `tax office assigned`.
    pub reason: Option<String>,
    /// `documents.updated` only: each new document, with the one it replaces.
    pub documents: Option<Vec<WebhookDocument>>,
}

/// A document a `documents.updated` event announces. Its download links are in the case.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct WebhookDocument {
    pub id: uuid::Uuid,
    /// As in the case's `documents` (`trade-licence-application`, `tax-registration-xml`, ...).
    #[schema(rename = "type")]
    pub doc_type: String,
    /// The owner (index into `owners`) it belongs to; null for a case's own documents.
    pub owner_index: Option<i32>,
    pub name: String,
    /// The document it replaces, now gone (its links answer 404); null for a new one.
    pub replaces: Option<uuid::Uuid>,
}

struct BearerAuth;

/// The variants of a tagged union that extend another schema (`allOf` of a `$ref` and the tag)
/// as components of their own (`TaxAdvisorPerson`, `AuthorizedRecipientFirm`, ...), the union a
/// `oneOf` of references: client generators (openapi-python-client) cannot read an inline
/// `allOf` inside a `oneOf`, and dropped every schema that used one (`.ci/python-client`).
struct NamedVariants;

impl Modify for NamedVariants {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{RefOr, Schema};
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        let mut added = Vec::new();
        for (name, schema) in components.schemas.iter_mut() {
            let RefOr::T(Schema::OneOf(one_of)) = schema else {
                continue;
            };
            for item in one_of.items.iter_mut() {
                let RefOr::T(Schema::AllOf(all)) = item else {
                    continue;
                };
                let tag = all.items.iter().find_map(|part| match part {
                    RefOr::T(Schema::Object(o)) => match o.properties.get("type") {
                        Some(RefOr::T(Schema::Object(t))) => t
                            .enum_values
                            .as_ref()
                            .and_then(|v| v.first())
                            .and_then(|v| v.as_str())
                            .map(str::to_string),
                        _ => None,
                    },
                    _ => None,
                });
                let Some(tag) = tag else { continue };
                let camel: String = tag
                    .split(['-', '_'])
                    .map(|w| {
                        let mut c = w.chars();
                        c.next()
                            .map(|f| f.to_uppercase().chain(c).collect::<String>())
                            .unwrap_or_default()
                    })
                    .collect();
                let variant = format!("{name}{camel}");
                let inline = std::mem::replace(
                    item,
                    RefOr::Ref(utoipa::openapi::Ref::from_schema_name(&variant)),
                );
                added.push((variant, inline));
            }
        }
        for (name, schema) in added {
            components.schemas.insert(name, schema);
        }
    }
}

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.description = Some(
            "An API key: `rfs_prv_...` (provider), `rfs_cli_...` (client company) or `rfs_opr_...` (operator). \
A key restricted to one environment shows it after the role: `rfs_prv_test_...` (sandbox), `rfs_prv_live_...` \
(production); it creates and sees only that environment's cases and client companies."
                .into(),
        );
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}

/// What every operation can answer besides its own responses, declared here once rather than on
/// each route: the generic errors (docs/api/errors.md) as
/// `#/components/responses/...`, each with the one error envelope schema; and on every
/// authenticated POST the `Idempotency-Key` header the idempotency layer reads
/// (crate::idempotency), with its 409 and 422. A route's own entry for a status wins (it names
/// the codes that route gives); 401, 408, 413, 415, 429, 500 and 503 are never the route's.
struct CommonResponses;

/// One shared error response: (status, component name, description, applies to).
struct Generic {
    status: &'static str,
    name: &'static str,
    description: &'static str,
    applies: fn(&OperationFacts) -> bool,
}

/// What decides which generic responses an operation can give.
struct OperationFacts {
    authenticated: bool,
    has_body: bool,
    has_input: bool,
    idempotent_post: bool,
}

const GENERIC: &[Generic] = &[
    Generic {
        status: "400",
        name: "BadRequest",
        description: "`INVALID_JSON` (the body is not well-formed JSON), `INVALID_MULTIPART` (a multipart \
body that cannot be read) or `BAD_REQUEST` (a request the framework cannot read at all)",
        applies: |_| true,
    },
    Generic {
        status: "401",
        name: "Unauthorized",
        description: "`UNAUTHORIZED`: the API key is missing, malformed, unknown or revoked \
(with `WWW-Authenticate: Bearer`)",
        applies: |o| o.authenticated,
    },
    Generic {
        status: "408",
        name: "RequestTimeout",
        description: "`REQUEST_TIMEOUT`: the request body fell behind the minimum rate (`FILING_BODY_READ_TIMEOUT_SECS`, `FILING_BODY_MIN_BYTES_PER_SEC`), or the request took longer than `FILING_REQUEST_TIMEOUT_SECS` after its body",
        applies: |_| true,
    },
    Generic {
        status: "409",
        name: "IdempotencyKeyInUse",
        description: "`IDEMPOTENCY_KEY_IN_USE`: a request with this `Idempotency-Key` is still running",
        applies: |o| o.idempotent_post,
    },
    Generic {
        status: "413",
        name: "PayloadTooLarge",
        description: "`PAYLOAD_TOO_LARGE`: the body (or a file part) is larger than allowed",
        applies: |o| o.has_body,
    },
    Generic {
        status: "415",
        name: "UnsupportedMediaType",
        description: "`UNSUPPORTED_MEDIA_TYPE`: the body is not of a content type this operation takes",
        applies: |o| o.has_body,
    },
    Generic {
        status: "422",
        name: "ValidationFailed",
        description: "`VALIDATION_FAILED` (every broken field rule in `errors`) or, with an \
`Idempotency-Key`, `IDEMPOTENCY_KEY_REUSED`",
        applies: |o| o.has_input,
    },
    Generic {
        status: "429",
        name: "RateLimited",
        description: "`RATE_LIMITED`: too many requests; retry after `Retry-After` seconds",
        applies: |_| true,
    },
    Generic {
        status: "500",
        name: "InternalError",
        description: "`INTERNAL_ERROR`: a bug; the message holds no internals, `request_id` finds the log",
        applies: |_| true,
    },
    Generic {
        status: "503",
        name: "ServiceUnavailable",
        description: "`SERVICE_UNAVAILABLE`: storage is unreachable, or too many uploads are in progress; \
nothing was kept, retry after `Retry-After` seconds. `SERVICE_NOT_CONFIGURED`: the request needs a setting \
the service runs without, which the message names (no `Retry-After`)",
        applies: |_| true,
    },
];

/// The statuses no route documents itself: their meaning is the same everywhere.
const ALWAYS_GENERIC: &[&str] = &["401", "408", "413", "415", "429", "500", "503"];

/// Whether a route's own answer carries another body than the error envelope (`/readyz`'s
/// 503 is its report): the generic entry of that status would misstate it.
fn answers_other_than_the_error_envelope(
    response: &utoipa::openapi::RefOr<utoipa::openapi::Response>,
) -> bool {
    use utoipa::openapi::RefOr;
    let RefOr::T(response) = response else {
        return false;
    };
    response.content.values().any(|c| match &c.schema {
        Some(RefOr::Ref(r)) => !r.ref_location.ends_with("/Envelope_ErrorBody"),
        _ => false,
    })
}

/// The `Idempotency-Key` header of every authenticated POST (docs/api/idempotency.md).
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[!-~]{1,255}$";

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::{Parameter, ParameterIn};
        use utoipa::openapi::schema::{Object, Type};
        use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, ResponseBuilder};

        let envelope = || {
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Envelope_ErrorBody")))
                .build()
        };
        let components = openapi.components.get_or_insert_with(Default::default);
        for g in GENERIC {
            let mut response = ResponseBuilder::new()
                .description(g.description)
                .content("application/json", envelope());
            match g.status {
                "401" => {
                    response = response.header(
                        "WWW-Authenticate",
                        utoipa::openapi::HeaderBuilder::new()
                            .schema(Object::with_type(Type::String))
                            .description(Some("`Bearer`"))
                            .build(),
                    );
                }
                "429" | "503" => {
                    response = response.header(
                        "Retry-After",
                        utoipa::openapi::HeaderBuilder::new()
                            .schema(Object::with_type(Type::Integer))
                            .description(Some("Seconds to wait before retrying"))
                            .build(),
                    );
                }
                _ => {}
            }
            components
                .responses
                .insert(g.name.to_string(), RefOr::T(response.build()));
        }

        let idempotency_key = Parameter::builder()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "Makes retries safe: 1 to 255 visible ASCII characters, unique \
per request; the same key with the same request within 24 hours replays the first answer",
            ))
            .schema(Some(
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(255))
                    .pattern(Some(IDEMPOTENCY_KEY_PATTERN)),
            ))
            .build();

        for item in openapi.paths.paths.values_mut() {
            let ops = [
                (&mut item.get, false),
                (&mut item.put, false),
                (&mut item.post, true),
                (&mut item.delete, false),
                (&mut item.patch, false),
            ];
            for (op, is_post) in ops {
                let Some(op) = op.as_mut() else { continue };
                // `security(())` on a route marks it public.
                let authenticated = !op
                    .security
                    .as_ref()
                    .is_some_and(|s| s.iter().all(|r| r == &Default::default()));
                if is_post && authenticated {
                    let params = op.parameters.get_or_insert_with(Vec::new);
                    if !params.iter().any(|p| p.name == "Idempotency-Key") {
                        params.push(idempotency_key.clone());
                    }
                }
                let facts = OperationFacts {
                    authenticated,
                    has_body: op.request_body.is_some(),
                    // A query is input that can fail validation, except the signed download
                    // link's (the one unauthenticated route with a query): that query is its
                    // authorisation, and a broken one is 403 like a wrong signature.
                    has_input: op.request_body.is_some()
                        || authenticated
                            && op.parameters.as_ref().is_some_and(|ps| {
                                ps.iter().any(|p| p.parameter_in != ParameterIn::Path)
                            }),
                    idempotent_post: is_post && authenticated,
                };
                for g in GENERIC {
                    if !(g.applies)(&facts) {
                        continue;
                    }
                    let responses = &mut op.responses.responses;
                    let own = responses.get(g.status);
                    if own.is_some_and(answers_other_than_the_error_envelope) {
                        continue;
                    }
                    if ALWAYS_GENERIC.contains(&g.status) || own.is_none() {
                        responses.insert(
                            g.status.to_string(),
                            RefOr::Ref(Ref::from_response_name(g.name)),
                        );
                    }
                }
            }
        }
    }
}

/// Response links that several operations' answers carry alike, declared here once rather than
/// on each route (a route's own `links(...)` stay on the route): where a tax registration goes
/// after either create, and from an entry of either list of a webhook endpoint to the retry of
/// its message.
struct SharedLinks;

/// A link: its name, the operation it leads to, and its parameters (name, expression).
type SharedLink<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

impl SharedLinks {
    /// Adds `links` (name, target operation, parameters) to the answer `status` of the
    /// operation `operation_id`.
    fn add(
        openapi: &mut utoipa::openapi::OpenApi,
        operation_id: &str,
        status: &str,
        links: &[SharedLink],
    ) {
        use utoipa::openapi::RefOr;
        use utoipa::openapi::link::LinkBuilder;
        let answer = openapi
            .paths
            .paths
            .values_mut()
            .flat_map(|item| {
                [
                    &mut item.get,
                    &mut item.put,
                    &mut item.post,
                    &mut item.delete,
                    &mut item.patch,
                ]
            })
            .flatten()
            .find(|op| op.operation_id.as_deref() == Some(operation_id))
            .and_then(|op| op.responses.responses.get_mut(status));
        let Some(RefOr::T(answer)) = answer else {
            panic!("no answer {status} of {operation_id} to link from");
        };
        for (name, target, parameters) in links {
            let link = parameters
                .iter()
                .fold(LinkBuilder::new().operation_id(*target), |l, (p, v)| {
                    l.parameter(*p, *v)
                });
            answer
                .links
                .insert((*name).to_string(), RefOr::T(link.build()));
        }
    }
}

impl Modify for SharedLinks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let case = &[(
            "tax_registration_id",
            "$response.body#/response/tax_registration_id",
        )][..];
        for create in [
            "create_tax_registration",
            "create_gbr_tax_registration",
            "create_sole_proprietor_tax_registration",
        ] {
            let next = [
                ("GetTaxRegistration", "get_tax_registration", case),
                ("SandboxTransition", "sandbox_transition_tax", case),
                ("SandboxAssignTaxOffice", "sandbox_assign_tax_office", case),
            ];
            Self::add(openapi, create, "201", &next);
        }
        for (list, message_id) in [
            (
                "list_webhook_deliveries",
                "$response.body#/response/deliveries/0/message_id",
            ),
            (
                "list_webhook_messages",
                "$response.body#/response/messages/0/message_id",
            ),
        ] {
            let retry = &[
                ("endpoint_id", "$request.path.endpoint_id"),
                ("message_id", message_id),
            ][..];
            Self::add(
                openapi,
                list,
                "200",
                &[("RetryMessage", "retry_webhook_message", retry)],
            );
        }
    }
}

/// utoipa 5.5 writes a response link's operation as `operation_id`, which no reader knows; the
/// specification's name is `operationId`. Moves it there (a test checks every link).
struct LinkOperationIds;

impl Modify for LinkOperationIds {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::RefOr;
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                for response in op.responses.responses.values_mut() {
                    let RefOr::T(response) = response else {
                        continue;
                    };
                    for link in response.links.values_mut() {
                        let RefOr::T(link) = link else { continue };
                        if link.operation_id.is_empty() {
                            continue;
                        }
                        let id = std::mem::take(&mut link.operation_id);
                        link.extensions
                            .get_or_insert_with(Default::default)
                            .insert("operationId".into(), id.into());
                    }
                }
            }
        }
    }
}

pub mod examples;
pub mod responses;
mod webhook_section;

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The document at `/openapi.json` and the reference at `/docs/`, which loads the document by a
/// relative address (`../openapi.json` from `/docs/`), so that both work behind a reverse proxy
/// that serves the service under a path prefix.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .merge(
            SwaggerUi::new("/docs")
                .url("/openapi.json", document())
                .config(utoipa_swagger_ui::Config::from("../openapi.json")),
        )
        .layer(axum::middleware::map_response(reference_headers))
}

/// The reference page's policy. It shares the console's origin, so a script on it could read
/// console pages with an operator's cookie: only the page's own files run (no inline or
/// injected script, no `eval`), it loads nothing from elsewhere, talks only to this origin (the
/// document, "Try it out"), and no page may frame it. Swagger UI sets style attributes and
/// draws its icons from `data:` images, hence those two allowances (docs/adr/0030).
pub const REFERENCE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                                 img-src 'self' data:; font-src 'self' data:; connect-src 'self'; \
                                 form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

async fn reference_headers(mut res: axum::response::Response) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    let h = res.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, REFERENCE_CSP),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (
            header::HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    res
}
