//! Tax registrations for the tests and the benchmark, built in Rust (the validated model, not
//! the request JSON).
#![allow(dead_code)]

use domain::company::Environment;
use domain::country::CountryCode;
use domain::signature::SignaturePath;
use domain::tax::*;
use elster::XmlContext;
use time::macros::date;

/// ELSTER's test manufacturer id in sandbox documents, a (made-up) manufacturer's own id in
/// production ones.
pub fn ctx(sandbox: bool) -> XmlContext {
    XmlContext {
        tax_office_number: "1130".into(),
        sandbox,
        hersteller_id: if sandbox { "74931" } else { "40417" }.into(),
        daten_lieferant: "Registration Filing Service".into(),
        nutzdaten_ticket: "0195f1e2a7c4".into(),
    }
}

pub fn addr(street: &str, zip: &str, city: &str, country: &str) -> PostalAddress {
    PostalAddress {
        street: street.into(),
        street_second_line: None,
        zip: zip.into(),
        city: city.into(),
        state: None,
        country: CountryCode::parse(country).unwrap(),
    }
}

fn pct(s: &str) -> Percentage {
    Percentage::parse(s).unwrap()
}

/// A registered GmbH: 3 directors (one with a middle name, e-mail and phone), two individual
/// shareholders (one abroad) and an entity, standard VAT, payroll.
pub fn gmbh() -> TaxRegistration {
    let mut seat = addr("Musterstraße 1", "10115", "Berlin", "DE");
    seat.street_second_line = Some("Hinterhaus, 3. OG".into());
    seat.state = Some("Berlin".into());
    TaxRegistration {
        legal_form: KapLegalForm::Gmbh,
        package: TaxPackage::SelfService,
        environment: Environment::Sandbox,
        signature_path: SignaturePath::parse("M 10 40 C 20 10 40 10 50 40 L 110 35").unwrap(),
        client_reference: Some("crm-4711".into()),
        tax_office_number: Some("1130".into()),
        name: "Mustermann Software GmbH".into(),
        purpose: "Entwicklung und Vertrieb von Software sowie IT-Beratung".into(),
        notarization_date: date!(2025 - 02 - 10),
        operational_activity_start_date: date!(2025 - 03 - 01),
        fiscal_year_deviates_from_calendar: false,
        fiscal_year_deviating_start_date: None,
        capital: 25_000,
        paid_in_capital: 12_500,
        formation_type: FormationType::Cash,
        conversion_type: None,
        is_holding: Some(false),
        address: seat,
        notary: Some(Notary {
            first_name: "Norbert".into(),
            last_name: "Notar".into(),
            address: addr("Kurfürstendamm 100", "10709", "Berlin", "DE"),
        }),
        directors: vec![
            Director {
                first_name: "Erika".into(),
                middle_name: Some("Maria".into()),
                last_name: "Mustermann".into(),
                email: Some("erika@mustermann-software.de".into()),
                phone: Some("+49 170 1234567".into()),
                dob: date!(1984 - 08 - 12),
                tax_identification_number: Some(TaxId("86095742719".into())),
                address: addr("Heidestraße 17", "51147", "Köln", "DE"),
            },
            Director {
                first_name: "Jonas".into(),
                middle_name: None,
                last_name: "Berg".into(),
                email: Some("jonas@mustermann-software.de".into()),
                phone: None,
                dob: date!(1979 - 01 - 05),
                tax_identification_number: None,
                address: addr("Am Markt 12-14", "04109", "Leipzig", "DE"),
            },
            Director {
                first_name: "Anna".into(),
                middle_name: None,
                last_name: "Schmidt".into(),
                email: None,
                phone: None,
                dob: date!(1990 - 12 - 31),
                tax_identification_number: None,
                address: addr("Kärntner Straße 3", "1010", "Wien", "AT"),
            },
        ],
        shareholders: Shareholders {
            individuals: vec![
                IndividualShareholder {
                    first_name: "Erika".into(),
                    last_name: "Mustermann".into(),
                    dob: date!(1984 - 08 - 12),
                    tax_identification_number: Some(TaxId("86095742719".into())),
                    address: addr("Heidestraße 17", "51147", "Köln", "DE"),
                    share_percentage: pct("33.3333"),
                },
                IndividualShareholder {
                    first_name: "Max".into(),
                    last_name: "Mustermann".into(),
                    dob: date!(1982 - 03 - 01),
                    tax_identification_number: None,
                    address: addr("Rue de Rivoli 10", "75001", "Paris", "FR"),
                    share_percentage: pct("33.3333"),
                },
            ],
            entities: vec![EntityShareholder {
                name: "Beteiligungs-UG (haftungsbeschränkt)".into(),
                address: addr("Hafenstraße 5a", "20457", "Hamburg", "DE"),
                share_percentage: pct("33.3334"),
            }],
        },
        commercial_register: CommercialRegister::Registered {
            registration_number: "245789B".into(),
            registration_date: date!(2025 - 02 - 20),
            registration_court: "Amtsgericht Charlottenburg".into(),
        },
        iban: Some("DE89370400440532013000".into()),
        bic: Some("COBADEFFXXX".into()),
        financial_estimates: FinancialEstimates {
            formation_year: Estimate {
                revenue_amount: 120_000,
                profit_amount: 15_000,
            },
            following_year: Estimate {
                revenue_amount: 300_000,
                profit_amount: 60_000,
            },
        },
        vat: Vat {
            regime: None,
            small_business: false,
            accounting_method: Some(AccountingMethod::Accrual),
            estimated_balance_type: Some(BalanceType::Refundable),
            estimated_balance_amount: Some(12_000),
            return_frequency: Some(ReturnFrequency::Monthly),
            request_vat_id: true,
            sells_via_online_marketplaces: false,
            request_reverse_charge_certificate: false,
            reverse_charge_service_type: None,
        },
        has_employees: true,
        payroll: Some(Payroll {
            employee_count: 3,
            shareholder_employee_count: 1,
            payroll_start_date: date!(2025 - 04 - 01),
            estimated_annual_wage_tax: 18_000,
        }),
    }
}

