//! The store tests of the webhook claim (`webhooks.rs`, `text.rs`'s `claim_messages`) that both
//! backends run through [`backend_webhook_tests!`]: limits in flight, round robin, circuits.

use std::collections::HashMap;

use uuid::Uuid;

use crate::{AttemptOutcome, CircuitRule, ClaimLimits, EndpointCircuit, WebhookAttempt, micros};

/// This module's store tests, as tests of one backend (as `list_tests::backend_list_tests!`).
macro_rules! backend_webhook_tests {
    ($run:path $(, #[$attr:meta])*) => {
        $crate::sql::webhook_tests::backend_webhook_tests!(
            @each $run [$(#[$attr])*]
            claims_round_robin_within_the_limits_and_circuits
        );
    };
    (@each $run:path [$($attr:tt)*] $test:ident $($rest:ident)*) => {
        $($attr)*
        #[tokio::test]
        async fn $test() {
            $run(|repo| Box::pin($crate::sql::webhook_tests::$test(repo))).await;
        }
        $crate::sql::webhook_tests::backend_webhook_tests!(@each $run [$($attr)*] $($rest)*);
    };
    (@each $run:path [$($attr:tt)*]) => {};
}
pub(crate) use backend_webhook_tests;

/// A new endpoint of `provider` for every event.
async fn endpoint(repo: &dyn crate::Repository, provider: Uuid) -> Uuid {
    let e = crate::WebhookEndpoint {
        id: Uuid::now_v7(),
        provider_id: provider,
        url: "https://hooks.example.com/filing".into(),
        events: None,
        secret: "whsec_c2VjcmV0".into(),
        previous_secret: None,
        previous_secret_expires_at: None,
        created_at: crate::sqlite::tests::micros(time::OffsetDateTime::now_utc()),
        circuit: EndpointCircuit::default(),
    };
    assert!(repo.create_webhook_endpoint(&e, 20).await.unwrap());
    e.id
}

/// The claimed messages by endpoint.
fn per_endpoint(claimed: &[crate::ClaimedMessage]) -> HashMap<Uuid, usize> {
    let mut n = HashMap::new();
    for m in claimed {
        *n.entry(m.endpoint.id).or_default() += 1;
    }
    n
}

/// Provider B's three endpoints have the older backlog (four cases each), A's one endpoint
/// two cases. A claim of three places takes one of A's beside two of B's (the oldest three
/// would all be B's); the next claims keep two per endpoint and five per provider in flight
/// (leases of before counted); an endpoint whose circuit opened gets none (its place goes to another of
/// B's), half open one,
/// and a delivery closes it.
pub(crate) async fn claims_round_robin_within_the_limits_and_circuits(
    repo: &dyn crate::Repository,
) {
    let b = repo.create_provider("B").await.unwrap().id;
    let a = repo.create_provider("A").await.unwrap().id;
    let bs = [
        endpoint(repo, b).await,
        endpoint(repo, b).await,
        endpoint(repo, b).await,
    ];
    let ea = endpoint(repo, a).await;
    for _ in 0..4 {
        let case = crate::sqlite::tests::trade_case(b);
        repo.create_trade_registration(&case).await.unwrap();
    }
    for _ in 0..2 {
        let case = crate::sqlite::tests::trade_case(a);
        repo.create_trade_registration(&case).await.unwrap();
    }
    let far = micros(time::OffsetDateTime::now_utc()) + 3_600_000_000;
    let lease = far + 60_000_000;
    let limits = |total| ClaimLimits {
        total,
        per_endpoint: 2,
        per_provider: 5,
    };
    let of = |claimed: &[crate::ClaimedMessage], p: Uuid| {
        claimed
            .iter()
            .filter(|m| m.endpoint.provider_id == p)
            .count()
    };

    let first = repo
        .claim_webhook_messages(far, lease, limits(3))
        .await
        .unwrap();
    assert_eq!((of(&first, b), of(&first, a)), (2, 1), "{first:?}");
    assert!(per_endpoint(&first).values().all(|n| *n == 1), "{first:?}");

    let second = repo
        .claim_webhook_messages(far, lease, limits(100))
        .await
        .unwrap();
    assert_eq!((of(&second, b), of(&second, a)), (3, 1), "{second:?}");
    let mut in_flight = per_endpoint(&first);
    for (e, n) in per_endpoint(&second) {
        *in_flight.entry(e).or_default() += n;
    }
    assert_eq!(in_flight[&ea], 2);
    assert_eq!(
        bs.iter()
            .map(|e| in_flight.get(e).copied().unwrap_or(0))
            .sum::<usize>(),
        5
    );
    assert!(in_flight.values().all(|n| *n <= 2), "{in_flight:?}");
    assert!(
        repo.claim_webhook_messages(far, lease, limits(100))
            .await
            .unwrap()
            .is_empty(),
        "every endpoint or provider at its limit"
    );

    // One of b1's messages fails and opens its circuit (one failure in a row suffices here);
    // it is due again at once, but b1 gets nothing while the circuit is open.
    let b1 = bs[0];
    let failed = first
        .iter()
        .chain(&second)
        .find(|m| m.endpoint.id == b1)
        .unwrap();
    let attempt = |m: &crate::ClaimedMessage| WebhookAttempt {
        message_id: m.id,
        endpoint_id: m.endpoint.id,
        attempt: m.attempts + 1,
        at: time::OffsetDateTime::now_utc(),
        status_code: Some(500),
        error: Some("HTTP 500".into()),
        duration_ms: 3,
    };
    let open_until = far + 3_600_000_000;
    let rule = CircuitRule {
        open_after: 1,
        open_until_us: open_until,
    };
    let after = repo
        .record_webhook_attempt(&attempt(failed), AttemptOutcome::RetryAt(far), rule)
        .await
        .unwrap();
    assert_eq!(
        after,
        EndpointCircuit {
            consecutive_failures: 1,
            open_until_us: Some(open_until)
        }
    );
    let stored = repo.get_webhook_endpoint(b1).await.unwrap().unwrap();
    assert_eq!(stored.circuit, after);
    assert_eq!(stored.circuit.state(far), crate::CircuitState::Open);
    let third = repo
        .claim_webhook_messages(far, lease, limits(100))
        .await
        .unwrap();
    // The place it freed goes to b3 (one in flight), not to b1, nor b2 (two).
    assert_eq!(
        per_endpoint(&third),
        HashMap::from([(bs[2], 1)]),
        "{third:?}"
    );

    // After the cool-down (every lease of before has run out too): b1 is half open and takes
    // one, the others two each, within B's five.
    let later = open_until + 1;
    let fourth = repo
        .claim_webhook_messages(later, later + 60_000_000, limits(100))
        .await
        .unwrap();
    let n = per_endpoint(&fourth);
    assert_eq!(n.get(&b1), Some(&1), "{fourth:?}");
    assert_eq!((of(&fourth, b), of(&fourth, a)), (5, 2), "{fourth:?}");
    let trial = fourth.iter().find(|m| m.endpoint.id == b1).unwrap();
    assert_eq!(
        trial.endpoint.circuit.state(later),
        crate::CircuitState::HalfOpen
    );
    let after = repo
        .record_webhook_attempt(&attempt(trial), AttemptOutcome::Delivered, rule)
        .await
        .unwrap();
    assert_eq!(after, EndpointCircuit::default(), "a delivery closes it");
    let stored = repo.get_webhook_endpoint(b1).await.unwrap().unwrap();
    assert_eq!(stored.circuit.state(later), crate::CircuitState::Closed);
}
