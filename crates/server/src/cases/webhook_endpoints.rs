//! The use cases of a provider's webhook endpoints (docs/api/webhooks.md): who may manage them,
//! create (the URL's target checks, the event list), delete, rotate the secret and ping; the
//! routes (`routes::webhooks`) extract the request and shape the answer.

use std::time::Duration;

use domain::Violations;
use domain::auth::Caller;
use store::WebhookEndpoint;
use uuid::Uuid;

use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;
use crate::webhooks::target;

/// Endpoints one provider may have.
pub const MAX_ENDPOINTS: usize = 20;
/// How long the old secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: time::Duration = time::Duration::hours(24);

/// The calling provider. Endpoints receive the events of both environments, so a key restricted
/// to one (docs/adr/0021-environment-restricted-keys.md) may not manage them either: 403.
pub fn provider_only(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider {
            company_id,
            environment: None,
        } => Ok(company_id),
        Caller::Provider { .. } => Err(ApiError::Forbidden(
            "webhook endpoints receive the events of both environments: manage them with an unrestricted provider key".into(),
        )),
        _ => Err(ApiError::Forbidden(
            "only provider keys can manage webhook endpoints".into(),
        )),
    }
}

/// The caller's endpoint `id`; 404 for unknown, deleted and other providers' endpoints.
pub async fn own(state: &AppState, caller: Caller, id: Uuid) -> Result<WebhookEndpoint, ApiError> {
    let me = provider_only(caller)?;
    match state.repo.get_webhook_endpoint(id).await? {
        Some(e) if e.provider_id == me => Ok(e),
        _ => Err(ApiError::NotFound),
    }
}

/// Creates an endpoint of provider `me` for `url` and `events` (every event when `None`);
/// every broken rule in one 422 (a URL that is not http(s) or names, or resolves to, an address
/// that is not public; an empty or unknown event list), 409 `WEBHOOK_ENDPOINT_LIMIT` beyond
/// [`MAX_ENDPOINTS`]. Returns the endpoint and its secret (shown once).
pub async fn create(
    state: &AppState,
    me: Uuid,
    url: String,
    events: Option<Vec<String>>,
) -> Result<(WebhookEndpoint, String), ApiError> {
    let mut errs = Violations::new();
    let allow_private = state.config.webhooks.allow_private_targets;
    // As sent: the document's pattern allows no surrounding spaces, so none are trimmed away.
    match target::check_url(&url, allow_private) {
        Ok(parsed) => {
            if !allow_private
                && let Some(problem) =
                    resolves_privately(&state.config.webhooks.lookup, &parsed).await
            {
                errs.push("url", "private_target", problem);
            }
        }
        Err(problem) => errs.push("url", "invalid_url", problem),
    }
    let events = match events {
        None => None,
        Some(list) if list.is_empty() => {
            errs.push(
                "events",
                "empty",
                "must name at least one event type, or be left out for all",
            );
            None
        }
        Some(list) => {
            let mut kept: Vec<String> = Vec::new();
            for (i, e) in list.iter().enumerate() {
                if !domain::webhook::event_types().contains(&e.as_str()) {
                    errs.push(
                        format!("events[{i}]"),
                        "unknown_event",
                        format!(
                            "unknown event type; known: {}",
                            domain::webhook::event_types().join(", ")
                        ),
                    );
                } else if !kept.contains(e) {
                    kept.push(e.clone());
                }
            }
            Some(kept)
        }
    };
    errs.finish(())?;
    let id = Uuid::now_v7();
    let secret = crate::webhooks::new_secret();
    let key = &state.config.webhooks.sealing;
    let endpoint = WebhookEndpoint {
        id,
        provider_id: me,
        url,
        events,
        secret: crate::webhooks::seal(key, id, &secret),
        previous_secret: None,
        previous_secret_expires_at: None,
        created_at: crate::clock::now_micros(),
        circuit: Default::default(),
    };
    if !state
        .repo
        .create_webhook_endpoint(&endpoint, MAX_ENDPOINTS)
        .await?
    {
        return Err(ApiError::Conflict {
            code: ErrorCode::WebhookEndpointLimit,
            message: format!(
                "a provider can have at most {MAX_ENDPOINTS} webhook endpoints; delete one first"
            ),
        });
    }
    tracing::info!(endpoint_id = %endpoint.id, provider_id = %me, "webhook endpoint created");
    Ok((endpoint, secret))
}

/// Deletes the caller's endpoint `id`; its undelivered messages are given up.
pub async fn delete(state: &AppState, caller: Caller, id: Uuid) -> Result<(), ApiError> {
    own(state, caller, id).await?;
    if !state
        .repo
        .delete_webhook_endpoint(id, crate::clock::now_micros())
        .await?
    {
        return Err(ApiError::NotFound);
    }
    tracing::info!(endpoint_id = %id, "webhook endpoint deleted");
    Ok(())
}

/// Replaces the signing secret of the caller's endpoint `id`; the old one keeps signing for
/// [`ROTATION_OVERLAP`]. Returns the new secret and when the old one stops.
pub async fn rotate_secret(
    state: &AppState,
    caller: Caller,
    id: Uuid,
) -> Result<(String, time::OffsetDateTime), ApiError> {
    own(state, caller, id).await?;
    let secret = crate::webhooks::new_secret();
    let sealed = crate::webhooks::seal(&state.config.webhooks.sealing, id, &secret);
    let until = crate::clock::now_micros() + ROTATION_OVERLAP;
    if !state.repo.rotate_webhook_secret(id, &sealed, until).await? {
        return Err(ApiError::NotFound);
    }
    tracing::info!(endpoint_id = %id, "webhook secret rotated");
    Ok((secret, until))
}

/// Sends a signed `ping` to the caller's endpoint `id` now: what was sent and whether the
/// receiver answered 2xx.
pub async fn ping(
    state: &AppState,
    caller: Caller,
    id: Uuid,
) -> Result<(crate::webhooks::PingOutcome, bool), ApiError> {
    let endpoint = own(state, caller, id).await?;
    let sent = crate::webhooks::ping(state, &endpoint)
        .await
        .map_err(ApiError::Internal)?;
    let delivered = sent.status_code.is_some_and(|c| (200..300).contains(&c));
    tracing::info!(endpoint_id = %id, status_code = ?sent.status_code, delivered, "webhook endpoint pinged");
    Ok((sent, delivered))
}

/// A host name that resolves to a private address is refused now (deliveries check again);
/// one that does not resolve (yet) is accepted, and its deliveries fail until it does. The
/// answer does not say which address the name resolved to: that would let a provider map the
/// operator's internal DNS.
async fn resolves_privately(lookup: &target::Lookup, url: &reqwest::Url) -> Option<String> {
    let Some(url::Host::Domain(host)) = url.host() else {
        return None;
    };
    let addrs = tokio::time::timeout(Duration::from_secs(3), lookup.resolve(host))
        .await
        .ok()?
        .ok()?;
    addrs.into_iter().any(|ip| !target::is_public(ip)).then(|| {
        format!(
            "must name a public host; {host} resolves to an address that is not public \
             (private targets are not allowed here)"
        )
    })
}
