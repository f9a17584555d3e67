"""Schemathesis hooks for .ci/schemathesis (docs/testing.md, "API fuzzing").

Generated `Idempotency-Key` values repeat a lot ("0", "00", ...), and the service rightly answers
a key sent again with another request with 422 IDEMPOTENCY_KEY_REUSED, and the same request
again with the first answer (docs/spec/decisions.md §3). Both are correct, but they hide what the request
itself would get: the "schema-valid request rejected" check fails on the 422, and a replayed
create names a resource a later step may have deleted. So every well-formed key is replaced by a
fresh one; malformed keys are sent as generated, so the 422 for them is still exercised.
Replays are tested in crates/server/tests/foundation.rs.
"""

import re
import uuid

import schemathesis

WELL_FORMED = re.compile(r"^[!-~]{1,255}$")


def _header(headers, name):
    for key in headers or {}:
        if key.lower() == name.lower():
            return key
    return None


@schemathesis.hook
def before_call(context, case, kwargs):
    key = _header(case.headers, "Idempotency-Key")
    if key is None:
        return
    value = case.headers[key]
    if not isinstance(value, str) or not WELL_FORMED.match(value):
        return
    case.headers[key] = f"st-{uuid.uuid4()}"