/// A UG under the small-business rule, register application filed, no payroll, no bank
/// account, no notary, a deviating fiscal year and a loss in the founding year.
pub fn ug() -> TaxRegistration {
    TaxRegistration {
        legal_form: KapLegalForm::Ug,
        package: TaxPackage::Guided,
        environment: Environment::Production,
        signature_path: SignaturePath::parse("M 10 20 C 20 0 30 40 40 20").unwrap(),
        client_reference: None,
        tax_office_number: None,
        name: "Kleine Ideen UG (haftungsbeschränkt)".into(),
        purpose: "Grafikdesign".into(),
        notarization_date: date!(2025 - 05 - 02),
        operational_activity_start_date: date!(2025 - 06 - 01),
        fiscal_year_deviates_from_calendar: true,
        fiscal_year_deviating_start_date: Some(date!(2025 - 07 - 01)),
        capital: 1_000,
        paid_in_capital: 1_000,
        formation_type: FormationType::Cash,
        conversion_type: None,
        is_holding: None,
        address: addr("Lindenweg 3", "80331", "München", "DE"),
        notary: None,
        directors: vec![Director {
            first_name: "Lena".into(),
            middle_name: None,
            last_name: "Klein".into(),
            email: Some("lena@kleine-ideen.de".into()),
            phone: None,
            dob: date!(1995 - 02 - 03),
            tax_identification_number: None,
            address: addr("Lindenweg 3", "80331", "München", "DE"),
        }],
        shareholders: Shareholders {
            individuals: vec![IndividualShareholder {
                first_name: "Lena".into(),
                last_name: "Klein".into(),
                dob: date!(1995 - 02 - 03),
                tax_identification_number: None,
                address: addr("Lindenweg 3", "80331", "München", "DE"),
                share_percentage: Percentage::HUNDRED,
            }],
            entities: vec![],
        },
        commercial_register: CommercialRegister::ApplicationFiled {
            registration_application_date: date!(2025 - 05 - 05),
        },
        iban: None,
        bic: None,
        financial_estimates: FinancialEstimates {
            formation_year: Estimate {
                revenue_amount: 18_000,
                profit_amount: -2_500,
            },
            following_year: Estimate {
                revenue_amount: 40_000,
                profit_amount: 8_000,
            },
        },
        vat: Vat {
            regime: Some(VatRegime::SmallBusiness),
            small_business: true,
            accounting_method: None,
            estimated_balance_type: None,
            estimated_balance_amount: None,
            return_frequency: None,
            request_vat_id: false,
            sells_via_online_marketplaces: true,
            request_reverse_charge_certificate: true,
            reverse_charge_service_type: Some(ReverseChargeServiceType::BuildingCleaning),
        },
        has_employees: false,
        payroll: None,
    }
}

