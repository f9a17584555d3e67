#!/usr/bin/env bash
# The README's walk-through, as a script: every command the README shows, in its order, with the
# variables captured from the answers. `check` lines (not in the README) stop the script at the
# first answer that differs from what the README promises. A test
# (crates/server/tests/readme.rs) keeps the README's commands and these lines the same, and CI
# (.ci/walkthrough) runs this script against a fresh server.
#
# Run it yourself against a server started as the README says
#   FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS=true cargo run --release
# from the repository's root: bash examples/walkthrough.sh
# Settings (environment): API (default http://127.0.0.1:8080), FILING_BIN (the `filing` binary;
# default target/release/filing), WEBHOOK_PORT (the example receiver's, default 8090),
# Needs curl, jq and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
RECEIVER_PID=""
trap '[ -z "$RECEIVER_PID" ] || kill "$RECEIVER_PID" 2>/dev/null || true' EXIT

# check JSON FILTER: the walk-through goes on only when the jq FILTER holds for the answer JSON.
check() {
  if ! jq -e "$2" >/dev/null 2>&1 <<<"$1"; then
    printf 'walk-through: the answer does not satisfy %s:\n%s\n' "$2" "$(head -c 3000 <<<"$1")" >&2
    exit 1
  fi
}
step() { printf '\n## %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
# From here on, every line that is not a comment, blank, `check` or `step` is in the README.

step "Set-up"
API=${API:-http://127.0.0.1:8080}
filing() { "${FILING_BIN:-target/release/filing}" "$@"; }
new_key() { cat /proc/sys/kernel/random/uuid; }
TMP=$(mktemp -d)

step "1. A provider company and its keys"
PROVIDER=$(filing providers create --name "Gründerplattform GmbH" --environment sandbox)
echo "$PROVIDER" | jq .
check "$PROVIDER" '.restricted_api_key | startswith("rfs_prv_test_")'
KEY=$(echo "$PROVIDER" | jq -r .restricted_api_key)
LIVE_KEY=$(echo "$PROVIDER" | jq -r .api_key)
PROVIDER_ID=$(echo "$PROVIDER" | jq -r .company_id)
curl -s $API/v1/companies/$PROVIDER_ID -H "Authorization: Bearer $KEY" | jq .response
check "$(curl -s $API/v1/companies/$PROVIDER_ID -H "Authorization: Bearer $KEY")" '.response.type == "provider"'
curl -s $API/v1/companies/not-a-company -H "Authorization: Bearer $KEY" | jq .response
check "$(curl -s $API/v1/companies/not-a-company -H "Authorization: Bearer $KEY")" '.response.result == "error" and .response.code == "NOT_FOUND"'

step "2. A webhook endpoint, and a receiver on this machine"
ENDPOINT=$(curl -s -X POST $API/v1/webhook-endpoints -H "Authorization: Bearer $LIVE_KEY" \
  -H "Content-Type: application/json" \
  -d "{\"url\":\"http://127.0.0.1:${WEBHOOK_PORT:-8090}/hooks\"}")
echo "$ENDPOINT" | jq .response
check "$ENDPOINT" '.response.secret | startswith("whsec_")'
EP=$(echo "$ENDPOINT" | jq -r .response.id)
SECRET=$(echo "$ENDPOINT" | jq -r .response.secret)
python3 examples/webhook-receiver.py ${WEBHOOK_PORT:-8090} "$SECRET" > "$TMP/deliveries.jsonl" &
RECEIVER_PID=$!
sleep 1
PING=$(curl -s -X POST $API/v1/webhook-endpoints/$EP/test -H "Authorization: Bearer $LIVE_KEY")
echo "$PING" | jq .response
check "$PING" '.response.delivered == true and .response.status_code == 204'

step "3. Which office receives it"
curl -s "$API/v1/trade-offices?zip=54329&city=Konz" -H "Authorization: Bearer $KEY" | jq .response
curl -s "$API/v1/tax-offices?street=Schönhauser+Allee+10&zip=10119&city=Berlin&legal_form=gmbh" \
  -H "Authorization: Bearer $KEY" | jq .response
curl -s $API/v1/register-courts -H "Authorization: Bearer $KEY" | jq '.response.courts[:2]'

step "4. A trade registration"
CASE=$(curl -s -X POST $API/v1/trade-registration \
  -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
  -H "Idempotency-Key: $(new_key)" --data @examples/trade-registration-self.json)
echo "$CASE" | jq '.response | {result, status, trade_registration_id, company_id}'
check "$CASE" '.response.status == "form-rendered"'
ID=$(echo "$CASE" | jq -r .response.trade_registration_id)
CLIENT_COMPANY=$(echo "$CASE" | jq -r .response.company_id)
READ=$(curl -s $API/v1/trade-registration/$ID -H "Authorization: Bearer $KEY")
echo "$READ" | jq '.response | {environment, status, documents}'
check "$READ" '.response.environment == "sandbox" and .response.documents[0].type == "trade-licence-application"'
DOWNLOAD_URL=$(echo "$READ" | jq -r '.response.documents[0].download_url')
SHA256=$(echo "$READ" | jq -r '.response.documents[0].sha256')
curl -s -o "$TMP/gewa1.pdf" "$DOWNLOAD_URL"
echo "$SHA256  $TMP/gewa1.pdf" | sha256sum --check
curl -s "$API/v1/trade-registration?client_reference=KD-2025-0042" -H "Authorization: Bearer $KEY" | jq .response
check "$(curl -s "$API/v1/trade-registration?client_reference=KD-2025-0042" -H "Authorization: Bearer $KEY")" '.response.cases | length == 1'

step "5. The client company's own key"
CLIENT=$(curl -s -X POST $API/v1/companies/$CLIENT_COMPANY/api-keys \
  -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $(new_key)")
echo "$CLIENT" | jq .response
CLIENT_KEY=$(echo "$CLIENT" | jq -r .response.api_key)
curl -s $API/v1/trade-registration/$ID -H "Authorization: Bearer $CLIENT_KEY" | jq '.response.status'
check "$(curl -s $API/v1/trade-registration/$ID -H "Authorization: Bearer $CLIENT_KEY")" '.response.status == "form-rendered"'
curl -s $API/v1/companies/$CLIENT_COMPANY/api-keys -H "Authorization: Bearer $KEY" | jq .response
CLIENT_KEY_PREFIX=$(echo "$CLIENT" | jq -r .response.key_prefix)
curl -s -o /dev/null -w '%{http_code}\n' -X DELETE \
  $API/v1/companies/$CLIENT_COMPANY/api-keys/$CLIENT_KEY_PREFIX -H "Authorization: Bearer $KEY"
filing keys list --company $CLIENT_COMPANY | jq .
check "$(filing keys list --company $CLIENT_COMPANY)" '.api_keys == []'
check "$(curl -s $API/v1/trade-registration/$ID -H "Authorization: Bearer $CLIENT_KEY")" '.response.code == "UNAUTHORIZED"'

step "6. The owners filed the form themselves; the sandbox plays the trade office"
curl -s -X POST $API/v1/trade-registration/$ID/mark-submitted -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{}' | jq '.response.status'
curl -s -X POST $API/v1/sandbox/trade-registration/$ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"blocked","reason":"Personalausweis fehlt"}' | jq '.response.status'
curl -s -X POST $API/v1/sandbox/trade-registration/$ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"submitted"}' | jq '.response.status'
DONE=$(curl -s -X POST $API/v1/sandbox/trade-registration/$ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"completed"}')
echo "$DONE" | jq '.response | {status, previous_status, document}'
check "$DONE" '.response.status == "completed" and .response.document.type == "trade-licence"'

step "7. A trade registration with the GewA 1 the owner signed, withdrawn"
UPLOAD=$(curl -s -X POST $API/v1/trade-registration -H "Authorization: Bearer $KEY" \
  -H "Idempotency-Key: $(new_key)" \
  -F "data=<examples/trade-registration-upload.json;type=application/json" \
  -F "signed0=@examples/gewa1-signed.pdf;type=application/pdf")
echo "$UPLOAD" | jq '.response | {status, trade_registration_id}'
check "$UPLOAD" '.response.status == "form-rendered"'
UPLOAD_ID=$(echo "$UPLOAD" | jq -r .response.trade_registration_id)
CANCELLED=$(curl -s -X POST $API/v1/trade-registration/$UPLOAD_ID/cancel -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"reason":"Gründung abgesagt"}')
echo "$CANCELLED" | jq '.response | {status, documents: [.documents[] | {type, void}]}'
check "$CANCELLED" '.response.status == "cancelled" and .response.documents[0].void == true'

step "8. A tax registration (GmbH) with its articles of association, and the sandbox plays the tax office"
TAX=$(jq '.attachments = {articles_of_association: {file: "articles"}}' examples/tax-registration-gmbh.json \
  | curl -s -X POST $API/v1/tax-registration -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $(new_key)" \
  -F 'data=@-;type=application/json' -F 'articles=@examples/gesellschaftsvertrag.pdf;type=application/pdf')
echo "$TAX" | jq '.response | {result, message, status, tax_registration_id}'
check "$TAX" '.response.status == "validated"'
TAX_ID=$(echo "$TAX" | jq -r .response.tax_registration_id)
TAX_READ=$(curl -s $API/v1/tax-registration/$TAX_ID -H "Authorization: Bearer $KEY")
echo "$TAX_READ" | jq '.response | {tax_office, elster_xml: (.elster_xml | .not_in_xml |= map({field, sub_page, line})), documents: [.documents[] | .type]}'
check "$TAX_READ" '.response.elster_xml.status == "written" and ([.response.documents[].type] | index("articles-of-association") != null)'
curl -s -X POST $API/v1/sandbox/tax-registration/$TAX_ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"submitted"}' | jq '.response.status'
curl -s -X POST $API/v1/sandbox/tax-registration/$TAX_ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"rejected","reason":"Gesellschafterliste fehlt"}' | jq '.response.status'
curl -s -X POST $API/v1/sandbox/tax-registration/$TAX_ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"submitted"}' | jq '.response.status'
TAX_DONE=$(curl -s -X POST $API/v1/sandbox/tax-registration/$TAX_ID/transition -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"status":"completed"}')
echo "$TAX_DONE" | jq '.response | {status, tax_number}'
check "$TAX_DONE" '.response.status == "completed" and (.response.tax_number | length) == 13'

