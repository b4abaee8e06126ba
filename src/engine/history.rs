//! Reading and reshaping history across conversations: full-text search,
//! forks, alternates of a reply, token usage.

use anyhow::Result;

use super::{Engine, Event};
use crate::store::{AlternateMap, SearchHit};

// Reads go through `Engine::reader`, so a front end calling them never
// waits for another process's write lock.
impl Engine {
    /// Messages matching what the user typed, newest first, at most `limit`.
    /// Any text is accepted (it is never read as query syntax); text with
    /// no word in it matches nothing. The last word matches as a prefix
    /// unless followed by a space.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        self.reader().search(query, limit)
    }

    /// [`Engine::search`] within one conversation.
    pub fn search_in(
        &self,
        conversation_id: i64,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        self.reader().search_in(conversation_id, query, limit)
    }
}

impl Engine {
    /// A new conversation with the history of `conversation_id` up to and
    /// including `up_to_message_id` (what the conversation shows: superseded
    /// versions are left out, attachments kept), titled "Fork of …", with
    /// the same model and role. One transaction. Tool calls with no result
    /// in the copy are left out of it, and named in the returned [`Fork`](crate::store::Fork).
    pub fn fork_conversation(
        &self,
        conversation_id: i64,
        up_to_message_id: i64,
    ) -> Result<crate::store::Fork> {
        let fork =
            self.store()
                .fork_conversation(conversation_id, up_to_message_id, self.now_ms())?;
        self.emit(Event::Conversations);
        Ok(fork)
    }
}

impl Engine {
    /// The versions of the messages of a conversation: for a regenerated
    /// reply, every reply to the same message; for an edited message, each
    /// text it was sent with. Look one up with [`AlternateMap::of`].
    pub fn alternates(&self, conversation_id: i64) -> Result<AlternateMap> {
        self.reader().alternates(conversation_id)
    }

    /// Show another version of the last reply of its conversation (a
    /// regeneration put aside) instead of the one shown, so the next
    /// message is answered in its context. Refused while a reply is on its
    /// way, and for versions that can only be looked at
    /// ([`crate::store::Alternates::can_choose`]).
    pub fn show_alternate(&self, message_id: i64) -> Result<()> {
        if let Some(m) = self.store().message(message_id)?
            && self.is_busy(m.conversation_id)
        {
            return Err(anyhow::anyhow!("a reply is streaming in this conversation"));
        }
        let conversation_id = self.store().show_alternate(message_id)?;
        self.emit(Event::Conversation(conversation_id));
        Ok(())
    }
}

/// A conversation's token usage and what it cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConversationUsage {
    /// Every reply with recorded usage, oldest first (superseded ones too:
    /// they were paid for).
    pub replies: Vec<ReplyUsage>,
    /// Sums over `replies` (a field is `None` when no reply reported it).
    pub total: crate::llm::Usage,
    /// Sum of the replies' costs that could be priced; `None` if none could.
    pub cost: Option<f64>,
    /// How many tokens the context holds now: the prompt and reply of the
    /// last reply shown (what the next request starts from).
    pub context_used: Option<u64>,
    /// The context length of the conversation's model (`context_tokens` in
    /// its config entry), if known.
    pub context_tokens: Option<u64>,
}

impl ConversationUsage {
    /// The usage of one reply, if it was recorded.
    pub fn of(&self, message_id: i64) -> Option<&ReplyUsage> {
        self.replies.iter().find(|r| r.message_id == message_id)
    }

