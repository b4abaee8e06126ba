//! Makes untrusted text (model output, titles, file names, error messages)
//! safe to put on the terminal. Stub, replaced by the rendering work.
use std::borrow::Cow;

/// Keeps `\n` and `\t`; every other control character and escape sequence is
/// made visible and inert.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}

/// Like [`sanitize`] but for one-line display: newlines and tabs become spaces.
pub fn sanitize_line(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}