step "9. A tax registration (eGbR)"
EGBR=$(curl -s -X POST $API/v1/tax-registration/gbr -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -H "Idempotency-Key: $(new_key)" \
  --data @examples/tax-registration-egbr.json)
echo "$EGBR" | jq '.response | {status, legal_form, tax_office}'
check "$EGBR" '.response.status == "validated"'
curl -s "$API/v1/tax-registration?limit=50" -H "Authorization: Bearer $KEY" | jq '.response.cases'
check "$(curl -s "$API/v1/tax-registration?limit=50" -H "Authorization: Bearer $KEY")" '.response.cases | length == 2'
SOLE=$(curl -s -X POST $API/v1/tax-registration/sole-proprietor -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -H "Idempotency-Key: $(new_key)" \
  --data @examples/tax-registration-sole-proprietor.json)
echo "$SOLE" | jq '.response | {status, message}'
check "$SOLE" '.response.status == "validated"'
SOLE_ID=$(echo "$SOLE" | jq -r .response.tax_registration_id)
curl -s -X POST $API/v1/sandbox/tax-registration/$SOLE_ID/tax-office -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"tax_office_number":"5215"}' | jq '.response | {legal_form, tax_office: .tax_office.number, xml: .elster_xml.status, not_in_xml: [.elster_xml.not_in_xml[].field]}'
check "$(curl -s $API/v1/tax-registration/$SOLE_ID -H "Authorization: Bearer $KEY")" '.response.legal_form == "einzelunternehmen" and .response.elster_xml.status == "written" and .response.tax_office.number == "5215"'

