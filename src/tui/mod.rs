//! The interactive front end.
pub mod markdown;
