//! `has_employees` and the payroll fields.

use time::Date;

use crate::Violations;
use crate::rules::{self, Obj};
use crate::tax_core::Payroll;

use super::fields::{refuse, req_bool, req_date, req_euros};

/// `has_employees` and the payroll fields at the top level of `o`.
pub fn payroll(
    o: &Obj,
    start: Option<Date>,
    e: &mut Violations,
) -> (Option<bool>, Option<Payroll>) {
    let fields = [
        "employee_count",
        "shareholder_employee_count",
        "marginal_employee_count",
        "payroll_start_date",
        "estimated_annual_wage_tax",
    ];
    let has = req_bool(o, "has_employees", e);
    match has {
        Some(true) => {
            let count = o
                .req("employee_count", e)
                .and_then(|v| rules::count(v, &o.path("employee_count"), 1, e));
            let shareholders = o
                .req("shareholder_employee_count", e)
                .and_then(|v| rules::count(v, &o.path("shareholder_employee_count"), 0, e));
            if let (Some(c), Some(s)) = (count, shareholders)
                && s > c
            {
                e.push(
                    o.path("shareholder_employee_count"),
                    "out_of_range",
                    "cannot exceed employee_count",
                );
            }
            // Of them marginally employed (geringfügig Beschäftigte, questionnaire line 171).
            let marginal = o
                .opt("marginal_employee_count")
                .and_then(|v| rules::count(v, &o.path("marginal_employee_count"), 0, e));
            if let (Some(c), Some(m)) = (count, marginal)
                && m > c
            {
                e.push(
                    o.path("marginal_employee_count"),
                    "out_of_range",
                    "cannot exceed employee_count",
                );
            }
            let marginal_ok = !o.has("marginal_employee_count")
                || marginal.is_some_and(|m| count.is_none_or(|c| m <= c));
            let payroll_start = req_date(o, "payroll_start_date", e).and_then(|d| {
                if start.is_some_and(|s| d < s) {
                    e.push(
                        o.path("payroll_start_date"),
                        "before_activity_start",
                        "cannot be before operational_activity_start_date",
                    );
                    None
                } else {
                    Some(d)
                }
            });
            let wage_tax = req_euros(o, "estimated_annual_wage_tax", e).and_then(|w| {
                if w < 0 {
                    e.push(
                        o.path("estimated_annual_wage_tax"),
                        "out_of_range",
                        "must not be negative",
                    );
                    None
                } else {
                    Some(w)
                }
            });
            let payroll = (|| {
                if !marginal_ok {
                    return None;
                }
                Some(Payroll {
                    employee_count: count?,
                    shareholder_employee_count: shareholders?,
                    marginal_employee_count: marginal,
                    payroll_start_date: payroll_start?,
                    estimated_annual_wage_tax: wage_tax?,
                })
            })();
            (has, payroll)
        }
        Some(false) => {
            refuse(o, &fields, "is only accepted with has_employees true", e);
            (has, None)
        }
        None => (None, None),
    }
}
