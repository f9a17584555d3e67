//! The application layer: each use case of a case, once. The HTTP handlers (`routes`) extract a
//! request, call one function here and shape its answer; the operator API, the sandbox and the
//! provider's own steps call the same functions.
//!
//! - [`trade::create_trade`], [`tax::create_tax`] (a corporation's or a partnership's): a new
//!   case with its documents, in one transaction.
//! - [`steps::apply_step`]: every lifecycle step, whoever takes it (the rules of who may take
//!   which step are `domain::lifecycle::Role`'s).
//! - [`offices`]: the trade office of a case; [`trade_patch`]: an operator's changes to a trade
//!   case, its office among them; [`tax::assign_office`] for a tax office.
//! - [`identity`]: an operator's record (or removal) of an owner's identity verification.
//! - [`cancel`]: the provider withdraws a case before it reaches the authority.
//! - [`kind`]: the kinds of case ([`kind::CaseKindOps`]), over which [`access::case`] and
//!   [`cancel::cancel`] are one generic function each.
//! - [`access`]: which caller may see or act on a case; [`lists`]: the cases a caller lists.
//!
//! Nothing here knows HTTP beyond the service's one error type, [`crate::error::ApiError`].

pub mod access;
pub mod api_keys;
pub mod cancel;
pub mod documents;
pub mod identity;
pub mod kind;
pub mod kinds;
pub mod lists;
pub mod offices;
pub mod pending_xml;
pub mod sandbox;
pub mod steps;
pub mod tax;
pub mod tax_xml;
pub mod trade;
pub mod trade_patch;
pub mod webhook_endpoints;

/// The outcome of a create that committed, or whose `Idempotency-Key` claim another request
/// took over before it committed (nothing was written; the key is the other request's).
#[derive(Debug)]
pub enum Written<T> {
    Created(T),
    ClaimLost,
}