step "10. Production: the unrestricted key, and operators"
curl -s -X POST $API/v1/trade-registration -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" --data @examples/production/trade-registration-assisted.json | jq .response
check "$(curl -s -X POST $API/v1/trade-registration -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" --data @examples/production/trade-registration-assisted.json)" '.response.code == "ENVIRONMENT_MISMATCH"'
LIVE=$(curl -s -X POST $API/v1/trade-registration -H "Authorization: Bearer $LIVE_KEY" \
  -H "Content-Type: application/json" -H "Idempotency-Key: $(new_key)" \
  --data @examples/production/trade-registration-assisted.json)
echo "$LIVE" | jq '.response | {status, message, trade_registration_id}'
check "$LIVE" '.response.status == "submitted"'
LIVE_ID=$(echo "$LIVE" | jq -r .response.trade_registration_id)
OP_KEY=$(filing operators create --name "Erika Bearbeiterin" | jq -r .api_key)
curl -s "$API/v1/operator/trade-registrations?status=submitted&limit=50" -H "Authorization: Bearer $OP_KEY" | jq .response
curl -s -X POST $API/v1/operator/trade-registrations/$LIVE_ID/transition -H "Authorization: Bearer $OP_KEY" \
  -H "Content-Type: application/json" -d '{"status":"blocked","reason":"Personalausweis fehlt"}' | jq '.response.status'
