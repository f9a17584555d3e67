//! The operator console over HTTP (no browser; `console_e2e.rs` drives a real one): sign-in
//! and its cookie, the session's end, CSRF and origin checks, the security headers, escaping,
//! the languages, and that the pages offer only the steps the lifecycle allows.

mod common;

use common::{Backend, TestApp};
use domain::rule_cases::example;
use reqwest::header::{CONTENT_SECURITY_POLICY, COOKIE, LOCATION, SET_COOKIE};
use serde_json::json;

/// A browser's view of the console: its own cookie jar, no redirects followed.
struct Console<'a> {
    app: &'a TestApp,
    client: reqwest::Client,
    cookies: Vec<(String, String)>,
}

impl<'a> Console<'a> {
    /// A console signed in with `key`.
    async fn signed_in(app: &'a TestApp, key: &str) -> Self {
        let mut c = Self::new(app);
        c.sign_in(key).await;
        c
    }

    fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: vec![],
        }
    }

    fn keep(&mut self, res: &reqwest::Response) {
        for c in res.headers().get_all(SET_COOKIE) {
            let c = c.to_str().unwrap();
            let pair = c.split(';').next().unwrap();
            let (k, v) = pair.split_once('=').unwrap();
            self.cookies.retain(|(n, _)| n != k);
            if !c.contains("Max-Age=0") {
                self.cookies.push((k.to_string(), v.to_string()));
            }
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn get(&mut self, path: &str) -> reqwest::Response {
        let res = self
            .client
            .get(self.app.url(path))
            .header(COOKIE, self.cookie_header())
            .send()
            .await
            .unwrap();
        self.keep(&res);
        res
    }

    async fn text(&mut self, path: &str) -> (u16, String) {
        let res = self.get(path).await;
        let s = res.status().as_u16();
        (s, res.text().await.unwrap())
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
        let res = self.post_as(path, form).send().await.unwrap();
        self.keep(&res);
        res
    }

    /// The POST of `form` to `path` with this browser's cookie, to send as it is or with
    /// more headers (what it answers leaves the cookie jar as it is).
    fn post_as(&self, path: &str, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
        self.client
            .post(self.app.url(path))
            .header(COOKIE, self.cookie_header())
            .form_body(form)
    }

    async fn sign_in(&mut self, key: &str) -> reqwest::Response {
        self.post("/console/login", &[("key", key)]).await
    }

    /// The CSRF token of the page at `path`.
    async fn csrf(&mut self, path: &str) -> String {
        let (_, page) = self.text(path).await;
        let at = page
            .find("name=\"csrf\" value=\"")
            .expect("a form with a token")
            + 19;
        page[at..at + page[at..].find('"').unwrap()].to_string()
    }
}

/// A form body as a browser sends it.
trait FormBody {
    fn form_body(self, form: &[(&str, &str)]) -> Self;
}

impl FormBody for reqwest::RequestBuilder {
    fn form_body(self, form: &[(&str, &str)]) -> Self {
        self.header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap())
    }
}

fn location(res: &reqwest::Response) -> String {
    res.headers()[LOCATION].to_str().unwrap().to_string()
}

/// An app with a provider `P` and an operator named `operator`: the app and their keys.
async fn provider_and_operator(operator: &str) -> (TestApp, String, String) {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, pkey) = app.provider("P").await;
    let (_, okey) = app.operator(operator).await;
    (app, pkey, okey)
}

/// A trade case of the example `self`, named `name`.
async fn trade_case(app: &TestApp, key: &str, name: &str) -> String {
    let mut body = example("self");
    body["name"] = json!(name);
    app.create("/v1/trade-registration", key, &body).await
}

/// A tax case of the example `ug`.
async fn ug_tax_case(app: &TestApp, key: &str) -> String {
    app.create("/v1/tax-registration", key, &example("ug"))
        .await
}

/// The trade case `id` as the API shows it to `key`.
async fn trade_of(app: &TestApp, id: &str, key: &str) -> serde_json::Value {
    app.read(&format!("/v1/trade-registration/{id}"), key).await
}

