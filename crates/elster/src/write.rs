//! Rendering a tax registration as an ElsterXML v11 document: a [`TaxRegistration`] (UG, GmbH)
//! around `FsE_KapG`, a [`GbrTaxRegistration`] (GbR, eGbR) around `FsE_PersG`. The envelope and
//! the blocks both questionnaires share (addresses, persons, bank account, profit, payroll,
//! VAT) are written by the same functions.

use std::io;

use domain::gbr::{GbrTaxRegistration, PartnershipLegalForm};
use domain::tax::{
    AccountingMethod, BalanceType, CommercialRegister, FinancialEstimates, FormationType,
    KapLegalForm, Payroll, Percentage, ReturnFrequency, ReverseChargeServiceType, TaxAddress,
    TaxRegistration, Vat,
};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use time::Date;

use crate::street::split_street;

/// Namespace of the ElsterXML v11 envelope.
pub const ELSTER_NS: &str = "http://www.elster.de/elsterxml/schema/v11";
/// Namespace of the questionnaire for corporations (Kapitalgesellschaften), version 202401.
pub const FSE_KAPG_NS: &str = "http://finkonsens.de/elster/elsterfse/kapg/v202401";
/// The `version` attribute of `FsE_KapG`.
pub const FSE_KAPG_VERSION: &str = "202401";
/// Namespace of the questionnaire for partnerships (Personengesellschaften), version 202401.
/// Not published: named after [`FSE_KAPG_NS`] (docs/elster.md).
pub const FSE_PERSG_NS: &str = "http://finkonsens.de/elster/elsterfse/persg/v202401";
/// The `version` attribute of `FsE_PersG`.
pub const FSE_PERSG_VERSION: &str = "202401";
/// `Testmerker` of a test submission: ELSTER processes it without effect.
pub const TESTMERKER_SANDBOX: &str = "700000004";

/// What the document needs besides the registration: the addressee and the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlContext {
    /// `Empfaenger id="F"`: the 4-digit tax office number (BUFA). The caller resolves it.
    pub tax_office_number: String,
    /// Sandbox: `Testmerker` 700000004, a test case for ELSTER.
    pub sandbox: bool,
    /// `HerstellerID`: 5 digits from configuration (74931 is ELSTER's test manufacturer id).
    pub hersteller_id: String,
    /// `DatenLieferant`: the submitting party, from configuration (1 to 256 characters).
    pub daten_lieferant: String,
    /// `NutzdatenTicket`: the caller's reference of this payload, 1 to 15 letters, digits, `-`
    /// or `_` (e.g. derived from the registration id).
    pub nutzdaten_ticket: String,
}

