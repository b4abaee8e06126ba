//! Server-Sent Events framing (stub, replaced by the providers work).