curl -s -X POST $API/v1/operator/trade-registrations/$LIVE_ID/owners/0/identity-verified \
  -H "Authorization: Bearer $OP_KEY" -H "Content-Type: application/json" -d '{}' | jq .response
curl -s -X POST $API/v1/operator/trade-registrations/$LIVE_ID/transition -H "Authorization: Bearer $OP_KEY" \
  -H "Content-Type: application/json" -d '{"status":"submitted"}' | jq '.response.status'
curl -s -X PATCH $API/v1/operator/trade-registrations/$LIVE_ID -H "Authorization: Bearer $OP_KEY" \
  -H "Content-Type: application/json" -d '{"city_fee":26.00,"is_paid":true}' | jq '.response | {city_fee, is_paid}'
LICENSED=$(curl -s -X POST $API/v1/operator/trade-registrations/$LIVE_ID/trade-licence \
  -H "Authorization: Bearer $OP_KEY" -F "file=@examples/gewerbeschein.pdf;type=application/pdf" \
  -F "reason=Gewerbeschein Nr. 4711")
echo "$LICENSED" | jq '.response | {status, document}'
check "$LICENSED" '.response.status == "completed"'
LIVE_TAX=$(curl -s -X POST $API/v1/tax-registration -H "Authorization: Bearer $LIVE_KEY" \
  -H "Content-Type: application/json" -H "Idempotency-Key: $(new_key)" \
  --data @examples/production/tax-registration-ug.json)
echo "$LIVE_TAX" | jq '.response | {status, message, tax_registration_id}'
LIVE_TAX_ID=$(echo "$LIVE_TAX" | jq -r .response.tax_registration_id)
curl -s $API/v1/tax-registration/$LIVE_TAX_ID -H "Authorization: Bearer $LIVE_KEY" | jq '.response.elster_xml'
check "$(curl -s $API/v1/tax-registration/$LIVE_TAX_ID -H "Authorization: Bearer $LIVE_KEY")" '.response.elster_xml.status == "pending"'

step "11. What the webhooks carried, and the event log"
sleep 2
cat "$TMP/deliveries.jsonl"
check "$(jq -s . "$TMP/deliveries.jsonl")" 'all(.[]; .verified) and any(.[]; .type == "registration.completed")'
curl -s $API/v1/webhook-endpoints/$EP/deliveries -H "Authorization: Bearer $LIVE_KEY" | jq '.response.deliveries | length'
curl -s "$API/v1/events?type=registration.completed&limit=50" -H "Authorization: Bearer $LIVE_KEY" | jq '.response.events'
check "$(curl -s "$API/v1/events?type=registration.completed&limit=50" -H "Authorization: Bearer $LIVE_KEY")" '.response.events | length == 2'
curl -s -X POST $API/v1/webhook-endpoints/$EP/rotate-secret -H "Authorization: Bearer $LIVE_KEY" | jq '.response | {secret}'
curl -s -o /dev/null -w '%{http_code}\n' -X DELETE $API/v1/webhook-endpoints/$EP -H "Authorization: Bearer $LIVE_KEY"
kill $RECEIVER_PID

step "done: every step answered as the README says"
