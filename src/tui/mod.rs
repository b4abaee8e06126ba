//! The interactive front end.
pub mod highlight;
pub mod markdown;