#[tokio::test]
async fn only_operator_keys_sign_in_and_the_cookie_is_strict() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (pid, pkey) = app.provider("Anbieter").await;
    let (_, ckey) = app.client_company(pid, "Kunde").await;
    let (_, okey) = app.operator("Olga Operator").await;
    let mut c = Console::new(&app);
    for key in [pkey.as_str(), ckey.as_str(), "rfs_op_nonsense", ""] {
        let res = c.sign_in(key).await;
        assert_eq!(res.status(), 401, "{key}");
        assert!(res.headers().get(SET_COOKIE).is_none());
        assert!(
            res.text()
                .await
                .unwrap()
                .contains("kein gültiger Operator-Schlüssel")
        );
    }
    assert_eq!(location(&c.get("/console/trade").await), "/console/login");

    let res = c.sign_in(&okey).await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), "/console/trade");
    let cookie = res.headers()[SET_COOKIE].to_str().unwrap().to_string();
    for part in [
        "filing_console=",
        "HttpOnly",
        "SameSite=Strict",
        "Path=/console",
    ] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "served over http here: {cookie}"
    );
    assert!(
        !cookie.contains(&okey),
        "the key itself is never the cookie"
    );
    let (s, page) = c.text("/console/trade").await;
    assert_eq!(s, 200);
    assert!(
        page.contains("Olga Operator"),
        "the operator's name is shown"
    );
}

#[tokio::test]
async fn the_cookie_is_secure_behind_https() {
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        common::Options::tweak(|c| c.public_url = "https://filing.example".into()),
    )
    .await
    .unwrap();
    let (_, okey) = app.operator("O").await;
    let res = Console::new(&app).sign_in(&okey).await;
    assert!(
        res.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("; Secure")
    );
}

#[tokio::test]
async fn pages_forbid_script_and_frames() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, okey) = app.operator("O").await;
    let mut c = Console::new(&app);
    let res = c.get("/console/login").await;
    let csp = res.headers()[CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    c.sign_in(&okey).await;
    for path in ["/console/login", "/console/trade", "/console/tax"] {
        let (s, page) = c.text(path).await;
        assert_eq!(s, 200, "{path}");
        assert!(!page.contains("<script"), "{path}");
        assert!(!page.contains(" style="), "no inline style either: {path}");
    }
    let css = c.get("/console/console.css").await;
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");
}

#[tokio::test]
async fn forms_need_the_session_token_and_this_origin() {
    let (app, pkey, okey) = provider_and_operator("O").await;
    let id = trade_case(&app, &pkey, "Token GmbH").await;
    let mut c = Console::signed_in(&app, &okey).await;
    let page = format!("/console/trade/{id}");
    let action = format!("{page}/transition");
    let token = c.csrf(&page).await;

    let res = c.post(&action, &[("status", "submitted")]).await;
    assert_eq!(res.status(), 403, "no token");
    let res = c
        .post(&action, &[("status", "submitted"), ("csrf", "forged")])
        .await;
    assert_eq!(res.status(), 403, "another token");
    let form = [("status", "submitted"), ("csrf", token.as_str())];
    for (header, value, what) in [
        ("origin", "http://evil.example", "another origin"),
        ("sec-fetch-site", "cross-site", "a cross-site form"),
    ] {
        let cross = c.post_as(&action, &form).header(header, value).send();
        assert_eq!(cross.await.unwrap().status(), 403, "{what}");
    }
    let case = trade_of(&app, &id, &pkey).await;
    assert_eq!(case["status"], "form-rendered", "nothing moved");

    let res = c
        .post(
            &action,
            &[("status", "submitted"), ("csrf", token.as_str())],
        )
        .await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), page);
    let case = trade_of(&app, &id, &pkey).await;
    assert_eq!(case["status"], "submitted");
}

#[tokio::test]
async fn sign_out_and_revocation_end_the_session() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, okey) = app.operator("O").await;
    let mut c = Console::signed_in(&app, &okey).await;
    let stolen = c.cookie_header();
    let token = c.csrf("/console/trade").await;
    let res = c.post("/console/logout", &[("csrf", token.as_str())]).await;
    assert_eq!(location(&res), "/console/login");
    assert!(
        res.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let replay = c
        .client
        .get(app.url("/console/trade"))
        .header(COOKIE, stolen)
        .send()
        .await
        .unwrap();
    assert_eq!(
        location(&replay),
        "/console/login?expired=1",
        "the old cookie is dead"
    );

    // A revoked key ends its sessions.
    c.sign_in(&okey).await;
    assert_eq!(c.get("/console/trade").await.status(), 200);
    let prefix = domain::auth::parse_key(&okey).unwrap().prefix.to_string();
    let record = app
        .state
        .repo
        .find_api_key(&prefix)
        .await
        .unwrap()
        .expect("the key's record");
    app.state
        .repo
        .revoke_api_key(&record.prefix, time::OffsetDateTime::now_utc())
        .await
        .unwrap();
    app.state.keys.forget(&record.prefix);
    let res = c.get("/console/trade").await;
    assert_eq!(location(&res), "/console/login?expired=1");
}

