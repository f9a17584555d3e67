//! The console's two languages: German (the default: the operators file with German
//! authorities) and English. Every visible text goes through [`Lang::t`]; a key without a
//! translation is a compile-time match arm away, and `tests/console.rs` checks that no page
//! shows a raw key.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use domain::case_state::CaseStatus;
use domain::lifecycle::{TaxStatus, TradeStatus};

/// The cookie that keeps the chosen language (not a secret: `SameSite=Lax` is enough).
pub const COOKIE: &str = "filing_lang";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    De,
    En,
}

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::De => "de",
            Lang::En => "en",
        }
    }

    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "de" => Some(Lang::De),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The other language, which the switch offers.
    pub fn other(self) -> Lang {
        match self {
            Lang::De => Lang::En,
            Lang::En => Lang::De,
        }
    }

    /// The text of `key` in this language; the key itself if there is none (a test fails on it).
    pub fn t(self, key: &'static str) -> &'static str {
        let (de, en) = match key {
            "app" => ("Fallbearbeitung", "Case processing"),
            "skip" => ("Zum Inhalt springen", "Skip to content"),
            "signin.title" => ("Anmelden", "Sign in"),
            "signin.key" => ("Operator-Schlüssel", "Operator key"),
            "signin.hint" => (
                "Der API-Schlüssel eines Operators (rfs_op_…). Anbieter- und Kundenschlüssel können sich nicht anmelden.",
                "An operator's API key (rfs_op_…). Provider and client keys cannot sign in.",
            ),
            "signin.submit" => ("Anmelden", "Sign in"),
            "signin.refused" => (
                "Dieser Schlüssel ist kein gültiger Operator-Schlüssel.",
                "This key is not a valid operator key.",
            ),
            "signin.expired" => (
                "Die Sitzung ist abgelaufen. Bitte erneut anmelden.",
                "The session has expired. Please sign in again.",
            ),
            "signout" => ("Abmelden", "Sign out"),
            "signedin" => ("Angemeldet als", "Signed in as"),
            "lang.switch" => ("English", "Deutsch"),
            "nav.trade" => ("Gewerbeanmeldungen", "Trade registrations"),
            "nav.tax" => ("Steuerliche Erfassungen", "Tax registrations"),
            "queue.all" => ("Alle", "All"),
            "queue.search" => ("Suche", "Search"),
            "queue.search.hint" => (
                "Firma, Kundenreferenz, Fall-ID, Inhaber-, Geschäftsführer- oder Gesellschaftername, Postleitzahl",
                "Company, client reference, case id, owner, director or partner name, postal code",
            ),
            "queue.filter" => ("Filtern", "Filter"),
            "queue.environment" => ("Umgebung", "Environment"),
            "queue.provider" => ("Anbieter", "Provider"),
            "queue.status" => ("Status", "Status"),
            "queue.office" => (
                "Amt (Schlüssel oder Finanzamtsnummer)",
                "Office (key or tax office number)",
            ),
            "queue.order" => ("Reihenfolge", "Order"),
            "queue.oldest" => ("Älteste zuerst", "Oldest first"),
            "queue.newest" => ("Neueste zuerst", "Newest first"),
            "queue.any" => ("alle", "any"),
            "queue.shown" => ("angezeigt", "shown"),
            "queue.next" => ("Nächste Seite", "Next page"),
            "queue.first" => ("Erste Seite", "First page"),
            "queue.empty" => ("Keine Fälle.", "No cases."),
            "queue.counts" => ("Fälle nach Status", "Cases by status"),
            "queue.waits" => ("wartet auf", "waits for"),
            "col.company" => ("Firma", "Company"),
            "col.reference" => ("Kundenreferenz", "Client reference"),
            "col.status" => ("Status", "Status"),
            "col.package" => ("Paket", "Package"),
            "col.office" => ("Amt", "Office"),
            "col.created" => ("Angelegt", "Created"),
            "col.environment" => ("Umgebung", "Environment"),
            "col.provider" => ("Anbieter", "Provider"),
            "col.legal_form" => ("Rechtsform", "Legal form"),
            "env.production" => ("Produktion", "Production"),
            "env.sandbox" => ("Sandbox", "Sandbox"),
            "case.trade" => ("Gewerbeanmeldung", "Trade registration"),
            "case.tax" => ("Steuerliche Erfassung", "Tax registration"),
            "case.id" => ("Fall-ID", "Case id"),
            "case.public_id" => ("ID beim Anbieter", "Id at the provider"),
            "case.overview" => ("Überblick", "Overview"),
            "case.fields" => (
                "Angaben, wie das Amt sie liest",
                "The data as the office reads it",
            ),
            "case.documents" => ("Dokumente", "Documents"),
            "case.history" => ("Verlauf", "History"),
            "case.webhooks" => ("Webhook-Zustellungen", "Webhook deliveries"),
            "case.steps" => ("Nächste Schritte", "Next steps"),
            "case.no_steps" => (
                "Von diesem Status aus ist kein Schritt möglich.",
                "No step is possible from this status.",
            ),
            "case.fee" => ("Gebühr des Amts (EUR)", "Office fee (EUR)"),
            "case.paid" => ("Bezahlt", "Paid"),
            "case.tax_number" => ("Steuernummer", "Tax number"),
            "case.tax_office" => ("Finanzamt", "Tax office"),
            "case.tax_office_basis" => ("Grundlage des Finanzamts", "Why this office"),
            "case.not_in_xml" => (
                "Nicht in der XML-Datei: im ELSTER-Portal von Hand einzutragen",
                "Not in the XML: to enter by hand in ELSTER's portal",
            ),
            "case.line" => ("Zeile", "line"),
            "case.not_given" => ("nicht angegeben", "not given"),
            "case.trade_office" => ("Gewerbeamt", "Trade office"),
            "case.none" => ("—", "—"),
            "case.yes" => ("ja", "yes"),
            "case.no" => ("nein", "no"),
            "doc.type" => ("Art", "Type"),
            "doc.name" => ("Name", "Name"),
            "doc.size" => ("Größe", "Size"),
            "doc.open" => ("Öffnen", "Open"),
            "doc.download" => ("Herunterladen", "Download"),
            "doc.view_xml" => ("XML ansehen", "View XML"),
            "doc.none" => ("Keine Dokumente.", "No documents."),
            "hist.at" => ("Zeit", "Time"),
            "hist.step" => ("Schritt", "Step"),
            "hist.actor" => ("Wer", "Who"),
            "hist.reason" => ("Grund", "Reason"),
            "hist.changes" => ("Änderungen", "Changes"),
            "hist.change" => ("Angaben geändert", "Details changed"),
            "hook.event" => ("Ereignis", "Event"),
            "hook.endpoint" => ("Empfänger", "Endpoint"),
            "hook.state" => ("Zustand", "State"),
            "hook.attempts" => ("Versuche", "Attempts"),
            "hook.none" => ("Keine Zustellungen.", "No deliveries."),
            "hook.unreadable" => (
                "Die Zustellungen konnten nicht gelesen werden.",
                "The deliveries could not be read.",
            ),
            "hook.deleted" => ("(gelöscht)", "(deleted)"),
            "hook.delivered" => ("zugestellt", "delivered"),
            "hook.failed" => ("aufgegeben", "given up"),
            "hook.pending" => ("ausstehend", "pending"),
            "step.submit" => ("Beim Amt eingereicht", "Filed with the office"),
            "step.unblock" => ("Fortsetzen (eingereicht)", "Resume (submitted)"),
            "step.block" => ("Blockieren", "Block"),
            "step.complete_trade" => (
                "Gewerbeschein hochladen und abschließen",
                "Upload the trade licence and complete",
            ),
            "step.complete_tax" => (
                "Mit Steuernummer abschließen",
                "Complete with the tax number",
            ),
            "step.reject" => ("Abgelehnt (ELSTER-Meldung)", "Rejected (ELSTER message)"),
            "step.resubmit" => ("Erneut übermittelt", "Sent again"),
            "step.reason" => ("Grund / Notiz", "Reason / note"),
            "step.reason_required" => ("Grund (Pflicht)", "Reason (required)"),
            "step.licence" => ("Gewerbeschein (PDF)", "Trade licence (PDF)"),
            "step.save" => ("Speichern", "Save"),
            "step.office_choice" => ("Amt aus der Ermittlung", "Office from the determination"),
            "step.assign_office" => ("Finanzamt zuweisen", "Assign the tax office"),
            "step.tax_office_number" => (
                "Finanzamtsnummer (4 Ziffern)",
                "Tax office number (4 digits)",
            ),
            "step.fees" => ("Amt, Gebühr und Zahlung", "Office, fee and payment"),
            "step.identity" => ("Identitätsprüfung", "Identity verification"),
            "step.verify" => ("Identität geprüft (jetzt)", "Identity verified (now)"),
            "step.unverify" => ("Prüfung entfernen", "Remove the verification"),
            "step.verified_at" => ("geprüft am", "verified at"),
            "step.not_verified" => ("nicht geprüft", "not verified"),
            "owner" => ("Inhaber", "Owner"),
            "flash.verified" => (
                "Identitätsprüfung eingetragen.",
                "Identity verification recorded.",
            ),
            "flash.unverified" => (
                "Identitätsprüfung entfernt.",
                "Identity verification removed.",
            ),
            "flash.done" => ("Erledigt.", "Done."),
            "flash.failed" => ("Nicht ausgeführt:", "Not done:"),
            "error.title" => ("Fehler", "Error"),
            "error.back" => ("Zurück zur Übersicht", "Back to the overview"),
            _ => (key, key),
        };
        match self {
            Lang::De => de,
            Lang::En => en,
        }
    }

    /// A case status as an operator reads it.
    pub fn status(self, status: impl Into<CaseStatus>) -> &'static str {
        use CaseStatus::{Tax, Trade};
        let (de, en) = match status.into() {
            Trade(TradeStatus::Initiated) => ("angelegt", "initiated"),
            Trade(TradeStatus::FormRendered) => ("Formular erstellt", "form rendered"),
            Trade(TradeStatus::Submitted) | Tax(TaxStatus::Submitted) => {
                ("eingereicht", "submitted")
            }
            Trade(TradeStatus::Completed) | Tax(TaxStatus::Completed) => {
                ("abgeschlossen", "completed")
            }
            Trade(TradeStatus::Blocked) => ("blockiert", "blocked"),
            Trade(TradeStatus::Cancelled) | Tax(TaxStatus::Cancelled) => ("storniert", "cancelled"),
            Tax(TaxStatus::Validated) => ("geprüft", "validated"),
            Tax(TaxStatus::Rejected) => ("abgelehnt", "rejected"),
        };
        match self {
            Lang::De => de,
            Lang::En => en,
        }
    }

    /// Whom a case in `status` waits for: the queue's hint.
    pub fn waits_for(self, status: impl Into<CaseStatus>) -> &'static str {
        use CaseStatus::{Tax, Trade};
        let (de, en) = match status.into() {
            Trade(TradeStatus::Initiated) => ("System", "the service"),
            Trade(TradeStatus::FormRendered) => (
                "Inhaber: Einreichung der GewA 1",
                "owners: filing the GewA 1",
            ),
            Trade(TradeStatus::Submitted) | Tax(TaxStatus::Submitted) => ("Amt", "the office"),
            Trade(TradeStatus::Blocked) => (
                "Anbieter/Inhaber: Nachreichung",
                "provider/owners: missing items",
            ),
            Tax(TaxStatus::Validated) => ("Operator: Übermittlung", "operator: sending"),
            Tax(TaxStatus::Rejected) => ("Operator: Korrektur", "operator: correction"),
            Trade(TradeStatus::Completed | TradeStatus::Cancelled)
            | Tax(TaxStatus::Completed | TaxStatus::Cancelled) => ("niemand", "nobody"),
        };
        match self {
            Lang::De => de,
            Lang::En => en,
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Lang {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(super::session::cookie(&parts.headers, COOKIE)
            .and_then(Lang::parse)
            .unwrap_or(Lang::De))
    }
}

