//! A case create as both backends' create paths take it (`sqlite/write.rs` on a blocking
//! thread, `postgres/create.rs` in one statement), and what either kind of case has for the
//! statements they share.

use crate::{
    CaseHead, DocumentRecord, IdempotentAnswer, NewClientCompany, NewTaxRegistration,
    NewTradeRegistration, StatusChange,
};

/// A case create, owned so that it can move to a blocking thread.
pub(crate) enum NewCase {
    Trade(Box<NewTradeRegistration>),
    Tax(Box<NewTaxRegistration>),
}

/// What either kind of case has, for the statements both kinds share (`sqlite/write.rs`,
/// `postgres/create.rs`).
pub(crate) struct Common<'a> {
    pub id: uuid::Uuid,
    /// The id the provider knows the case by (a trade registration's is its key).
    pub public_id: uuid::Uuid,
    pub kind: crate::CaseKind,
    pub provider_id: uuid::Uuid,
    pub company_id: uuid::Uuid,
    pub environment: &'static str,
    pub record: &'a serde_json::Value,
    pub new_company: Option<&'a (uuid::Uuid, NewClientCompany)>,
    pub created_at: time::OffsetDateTime,
    pub documents: &'a [DocumentRecord],
    pub history: &'a [StatusChange],
    pub idempotency: Option<&'a IdempotentAnswer>,
}

impl NewCase {
    pub(crate) fn common(&self) -> Common<'_> {
        match self {
            NewCase::Trade(t) => Common::of(
                &t.head,
                t.id,
                t.new_company.as_ref(),
                t.idempotency.as_ref(),
            ),
            NewCase::Tax(t) => Common::of(
                &t.head,
                t.public_id,
                t.new_company.as_ref(),
                t.idempotency.as_ref(),
            ),
        }
    }
}

impl<'a> Common<'a> {
    /// The head of a case of either kind, with what its create writes beside it.
    fn of<S: Into<domain::case_state::CaseStatus> + Copy, P>(
        head: &'a CaseHead<S, P>,
        public_id: uuid::Uuid,
        new_company: Option<&'a (uuid::Uuid, NewClientCompany)>,
        idempotency: Option<&'a IdempotentAnswer>,
    ) -> Self {
        Common {
            id: head.id,
            public_id,
            kind: head.status.into().kind(),
            provider_id: head.provider_id,
            company_id: head.company_id,
            environment: head.environment.as_str(),
            record: &head.record,
            new_company,
            created_at: head.created_at,
            documents: &head.documents,
            history: &head.history,
            idempotency,
        }
    }
}
