//! Time expressions -> UTC instants, and human previews. Stub, replaced by the time work.
