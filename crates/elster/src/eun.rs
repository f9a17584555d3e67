//! The sole proprietor's questionnaire, `FsE_EUn` (DatenArt `EUn`, FragebogenTyp `AUFNTAET`):
//! its ElsterXML writer and the answers its XML does not carry.
//!
//! Only elements that the public EUn implementation writes, in the order of its sort lists
//! (docs/elster-eun-reference.md, as `E:<line>`; docs/elster.md maps each one). What that
//! source only names (the spouse, the bank account, the adviser, the tax number, the payroll,
//! the IdNr ...) is listed for the operator ([`eun_not_in_xml`]). Its defects are not copied:
//! the user's VAT balance is never overwritten, farming income is never sent as
//! `EinkSelbst`, and the small-business flag is written wherever the election is open.

use std::io;

use domain::sole_proprietor::{
    ActivityKind, CashAccountingReason, ProfitDetermination, Salutation,
    SoleProprietorTaxRegistration, YearAmounts,
};
use domain::tax::TaxAdvisor;

use crate::manual::{ManualEntry, ManualReason, address_line, entry, euros};
use crate::write::{
    FSE_EUN_NS, FSE_EUN_VERSION, Xml, XmlContext, XmlError, adrkette, balance_and_method, date,
    document, profit_years, questionnaire_head,
};

/// The ElsterXML document of a sole proprietor's registration (`DatenArt` EUn, `FsE_EUn`),
/// written like [`crate::write`]: UTF-8, indented, the same bytes for the same input. Does not
/// validate (see [`write_eun_validated`]). No attachments: the EUn payload has none (E:166-170).
pub fn write_eun(
    reg: &SoleProprietorTaxRegistration,
    ctx: &XmlContext,
) -> Result<Vec<u8>, XmlError> {
    document(ctx, "EUn", true, |x| fse_eun(x, reg))
}

/// [`write_eun`], then [`crate::validate`]: the bytes only when they pass the bundled schemas
/// (a violation is a bug of this crate).
pub fn write_eun_validated(
    reg: &SoleProprietorTaxRegistration,
    ctx: &XmlContext,
) -> Result<Vec<u8>, XmlError> {
    crate::validate::passed(write_eun(reg, ctx)?)
}

fn fse_eun(x: &mut Xml, reg: &SoleProprietorTaxRegistration) -> io::Result<()> {
    x.open_with(
        "FsE_EUn",
        &[("xmlns", FSE_EUN_NS), ("version", FSE_EUN_VERSION)],
    )?;
    x.open("EUn")?;
    questionnaire_head(x, "AUFNTAET")?;
    allg_angaben(x, reg)?;
    betrieb(x, reg)?;
    festsetzung(x, reg)?;
    x.open("GewinnErmittlgsAngaben")?;
    x.leaf(
        "GewinnErmittlung",
        match reg.profit_determination {
            ProfitDetermination::CashBasis => "01",
            ProfitDetermination::BalanceSheet => "02",
        },
    )?;
    x.close("GewinnErmittlgsAngaben")?;
    umsatzsteuer(x, reg)?;
    x.close("EUn")?;
    x.close("FsE_EUn")
}

/// `AllgAngaben`: the owner (`Inhaber/NatPers`, E:259-325) and the activity (St25).
fn allg_angaben(x: &mut Xml, reg: &SoleProprietorTaxRegistration) -> io::Result<()> {
    let o = &reg.owner;
    x.open("AllgAngaben")?;
    x.open("Inhaber")?;
    x.open("NatPers")?;
    if let Some(s) = o.salutation {
        x.leaf(
            "AnredeId",
            match s {
                Salutation::Mr => "1",
                Salutation::Ms => "2",
            },
        )?;
    }
    x.text("Vorname", &o.first_name)?;
    x.text("Name", &o.last_name)?;
    if let Some(t) = &o.title {
        x.text("Titel", t)?;
    }
    x.leaf("GebDat", &date(o.dob))?;
    x.leaf("Religion", o.religion.trim())?;
    adrkette(x, &o.address)?;
    x.close("NatPers")?;
    x.close("Inhaber")?;
    x.wrapped_text("ArtTaet", "GewerbeArt", &reg.purpose)?;
    x.close("AllgAngaben")
}