#[derive(Debug, thiserror::Error)]
pub enum XmlError {
    /// A field of the [`XmlContext`] has the wrong shape (the message names it).
    #[error("invalid XML context: {0}")]
    Context(&'static str),
    #[error("writing the XML failed: {0}")]
    Io(#[from] io::Error),
    /// The written document does not pass the bundled schemas: a bug, never the caller's fault.
    #[error("the generated XML violates its schema: {}", .0.join("; "))]
    SchemaViolations(Vec<String>),
}

impl XmlContext {
    fn check(&self) -> Result<(), XmlError> {
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(&self.tax_office_number, 4) {
            return Err(XmlError::Context("tax_office_number must be 4 digits"));
        }
        if !digits(&self.hersteller_id, 5) {
            return Err(XmlError::Context("hersteller_id must be 5 digits"));
        }
        let n = self.daten_lieferant.trim().chars().count();
        if n == 0 || n > 256 {
            return Err(XmlError::Context(
                "daten_lieferant must have 1 to 256 characters",
            ));
        }
        let t = &self.nutzdaten_ticket;
        if t.is_empty()
            || t.len() > 15
            || !t
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(XmlError::Context(
                "nutzdaten_ticket must be 1 to 15 letters, digits, '-' or '_'",
            ));
        }
        Ok(())
    }
}

/// The ElsterXML document of `reg` (`DatenArt` KapG, `FsE_KapG`): UTF-8 with an XML
/// declaration, indented by two spaces, byte-for-byte the same for the same input. Does not
/// validate (see [`crate::validate`]).
pub fn write(reg: &TaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    document(ctx, "KapG", |x| fse_kapg(x, reg))
}

/// The ElsterXML document of a partnership (`DatenArt` PersG, `FsE_PersG`), written like
/// [`write`]. Does not validate (see [`crate::validate`]).
pub fn write_persg(reg: &GbrTaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    document(ctx, "PersG", |x| fse_persg(x, reg))
}

/// The envelope with `payload` as its `Nutzdaten`.
fn document(
    ctx: &XmlContext,
    daten_art: &str,
    payload: impl FnOnce(&mut Xml) -> io::Result<()>,
) -> Result<Vec<u8>, XmlError> {
    ctx.check()?;
    let mut x = Xml {
        w: Writer::new_with_indent(Vec::with_capacity(8 * 1024), b' ', 2),
    };
    x.w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    x.open_with("Elster", &[("xmlns", ELSTER_NS)])?;
    transfer_header(&mut x, ctx, daten_art)?;
    x.open("DatenTeil")?;
    x.open("Nutzdatenblock")?;
    x.open_with("NutzdatenHeader", &[("version", "11")])?;
    x.leaf("NutzdatenTicket", &ctx.nutzdaten_ticket)?;
    x.leaf_with("Empfaenger", &[("id", "F")], &ctx.tax_office_number)?;
    x.close("NutzdatenHeader")?;
    x.open("Nutzdaten")?;
    payload(&mut x)?;
    x.close("Nutzdaten")?;
    x.close("Nutzdatenblock")?;
    x.close("DatenTeil")?;
    x.close("Elster")?;
    let mut out = x.w.into_inner();
    out.push(b'\n');
    Ok(out)
}

fn transfer_header(x: &mut Xml, ctx: &XmlContext, daten_art: &str) -> io::Result<()> {
    x.open_with("TransferHeader", &[("version", "11")])?;
    x.leaf("Verfahren", "ElsterFSE")?;
    x.leaf("DatenArt", daten_art)?;
    x.leaf("Vorgang", "send-Auth")?;
    if ctx.sandbox {
        x.leaf("Testmerker", TESTMERKER_SANDBOX)?;
    }
    x.leaf("HerstellerID", &ctx.hersteller_id)?;
    x.leaf("DatenLieferant", ctx.daten_lieferant.trim())?;
    x.open("Datei")?;
    x.leaf("Verschluesselung", "CMSEncryptedData")?;
    x.leaf("Kompression", "GZIP")?;
    // Filled in by ERiC when it encrypts and sends the document (as in ELSTER's own examples).
    x.open("Erstellung")?;
    x.open("Eric")?;
    x.leaf("Version", "")?;
    x.close("Eric")?;
    x.close("Erstellung")?;
    x.close("Datei")?;
    x.close("TransferHeader")
}

fn fse_kapg(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    // Gründung einer Kapitalgesellschaft.
    questionnaire(x, "FsE_KapG", FSE_KAPG_NS, FSE_KAPG_VERSION, "GRNDKPG")?;
    allg_angaben(x, reg)?;
    gesellschafter(x, reg)?;
    x.open("Gruendung")?;
    x.leaf(
        "AuswahlBarSach",
        match reg.formation_type {
            FormationType::Cash => "1",
            FormationType::InKind => "2",
            FormationType::Conversion => "3",
        },
    )?;
    x.close("Gruendung")?;
    festsetzung(x, &reg.financial_estimates)?;
    lohnberechnung(x, reg.has_employees, reg.payroll.as_ref())?;
    umsatzsteuer(x, &reg.financial_estimates, &reg.vat)?;
    x.close("FsE_KapG")
}

/// Opens the questionnaire's root and writes its type and the `Ordnungskriterium` (no tax
/// number yet).
fn questionnaire(
    x: &mut Xml,
    root: &str,
    namespace: &str,
    version: &str,
    fragebogen_typ: &str,
) -> io::Result<()> {
    x.open_with(root, &[("xmlns", namespace), ("version", version)])?;
    x.leaf("FragebogenTyp", fragebogen_typ)?;
    x.open("Ordnungskriterium")?;
    x.leaf("OrdNrArt", "O")?;
    x.close("Ordnungskriterium")
}

fn allg_angaben(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    x.leaf("Firmenname", reg.name.trim())?;
    x.leaf("SitzKapGes", reg.address.city.trim())?;
    adrkette(x, &reg.address)?;
    x.leaf("ArtTaet", reg.purpose.trim())?;
    for d in &reg.directors {
        x.open("Vertreter")?;
        let first = match d.middle_name.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => format!("{} {m}", d.first_name.trim()),
            _ => d.first_name.trim().to_owned(),
        };
        nat_pers(
            x,
            &first,
            &d.last_name,
            d.dob,
            d.tax_identification_number.as_ref().map(|t| t.0.as_str()),
            &d.address,
        )?;
        x.close("Vertreter")?;
    }
    bank_konto(x, reg.iban.as_deref(), reg.bic.as_deref())?;
    x.open("NotarVertrag")?;
    x.leaf("DatumGVertrag", &date(reg.notarization_date))?;
    x.open("HrgAngaben")?;
    match &reg.commercial_register {
        CommercialRegister::NotApplied => {
            x.leaf("HrgAntragGestellt", "false")?;
            x.leaf("HrgEintragVorhanden", "false")?;
        }
        CommercialRegister::ApplicationFiled {
            registration_application_date,
        } => {
            x.leaf("HrgAntragGestellt", "true")?;
            x.leaf("TagDesAntrags", &date(*registration_application_date))?;
            x.leaf("HrgEintragVorhanden", "false")?;
        }
        CommercialRegister::Registered {
            registration_number,
            registration_date,
            registration_court,
        } => {
            x.leaf("HrgAntragGestellt", "true")?;
            x.leaf("HrgEintragVorhanden", "true")?;
            x.leaf("TagDerEintragung", &date(*registration_date))?;
            x.leaf("HandelsregisterGericht", registration_court.trim())?;
            x.leaf("HrgRegisterbezeichnung", "HRB")?;
            x.leaf("HrgRegisternummer", registration_number.trim())?;
        }
    }
    x.close("HrgAngaben")?;
    if let Some(n) = &reg.notary {
        x.open("GruendungsNotar")?;
        x.leaf("Vorname", n.first_name.trim())?;
        x.leaf("Name", n.last_name.trim())?;
        adrkette(x, &n.address)?;
        x.close("GruendungsNotar")?;
    }
    x.close("NotarVertrag")?;
    x.leaf(
        "Rechtsform",
        match reg.legal_form {
            KapLegalForm::Gmbh => "GmbH",
            KapLegalForm::Ug => "UG (haftungsbeschränkt)",
        },
    )?;
    x.leaf(
        "BeginnTaetigkeit",
        &date(reg.operational_activity_start_date),
    )?;
    gewinn_ermittlung(
        x,
        reg.fiscal_year_deviates_from_calendar,
        reg.fiscal_year_deviating_start_date,
    )?;
    x.open("HoeheGrundStammkapital")?;
    x.leaf("Grundstammkapital", &reg.capital.to_string())?;
    x.leaf("Eingezahlteskapital", &reg.paid_in_capital.to_string())?;
    x.close("HoeheGrundStammkapital")?;
    x.close("AllgAngaben")
}