#[tokio::test]
async fn names_are_escaped() {
    let (app, pkey, okey) = provider_and_operator("O").await;
    let id = trade_case(&app, &pkey, "Evil <script>alert(1)</script> & Co GmbH").await;
    let mut c = Console::signed_in(&app, &okey).await;
    for path in ["/console/trade".to_string(), format!("/console/trade/{id}")] {
        let (s, page) = c.text(&path).await;
        assert_eq!(s, 200, "{path}");
        assert!(!page.contains("<script>alert"), "{path}");
        assert!(
            page.contains("Evil &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co GmbH"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_language_switch_returns_to_the_page_and_only_to_the_console() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, okey) = app.operator("O").await;
    let mut c = Console::signed_in(&app, &okey).await;
    let (_, de) = c.text("/console/trade").await;
    assert!(de.contains("<html lang=\"de\">") && de.contains("Gewerbeanmeldungen"));
    let res = c
        .get("/console/lang/en?back=%2Fconsole%2Ftrade%3Fstatus%3Dsubmitted")
        .await;
    assert_eq!(location(&res), "/console/trade?status=submitted");
    let (_, en) = c.text("/console/trade").await;
    assert!(en.contains("<html lang=\"en\">") && en.contains("Trade registrations"));
    for evil in [
        "https://evil.example/",
        "//evil.example/console/",
        "/v1/operator/trade-registrations",
    ] {
        let q: String = url::form_urlencoded::byte_serialize(evil.as_bytes()).collect();
        let res = c.get(&format!("/console/lang/de?back={q}")).await;
        assert_eq!(location(&res), "/console/", "{evil}");
    }
}

#[tokio::test]
async fn every_text_is_translated() {
    let (app, pkey, okey) = provider_and_operator("O").await;
    let trade = trade_case(&app, &pkey, "Übersetzt GmbH").await;
    let tax = ug_tax_case(&app, &pkey).await;
    let mut c = Console::signed_in(&app, &okey).await;
    for lang in ["de", "en"] {
        c.get(&format!("/console/lang/{lang}")).await;
        for path in [
            "/console/login".to_string(),
            "/console/trade".into(),
            "/console/tax".into(),
            format!("/console/trade/{trade}"),
            format!("/console/tax/{tax}"),
        ] {
            let (s, page) = c.text(&path).await;
            assert_eq!(s, 200, "{path}");
            // A key without a translation shows as itself: `queue.search`, `case.fee`, ...
            let raw = regex_lite_keys(&page);
            assert!(raw.is_empty(), "{lang} {path}: untranslated {raw:?}");
            // Every control has a label.
            for id in ids_of_controls(&page) {
                assert!(
                    page.contains(&format!("for=\"{id}\"")),
                    "{lang} {path}: no label for #{id}"
                );
            }
        }
    }
}

/// Texts that look like translation keys (`word.word` between tags).
fn regex_lite_keys(page: &str) -> Vec<String> {
    page.split(['>', '<'])
        .map(str::trim)
        .filter(|t| {
            let mut parts = t.split('.');
            matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None)
                if !a.is_empty() && !b.is_empty()
                && a.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && b.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        })
        .map(String::from)
        .collect()
}

/// The ids of the page's inputs, selects and textareas that a person fills in.
fn ids_of_controls(page: &str) -> Vec<String> {
    let mut ids = vec![];
    for tag in ["<input", "<select", "<textarea"] {
        for (at, _) in page.match_indices(tag) {
            let end = at + page[at..].find('>').unwrap();
            let element = &page[at..end];
            if element.contains("type=\"hidden\"") {
                continue;
            }
            let id = element
                .split("id=\"")
                .nth(1)
                .map(|s| s[..s.find('"').unwrap()].to_string());
            ids.push(id.unwrap_or_else(|| format!("(none) {element}")));
        }
    }
    ids
}

#[tokio::test]
async fn a_case_offers_only_the_steps_it_can_take() {
    let (app, pkey, okey) = provider_and_operator("O").await;
    let id = trade_case(&app, &pkey, "Schritte GmbH").await;
    let mut c = Console::signed_in(&app, &okey).await;
    let page = format!("/console/trade/{id}");
    let (_, html) = c.text(&page).await;
    assert!(html.contains("id=\"step-submitted\""));
    assert!(
        !html.contains("id=\"step-blocked\""),
        "form-rendered cannot be blocked"
    );
    assert!(!html.contains("id=\"step-completed\""));

    // Blocking needs a reason: the API's rule, shown with the field.
    let token = c.csrf(&page).await;
    c.post(
        &format!("{page}/transition"),
        &[("status", "submitted"), ("csrf", &token)],
    )
    .await;
    let (_, html) = c.text(&page).await;
    assert!(html.contains("id=\"step-blocked\"") && html.contains("id=\"step-completed\""));
    assert!(!html.contains("id=\"step-submitted\""), "submitted already");
    let res = c
        .post(
            &format!("{page}/transition"),
            &[("status", "blocked"), ("reason", " "), ("csrf", &token)],
        )
        .await;
    assert_eq!(res.status(), 303);
    let (_, html) = c.text(&page).await;
    assert!(html.contains("class=\"flash error\""), "{html}");
    assert!(
        html.contains("<code>reason</code>"),
        "the broken field is named"
    );
    let case = trade_of(&app, &id, &pkey).await;
    assert_eq!(case["status"], "submitted");
    // The message is shown once.
    let (_, html) = c.text(&page).await;
    assert!(!html.contains("class=\"flash error\""));

    // A case that does not exist, or an id that is none.
    let (s, _) = c
        .text(&format!("/console/trade/{}", uuid::Uuid::now_v7()))
        .await;
    assert_eq!(s, 404);
    let (s, _) = c.text("/console/trade/not-a-case").await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn the_details_identity_and_office_forms_change_the_case() {
    let (app, pkey, okey) = provider_and_operator("Olga Operator").await;
    let id = trade_case(&app, &pkey, "Formulare GmbH").await;
    let mut c = Console::signed_in(&app, &okey).await;
    let page = format!("/console/trade/{id}");
    let token = c.csrf(&page).await;

    // Fee and payment; a German decimal comma is read as the point.
    let res = c
        .post(
            &format!("{page}/details"),
            &[
                ("csrf", &token),
                ("office", ""),
                ("city_fee", "26,50"),
                ("is_paid", "true"),
            ],
        )
        .await;
    assert_eq!(location(&res), page);
    let case = trade_of(&app, &id, &okey).await;
    assert_eq!(
        (case["city_fee"].as_f64(), case["is_paid"].as_bool()),
        (Some(26.5), Some(true)),
        "{case}"
    );
    let (_, html) = c.text(&page).await;
    assert!(html.contains("class=\"flash ok\""));
    assert!(
        html.contains("value=\"26.50\""),
        "the form shows the fee now"
    );
    // The history has the change, with both values and the operator's name.
    assert!(html.contains("<del>—</del> → <ins>26.50</ins>"), "{html}");
    assert!(
        html.contains("<del>false</del> → <ins>true</ins>"),
        "{html}"
    );
    assert!(html.contains("Olga Operator <small"), "{html}");
    // A fee that is none: the API's rule names the field; nothing changes.
    c.post(
        &format!("{page}/details"),
        &[("csrf", &token), ("city_fee", "viel"), ("is_paid", "false")],
    )
    .await;
    let (_, html) = c.text(&page).await;
    assert!(
        html.contains("class=\"flash error\"") && html.contains("<code>city_fee</code>"),
        "{html}"
    );
    let case = trade_of(&app, &id, &okey).await;
    assert_eq!(
        (case["city_fee"].as_f64(), case["is_paid"].as_bool()),
        (Some(26.5), Some(true))
    );

    // Identity of owner 0: recorded now, then removed.
    let identity = format!("/v1/operator/trade-registrations/{id}/owners/0/identity-verified");
    c.post(
        &format!("{page}/owners/0/identity"),
        &[("csrf", &token), ("action", "verify")],
    )
    .await;
    let v = app.read(&identity, &okey).await;
    assert!(v["identity_verified_at"].is_string(), "{v}");
    c.post(
        &format!("{page}/owners/0/identity"),
        &[("csrf", &token), ("action", "remove")],
    )
    .await;
    let v = app.read(&identity, &okey).await;
    assert!(v["identity_verified_at"].is_null(), "{v}");
    c.post(
        &format!("{page}/owners/9/identity"),
        &[("csrf", &token), ("action", "verify")],
    )
    .await;
    let (_, html) = c.text(&page).await;
    assert!(html.contains("class=\"flash error\""), "no owner 9");

    // A tax case's office: a number that is none is refused with the field named; a real one
    // is assigned and the XML written again.
    let tax = ug_tax_case(&app, &pkey).await;
    let tax_page = format!("/console/tax/{tax}");
    // The determination's office is offered by its full name.
    let (_, html) = c.text(&tax_page).await;
    assert!(
        html.contains("<option value=\"2742\">Finanzamt Trier (2742)</option>"),
        "{html}"
    );
    // Why the create determined it: the basis of the rule (a corporation in Rheinland-Pfalz,
    // the register's office).
    assert!(html.contains("id=\"tax-office-basis\""), "{html}");
    assert!(html.contains("GV100AD"), "the basis's source: {html}");
    // What the XML leaves out, for the operator to enter in ELSTER's portal: the seat's line
    // 3 and the missing articles of association of line 227.
    assert!(html.contains("id=\"not-in-xml\""), "{html}");
    assert!(
        html.contains("<strong>22 Beigefügte Unterlagen, Zeile 227</strong>: nicht angegeben"),
        "{html}"
    );
    // The request's fields by the questionnaire's names, the new ones too.
    for label in ["Nennbetrag (€)", "Lfd. Nr. der Geschäftsanteile"] {
        assert!(html.contains(label), "{label}: {html}");
    }
    c.post(
        &format!("{tax_page}/office"),
        &[("csrf", &token), ("tax_office_number", "0000")],
    )
    .await;
    let (_, html) = c.text(&tax_page).await;
    assert!(html.contains("<code>tax_office_number</code>"), "{html}");
    c.post(
        &format!("{tax_page}/office"),
        &[("csrf", &token), ("tax_office_number", "2741")],
    )
    .await;
    let case = app
        .read(&format!("/v1/tax-registration/{tax}"), &pkey)
        .await;
    assert_eq!(case["tax_office"]["number"], "2741", "{case}");
    // An office the operator assigned has no basis of the service's.
    assert!(case["tax_office"].get("basis").is_none(), "{case}");
    let (_, html) = c.text(&tax_page).await;
    assert!(!html.contains("id=\"tax-office-basis\""), "{html}");

    // Its XML is readable on a page of its own, escaped.
    let (_, html) = c.text(&tax_page).await;
    let at = html.find("/xml\"").expect("an XML link");
    let start = html[..at].rfind("href=\"").unwrap() + 6;
    let (s, xml_page) = c.text(&html[start..at + 4]).await;
    assert_eq!(s, 200);
    assert!(xml_page.contains("&lt;Elster"), "the XML as text");
    assert!(xml_page.contains("2741"));
}

#[tokio::test]
async fn the_queue_finds_a_case_by_name_owner_id_postal_code_and_provider() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, pkey) = app.provider("Plattform Eins").await;
    let (p2, pkey2) = app.provider("Plattform Zwei").await;
    let (_, okey) = app.operator("O").await;
    let bakery = trade_case(&app, &pkey, "Sonnen Bäckerei GmbH").await;
    let mut other = example("self");
    other["name"] = json!("Zweite Werkstatt GmbH");
    other["registered_office"]["zip"] = json!("10117");
    other["owners"][0]["last_name"] = json!("Quandtfeld");
    let workshop = app.create("/v1/trade-registration", &pkey2, &other).await;
    let mut c = Console::signed_in(&app, &okey).await;
    let found = |page: &str| -> Vec<String> {
        [&bakery, &workshop]
            .into_iter()
            .filter(|id| page.contains(&format!("href=\"/console/trade/{id}\"")))
            .cloned()
            .collect()
    };
    for (query, want) in [
        ("q=b%C3%A4ckerei", vec![bakery.clone()]),
        ("q=quandtfeld", vec![workshop.clone()]),
        (&*format!("q={workshop}"), vec![workshop.clone()]),
        ("q=10117", vec![workshop.clone()]),
        ("q=10115", vec![bakery.clone()]),
        (&*format!("provider={p2}"), vec![workshop.clone()]),
        ("status=submitted", vec![]),
        ("", vec![bakery.clone(), workshop.clone()]),
    ] {
        let (s, page) = c.text(&format!("/console/trade?{query}")).await;
        assert_eq!(s, 200, "{query}");
        assert_eq!(found(&page), want, "{query}");
    }
    // Newest first puts the workshop (created last) before the bakery.
    let (_, page) = c.text("/console/trade?order=newest").await;
    assert!(page.find(&workshop).unwrap() < page.find(&bakery).unwrap());
    // A search that is none: the field is named, with a 422.
    let (s, page) = c.text("/console/trade?q=ab").await;
    assert_eq!(s, 422);
    assert!(page.contains("<code>q</code>"), "{page}");
    // Counts by status: two cases waiting for their owners.
    let (_, page) = c.text("/console/trade").await;
    assert!(page.contains("Alle <strong>2</strong>"), "{page}");
}