/// The GmbH with 99 individual shareholders: 98 of 1.0101 % and one of 1.0102 %.
pub fn gmbh_99() -> TaxRegistration {
    let mut reg = gmbh();
    reg.shareholders.entities.clear();
    reg.shareholders.individuals = (0..99)
        .map(|i| IndividualShareholder {
            first_name: format!("Person{i}"),
            last_name: "Teilhaber".into(),
            dob: date!(1970 - 01 - 01),
            tax_identification_number: None,
            address: addr(&format!("Allee {}", i + 1), "10115", "Berlin", "DE"),
            share_percentage: if i == 98 {
                pct("1.0102")
            } else {
                pct("1.0101")
            },
        })
        .collect();
    reg
}

/// A GbR under the small-business rule: three partners of 33.33/33.33/33.34 % (one abroad, one
/// not managing), no payroll, no bank account, not registered, production.
pub fn gbr() -> domain::gbr::GbrTaxRegistration {
    use domain::gbr::*;
    let person = |first: &str, last: &str, dob, street, zip, city, country, share, managing| {
        IndividualPartner {
            first_name: first.into(),
            last_name: last.into(),
            dob,
            tax_identification_number: None,
            address: addr(street, zip, city, country),
            share_percentage: pct(share),
            is_managing_partner: managing,
        }
    };
    let mut first = person(
        "Jana",
        "Heide",
        date!(1988 - 06 - 14),
        "Am Sande 12",
        "21335",
        "Lüneburg",
        "DE",
        "33.33",
        true,
    );
    first.tax_identification_number = Some(TaxId("65929970489".into()));
    GbrTaxRegistration {
        legal_form: PartnershipLegalForm::Gbr,
        package: TaxPackage::Guided,
        environment: Environment::Production,
        signature_path: SignaturePath::parse("M 5 30 C 15 5 30 5 40 30 S 70 50 80 25").unwrap(),
        client_reference: None,
        tax_office_number: None,
        name: "Heide & Partner Hofladen GbR".into(),
        purpose: "Verkauf regionaler Lebensmittel im Hofladen".into(),
        partnership_agreement_date: date!(2025 - 04 - 01),
        operational_activity_start_date: date!(2025 - 05 - 01),
        fiscal_year_deviates_from_calendar: false,
        fiscal_year_deviating_start_date: None,
        address: addr("Am Sande 12", "21335", "Lüneburg", "DE"),
        partners: Partners {
            individuals: vec![
                first,
                person(
                    "Ole",
                    "Brandt",
                    date!(1985 - 01 - 30),
                    "Bardowicker Straße 7",
                    "21335",
                    "Lüneburg",
                    "DE",
                    "33.33",
                    true,
                ),
                person(
                    "Søren",
                    "Ørsted",
                    date!(1979 - 09 - 02),
                    "Nørregade 4",
                    "1165",
                    "København",
                    "DK",
                    "33.34",
                    false,
                ),
            ],
            entities: vec![],
        },
        company_register: None,
        iban: None,
        bic: None,
        financial_estimates: FinancialEstimates {
            formation_year: Estimate {
                revenue_amount: 18_000,
                profit_amount: -1_500,
            },
            following_year: Estimate {
                revenue_amount: 60_000,
                profit_amount: 15_000,
            },
        },
        vat: Vat {
            regime: Some(VatRegime::SmallBusiness),
            small_business: true,
            accounting_method: None,
            estimated_balance_type: None,
            estimated_balance_amount: None,
            return_frequency: None,
            request_vat_id: false,
            sells_via_online_marketplaces: false,
            request_reverse_charge_certificate: false,
            reverse_charge_service_type: None,
        },
        has_employees: false,
        payroll: None,
    }
}

