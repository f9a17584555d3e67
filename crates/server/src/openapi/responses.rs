//! The error responses that many routes document in the same words, declared once: a route
//! lists the type in its `responses(...)` (`responses((status = 200, ...), OperatorForbidden,
//! CaseNotFound)`), and the document gets the same entry it would from the tuple, the error
//! envelope under that status with that description. What a route says in its own words stays
//! a tuple on the route, and so does every success answer: utoipa adds a body's schema to the
//! document's components only from a route's own tuple (the error envelope has many).

use crate::envelope::Envelope;
use crate::error::ErrorBody;

/// One response type per entry: `Name: status, "description";`.
macro_rules! error_responses {
    ($($name:ident: $status:tt, $description:tt;)*) => {$(
        #[doc = concat!("`", stringify!($status), "`: ", $description)]
        #[derive(utoipa::IntoResponses)]
        #[response(status = $status, description = $description)]
        #[allow(dead_code)] // documents the answer; the handlers answer through `ApiError`
        pub struct $name(Envelope<ErrorBody>);
    )*};
}

error_responses! {
    InvalidJson: 400, "`INVALID_JSON`";
    OperatorForbidden: 403, "Not an operator key (`FORBIDDEN`)";
    ProviderForbidden: 403, "Not a provider key (`FORBIDDEN`)";
    CaseNotFound: 404, "No such case (`NOT_FOUND`)";
    CaseNotVisible: 404, "No such case visible to the caller (`NOT_FOUND`)";
    OwnerNotFound: 404, "No such case or owner (`NOT_FOUND`)";
    SandboxCaseNotFound: 404, "No sandbox case of the caller with this id; production cases answer this too (`NOT_FOUND`)";
    CompanyNotFound: 404, "`COMPANY_NOT_FOUND`";
    CompanyNotVisible: 404, "No such company visible to the caller (`NOT_FOUND`)";
    EndpointNotFound: 404, "No such endpoint of the caller (`NOT_FOUND`)";
    CreateConflict: 409, "`COMPANY_ALREADY_REGISTERED`, `ENVIRONMENT_MISMATCH`, `DUPLICATE_ID` or `IDEMPOTENCY_KEY_IN_USE`";
    CaseListInvalid: 422, "`VALIDATION_FAILED`: unknown status or environment, bad cursor or limit";
    ListInvalid: 422, "`VALIDATION_FAILED`: every unknown parameter and bad value (status, environment, company id, time, cursor, limit)";
    ValidationFailed: 422, "`VALIDATION_FAILED`";
    CancelForbidden: 403, "Not the key of the provider that created the case: a client company's or an operator's (`FORBIDDEN`)";
    NotCancellable: 409, "`INVALID_STATE_TRANSITION`: the case went to the authority already, or is cancelled; the message names its status and the statuses a case is cancelled from";
    CreateValidationFailed: 422, "`VALIDATION_FAILED` (every broken field) or `IDEMPOTENCY_KEY_REUSED`";
}

/// Several of the above that a family of routes all answer, as one: `Name: [A, B, ...];`.
macro_rules! response_groups {
    ($($(#[doc = $doc:literal])* $name:ident: [$($part:ident),+];)*) => {$(
        $(#[doc = $doc])*
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
            > {
                let mut all = std::collections::BTreeMap::new();
                $(all.extend(<$part as utoipa::IntoResponses>::responses());)+
                all
            }
        }
    )*};
}

response_groups! {
    /// Either list of cases to work on (the page is each route's own entry, which makes the
    /// document list its schema).
    CaseListErrors: [OperatorForbidden, CaseListInvalid];
    /// An operator's route on a case.
    OperatorCaseErrors: [OperatorForbidden, CaseNotFound];
    /// An operator's route on an owner of a trade registration.
    OperatorOwnerErrors: [OperatorForbidden, OwnerNotFound];
    /// A provider's route on one of its webhook endpoints.
    EndpointErrors: [ProviderForbidden, EndpointNotFound];
    /// A provider's simulated step on one of its sandbox cases (a JSON body).
    SandboxCaseErrors: [InvalidJson, ProviderForbidden, SandboxCaseNotFound];
    /// The provider's cancellation of one of its cases.
    CancelErrors: [InvalidJson, CancelForbidden, CaseNotVisible, NotCancellable, ValidationFailed];
    /// The creates of a tax registration (UG, GmbH; GbR, eGbR).
    TaxCreateErrors: [
        InvalidJson,
        ProviderForbidden,
        CompanyNotFound,
        CreateConflict,
        CreateValidationFailed
    ];
}