fn gesellschafter(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("Gesellschafter")?;
    let mut zeichner = 0u32;
    for s in &reg.shareholders.individuals {
        zeichner += 1;
        x.open("Anteilseigner")?;
        x.leaf("ZeichnerNummer", &zeichner.to_string())?;
        x.open("NatPers")?;
        nat_pers(
            x,
            s.first_name.trim(),
            &s.last_name,
            s.dob,
            s.tax_identification_number.as_ref().map(|t| t.0.as_str()),
            &s.address,
        )?;
        x.close("NatPers")?;
        beteiligung(x, reg.capital, s.share_percentage)?;
        x.close("Anteilseigner")?;
    }
    for s in &reg.shareholders.entities {
        zeichner += 1;
        x.open("Anteilseigner")?;
        x.leaf("ZeichnerNummer", &zeichner.to_string())?;
        x.open("NNatPers")?;
        x.leaf("Firmenname", s.name.trim())?;
        adrkette(x, &s.address)?;
        x.close("NNatPers")?;
        beteiligung(x, reg.capital, s.share_percentage)?;
        x.close("Anteilseigner")?;
    }
    x.close("Gesellschafter")
}

fn beteiligung(x: &mut Xml, capital: i64, share: Percentage) -> io::Result<()> {
    x.open("Beteiligung")?;
    let cents = nominal_cents(capital, share);
    x.leaf(
        "Nominal",
        &format!("{}.{:02}", cents / 100, (cents % 100).abs()),
    )?;
    x.leaf("ProzentAnteil", &share.to_decimal_string())?;
    x.close("Beteiligung")
}

