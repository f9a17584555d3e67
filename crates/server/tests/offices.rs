//! Which office receives a filing: the lookups, the operator-maintained directory, and the
//! determination at trade registration (GewA 1 head, `trade_office` in GET).

mod common;

use common::{Backend, Options, TestApp, assert_error, json, pdf_text};
use domain::rule_cases::example;
use serde_json::{Value, json};

async fn app(backend: Backend) -> TestApp {
    TestApp::spawn(backend).await.expect("backend available")
}

/// The example with its establishment moved to `zip city`.
fn located(zip: &str, city: &str) -> Value {
    let mut v = example("self");
    v["registered_office"]["zip"] = json!(zip);
    v["registered_office"]["city"] = json!(city);
    v
}

/// The example with its establishment at `street, zip city`.
fn located_at(street: &str, zip: &str, city: &str) -> Value {
    let mut v = located(zip, city);
    v["registered_office"]["street"] = json!(street);
    v
}

/// A tax request of `kind` (an example) with its seat at `street, zip city`, no office sent.
fn tax_at(kind: &str, street: &str, zip: &str, city: &str) -> Value {
    let mut v = example(kind);
    let seat = json!({"street": street, "zip": zip, "city": city, "country": "DE"});
    v["address"] = seat.clone();
    if v.get("business_address").is_some() {
        v["business_address"] = seat;
    }
    v.as_object_mut().unwrap().remove("tax_office_number");
    v
}

/// A query parameter's value, percent-encoded.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn tax_path(kind: &str) -> &'static str {
    if matches!(kind, "gbr" | "egbr") {
        "/v1/tax-registration/gbr"
    } else {
        "/v1/tax-registration"
    }
}

