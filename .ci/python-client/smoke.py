"""A create, a read, a download and two errors through the client generated from the served
OpenAPI document (.ci/python-client/run). Fails with a message on the first surprise.

Environment: API (the server), KEY (a provider key restricted to the sandbox), EXAMPLES (the
repository's examples/ folder).
"""

import copy
import hashlib
import json
import os
import sys
import uuid
from urllib.parse import parse_qs, urlparse

from filing_client import AuthenticatedClient
from filing_client.api.documents import content
from filing_client.api.trade_registration import (
    create_trade_registration,
    get_trade_registration,
)
from filing_client.models import (
    EnvelopeCreateResponse,
    EnvelopeErrorBody,
    EnvelopeTradeRegistrationResponse,
    TradeRegistrationRequest,
)


def expect(condition, what, got):
    if not condition:
        sys.exit(f"python client: expected {what}, got {got!r}")
    print(f"ok: {what}")


client = AuthenticatedClient(base_url=os.environ["API"], token=os.environ["KEY"])
with open(os.path.join(os.environ["EXAMPLES"], "trade-registration-self.json"), encoding="utf-8") as f:
    example = json.load(f)

# A create, through the generated model of the request.
created = create_trade_registration.sync_detailed(
    client=client,
    body=TradeRegistrationRequest.from_dict(example),
    idempotency_key=str(uuid.uuid4()),
)
expect(created.status_code == 201, "201 on create", (created.status_code, created.content[:500]))
expect(isinstance(created.parsed, EnvelopeCreateResponse), "a parsed create answer", created.parsed)
case_id = created.parsed.response.trade_registration_id
expect(str(created.parsed.response.status) == "form-rendered", "status form-rendered", created.parsed.response.status)

# A read.
read = get_trade_registration.sync_detailed(case_id, client=client)
expect(read.status_code == 200, "200 on read", (read.status_code, read.content[:500]))
expect(isinstance(read.parsed, EnvelopeTradeRegistrationResponse), "a parsed case", read.parsed)
documents = read.parsed.response.documents
expect(len(documents) == 1, "one document", documents)
doc = documents[0]

# A download: the signed link's query parameters, as the document declares them.
query = parse_qs(urlparse(doc.download_url).query)
downloaded = content.sync_detailed(
    doc.id, client=client, expires=int(query["expires"][0]), signature=query["signature"][0]
)
expect(downloaded.status_code == 200, "200 on download", (downloaded.status_code, downloaded.content[:300]))
body = downloaded.parsed
expect(isinstance(body, bytes) and body.startswith(b"%PDF-"), "the PDF's bytes", type(body))
expect(hashlib.sha256(body).hexdigest() == doc.sha256, "the sha256 the case names", doc.sha256)
expect(len(body) == doc.size, "the size the case names", (len(body), doc.size))

# Errors: a case that does not exist, and a request with two broken fields.
missing = get_trade_registration.sync_detailed(uuid.uuid4(), client=client)
expect(missing.status_code == 404, "404 for a case that does not exist", missing.status_code)
expect(isinstance(missing.parsed, EnvelopeErrorBody), "a parsed error body", missing.parsed)
expect(str(missing.parsed.response.result) == "error", 'result "error"', missing.parsed.response.result)
expect(str(missing.parsed.response.code) == "NOT_FOUND", "code NOT_FOUND", missing.parsed.response.code)

broken = copy.deepcopy(example)
broken["name"] = "Zweite Mustermann GmbH"
broken["owners"][0]["dob"] = "2999-01-01"
broken["owners"][0]["email"] = "not an address"
invalid = create_trade_registration.sync_detailed(
    client=client, body=TradeRegistrationRequest.from_dict(broken), idempotency_key=str(uuid.uuid4())
)
expect(invalid.status_code == 422, "422 for broken fields", (invalid.status_code, invalid.content[:500]))
expect(isinstance(invalid.parsed, EnvelopeErrorBody), "a parsed error body", invalid.parsed)
fields = sorted(e.field for e in invalid.parsed.response.errors)
expect(fields == ["owners[0].dob", "owners[0].email"], "both broken fields named", fields)
print("python client: create, read, download and errors as documented")