/// The nominal amount of a share in cents: `capital` euros times `share`, rounded half up to
/// the cent (25,000 euros at 33.3333 % is 833,333 cents, i.e. 8333.33 euros).
pub fn nominal_cents(capital: i64, share: Percentage) -> i64 {
    // capital * 100 cents * share.0 / 1_000_000 (share.0 is ten-thousandths of a percent).
    let num = i128::from(capital) * 100 * i128::from(share.0);
    ((num + 500_000) / 1_000_000) as i64
}

fn nat_pers(
    x: &mut Xml,
    first_name: &str,
    last_name: &str,
    dob: Date,
    tax_id: Option<&str>,
    address: &TaxAddress,
) -> io::Result<()> {
    x.leaf("Vorname", first_name)?;
    x.leaf("Name", last_name.trim())?;
    x.leaf("GebDat", &date(dob))?;
    if let Some(id) = tax_id {
        x.leaf("PersIdNr", id.trim())?;
    }
    adrkette(x, address)
}

fn adrkette(x: &mut Xml, a: &TaxAddress) -> io::Result<()> {
    x.open("Adrkette")?;
    x.open("StrAdr")?;
    let s = split_street(&a.street);
    x.leaf("Str", s.street)?;
    if let Some(n) = s.number {
        x.leaf("HausNr", n)?;
    }
    if let Some(z) = &s.suffix {
        x.leaf("HausNrZu", z)?;
    }
    if let Some(extra) = a.street_second_line.as_deref().map(str::trim)
        && !extra.is_empty()
    {
        x.leaf("AdressErg", extra)?;
    }
    if a.country.is_germany() {
        x.leaf("Plz", a.zip.trim())?;
        x.leaf("Ort", a.city.trim())?;
    } else {
        x.leaf("AuslPlz", a.zip.trim())?;
        x.leaf("Ort", a.city.trim())?;
        x.leaf("Staat", a.country.german_name())?;
    }
    x.close("StrAdr")?;
    x.close("Adrkette")
}

fn bank_konto(x: &mut Xml, iban: Option<&str>, bic: Option<&str>) -> io::Result<()> {
    if let Some(iban) = iban {
        x.open("BankKonto")?;
        x.leaf("IBAN", &compact_upper(iban))?;
        if let Some(bic) = bic {
            x.leaf("BIC", &compact_upper(bic))?;
        }
        x.close("BankKonto")?;
    }
    Ok(())
}

fn gewinn_ermittlung(x: &mut Xml, deviates: bool, start: Option<Date>) -> io::Result<()> {
    x.open("GewinnErmittlgsAngaben")?;
    x.leaf("MerkerAbwWirtschaftsjahr", bool_text(deviates))?;
    if deviates && let Some(start) = start {
        x.leaf("AbwWJ_ab", &date(start))?;
    }
    x.close("GewinnErmittlgsAngaben")
}

fn festsetzung(x: &mut Xml, est: &FinancialEstimates) -> io::Result<()> {
    x.open("FestsetzungsAngaben")?;
    x.open("Gewinn")?;
    x.leaf("GruendJahr", &est.formation_year.profit_amount.to_string())?;
    x.leaf("FolgeJahr", &est.following_year.profit_amount.to_string())?;
    x.close("Gewinn")?;
    x.close("FestsetzungsAngaben")
}

