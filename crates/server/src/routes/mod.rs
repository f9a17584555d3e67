//! One module per resource; `public` routes need no key, `authenticated` ones do.

pub mod companies;
pub mod health;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::app::AppState;

pub fn public() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(health::healthz))
        .merge(crate::openapi::routes())
}

pub fn authenticated() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/companies/{company_id}", get(companies::get_company))
        .route(
            "/v1/companies/{company_id}/api-keys",
            post(companies::create_api_key),
        )
}