/// `Betrieb`: where it is run (at home: `EntsprichtWohnanschrift`, St68), the start with its
/// preparations (St79) and the new foundation with the day the activity is taken up (St96).
fn betrieb(x: &mut Xml, reg: &SoleProprietorTaxRegistration) -> io::Result<()> {
    x.open("Betrieb")?;
    if reg.runs_from_home() && reg.owner.address.country.is_germany() {
        x.wrapped_leaf("Unternehmen", "EntsprichtWohnanschrift", "true")?;
    } else if reg.address.country.is_germany() {
        x.open("Unternehmen")?;
        adrkette(x, &reg.address)?;
        x.close("Unternehmen")?;
    }
    x.wrapped_leaf(
        "BetrBeginn",
        "Betriebsbeginn",
        &date(reg.preparations_start_date),
    )?;
    x.open("Gruendungsangaben")?;
    x.open("GruendungsForm")?;
    x.leaf("GruendungsArt", "1")?;
    x.leaf(
        "UebertrStichtag",
        &date(reg.operational_activity_start_date),
    )?;
    x.close("GruendungsForm")?;
    x.close("Gruendungsangaben")?;
    x.close("Betrieb")
}

/// `FestsetzungsAngaben/VoraussichtlicheEinkuenfte`: the expected profit as income from trade
/// (`EinkGewBetr`) or from a liberal profession (`EinkSelbst`), St111; each year only when it is
/// no loss (the source has no sign). Farming income has no public element: nothing.
fn festsetzung(x: &mut Xml, reg: &SoleProprietorTaxRegistration) -> io::Result<()> {
    let element = match reg.activity_kind {
        ActivityKind::Trade => "EinkGewBetr",
        ActivityKind::LiberalProfession => "EinkSelbst",
        ActivityKind::AgricultureForestry => return Ok(()),
    };
    profit_years(
        x,
        &reg.financial_estimates,
        &["FestsetzungsAngaben", "VoraussichtlicheEinkuenfte", element],
        ("GruendJahrA", "FolgeJahrA"),
    )
}

/// `Umsatzsteuer` (E:88-103): the turnover, the small-business flag where the election is open
/// (St134: the rule, or its waiver), the balance as sent (under § 19 UStG payable 0, E:230-244),
/// Soll or Ist with the reason of § 20 UStG (St149-152), and the VAT id request.
fn umsatzsteuer(x: &mut Xml, reg: &SoleProprietorTaxRegistration) -> io::Result<()> {
    let (est, vat) = (&reg.financial_estimates, &reg.vat);
    x.open("Umsatzsteuer")?;
    x.open("GesUmsatz")?;
    x.leaf("GruendJahr", &est.formation_year.revenue_amount.to_string())?;
    x.leaf("FolgeJahr", &est.following_year.revenue_amount.to_string())?;
    x.close("GesUmsatz")?;
    if vat.small_business {
        x.wrapped_leaf("KleinunternehmerRegelung", "KleinUnternUSt", "true")?;
    } else if vat.waives_small_business(est) {
        x.wrapped_leaf("KleinunternehmerRegelung", "KleinUnternUStVerzicht", "true")?;
    }
    let ist_reason = match reg.cash_accounting_reason {
        Some(CashAccountingReason::NoBookkeepingDuty) => "IstVerstUStGrundAO",
        Some(CashAccountingReason::LiberalProfession) => "IstVerstUStGrundFreierBeruf",
        // The request requires a reason with cash accounting.
        _ => "IstVerstUStGrundUmsatz",
    };
    balance_and_method(x, vat, ist_reason)?;
    if vat.request_vat_id {
        x.open("UStIdNr")?;
        x.wrapped_leaf("UStIdAntrag", "MerkerAntragUStId", "true")?;
        x.close("UStIdNr")?;
    }
    x.close("Umsatzsteuer")
}

