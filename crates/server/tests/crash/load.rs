//! The load: the creates it sends (fixtures, attempts) and the ledger of their answers.

use super::*;

/// The example payloads and the PDF owner 0 uploads.
pub(crate) struct Fixtures {
    pub(crate) payloads: HashMap<&'static str, Value>,
    pub(crate) signed_pdf: Vec<u8>,
}

impl Fixtures {
    pub(crate) fn load() -> Self {
        use domain::rule_cases::example;
        let mut upload = example("assisted");
        upload["owners"][0]["documents"] = serde_json::json!({"gewa_1": {"file": "signed0"}});
        upload["owners"][0]["signatures"]
            .as_object_mut()
            .expect("signatures")
            .remove("gewa_1");
        let signed_pdf = common::signed_gewa1_pdf();
        let payloads = HashMap::from([
            ("self", example("self")),
            ("upload", upload),
            ("gmbh", example("gmbh")),
            ("gbr", example("gbr")),
        ]);
        Fixtures {
            payloads,
            signed_pdf,
        }
    }

    /// A create of `kind` marked with `reference` (its `client_reference`).
    pub(crate) fn attempt(
        &self,
        kind: Kind,
        reference: String,
        idempotency_key: Option<String>,
        provider_key: &str,
    ) -> Attempt {
        let name = match kind {
            Kind::TradeSelf => "self",
            Kind::TradeUpload => "upload",
            Kind::TaxGmbh => "gmbh",
            Kind::TaxGbr => "gbr",
        };
        let mut data = self.payloads[name].clone();
        data["client_reference"] = Value::from(reference.clone());
        Attempt {
            kind,
            reference,
            idempotency_key,
            provider_key: provider_key.to_string(),
            data: Arc::new(data.to_string()),
        }
    }
}

/// One create as sent; kept so that a retry sends the same request.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub(crate) kind: Kind,
    pub(crate) reference: String,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) provider_key: String,
    /// The payload, serialised once: a retry sends the same bytes.
    pub(crate) data: Arc<String>,
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) replayed: bool,
    pub(crate) body: Value,
}

impl Attempt {
    /// `Err` when no complete answer came back.
    pub(crate) async fn send(
        &self,
        client: &reqwest::Client,
        base: &str,
        fixtures: &Fixtures,
    ) -> Result<Answer, reqwest::Error> {
        let mut rb = client
            .post(format!("{base}{}", self.kind.create_path()))
            .bearer_auth(&self.provider_key);
        if let Some(key) = &self.idempotency_key {
            rb = rb.header("idempotency-key", key);
        }
        rb = if self.kind == Kind::TradeUpload {
            let form = Form::new().text("data", self.data.to_string()).part(
                "signed0",
                Part::bytes(fixtures.signed_pdf.clone())
                    .file_name("signed0.pdf")
                    .mime_str("application/pdf")?,
            );
            rb.multipart(form)
        } else {
            rb.header("content-type", "application/json")
                .body(self.data.to_string())
        };
        let res = rb.send().await?;
        let status = res.status().as_u16();
        let replayed = res
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        let bytes = res.bytes().await?;
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            Value::from(format!("(not JSON) {}", String::from_utf8_lossy(&bytes)))
        });
        Ok(Answer {
            status,
            replayed,
            body,
        })
    }
}

/// A create that answered 201.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    pub(crate) attempt: Attempt,
    pub(crate) id: Uuid,
    pub(crate) status: String,
    pub(crate) round: usize,
}

/// What a create that got no answer turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Not known yet (without a key: decided by what the lists show).
    Open,
    /// Retried with its key: the retry answered 409 `IDEMPOTENCY_KEY_IN_USE` (the killed
    /// process's claim), so the create must not exist.
    KeyInUse,
    /// Retried with its key: 201 (replayed, or created by the retry).
    Retried { id: Uuid, replayed: bool },
}

#[derive(Debug, Clone)]
pub(crate) struct Unanswered {
    pub(crate) attempt: Attempt,
    pub(crate) round: usize,
    pub(crate) fate: Fate,
}

#[derive(Default)]
pub(crate) struct Ledger {
    pub(crate) created: Vec<Created>,
    pub(crate) unanswered: Vec<Unanswered>,
    /// Answers other than 201 from a running server: each is a failure.
    pub(crate) unexpected: Vec<String>,
    /// Every reference sent, with its kind.
    pub(crate) sent: HashMap<String, Kind>,
}

impl Ledger {
    pub(crate) fn record(
        &mut self,
        attempt: Attempt,
        result: Result<Answer, reqwest::Error>,
        round: usize,
    ) {
        self.sent.insert(attempt.reference.clone(), attempt.kind);
        match result {
            Ok(a) if a.status == 201 => {
                let r = &a.body["response"];
                let id = r[attempt.kind.id_field()]
                    .as_str()
                    .and_then(|s| Uuid::parse_str(s).ok());
                match id {
                    Some(id) => self.created.push(Created {
                        status: r["status"].as_str().unwrap_or("").to_string(),
                        attempt,
                        id,
                        round,
                    }),
                    None => self.unexpected.push(format!(
                        "{}: 201 without an id: {}",
                        attempt.reference, a.body
                    )),
                }
            }
            Ok(a) => self.unexpected.push(format!(
                "{} ({:?}): answered {} {}",
                attempt.reference, attempt.kind, a.status, a.body
            )),
            Err(_) => self.unanswered.push(Unanswered {
                attempt,
                round,
                fate: Fate::Open,
            }),
        }
    }
}