/// The German name of a field of a stored request (the terms of the GewA 1 and of the
/// Fragebogen zur steuerlichen Erfassung); `None` for a field without one, which the page shows
/// by its API name.
pub fn field_de(key: &str) -> Option<&'static str> {
    Some(match key {
        "accounting_method" => "Gewinnermittlungsart",
        "acquisition_type" => "Art des Betriebs (Haupt-/Nebenerwerb)",
        "address" => "Anschrift",
        "authorized_representative" => "Empfangsbevollmächtigte(r)",
        "bic" => "BIC",
        "birth_name" => "Geburtsname",
        "business_address" => "Betriebsstätte",
        "business_type" => "Art der Tätigkeit",
        "capital" => "Stammkapital",
        "chamber" => "Kammer",
        "city" => "Ort",
        "client_preferred_language" => "Sprache des Kunden",
        "client_reference" => "Kundenreferenz",
        "commercial_register" => "Handelsregister",
        "company_register" => "Register",
        "country" => "Staat",
        "country_of_birth" => "Geburtsland",
        "craft_card" => "Handwerkskarte",
        "directors" => "Geschäftsführer",
        "dob" => "Geburtsdatum",
        "email" => "E-Mail",
        "employee_count" => "Zahl der Beschäftigten",
        "employees" => "Beschäftigte",
        "entities" => "Gesellschafter (Unternehmen)",
        "environment" => "Umgebung",
        "establishment_type" => "Art der Niederlassung",
        "estimated_annual_wage_tax" => "Voraussichtliche Lohnsteuer im Jahr",
        "estimated_balance_amount" => "Voraussichtlicher Saldo",
        "estimated_balance_type" => "Art des Saldos",
        "financial_estimates" => "Voraussichtliche Umsätze und Gewinne",
        "first_name" => "Vorname",
        "fiscal_year_deviates_from_calendar" => "Wirtschaftsjahr abweichend vom Kalenderjahr",
        "fiscal_year_deviating_start_date" => "Beginn des abweichenden Wirtschaftsjahres",
        "following_year" => "Folgejahr",
        "formation_type" => "Art der Gründung",
        "formation_year" => "Gründungsjahr",
        "full_time" => "Vollzeit",
        "gender" => "Geschlecht",
        "has_employees" => "Arbeitnehmer beschäftigt",
        "has_employment_restrictions" => "Beschränkungen der Erwerbstätigkeit",
        "has_public_sector_participation" => "Beteiligung der öffentlichen Hand",
        "held" => "gehalten",
        "iban" => "IBAN",
        "individuals" => "Gesellschafter (Personen)",
        "industrial_license" => "Erlaubnis nach Gewerberecht",
        "is_holding" => "Holding",
        "is_managing_partner" => "Geschäftsführende(r) Gesellschafter(in)",
        "issue_date" => "Ausstellungsdatum",
        "issuing_authority" => "Ausstellende Behörde",
        "last_name" => "Familienname",
        "legal_form" => "Rechtsform",
        "location" => "Ort",
        "middle_name" => "Weitere Vornamen",
        "name" => "Name",
        "nationality" => "Staatsangehörigkeit",
        "notarization_date" => "Tag der Beurkundung",
        "notary" => "Notar(in)",
        "operational_activity_start_date" => "Beginn der Tätigkeit",
        "other_nationalities" => "Weitere Staatsangehörigkeiten",
        "owners" => "Inhaber / gesetzliche Vertreter",
        "package" => "Paket",
        "paid_in_capital" => "Eingezahltes Kapital",
        "part_time" => "Teilzeit",
        "partners" => "Gesellschafter",
        "partnership_agreement_date" => "Datum des Gesellschaftsvertrags",
        "payroll_start_date" => "Beginn der Lohnzahlung",
        "phone" => "Telefon",
        "place_of_birth" => "Geburtsort",
        "power_of_attorney" => "Vollmacht",
        "previous_business" => "Früherer Gewerbetreibender oder früherer Firmenname",
        "previous_establishment" => "Frühere Betriebsstätte",
        "main_establishment" => "Hauptniederlassung",
        "profit_amount" => "Gewinn",
        "purpose" => "Angemeldete Tätigkeit (Gegenstand)",
        "reason" => "Grund der Anmeldung",
        "regime" => "Besteuerungsart",
        "registered_office" => "Sitz",
        "registration_application_date" => "Tag der Anmeldung zum Register",
        "registration_court" => "Registergericht",
        "registration_date" => "Tag der Eintragung",
        "registration_number" => "Registernummer",
        "request_reverse_charge_certificate" => "Bescheinigung nach § 13b UStG beantragt",
        "request_vat_id" => "USt-IdNr. beantragt",
        "residence_permit" => "Aufenthaltstitel",
        "return_frequency" => "Voranmeldungszeitraum",
        "revenue_amount" => "Umsatz",
        "sells_via_online_marketplaces" => "Verkauf über elektronische Marktplätze",
        "share_percentage" => "Beteiligung (%)",
        "shareholder_employee_count" => "Davon Gesellschafter",
        "shareholders" => "Gesellschafter",
        "state" => "Bundesland",
        "street" => "Straße und Hausnummer",
        "street_second_line" => "Adresszusatz",
        "tax_identification_number" => "Steuer-ID",
        "vat" => "Umsatzsteuer",
        "zip" => "Postleitzahl",
        "tax_office_number" => "Finanzamtsnummer",
        "tax_office" => "Finanzamt",
        "city_fee" => "Gebühr des Amts",
        "is_paid" => "Bezahlt",
        "trade_office" => "Gewerbeamt",
        "trade_office.municipality_key" => "Gemeindekennzahl",
        "nominal_amount" => "Nennbetrag (€)",
        "share_numbers" => "Lfd. Nr. der Geschäftsanteile",
        "website" => "Internetadresse",
        // A sole proprietor's own fields (issue 55).
        "activity_kind" => "Art der Tätigkeit (Einkunftsart)",
        "preparations_start_date" => "Beginn einschließlich Vorbereitung",
        "profit_determination" => "Gewinnermittlung",
        "owner" => "Inhaber/in",
        "spouse" => "Ehegatte / Lebenspartner(in)",
        "salutation" => "Anrede",
        "title" => "Titel",
        "occupation" => "Ausgeübter Beruf",
        "religion" => "Religion (Schlüssel)",
        "marital_status" => "Familienstand",
        "marital_status_since" => "Familienstand seit",
        "cash_accounting_reason" => "Grund der Istversteuerung",
        "prepayments" => "Vorauszahlungen",
        "employment_income" => "Einkünfte aus nichtselbständiger Arbeit",
        "capital_income" => "Einkünfte aus Kapitalvermögen",
        "rental_income" => "Einkünfte aus Vermietung und Verpachtung",
        "other_income" => "Sonstige Einkünfte",
        "special_expenses" => "Sonderausgaben",
        "earlier_circumstances" => "Bisherige Verhältnisse",
        "previous_tax_number" => "Bisherige Steuernummer",
        "previous_tax_office" => "Bisheriges Finanzamt",
        "previous_address" => "Bisherige Anschrift",
        "previous_self_employment" => "Frühere selbständige Tätigkeit",
        "trade_registration_id" => "Gewerbeanmeldung",
        "place_of_management" => "Ort der Geschäftsleitung",
        "tax_advisor" => "Steuerliche Beratung",
        "authorized_recipient" => "Empfangsbevollmächtigte(r)",
        "bank_account_holder" => "Kontoinhaber(in)",
        "marginal_employee_count" => "Davon geringfügig Beschäftigte",
        "request_construction_exemption_certificate" => {
            "Freistellungsbescheinigung (§ 48b EStG) beantragt"
        }
        "attachments" => "Beigefügte Unterlagen",
        "articles_of_association" => "Gesellschaftsvertrag",
        "shareholder_list" => "Gesellschafterliste",
        "sepa_mandate" => "SEPA-Lastschriftmandat",
        "po_box" => "Postfach",
        "manages_own_assets_only" => "Nur Verwaltung eigenen Vermögens",
        "has_trust_relationships" => "Treuhandverhältnisse",
        "payroll_establishment" => "Lohnsteuerliche Betriebsstätte",
        "payroll" => "Lohnsteuer",
        "source_product" => "Herkunft",
        _ => return None,
    })
}