#[tokio::test]
async fn an_office_is_chosen_from_the_determinations_candidates() {
    let (app, pkey, okey) = provider_and_operator("Olga Operator").await;
    // An establishment whose postal code did not decide the municipality.
    let mut body = example("self");
    body["registered_office"]["zip"] = json!("54298");
    body["registered_office"]["city"] = json!("Musterdorf");
    let id = app.create("/v1/trade-registration", &pkey, &body).await;
    let case = trade_of(&app, &id, &okey).await;
    let candidates = case["trade_office_candidates"]
        .as_array()
        .expect("candidates")
        .clone();
    assert!(candidates.len() > 1, "{case}");
    let (s, _) = json_of(
        app.client
            .put(app.url("/v1/operator/trade-offices/072355007"))
            .bearer_auth(&okey)
            .json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200);

    let mut c = Console::signed_in(&app, &okey).await;
    let page = format!("/console/trade/{id}");
    let (_, html) = c.text(&page).await;
    let choice = "072355007|07235001";
    assert!(
        html.contains(&format!("value=\"{choice}\"")),
        "the candidate is offered: {html}"
    );
    let token = c.csrf(&page).await;
    c.post(
        &format!("{page}/details"),
        &[
            ("csrf", &token),
            ("office", choice),
            ("city_fee", ""),
            ("is_paid", "false"),
        ],
    )
    .await;
    let case = trade_of(&app, &id, &okey).await;
    assert_eq!(case["trade_office"]["key"], "072355007", "{case}");
    assert!(case.get("trade_office_candidates").is_none());
    let (_, html) = c.text(&page).await;
    assert!(
        html.contains("Verbandsgemeindeverwaltung Trier-Land"),
        "{html}"
    );
}