backend_tests! {
    async fn trade_office_lookup(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(app.get("/v1/trade-offices?zip=54298&city=Aach", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!(r["status"], "found");
        assert_eq!(r["office"]["key"], "072355007");
        assert_eq!(r["office"]["kind"], "verband");
        assert_eq!(r["office"]["name"], "Verbandsgemeinde Trier-Land");
        assert_eq!(r["office"]["municipality_key"], "07235001");

        let (s, b) = json(app.get("/v1/trade-offices?zip=54298", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(b["response"]["status"], "ambiguous");
        assert_eq!(b["response"]["candidates"].as_array().unwrap().len(), 7);
        assert!(b["response"].get("office").is_none());

        // A postal code that does not exist, a city of another postal code: refused, naming
        // the parameter (until 2026-12: 200 `not_found`, and 80331 "Berlin" got München's).
        for (q, field, code) in [
            ("zip=00000&city=Nirgendwo", "zip", "unknown_postal_code"),
            ("zip=99999", "zip", "unknown_postal_code"),
            ("zip=80331&city=Berlin", "city", "city_not_in_postal_code"),
        ] {
            for path in ["/v1/trade-offices", "/v1/tax-offices"] {
                let (s, b) = json(app.get(&format!("{path}?{q}"), Some(&key)).send().await.unwrap()).await;
                let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
                assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some(field), Some(code)), "{path}?{q}");
            }
        }
        // An Ortsteil named as city is not refused.
        let (s, b) = json(app.get("/v1/trade-offices?zip=81241&city=Pasing", Some(&key)).send().await.unwrap()).await;
        assert_eq!((s, b["response"]["status"].as_str()), (200, Some("found")), "{b}");

        for (q, field, code) in [("", "zip", "required"), ("?zip=123", "zip", "invalid_zip"), ("?zip=1234a", "zip", "invalid_zip")] {
            let (s, b) = json(app.get(&format!("/v1/trade-offices{q}"), Some(&key)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some(field), Some(code)));
        }
        let (s, b) = json(app.get("/v1/trade-offices?zip=54298&city=Aach", None).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
    }

    // Berlin by district (Bezirk, Ortsteil), München, Stuttgart, Hamburg: the lookups an
    // integrator makes before a create, with real addresses of Berlin's register.
    async fn district_level_lookups(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let get = async |q: &str| -> Value {
            let (s, b) = json(app.get(q, Some(&key)).send().await.unwrap()).await;
            assert_eq!(s, 200, "{q}: {b}");
            b["response"].clone()
        };
        // 10119 straddles Mitte and Pankow; Choriner Straße crosses the border in it.
        for (street, office, tax) in [
            ("Choriner%20Stra%C3%9Fe%2075", "Bezirksamt Mitte von Berlin", "1130"),
            ("Choriner%20Stra%C3%9Fe%203", "Bezirksamt Pankow von Berlin", "1137"),
        ] {
            let r = get(&format!("/v1/trade-offices?zip=10119&city=Berlin&street={street}")).await;
            assert_eq!(r["status"], "found");
            assert_eq!(r["office"]["name"], office);
            assert_eq!(r["office"]["kind"], "district");
            assert_eq!(r["office"]["municipality_key"], "11000000");
            let r = get(&format!("/v1/tax-offices?zip=10119&city=Berlin&street={street}")).await;
            assert_eq!(r["status"], "determined", "{r}");
            assert_eq!(r["office"]["number"], tax);
            assert_eq!(r["rule"], "berlin_corporations");
            assert!(r["locality"]["ortsteil"].is_string());
        }
        // Mitte's office with the contact data the service ships.
        let r = get("/v1/trade-offices?zip=10178&city=Berlin&street=Karl-Marx-Allee%2031").await;
        assert_eq!(r["office"]["key"], "1100000001");
        assert!(r["office"]["address"].as_str().unwrap().contains("Karl-Marx-Allee 31"));
        // Without a street a postal code of two Bezirke decides nothing: the likeliest first.
        let r = get("/v1/trade-offices?zip=10119&city=Berlin").await;
        assert_eq!(r["status"], "district_not_determined");
        assert_eq!(r["reason"]["code"], "street_not_in_register");
        assert_eq!(r["candidates"][0]["name"], "Bezirksamt Mitte von Berlin");
        assert_eq!(r["candidates"][1]["name"], "Bezirksamt Pankow von Berlin");
        // A partnership, a holding.
        let r = get("/v1/tax-offices?zip=10119&city=Berlin&street=Choriner%20Stra%C3%9Fe%203&legal_form=gbr").await;
        assert_eq!(r["status"], "needs_confirmation");
        assert_eq!(r["suggestions"][0]["office"]["number"], "1131", "Prenzlauer Berg");
        assert_eq!(r["reasons"][0]["reason"], "rule_not_verified");
        // A natural person (a sole proprietor's residence, § 19 AO): the Ortsteil's regional
        // office, suggested; München's and Bremen's rules are for companies; Lüneburg's register
        // office is determined on the natural person's basis.
        let r = get("/v1/tax-offices?zip=10119&city=Berlin&street=Choriner%20Stra%C3%9Fe%203&legal_form=einzelunternehmen").await;
        assert_eq!(r["status"], "needs_confirmation");
        assert_eq!(r["suggestions"][0]["office"]["number"], "1131", "Prenzlauer Berg");
        assert_eq!(r["reasons"][0]["rule"], "berlin_natural_persons", "{r}");
        let r = get("/v1/tax-offices?zip=80331&city=M%C3%BCnchen&street=Marienplatz%208&legal_form=einzelunternehmen").await;
        assert_eq!(r["status"], "needs_confirmation", "{r}");
        assert_eq!(r["reasons"][0]["reason"], "no_public_rule", "{r}");
        assert!(!r["suggestions"].as_array().unwrap().iter().any(|s| s["office"]["number"] == "9143"), "{r}");
        let r = get("/v1/tax-offices?zip=28195&city=Bremen&street=Am%20Markt%201&legal_form=einzelunternehmen").await;
        assert_eq!(r["status"], "needs_confirmation", "{r}");
        assert!(r["suggestions"].as_array().unwrap().iter().any(|s| s["office"]["number"] == "2460"), "{r}");
        let r = get("/v1/tax-offices?zip=21335&city=L%C3%BCneburg&street=Am%20Sande%2012&legal_form=einzelunternehmen").await;
        assert_eq!((r["status"].as_str(), r["office"]["number"].as_str()), (Some("determined"), Some("2333")), "{r}");
        assert!(r["basis"]["summary"].as_str().unwrap().contains("§ 19 (1) AO"), "{r}");
        let r = get("/v1/tax-offices?zip=10119&city=Berlin&street=Choriner%20Stra%C3%9Fe%203&is_holding=true").await;
        assert_eq!(r["reasons"][0]["reason"], "group_company");
        assert_eq!(r["suggestions"][0]["office"]["number"], "1137");
        // München (and its Landkreis) and Stuttgart: their corporation offices, determined on
        // the basis the answer names.
        let r = get("/v1/tax-offices?zip=80331&city=M%C3%BCnchen&street=Marienplatz%208").await;
        assert_eq!((r["status"].as_str(), r["office"]["number"].as_str()), (Some("determined"), Some("9143")), "{r}");
        assert_eq!(r["basis"]["rule"], "muenchen-9143");
        assert_eq!(r["basis"]["kind"], "evidence");
        assert_eq!(r["basis"]["date"], "2017-06-28");
        assert!(r["basis"]["source"].as_str().unwrap().contains("ELSTER"));
        let r = get("/v1/tax-offices?zip=85521&city=Ottobrunn&street=Rathausplatz%201").await;
        assert_eq!(r["office"]["number"], "9143", "the Landkreis München: {r}");
        let r = get("/v1/tax-offices?zip=70173&city=Stuttgart&street=Marktplatz%201&legal_form=ug").await;
        assert_eq!((r["status"].as_str(), r["office"]["number"].as_str()), (Some("determined"), Some("2899")), "{r}");
        assert_eq!(r["basis"]["rule"], "stuttgart-2899");
        // Hamburg: the district offices, flagged.
        let r = get("/v1/trade-offices?zip=20095&city=Hamburg&street=Rathausmarkt%201").await;
        assert_eq!(r["status"], "district_not_determined");
        assert_eq!(r["reason"]["code"], "no_district_data");
        assert_eq!(r["candidates"].as_array().unwrap().len(), 7);
        let r = get("/v1/tax-offices?zip=20095&city=Hamburg&street=Rathausmarkt%201&legal_form=gbr").await;
        assert_eq!(r["status"], "needs_confirmation");
        // Bad parameters.
        let (s, b) = json(app.get("/v1/tax-offices?zip=10119&legal_form=ag", Some(&key)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "legal_form");
        let long = "a".repeat(73);
        let (s, b) = json(app.get(&format!("/v1/trade-offices?zip=10119&street={long}"), Some(&key)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "street");
    }

    // A create determines the district's offices: the trade office heads the GewA 1, the
    // corporation's tax office gets its XML at once; what the address does not decide waits.
    async fn creates_in_berlin_hamburg_muenchen_and_stuttgart(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located_at("Schwedter Straße 262", "10119", "Berlin")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
        let text = pdf_text(&app.client.get(url).send().await.unwrap().bytes().await.unwrap());
        assert!(text.contains("Bezirksamt Pankow von Berlin"), "the GewA 1 head: {text}");
        assert!(text.contains("11000000"));
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(g["response"]["trade_office"]["key"], "1100000003");
        assert_eq!(g["response"]["trade_office"]["email"], "gewerbe@ba-pankow.berlin.de");
        // Hamburg: no district determined, the seven district offices as candidates.
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located_at("Rathausmarkt 1", "20095", "Hamburg")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert!(g["response"].get("trade_office").is_none());
        assert_eq!(g["response"]["trade_office_candidates"][0]["name"], "Bezirksamt Hamburg-Mitte");
        assert_eq!(g["response"]["trade_office_candidates"].as_array().unwrap().len(), 7);

        // Tax: (request, street, zip, city, determined office or the first suggestion).
        for (kind, street, zip, city, determined, first) in [
            ("gmbh", "Hartriegelstraße 8", "12439", "Berlin", Some("1137"), None),
            ("ug", "Keplerstraße 12", "10589", "Berlin", Some("1127"), None),
            ("gmbh", "Choriner Straße 75", "10119", "Berlin", Some("1130"), None),
            ("gbr", "Choriner Straße 3", "10119", "Berlin", None, Some("1131")),
            ("egbr", "Hartriegelstraße 8", "12439", "Berlin", None, Some("1136")),
            ("gmbh", "Marienplatz 8", "80331", "München", Some("9143"), None),
            ("gbr", "Marienplatz 8", "80331", "München", Some("9143"), None),
            ("gmbh", "Rathausplatz 1", "85521", "Ottobrunn", Some("9143"), None),
            ("ug", "Marktplatz 1", "70173", "Stuttgart", Some("2899"), None),
            ("gmbh", "Heinrichstraße 9", "60327", "Frankfurt am Main", Some("2614"), None),
            ("egbr", "Am Markt 21", "28195", "Bremen", Some("2460"), None),
            ("gmbh", "Rathausmarkt 1", "20095", "Hamburg", None, Some("2243")),
            ("gbr", "Rathausmarkt 1", "20095", "Hamburg", None, Some("2243")),
            ("gmbh", "Karl-Friedrich-Straße 10", "76133", "Karlsruhe", None, Some("2835")),
            ("gbr", "Klingenstraße 22", "04229", "Leipzig-Plagwitz", None, Some("3232")),
        ] {
            let (s, b) = json(app.post(tax_path(kind), Some(&key)).json(&tax_at(kind, street, zip, city)).send().await.unwrap()).await;
            assert_eq!(s, 201, "{kind} {city}: {b}");
            let id = b["response"]["tax_registration_id"].as_str().unwrap();
            let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&key)).send().await.unwrap()).await;
            let case = &g["response"];
            match determined {
                Some(number) => {
                    assert_eq!(case["tax_office"]["number"], number, "{kind} {street}: {case}");
                    // Why, on the case.
                    assert!(case["tax_office"]["basis"]["rule"].is_string(), "{kind} {city}: {case}");
                    assert!(case["tax_office"]["basis"]["source"].is_string());
                    assert_eq!(case["elster_xml"]["status"], "written", "the XML at create");
                    let xml = case["documents"].as_array().unwrap().iter().find(|d| d["type"] == "tax-registration-xml").expect("xml");
                    let bytes = app.client.get(xml["download_url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
                    assert!(String::from_utf8_lossy(&bytes).contains(&format!("<Empfaenger id=\"F\">{number}</Empfaenger>")));
                }
                None => {
                    assert!(case.get("tax_office").is_none(), "{kind} {city}");
                    assert_eq!(case["elster_xml"]["pending_reason"], "tax_office_unknown");
                    let d = &case["tax_office_determination"];
                    assert_eq!(d["status"], "needs_confirmation", "{kind} {city}");
                    if let Some(first) = first {
                        assert_eq!(d["suggestions"][0]["office"]["number"], first, "{kind} {city}: {d}");
                    }
                }
            }
        }
        // A Berlin holding waits: groups are assigned by industry.
        let mut holding = tax_at("gmbh", "Hartriegelstraße 8", "12439", "Berlin");
        holding["is_holding"] = json!(true);
        let (s, b) = json(app.post("/v1/tax-registration", Some(&key)).json(&holding).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap();
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(g["response"]["tax_office_determination"]["reasons"][0]["reason"], "group_company");
        assert_eq!(g["response"]["tax_office_determination"]["suggestions"][0]["office"]["number"], "1137");
        // So does a GmbH whose majority shareholder is a company (a group's subsidiary),
        // while a minority company shareholder leaves the district's corporation office.
        for (shares, group) in [([10.0, 10.0, 80.0], true), ([40.0, 30.0, 30.0], false)] {
            let mut v = tax_at("gmbh", "Hartriegelstraße 8", "12439", "Berlin");
            v["is_holding"] = json!(false);
            for (i, share) in shares[..2].iter().enumerate() {
                v["shareholders"]["individuals"][i]["share_percentage"] = json!(share);
            }
            v["shareholders"]["entities"][0]["share_percentage"] = json!(shares[2]);
            let (s, b) = json(app.post("/v1/tax-registration", Some(&key)).json(&v).send().await.unwrap()).await;
            assert_eq!(s, 201, "{b}");
            let id = b["response"]["tax_registration_id"].as_str().unwrap();
            let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&key)).send().await.unwrap()).await;
            let case = &g["response"];
            if group {
                assert!(case.get("tax_office").is_none(), "{case}");
                assert_eq!(case["tax_office_determination"]["reasons"][0]["reason"], "group_company", "{case}");
            } else {
                assert_eq!(case["tax_office"]["number"], "1137", "{case}");
            }
        }
    }

    async fn tax_office_lookup(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        // A partnership: the register's district office.
        let (s, b) = json(app.get("/v1/tax-offices?zip=24937&city=Flensburg&legal_form=gbr", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["status"], "determined");
        assert_eq!(b["response"]["office"]["number"], "2115");
        assert_eq!(b["response"]["basis"]["rule"], "register");
        // A corporation in Schleswig-Holstein, which moves some districts' corporations
        // elsewhere: the same office, suggested only.
        let (_, b) = json(app.get("/v1/tax-offices?zip=24937&city=Flensburg", Some(&key)).send().await.unwrap()).await;
        assert_eq!(b["response"]["status"], "needs_confirmation");
        assert_eq!(b["response"]["reasons"][0]["reason"], "state_concentrates_corporations");
        assert_eq!(b["response"]["suggestions"][0]["office"]["number"], "2115");
        // Kiel's register office 2119 has merged into 2120, which a source names.
        let (_, b) = json(app.get("/v1/tax-offices?zip=24103&city=Kiel&legal_form=egbr", Some(&key)).send().await.unwrap()).await;
        assert_eq!((b["response"]["status"].as_str(), b["response"]["office"]["number"].as_str(), b["response"]["merged_from"].as_str()), (Some("determined"), Some("2120"), Some("2119")));
        assert_eq!(b["response"]["basis"]["rule"], "merged-office");
        for (zip, city) in [("10119", "Berlin"), ("20095", "Hamburg"), ("50667", "K%C3%B6ln")] {
            let (s, b) = json(app.get(&format!("/v1/tax-offices?zip={zip}&city={city}"), Some(&key)).send().await.unwrap()).await;
            assert_eq!(s, 200);
            assert_eq!(b["response"]["status"], "needs_confirmation", "{city}: {b}");
            assert!(!b["response"]["reasons"].as_array().unwrap().is_empty(), "{city}");
        }
        let (s, b) = json(app.get("/v1/tax-offices/2742", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["display_name"], "Finanzamt Trier");
        assert_eq!(b["response"]["number"], "2742");
        for bad in ["9999", "abc", "27421"] {
            let (s, b) = json(app.get(&format!("/v1/tax-offices/{bad}"), Some(&key)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
    }

    async fn the_gewa1_head_and_the_case_name_the_office(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located("54298", "Aach")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
        let pdf = app.client.get(url).send().await.unwrap().bytes().await.unwrap();
        let text = pdf_text(&pdf);
        assert!(text.contains("Verbandsgemeinde Trier-Land"), "head office");
        assert!(text.contains("07235001"), "head municipality key");

        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        let office = &g["response"]["trade_office"];
        assert_eq!(office["name"], "Verbandsgemeinde Trier-Land");
        assert_eq!(office["municipality_key"], "07235001");
        assert!(office.get("email").is_none());

        // The operator fills in the directory: the case shows the contact data from then on.
        let (_, okey) = app.operator("Olga").await;
        let entry = json!({"name": "Verbandsgemeindeverwaltung Trier-Land, Gewerbeamt", "address": "Gartenfeldstraße 12, 54295 Trier", "email": "gewerbe@trier-land.de", "phone": "+49 651 8279-0", "website": "https://www.trier-land.de"});
        let (s, b) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&entry).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        let office = &g["response"]["trade_office"];
        assert_eq!(office["name"], entry["name"]);
        assert_eq!(office["email"], "gewerbe@trier-land.de");
        assert_eq!(office["website"], "https://www.trier-land.de");
        assert_eq!(office["municipality_key"], "07235001");

        // An address that does not decide the municipality: candidates, no determination, empty head.
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located("54298", "Musterdorf")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert!(g["response"].get("trade_office").is_none());
        assert_eq!(g["response"]["trade_office_candidates"].as_array().unwrap().len(), 7);
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
        let text = pdf_text(&app.client.get(url).send().await.unwrap().bytes().await.unwrap());
        assert!(!text.contains("Trier-Land"));
    }

    async fn new_forms_keep_a_directory_entry_until_it_changes_here(backend) {
        // Production default: FILING_DIRECTORY_CACHE_SECS (5 s); long here, so only a change
        // through this instance makes it read the entry again.
        let app = TestApp::spawn_with(backend, Options {
            tweak: Box::new(|c| c.directory_cache = std::time::Duration::from_secs(300)),
            ..Default::default()
        }).await.unwrap();
        let (_, key) = app.provider("P").await;
        let head = async || {
            let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located("54298", "Aach")).send().await.unwrap()).await;
            assert_eq!(s, 201, "{b}");
            let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
            pdf_text(&app.client.get(url).send().await.unwrap().bytes().await.unwrap())
        };
        assert!(head().await.contains("Verbandsgemeinde Trier-Land"));
        // Written around this instance (another instance, the CLI): not read again yet; the
        // absence of an entry was kept too.
        let mut entry = store::TradeOfficeEntry {
            key: "072355007".into(),
            name: "Gewerbeamt Trier-Land (elsewhere)".into(),
            address: None, email: None, phone: None, website: None,
            updated_at: time::OffsetDateTime::now_utc(),
        };
        app.state.repo.upsert_trade_office(&entry).await.unwrap();
        let text = head().await;
        assert!(text.contains("Verbandsgemeinde Trier-Land") && !text.contains("elsewhere"), "{text}");
        // Changed through this instance: read again at once.
        let (_, okey) = app.operator("Olga").await;
        entry.name = "Gewerbeamt Trier-Land (here)".into();
        let (s, b) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": entry.name})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert!(head().await.contains("Gewerbeamt Trier-Land (here)"));
    }

    async fn operator_directory_api(backend) {
        let app = app(backend).await;
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let put = |k: &str, body: Value, key: &str| app.client.put(app.url(&format!("/v1/operator/trade-offices/{k}"))).bearer_auth(key).json(&body).send();
        for k in ["01001000", "072355007", "11000000"] {
            let (s, b) = json(put(k, json!({"name": format!("Amt {k}")}), &okey).await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
        }
        let (s, b) = json(app.get("/v1/operator/trade-offices?limit=2", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let keys: Vec<&str> = b["response"]["trade_offices"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["01001000", "072355007"]);
        let cursor = b["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, b) = json(app.get(&format!("/v1/operator/trade-offices?limit=2&after={cursor}"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(b["response"]["trade_offices"][0]["key"], "11000000");
        assert!(b["response"].get("next_cursor").is_none());
        let (s, b) = json(app.get("/v1/operator/trade-offices/01001000", Some(&okey)).send().await.unwrap()).await;
        assert_eq!((s, b["response"]["name"].as_str()), (200, Some("Amt 01001000")));
        let (s, b) = json(app.get("/v1/operator/trade-offices/99999999", Some(&okey)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");

        // Providers may not touch it; broken entries name every field.
        let (s, b) = json(put("01001000", json!({"name": "X"}), &pkey).await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.get("/v1/operator/trade-offices", Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(put("123", json!({"name": "", "email": "nope", "website": "ftp://x"}), &okey).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["key", "name", "email", "website"]);
        let (s, b) = json(put("01001000", json!({"name": "X", "fax": "1"}), &okey).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["code"], "unknown_field");
    }
    // The lookup an integrator makes before a create answers what the create then decides:
    // the same office and basis, or the same reasons and suggestions.
    async fn the_tax_office_lookup_answers_as_the_create(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        for (kind, street, zip, city) in [
            ("gmbh", "Rathausplatz 1", "85521", "Ottobrunn"),
            ("gbr", "Leienfelsstraße 21b", "81243", "München"),
            ("ug", "Paulinenstraße 44", "70178", "Stuttgart"),
            ("gbr", "Marktplatz 1", "70173", "Stuttgart"),
            ("gmbh", "Heinrichstraße 9", "60327", "Frankfurt am Main"),
            ("gmbh", "Gerhard-Rohlfs-Straße 62", "28757", "Bremen"),
            ("gmbh", "Blasewitzer Straße 41", "01307", "Dresden"),
            ("egbr", "Markt 1", "09111", "Chemnitz-Zentrum"),
            ("gmbh", "Elbchaussee 96", "22763", "Hamburg"),
            ("gbr", "Marktplatz 2", "40213", "Düsseldorf-Altstadt"),
            ("gmbh", "Wartburgstraße 12", "50733", "Köln"),
            ("gmbh", "Rathausplatz 1", "93047", "Regensburg"),
            ("gmbh", "Obermarkt 24", "09599", "Freiberg"),
            ("gmbh", "Keplerstraße 12", "10589", "Berlin"),
            ("gmbh", "Marienplatz 8", "80331", "Frankfurt"),
        ] {
            let q = format!(
                "/v1/tax-offices?zip={zip}&city={}&street={}&legal_form={kind}",
                urlencode(city),
                urlencode(street)
            );
            let (s, b) = json(app.get(&q, Some(&key)).send().await.unwrap()).await;
            assert_eq!(s, 200, "{q}: {b}");
            let lookup = &b["response"];
            let (s, b) = json(app.post(tax_path(kind), Some(&key)).json(&tax_at(kind, street, zip, city)).send().await.unwrap()).await;
            assert_eq!(s, 201, "{kind} {city}: {b}");
            let id = b["response"]["tax_registration_id"].as_str().unwrap();
            let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&key)).send().await.unwrap()).await;
            let case = &g["response"];
            match lookup["status"].as_str() {
                Some("determined") => {
                    assert_eq!(case["tax_office"]["number"], lookup["office"]["number"], "{city}");
                    assert_eq!(case["tax_office"]["basis"], lookup["basis"], "{city}");
                }
                Some("needs_confirmation") => {
                    assert!(case.get("tax_office").is_none(), "{city}: {case}");
                    let d = &case["tax_office_determination"];
                    assert_eq!(d["reasons"], lookup["reasons"], "{city}");
                    assert_eq!(d["suggestions"], lookup["suggestions"], "{city}");
                }
                other => panic!("{city}: {other:?}"),
            }
        }
    }

    // An address that does not exist or contradicts itself: a 422 naming the field on the trade
    // create and both tax creates, nothing written; a city that may be an Ortsteil of another
    // municipality's name is taken, and no office is chosen from it.
    async fn contradictory_addresses_are_refused_by_the_creates(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        for (zip, city, field, code) in [
            ("99999", "Musterstadt", "zip", "unknown_postal_code"),
            ("80331", "Berlin", "city", "city_not_in_postal_code"),
            ("60311", "Frankfurt (Oder)", "city", "city_not_in_postal_code"),
        ] {
            let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located(zip, city)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["field"], format!("registered_office.{field}"), "{b}");
            assert_eq!(r["errors"][0]["code"], code);
            for kind in ["gmbh", "gbr"] {
                let (s, b) = json(app.post(tax_path(kind), Some(&key)).json(&tax_at(kind, "Marienplatz 8", zip, city)).send().await.unwrap()).await;
                let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
                assert_eq!(r["errors"][0]["field"], format!("address.{field}"), "{kind}: {b}");
                assert_eq!(r["errors"][0]["code"], code);
            }
        }
        let (_, okey) = app.operator("Olga").await;
        let (s, b) = json(app.get("/v1/operator/tax-registrations", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["cases"].as_array().map(Vec::len), Some(0), "nothing written: {b}");
        // "Frankfurt" with München's postal code: perhaps an Ortsteil; taken, nothing chosen.
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located_at("Marienplatz 8", "80331", "Frankfurt")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert!(g["response"].get("trade_office").is_none(), "{g}");
        assert_eq!(g["response"]["trade_office_candidates"][0]["municipality_key"], "09162000");
        let (s, b) = json(app.post("/v1/tax-registration", Some(&key)).json(&tax_at("gmbh", "Marienplatz 8", "80331", "Frankfurt")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap();
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&key)).send().await.unwrap()).await;
        assert!(g["response"].get("tax_office").is_none());
        assert_eq!(g["response"]["tax_office_determination"]["reasons"][0]["reason"], "city_not_of_postal_code");
        // Spellings and Ortsteile of the right city are taken as before.
        for (zip, city) in [("60311", "Frankfurt a. M."), ("81243", "München-Pasing"), ("81241", "Pasing"), ("80331", "Muenchen")] {
            let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&located(zip, city)).send().await.unwrap()).await;
            assert_eq!(s, 201, "{zip} {city}: {b}");
        }
    }

}
