//! Markdown -> styled, wrapped terminal lines. Stub, replaced by the rendering work.