/// The sub-pages of ELSTER's questionnaire fseeun-202401 (docs/elster-eun-reference.md, section
/// 6) where the answers the XML leaves out are entered.
const PERSON: &str = "1 Allgemeine Angaben";
const SPOUSE: &str = "2 Ehegatte / Lebenspartner(in)";
const BANK: &str = "3 Bankverbindung / SEPA";
const ADVISER: &str = "4 Steuerliche Beratung";
const EARLIER: &str = "6 Bisherige persönliche Verhältnisse";
const BUSINESS: &str = "7 Angaben zum Unternehmen";
const PREPAYMENTS: &str = "14 Festsetzung der Vorauszahlungen";
const PROFIT: &str = "15 Gewinnermittlung";
const PAYROLL: &str = "17 Lohnsteuer";
const VAT: &str = "18 Umsatzsteuer";
const ONLINE: &str = "21 Handel mit Waren über das Internet";

fn years(y: &YearAmounts) -> String {
    format!(
        "Gründungsjahr {}, Folgejahr {}",
        euros(y.formation_year),
        euros(y.following_year)
    )
}

/// What the sole proprietor's XML leaves out, in the questionnaire's order.
pub fn eun_not_in_xml(reg: &SoleProprietorTaxRegistration) -> Vec<ManualEntry> {
    use ManualReason::*;
    let o = &reg.owner;
    let mut out = Vec::new();
    let mut push = |field: &str, value: Option<String>, page: &str, line: Option<&str>, r| {
        out.push(entry(field, value, page, line, r));
    };
    match &o.tax_identification_number {
        Some(id) => push(
            "owner.tax_identification_number",
            Some(id.0.clone()),
            PERSON,
            Some("5"),
            NoPublicElement,
        ),
        None => push(
            "owner.tax_identification_number",
            None,
            PERSON,
            Some("5"),
            NotGiven,
        ),
    }
    if let Some(b) = &o.birth_name {
        push(
            "owner.birth_name",
            Some(b.clone()),
            PERSON,
            Some("2-4"),
            NoPublicElement,
        );
    }
    if let Some(b) = &o.occupation {
        push(
            "owner.occupation",
            Some(b.clone()),
            PERSON,
            Some("2-4"),
            NoPublicElement,
        );
    }
    if !o.address.country.is_germany() {
        push(
            "owner.address",
            Some(address_line(&o.address)),
            PERSON,
            Some("7-10"),
            NoPublicFormat,
        );
    }
    let status = match o.marital_status_since {
        Some(d) => format!("{} seit {}", o.marital_status.german(), date(d)),
        None => o.marital_status.german().to_owned(),
    };
    push(
        "owner.marital_status",
        Some(status),
        PERSON,
        Some("11"),
        NoPublicElement,
    );
    let contact: Vec<String> = [
        o.phone.as_ref().map(|p| format!("Tel. {p}")),
        o.email.as_ref().map(|e| format!("E-Mail {e}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !contact.is_empty() {
        push(
            "owner.phone",
            Some(contact.join(", ")),
            PERSON,
            Some("19-20"),
            NoPublicElement,
        );
    }
    if let Some(s) = &reg.spouse {
        let mut value = format!("{} {}, geb. {}", s.first_name, s.last_name, date(s.dob));
        if let Some(id) = &s.tax_identification_number {
            value.push_str(&format!(", IdNr {}", id.0));
        }
        if let Some(r) = &s.religion {
            value.push_str(&format!(", Religion {r}"));
        }
        push(
            "spouse",
            Some(value),
            SPOUSE,
            Some("12-18"),
            NoPublicElement,
        );
    }
    if let Some(iban) = &reg.iban {
        let value = match &reg.bic {
            Some(bic) => format!("IBAN {iban}, BIC {bic}"),
            None => format!("IBAN {iban}"),
        };
        push("iban", Some(value), BANK, None, NoPublicElement);
    }
    if let Some(t) = &reg.tax_advisor {
        let (name, a, phone) = match t {
            TaxAdvisor::Person(p) => (
                format!("{} {}", p.first_name, p.last_name),
                &p.address,
                p.phone.as_deref(),
            ),
            TaxAdvisor::Firm(f) => (f.name.clone(), &f.address, f.phone.as_deref()),
        };
        let mut value = format!("{name}, {}", address_line(a));
        if let Some(p) = phone {
            value.push_str(&format!(", Tel. {p}"));
        }
        push(
            "tax_advisor",
            Some(value),
            ADVISER,
            Some("32-38"),
            NoPublicElement,
        );
    }
    if let Some(e) = &reg.earlier_circumstances {
        let parts: Vec<String> = [
            e.previous_tax_number
                .as_ref()
                .map(|n| format!("Steuernummer {n}")),
            e.previous_tax_office
                .as_ref()
                .map(|n| format!("Finanzamt {n}")),
            e.previous_address
                .as_ref()
                .map(|a| format!("frühere Anschrift {}", address_line(a))),
            e.previous_self_employment
                .as_ref()
                .map(|b| format!("frühere Tätigkeit: {b}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !parts.is_empty() {
            push(
                "earlier_circumstances",
                Some(parts.join("; ")),
                EARLIER,
                Some("47-54"),
                NoPublicElement,
            );
        }
    }
    push(
        "name",
        Some(reg.name.trim().to_owned()),
        BUSINESS,
        Some("55"),
        NoPublicElement,
    );
    if !reg.address.country.is_germany() {
        push(
            "address",
            Some(address_line(&reg.address)),
            BUSINESS,
            Some("56-62"),
            NoPublicFormat,
        );
    }
    for (field, amount) in [
        (
            "financial_estimates.formation_year.profit_amount",
            reg.financial_estimates.formation_year.profit_amount,
        ),
        (
            "financial_estimates.following_year.profit_amount",
            reg.financial_estimates.following_year.profit_amount,
        ),
    ] {
        if reg.activity_kind == ActivityKind::AgricultureForestry {
            push(
                field,
                Some(format!("{} (Land- und Forstwirtschaft)", euros(amount))),
                PREPAYMENTS,
                Some("105"),
                NoPublicElement,
            );
        } else if amount < 0 {
            push(
                field,
                Some(euros(amount)),
                PREPAYMENTS,
                Some("105"),
                NoPublicFormat,
            );
        }
    }
    if let Some(p) = &reg.prepayments {
        for (field, what, line, amounts) in [
            (
                "prepayments.employment_income",
                "nichtselbständige Arbeit",
                "105",
                p.employment_income,
            ),
            (
                "prepayments.capital_income",
                "Kapitalvermögen",
                "105",
                p.capital_income,
            ),
            (
                "prepayments.rental_income",
                "Vermietung und Verpachtung",
                "105",
                p.rental_income,
            ),
            (
                "prepayments.other_income",
                "sonstige Einkünfte",
                "105",
                p.other_income,
            ),
            (
                "prepayments.special_expenses",
                "Sonderausgaben",
                "112",
                p.special_expenses,
            ),
        ] {
            if let Some(a) = amounts {
                push(
                    field,
                    Some(format!("{what}: {}", years(&a))),
                    PREPAYMENTS,
                    Some(line),
                    NoPublicElement,
                );
            }
        }
    }
    if let Some(start) = reg.fiscal_year_deviating_start_date {
        push(
            "fiscal_year_deviating_start_date",
            Some(format!("abweichendes Wirtschaftsjahr ab {}", date(start))),
            PROFIT,
            Some("116"),
            NoPublicElement,
        );
    }
    if let Some(p) = reg.payroll.as_ref().filter(|_| reg.has_employees) {
        let mut value = format!(
            "{} Arbeitnehmer/innen ab {}, voraussichtliche Lohnsteuer {} jährlich",
            p.employee_count,
            date(p.payroll_start_date),
            euros(p.estimated_annual_wage_tax)
        );
        if let Some(m) = p.marginal_employee_count {
            value.push_str(&format!(", davon {m} geringfügig beschäftigt"));
        }
        push(
            "payroll",
            Some(value),
            PAYROLL,
            Some("118-126"),
            NoPublicElement,
        );
    }
    if reg.vat.request_reverse_charge_certificate {
        push(
            "vat.request_reverse_charge_certificate",
            Some("Nachweis nach § 13b UStG beantragt".to_owned()),
            VAT,
            Some("160-162"),
            NoPublicElement,
        );
    }
    if reg.vat.sells_via_online_marketplaces {
        push(
            "vat.sells_via_online_marketplaces",
            Some("ja".to_owned()),
            ONLINE,
            Some("175-178"),
            NoPublicElement,
        );
    }
    out
}