/// `LohnberechnungsStelle`, only with employees.
fn lohnberechnung(x: &mut Xml, has_employees: bool, payroll: Option<&Payroll>) -> io::Result<()> {
    let Some(p) = payroll.filter(|_| has_employees) else {
        return Ok(());
    };
    x.open("LohnberechnungsStelle")?;
    x.leaf(
        "AnzahlBeschaeftigteArbeitnehmer",
        &p.employee_count.to_string(),
    )?;
    x.leaf(
        "AnzahlGesellschafterBeschaeftigte",
        &p.shareholder_employee_count.to_string(),
    )?;
    x.leaf("BeginnLohnzahlungen", &date(p.payroll_start_date))?;
    x.leaf(
        "VoraussichtlicheLohnsteuer",
        &p.estimated_annual_wage_tax.to_string(),
    )?;
    x.close("LohnberechnungsStelle")
}

fn fse_persg(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    // Gründung einer Personengesellschaft.
    questionnaire(x, "FsE_PersG", FSE_PERSG_NS, FSE_PERSG_VERSION, "GRNDPG")?;
    persg_allg_angaben(x, reg)?;
    beteiligte(x, reg)?;
    festsetzung(x, &reg.financial_estimates)?;
    lohnberechnung(x, reg.has_employees, reg.payroll.as_ref())?;
    umsatzsteuer(x, &reg.financial_estimates, &reg.vat)?;
    x.close("FsE_PersG")
}

fn persg_allg_angaben(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    x.leaf("Firmenname", reg.name.trim())?;
    x.leaf("SitzPersGes", reg.address.city.trim())?;
    adrkette(x, &reg.address)?;
    x.leaf("ArtTaet", reg.purpose.trim())?;
    bank_konto(x, reg.iban.as_deref(), reg.bic.as_deref())?;
    x.open("GesVertrag")?;
    x.leaf("DatumGVertrag", &date(reg.partnership_agreement_date))?;
    x.open("GsrAngaben")?;
    match &reg.company_register {
        None | Some(CommercialRegister::NotApplied) => {
            x.leaf("GsrAntragGestellt", "false")?;
            x.leaf("GsrEintragVorhanden", "false")?;
        }
        Some(CommercialRegister::ApplicationFiled {
            registration_application_date,
        }) => {
            x.leaf("GsrAntragGestellt", "true")?;
            x.leaf("TagDesAntrags", &date(*registration_application_date))?;
            x.leaf("GsrEintragVorhanden", "false")?;
        }
        Some(CommercialRegister::Registered {
            registration_number,
            registration_date,
            registration_court,
        }) => {
            x.leaf("GsrAntragGestellt", "true")?;
            x.leaf("GsrEintragVorhanden", "true")?;
            x.leaf("TagDerEintragung", &date(*registration_date))?;
            x.leaf("GesellschaftsregisterGericht", registration_court.trim())?;
            x.leaf("GsrRegisterbezeichnung", "GsR")?;
            x.leaf("GsrRegisternummer", registration_number.trim())?;
        }
    }
    x.close("GsrAngaben")?;
    x.close("GesVertrag")?;
    x.leaf(
        "Rechtsform",
        match reg.legal_form {
            PartnershipLegalForm::Gbr => "GbR",
            PartnershipLegalForm::Egbr => "eGbR",
        },
    )?;
    x.leaf(
        "BeginnTaetigkeit",
        &date(reg.operational_activity_start_date),
    )?;
    gewinn_ermittlung(
        x,
        reg.fiscal_year_deviates_from_calendar,
        reg.fiscal_year_deviating_start_date,
    )?;
    x.close("AllgAngaben")
}

/// The partners, individuals first, numbered 1, 2, ... across both lists.
fn beteiligte(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    x.open("Beteiligte")?;
    let mut number = 0u32;
    let mut open = |x: &mut Xml| -> io::Result<()> {
        number += 1;
        x.open("Beteiligter")?;
        x.leaf("BeteiligtenNummer", &number.to_string())
    };
    let close = |x: &mut Xml, share: Percentage, managing: bool| -> io::Result<()> {
        x.open("Beteiligung")?;
        x.leaf("ProzentAnteil", &share.to_decimal_string())?;
        x.close("Beteiligung")?;
        x.leaf("MerkerGeschaeftsfuehrung", bool_text(managing))?;
        x.close("Beteiligter")
    };
    for p in &reg.partners.individuals {
        open(x)?;
        x.open("NatPers")?;
        nat_pers(
            x,
            p.first_name.trim(),
            &p.last_name,
            p.dob,
            p.tax_identification_number.as_ref().map(|t| t.0.as_str()),
            &p.address,
        )?;
        x.close("NatPers")?;
        close(x, p.share_percentage, p.is_managing_partner)?;
    }
    for p in &reg.partners.entities {
        open(x)?;
        x.open("NNatPers")?;
        x.leaf("Firmenname", p.name.trim())?;
        adrkette(x, &p.address)?;
        x.close("NNatPers")?;
        close(x, p.share_percentage, p.is_managing_partner)?;
    }
    x.close("Beteiligte")
}