/// A registered eGbR: two individuals and a managing GmbH (40/35/25 %), standard VAT with a
/// monthly refund, payroll, a bank account, a deviating fiscal year, sandbox.
pub fn egbr() -> domain::gbr::GbrTaxRegistration {
    use domain::gbr::*;
    let mut reg = gbr();
    reg.legal_form = PartnershipLegalForm::Egbr;
    reg.package = TaxPackage::SelfService;
    reg.environment = Environment::Sandbox;
    reg.client_reference = Some("crm-0815".into());
    reg.tax_office_number = Some("5215".into());
    reg.name = "Rheinblick Immobilien eGbR".into();
    reg.purpose = "Vermietung und Verwaltung eigener Wohnimmobilien".into();
    reg.partnership_agreement_date = date!(2025 - 01 - 15);
    reg.operational_activity_start_date = date!(2025 - 03 - 01);
    reg.fiscal_year_deviates_from_calendar = true;
    reg.fiscal_year_deviating_start_date = Some(date!(2025 - 07 - 01));
    reg.address = addr("Domkloster 4", "50667", "Köln", "DE");
    reg.address.street_second_line = Some("2. OG".into());
    reg.partners = Partners {
        individuals: vec![
            IndividualPartner {
                first_name: "Katharina".into(),
                last_name: "Rhein".into(),
                dob: date!(1975 - 03 - 21),
                tax_identification_number: Some(TaxId("57549285017".into())),
                address: addr("Severinstraße 80", "50678", "Köln", "DE"),
                share_percentage: pct("40"),
                is_managing_partner: true,
            },
            IndividualPartner {
                first_name: "Paul".into(),
                last_name: "Rhein".into(),
                dob: date!(1973 - 11 - 05),
                tax_identification_number: None,
                address: addr("Kaiser-Wilhelm-Ring 2", "50672", "Köln", "DE"),
                share_percentage: pct("35"),
                is_managing_partner: false,
            },
        ],
        entities: vec![EntityPartner {
            name: "Rhein Verwaltungs GmbH".into(),
            address: addr("Hohenzollernring 55", "50672", "Köln", "DE"),
            share_percentage: pct("25"),
            is_managing_partner: true,
        }],
    };
    reg.company_register = Some(CommercialRegister::Registered {
        registration_number: "1234".into(),
        registration_date: date!(2025 - 02 - 10),
        registration_court: "Amtsgericht Köln".into(),
    });
    reg.iban = Some("DE89370400440532013000".into());
    reg.bic = Some("COBADEFFXXX".into());
    reg.financial_estimates = FinancialEstimates {
        formation_year: Estimate {
            revenue_amount: 120_000,
            profit_amount: 15_000,
        },
        following_year: Estimate {
            revenue_amount: 300_000,
            profit_amount: 60_000,
        },
    };
    reg.vat = Vat {
        regime: None,
        small_business: false,
        accounting_method: Some(AccountingMethod::Accrual),
        estimated_balance_type: Some(BalanceType::Refundable),
        estimated_balance_amount: Some(12_000),
        return_frequency: Some(ReturnFrequency::Monthly),
        request_vat_id: true,
        sells_via_online_marketplaces: false,
        request_reverse_charge_certificate: true,
        reverse_charge_service_type: Some(ReverseChargeServiceType::Construction),
    };
    reg.has_employees = true;
    reg.payroll = Some(Payroll {
        employee_count: 2,
        shareholder_employee_count: 0,
        payroll_start_date: date!(2025 - 04 - 01),
        estimated_annual_wage_tax: 6_000,
    });
    reg
}

/// The GbR with 99 individual partners: 98 of 1.0101 % and one of 1.0102 %, the first managing.
pub fn gbr_99() -> domain::gbr::GbrTaxRegistration {
    let mut reg = gbr();
    let template = reg.partners.individuals[1].clone();
    reg.partners.individuals = (0..99)
        .map(|i| domain::gbr::IndividualPartner {
            first_name: format!("Person{i}"),
            last_name: "Partner".into(),
            address: addr(&format!("Allee {}", i + 1), "21335", "Lüneburg", "DE"),
            share_percentage: if i == 98 {
                pct("1.0102")
            } else {
                pct("1.0101")
            },
            is_managing_partner: i == 0,
            ..template.clone()
        })
        .collect();
    reg
}
