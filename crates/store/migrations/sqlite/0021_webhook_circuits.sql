-- Fair webhook delivery (docs/adr/0029-fair-webhook-delivery.md): each endpoint's circuit
-- breaker, shared by the instances, and the leased (in flight) messages that the claim counts
-- per endpoint and provider.

-- Failed attempts in a row (a delivered one sets it back to 0).
ALTER TABLE webhook_endpoints ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
-- NULL: closed. Later than now: open (nothing is claimed); passed: half open (one attempt).
ALTER TABLE webhook_endpoints ADD COLUMN circuit_open_until_us INTEGER;
-- Only messages an attempt is leased for (or was, by a worker that died) have a lease: a
-- small index, whatever the history.
CREATE INDEX webhook_messages_leased ON webhook_messages (endpoint_id, locked_until_us)
    WHERE locked_until_us IS NOT NULL;
