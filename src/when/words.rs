//! An expression's words as the readers take them: lower-cased, an ISO
//! instant cut in two, a zone glued onto its clock time.

use super::clock::parse_offset;

/// `gmt+1`, `utc-5`, `utc+5:30`, `gmt+0100` (lower-cased) -> `+01:00`,
/// `-05:00`, `+05:30`, `+01:00`: UTC or GMT and a fixed offset, up to 14
/// hours either way.
fn zone_offset(w: &str) -> Option<String> {
    let rest = w.strip_prefix("utc").or_else(|| w.strip_prefix("gmt"))?;
    let sign = rest.chars().next().filter(|c| matches!(c, '+' | '-'))?;
    let body = &rest[1..];
    let (h, m) = match body.split_once(':') {
        Some((h, m)) => (h, m),
        None if body.len() == 4 => body.split_at(2),
        None => (body, "00"),
    };
    let digits = |s: &str, max: u32| {
        (matches!(s.len(), 1 | 2) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .filter(|n| *n <= max)
    };
    let (h, m) = (digits(h, 14)?, digits(m, 59)?);
    (m.is_multiple_of(15)).then(|| format!("{sign}{h:02}:{m:02}"))
}

/// A time zone's abbreviation (`pst`, `et`, `cet`) or a UTC offset tock
/// does not read (`gmt+25`), lower-cased: said right after a time, it is
/// refused rather than sent as the text's first word at local time.
/// Abbreviations are ambiguous (`ist`, `cst`) and change with the season
/// (`et`): only UTC and fixed offsets are read.
pub(crate) fn zone_word(w: &str) -> bool {
    const ZONES: &[&str] = &[
        "pst", "pdt", "pt", "mst", "mdt", "mt", "cst", "cdt", "ct", "est", "edt", "et", "akst",
        "akdt", "hst", "ast", "adt", "nst", "ndt", "bst", "ist", "cet", "cest", "eet", "eest",
        "msk", "jst", "kst", "hkt", "sgt", "aest", "aedt", "acst", "acdt", "awst", "nzst", "nzdt",
        "wib", "pht", "brt", "art", "gst",
    ];
    let w = w.trim_end_matches([',', '.', ':']).to_ascii_lowercase();
    ZONES.contains(&w.as_str())
        || ["utc", "gmt"].iter().any(|z| {
            w.strip_prefix(z)
                .is_some_and(|r| r.starts_with(['+', '-']) && r.len() > 1)
        })
}

/// Lower-cased words; `2026-12-01T09:00` becomes `2026-12-01`, `09:00`.
pub(crate) fn words_of(expr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in expr.split_whitespace() {
        let w = w.to_ascii_lowercase();
        // "09:00 +02:00", "14:30 utc": glue the offset onto the clock time
        // before it, where `clock_token` expects it.
        if let Some(prev) = out.last_mut()
            && ((prev.contains(':') && prev.ends_with(|c: char| c.is_ascii_digit()))
                || (prev.starts_with(|c: char| c.is_ascii_digit())
                    && (prev.ends_with("am") || prev.ends_with("pm"))))
        {
            if matches!(w.as_str(), "utc" | "gmt" | "z") {
                prev.push('z');
                continue;
            }
            // `9am gmt+1`, `14:00 utc-5`, `9am utc+5:30`: a fixed offset.
            if let Some(offset) = zone_offset(&w) {
                prev.push_str(&offset);
                continue;
            }
            // Only the four-digit forms as a separate word: "9am +10 ideas"
            // is more likely text than a +10:00 offset.
            if (w.starts_with('+') || w.starts_with('-'))
                && w.len() >= 5
                && parse_offset(&w).is_some()
            {
                prev.push_str(&w);
                continue;
            }
        }
        match w.find('t') {
            Some(p) if p > 0 && p + 1 < w.len() && iso_date_parts(&w[..p]).is_some() => {
                out.push(w[..p].to_string());
                out.push(w[p + 1..].to_string());
            }
            _ => out.push(w),
        }
    }
    out
}

/// `YYYY-M-D` / `YYYY-MM-DD` shape (values not yet validated).
pub(super) fn iso_date_parts(w: &str) -> Option<(i32, u32, u32)> {
    let mut parts = w.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || y.len() != 4
        || !(1..=2).contains(&m.len())
        || !(1..=2).contains(&d.len())
        || ![y, m, d]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some((y.parse().ok()?, m.parse().ok()?, d.parse().ok()?))
}