fn umsatzsteuer(x: &mut Xml, est: &FinancialEstimates, vat: &Vat) -> io::Result<()> {
    x.open("Umsatzsteuer")?;
    x.open("GesUmsatz")?;
    x.leaf("GruendJahr", &est.formation_year.revenue_amount.to_string())?;
    x.leaf("FolgeJahr", &est.following_year.revenue_amount.to_string())?;
    x.close("GesUmsatz")?;
    if vat.small_business {
        x.open("KleinunternehmerRegelung")?;
        x.leaf("KleinUnternUSt", "true")?;
        x.close("KleinunternehmerRegelung")?;
    } else if vat.waives_small_business(est) {
        x.open("KleinunternehmerRegelung")?;
        x.leaf("KleinUnternUStVerzicht", "true")?;
        x.close("KleinunternehmerRegelung")?;
    }
    if let (Some(kind), Some(amount)) = (vat.estimated_balance_type, vat.estimated_balance_amount) {
        x.open("ZahllastUeberschuss")?;
        x.leaf(
            "Auswahl",
            match kind {
                BalanceType::Payable => "1",
                BalanceType::Refundable => "2",
            },
        )?;
        x.leaf("Betrag", &amount.to_string())?;
        x.leaf(
            "VoranmeldungMonatlich",
            bool_text(vat.return_frequency == Some(ReturnFrequency::Monthly)),
        )?;
        x.close("ZahllastUeberschuss")?;
    }
    if let Some(m) = vat.accounting_method {
        x.open("SollIstVersteuerung")?;
        x.leaf(
            "AuswahlSollIstVerst",
            match m {
                AccountingMethod::Accrual => "1",
                AccountingMethod::Cash => "2",
            },
        )?;
        x.close("SollIstVersteuerung")?;
    }
    x.open("UStIdNr")?;
    x.leaf("MerkerAntragUStId", bool_text(vat.request_vat_id))?;
    x.close("UStIdNr")?;
    if vat.request_reverse_charge_certificate {
        x.open("SteuerschuldnerschaftLE")?;
        x.leaf("MerkerAntragBescheinigung", "true")?;
        if let Some(t) = vat.reverse_charge_service_type {
            x.leaf(
                "ArtLeistung",
                match t {
                    ReverseChargeServiceType::Construction => "1",
                    ReverseChargeServiceType::BuildingCleaning => "2",
                    ReverseChargeServiceType::Both => "3",
                },
            )?;
        }
        x.close("SteuerschuldnerschaftLE")?;
    }
    x.open("Onlinehandel")?;
    x.leaf(
        "MerkerOnlinehandel",
        bool_text(vat.sells_via_online_marketplaces),
    )?;
    x.close("Onlinehandel")?;
    x.close("Umsatzsteuer")
}

/// `DD.MM.YYYY`.
fn date(d: Date) -> String {
    format!("{:02}.{:02}.{:04}", d.day(), u8::from(d.month()), d.year())
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// IBAN and BIC without spaces, upper-case.
fn compact_upper(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Thin helpers over the quick-xml writer: every text and attribute value is escaped by
/// quick-xml.
struct Xml {
    w: Writer<Vec<u8>>,
}

impl Xml {
    fn open(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::Start(BytesStart::new(name)))
    }

    fn open_with(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let start = BytesStart::new(name).with_attributes(attrs.iter().copied());
        self.w.write_event(Event::Start(start))
    }

    fn close(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::End(BytesEnd::new(name)))
    }

    fn leaf(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.leaf_with(name, &[], text)
    }

    fn leaf_with(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> io::Result<()> {
        self.open_with(name, attrs)?;
        self.w.write_event(Event::Text(BytesText::new(text)))?;
        self.close(name)
    }
}
