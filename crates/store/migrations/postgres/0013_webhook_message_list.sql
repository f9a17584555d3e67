-- An endpoint's messages, newest first (`GET /v1/webhook-endpoints/{id}/messages`): the due and
-- per-case indexes hold pending messages only.
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, seq);
