//! `promptc report --format html`.

use std::io::{self, Write};

use crate::report::Report;

pub fn write_report_html(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let _ = report;
    writeln!(out, "<!doctype html>")
}
