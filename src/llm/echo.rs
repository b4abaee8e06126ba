//! Stub, replaced by the providers work.
use super::{ChatRequest, EventStream, LlmError, Provider};
use futures::future::BoxFuture;

#[derive(Default)]
pub struct Echo;

impl Provider for Echo {
    fn name(&self) -> &'static str {
        "echo"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        Box::pin(async move { Err(LlmError::permanent("echo not built yet")) })
    }
}