async fn json_of(res: reqwest::Response) -> (u16, serde_json::Value) {
    common::json(res).await
}

/// The places a case kind must reach that the compiler cannot check
/// (docs/adding-a-case-kind.md): for every kind of `CaseKind::ALL`, every status of its
/// lifecycle has its webhook event, in the OpenAPI document's webhooks section and its event
/// type schema; `/metrics` has its series, zero included; and the console has its queue, which
/// names every status in both languages in its status filter.
#[tokio::test]
async fn every_case_kind_reaches_the_places_the_compiler_cannot_check() {
    use domain::case::CaseKind;
    use domain::case_state::CaseStatus;
    use server::console::i18n::Lang;
    let (app, _, okey) = provider_and_operator("Olga Operator").await;
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let schema = &doc["components"]["schemas"]["WebhookEventType"]["enum"];
    let res = app.get("/metrics", Some(&okey)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let metrics = res.text().await.unwrap();
    let mut console = Console::signed_in(&app, &okey).await;
    for &kind in CaseKind::ALL {
        let statuses = CaseStatus::of(kind);
        assert!(!statuses.is_empty(), "{kind:?} has a lifecycle");
        let (code, de) = console.text(&format!("/console/{}", kind.as_str())).await;
        assert_eq!(code, 200, "{kind:?} has a console queue");
        console.get("/console/lang/en").await;
        let (_, en) = console.text(&format!("/console/{}", kind.as_str())).await;
        console.get("/console/lang/de").await;
        for status in statuses {
            let event = domain::webhook::event_type(status)
                .unwrap_or_else(|| panic!("{status:?} has a webhook event"));
            assert!(
                event.starts_with(domain::webhook::event_prefix(kind)),
                "{event}"
            );
            assert!(
                doc["webhooks"][event]["post"].is_object(),
                "{event} documented"
            );
            assert!(
                schema.as_array().unwrap().iter().any(|v| v == event),
                "{event} in WebhookEventType"
            );
            let series = format!(
                "filing_cases{{kind=\"{}\",environment=\"production\",status=\"{}\"}} 0",
                kind.as_str(),
                status.as_str()
            );
            assert!(metrics.contains(&series), "{series} in /metrics");
            for (lang, page) in [(Lang::De, &de), (Lang::En, &en)] {
                let option = format!(
                    "<option value=\"{}\">{}</option>",
                    status.as_str(),
                    lang.status(status)
                );
                assert!(page.contains(&option), "{option} on the {kind:?} queue");
            }
        }
    }
}
