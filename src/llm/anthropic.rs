//! Stub, replaced by the providers work.
use super::{ChatRequest, EventStream, LlmError, Provider, ProviderSpec};
use futures::future::BoxFuture;

pub struct Anthropic {
    spec: ProviderSpec,
}

impl Anthropic {
    pub fn new(spec: ProviderSpec) -> Self {
        Self { spec }
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let url = self.spec.base_url.clone();
        Box::pin(async move {
            Err(LlmError::permanent(format!(
                "anthropic provider not built yet ({url})"
            )))
        })
    }
}
