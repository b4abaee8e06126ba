//! Small text helpers shared by the panes.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `s` cut to `width` terminal cells, ending in `…` when cut.
pub fn elide(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elide_counts_cells_not_bytes() {
        assert_eq!(elide("hello", 5), "hello");
        assert_eq!(elide("hello!", 5), "hell…");
        assert_eq!(elide("hello", 0), "");
        assert_eq!(elide("hello", 1), "…");
        // Each of these takes two cells: three fit in 7 with the ellipsis.
        assert_eq!(elide("日本語テキスト", 7), "日本語…");
        assert!(elide("日本語テキスト", 6).width() <= 6);
    }
}
