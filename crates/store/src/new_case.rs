//! A case create as both backends' create paths take it (`sqlite/write.rs` on a blocking
//! thread, `postgres/create.rs` in one statement), and what either kind of case has for the
//! statements they share.

use crate::{
    DocumentRecord, IdempotentAnswer, NewClientCompany, NewTaxRegistration, NewTradeRegistration,
    StatusChange,
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
        // The two kinds name these fields alike; one list for both.
        macro_rules! common {
            ($t:expr, $kind:expr, $public_id:expr) => {
                Common {
                    id: $t.id,
                    public_id: $public_id,
                    kind: $kind,
                    provider_id: $t.provider_id,
                    company_id: $t.company_id,
                    environment: $t.environment.as_str(),
                    record: &$t.record,
                    new_company: $t.new_company.as_ref(),
                    created_at: $t.created_at,
                    documents: &$t.documents,
                    history: &$t.history,
                    idempotency: $t.idempotency.as_ref(),
                }
            };
        }
        match self {
            NewCase::Trade(t) => common!(t, crate::CaseKind::Trade, t.id),
            NewCase::Tax(t) => common!(t, crate::CaseKind::Tax, t.public_id),
        }
    }
}
