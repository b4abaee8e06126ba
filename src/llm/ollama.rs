//! Stub, replaced by the providers work.
use super::{ChatRequest, EventStream, LlmError, Provider, ProviderSpec};
use futures::future::BoxFuture;

pub struct Ollama {
    spec: ProviderSpec,
}

impl Ollama {
    pub fn new(spec: ProviderSpec) -> Self {
        Self { spec }
    }
}

impl Provider for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }
    fn start<'a>(&'a self, _req: &'a ChatRequest) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let url = self.spec.base_url.clone();
        Box::pin(async move {
            Err(LlmError::permanent(format!(
                "ollama provider not built yet ({url})"
            )))
        })
    }
}