    /// The tokens and cost of these replies together (`tock ask`'s answer).
    pub fn of_replies(&self, message_ids: &[i64]) -> (crate::llm::Usage, Option<f64>) {
        let mut total = crate::llm::Usage::default();
        let mut cost = None;
        for r in self
            .replies
            .iter()
            .filter(|r| message_ids.contains(&r.message_id))
        {
            total.add(&r.usage);
            cost = add_cost(cost, r.cost);
        }
        (total, cost)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ReplyUsage {
    pub message_id: i64,
    pub model: Option<String>,
    pub usage: crate::llm::Usage,
    /// From the model's prices in the config, if it has any.
    pub cost: Option<f64>,
    pub superseded: bool,
}

/// The cost of `usage` at the prices of `model`'s config entry (per
/// million tokens; cached prompt tokens at `price_cached`, else `price_in`).
/// `None` when the model has no prices or the usage no counts.
pub fn reply_cost(
    cfg: &crate::config::Config,
    model: Option<&str>,
    usage: &crate::llm::Usage,
) -> Option<f64> {
    let mc = cfg.models.get(model?)?;
    if mc.price_in.is_none() && mc.price_out.is_none() {
        return None;
    }
    if usage.prompt_tokens.is_none() && usage.completion_tokens.is_none() {
        return None;
    }
    let prompt = usage.prompt_tokens.unwrap_or(0);
    let cached = usage.cached_tokens.unwrap_or(0).min(prompt);
    let price_in = mc.price_in.unwrap_or(0.0);
    let price_cached = mc.price_cached.unwrap_or(price_in);
    let m = 1_000_000.0;
    Some(
        (prompt - cached) as f64 * price_in / m
            + cached as f64 * price_cached / m
            + usage.completion_tokens.unwrap_or(0) as f64 * mc.price_out.unwrap_or(0.0) / m,
    )
}

/// A sum of costs: unknown only while no part of it is known.
fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

impl Engine {
    /// Token usage of each reply of a conversation, the total, the cost
    /// (with prices in the config) and how full the context is.
    pub fn usage(&self, conversation_id: i64) -> Result<ConversationUsage> {
        let cfg = self.config().get();
        let list = self.reader().conversation_usage(conversation_id)?;
        let mut out = ConversationUsage::default();
        for u in list {
            let cost = reply_cost(&cfg, u.model.as_deref(), &u.usage);
            out.total.add(&u.usage);
            out.cost = add_cost(out.cost, cost);
            if !u.superseded {
                out.context_used = add(u.usage.prompt_tokens, u.usage.completion_tokens);
            }
            out.replies.push(ReplyUsage {
                message_id: u.message_id,
                model: u.model,
                usage: u.usage,
                cost,
                superseded: u.superseded,
            });
        }
        let model = self
            .reader()
            .conversation(conversation_id)?
            .and_then(|c| c.model)
            .or_else(|| self.config().default_model_name());
        out.context_tokens = self.context_tokens(model.as_deref());
        Ok(out)
    }

    /// The context length of a model (`None`: the default model), from its
    /// config entry.
    pub fn context_tokens(&self, model: Option<&str>) -> Option<u64> {
        let name = model
            .map(str::to_string)
            .or_else(|| self.config().default_model_name())?;
        self.config().get().models.get(&name)?.context_tokens
    }

    /// Whether `path` may be attached for `model` (`None`: the default
    /// model): an image for a model without vision is refused, with the
    /// reason, before anything is read. Unknown models are refused too.
    pub fn check_attachment(&self, model: Option<&str>, path: &std::path::Path) -> Result<()> {
        // Without the key: this runs on the UI thread, and `api_key_cmd` may block.
        let facts = self.config().facts(model).map_err(|e| anyhow::anyhow!(e))?;
        crate::files::refuse_image_without_vision(path, &facts.name, facts.vision)
            .map_err(|e| anyhow::anyhow!(e))
    }

    /// Read an attachment for the next message of `conversation_id` (for its
    /// model), within `budget` bytes: refused when it is an image and the
    /// model takes none, or over the budget, or neither text nor an image.
    /// Reads on a blocking thread.
    pub async fn read_attachment_for(
        &self,
        conversation_id: i64,
        path: std::path::PathBuf,
        budget: u64,
    ) -> Result<super::Part> {
        let model = self
            .store()
            .conversation(conversation_id)?
            .and_then(|c| c.model);
        self.check_attachment(model.as_deref(), &path)?;
        crate::files::read_attachment_async(path, budget)
            .await
            .map_err(|e| anyhow::anyhow!(e))
    }
}
