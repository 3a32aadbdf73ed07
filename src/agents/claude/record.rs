//! What a Claude Code transcript's lines say, as the loader ([`super::load`]) records them: the
//! fields every conversational line carries and one kind per line type.

use std::sync::Arc;

use super::content::Content;
pub use super::sha256_name::Sha256Name;
pub use super::uuids::LineId;
use super::wire::Build;
use crate::core::lines::SkippedLine;

/// A transcript as its lines say it.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    pub name: String,
    /// Records in file order.
    pub lines: Vec<Line>,
    pub skipped: Vec<SkippedLine>,
    /// What was kept but not understood (unknown line types, usage of another shape).
    pub notes: Vec<String>,
    /// Non-blank lines read: `lines.len() + skipped.len()`.
    pub non_blank_lines: usize,
    /// The builds' `version`s its lines carry, in the order first met (noted as the lines are
    /// recorded: a walk over the lines at the end touches every line's record again).
    pub versions: Vec<Arc<str>>,
    /// The first line of each `uuid` (what [`Line::duplicate_of`] points at).
    pub(crate) uuids: super::uuids::LinesByUuid,
    /// A lean load left messages' contents out (`load::Loader::lean`): only `steps` and
    /// `fingerprint` are read from it; `compile`, `view`, `diff` and `check` load the file
    /// whole.
    pub content_left_out: bool,
    /// The lean load left out contents that `steps` needs after all (its lines call for them,
    /// or planning the steps did): load the file again whole.
    pub needs_content: bool,
    /// 2.1.3xx contents a lean load left out though their builds name messages by them.
    pub(crate) left_out_named: LeftOutNamed,
}

/// A lean load leaves out the content of a 2.1.3xx line whose message it names alone (its
/// `message_sha256`) where no line next to it in the file is of its role: a message the
/// history forms of several lines is named by the sha256 of all their blocks, and such lines
/// are next to each other. Should planning need a content left out after all (a message formed
/// of lines apart, a request compiled whole), it says so here, and the file is loaded again
/// whole (`session::GrowingLoad::finish`).
#[derive(Debug, Default)]
pub(crate) struct LeftOutNamed {
    pub any: bool,
    /// Set by the planner, which reads the transcript shared.
    needed: std::sync::atomic::AtomicBool,
}

impl LeftOutNamed {
    /// Planning read contents where some may have been left out.
    pub fn note_needed(&self) {
        if self.any {
            self.needed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub fn needed(&self) -> bool {
        self.needed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for LeftOutNamed {
    fn clone(&self) -> LeftOutNamed {
        LeftOutNamed {
            any: self.any,
            needed: self.needed().into(),
        }
    }
}

/// One line's record: the fields every conversational line carries, and its kind.
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    pub kind: LineKind,
    pub uuid: Option<LineId>,
    pub parent: Option<LineId>,
    /// Its session, subagent, build and working directory: one copy for the lines in a row
    /// that carry the same.
    pub context: Arc<LineContext>,
    pub sidechain: bool,
    pub timestamp: Option<Box<str>>,
    /// An earlier line of this file has the same `uuid` (a resume's copy, a rewritten line):
    /// the index of that line in [`Transcript::lines`]. The first one counts.
    pub duplicate_of: Option<usize>,
}

/// What a line says of where it was written, as most lines in a row repeat it.
#[derive(Debug, Default)]
pub struct LineContext {
    pub session_id: Option<Arc<str>>,
    /// A subagent's id (`agentId`, 2.0.x+); lines of a sidechain carry `isSidechain`.
    pub agent_id: Option<Arc<str>>,
    /// The Claude Code build that wrote the line.
    pub version: Option<Arc<str>>,
    pub cwd: Option<Arc<str>>,
    /// The request rules of that build (1.0.30's where no version is written).
    pub build: Build,
}

#[derive(Debug, Clone)]
pub enum LineKind {
    User(User),
    /// Boxed: the largest kind, and a line's size is paid by every line.
    Assistant(Box<Assistant>),
    System(System),
    /// 1.0.x: a session title from a side request.
    Summary {
        summary: Box<str>,
        leaf: Option<Box<str>>,
    },
    Attachment(Attachment),
    /// 2.1.x: the leaf the session was at (`leafUuid`).
    LastPrompt {
        leaf: Option<Box<str>>,
    },
    /// 2.1.x: a subagent's progress, embedding its messages (with usage) as the subagent's own
    /// file records them too.
    Progress,
    ApiRequest(Box<ApiRequest>),
    /// 2.1.3xx: a message of a replayed request, by the sha256 of its canonical JSON.
    ApiRequestBlob {
        hash: Sha256Name,
        message: Box<str>,
    },
    /// 2.1.3xx: a request's system blocks and tools, by the sha256 of their canonical JSON.
    ApiRequestShape {
        hash: Sha256Name,
        /// Shared with the shape line before it when that one's text is the same.
        shape: Arc<str>,
    },
    /// A line type that carries nothing promptc reads (the name as written).
    Bookkeeping(&'static str),
    /// A line type promptc does not know: kept, and named in the notes.
    Unknown(Box<str>),
}

impl LineKind {
    /// The line's `type`.
    pub fn type_name(&self) -> &str {
        match self {
            LineKind::User(_) => "user",
            LineKind::Assistant(_) => "assistant",
            LineKind::System(_) => "system",
            LineKind::Summary { .. } => "summary",
            LineKind::Attachment(_) => "attachment",
            LineKind::LastPrompt { .. } => "last-prompt",
            LineKind::Progress => "progress",
            LineKind::ApiRequest(_) => "api-request",
            LineKind::ApiRequestBlob { .. } => "api-request-blob",
            LineKind::ApiRequestShape { .. } => "api-request-shape",
            LineKind::Bookkeeping(name) => name,
            LineKind::Unknown(name) => name,
        }
    }
}

#[derive(Debug, Clone)]
pub struct User {
    /// `message.content` as written: a JSON string or array.
    pub content: Box<str>,
    /// The `tool_use_id` of each `tool_result` block, in order.
    pub tool_results: Vec<Box<str>>,
    /// Its content blocks as a prompt holds them (hashed once, as the line is read).
    pub blocks: Content,
    /// Blocks of its content that are not block objects promptc reads (named in the notes).
    pub unread_blocks: Box<[usize]>,
    /// `isMeta`: a local command's caveat or echo, sent to the model.
    pub meta: bool,
    /// `isCompactSummary`: the summary a compaction left.
    pub compact_summary: bool,
    /// `isVisibleInTranscriptOnly`: shown to the user, never sent.
    pub transcript_only: bool,
    /// Builds that write replay records (2.1.332 on): the sha256 the records name its message
    /// by when the message is this line alone (see [`Assistant::message_sha256`]). Boxed: a
    /// user line's record is inline in every line's, and most lines are of other builds.
    pub message_sha256: Option<Box<Sha256Name>>,
}

/// One line of a streamed response: 1.0.x-2.1.x write one line per content block, each with
/// the whole message's `id`, `requestId` and usage.
#[derive(Debug, Clone)]
pub struct Assistant {
    /// Shared with the response the line is of (as the request id and tool ids).
    pub message_id: Option<Arc<str>>,
    pub request_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    /// `message.content` as written (a JSON array).
    pub content: Box<str>,
    /// The `id` of each `tool_use` block, in order.
    pub tool_uses: Vec<Arc<str>>,
    /// Its content blocks as a prompt holds them (hashed once, as the line is read).
    pub blocks: Content,
    /// Blocks of its content that are not block objects promptc reads (named in the notes).
    pub unread_blocks: Box<[usize]>,
    /// A `thinking` or `redacted_thinking` block is among its blocks.
    pub thinking: bool,
    pub usage: Option<Usage>,
    /// `isApiErrorMessage`: an error Claude Code wrote itself (model `<synthetic>`).
    pub api_error: bool,
    /// 2.1.3xx: the `api-request` record of the request this answered (`requestRef`).
    pub request_ref: Option<LineId>,
    /// `usage` was written but is not Anthropic's shape: counted as none, with a note.
    pub unreadable_usage: bool,
    /// Builds that write replay records (2.1.332 on): the sha256 the records name its message
    /// by when the message is this line alone (most are), taken as the line is read, on the
    /// loader's threads, not while the requests are planned. `None` for other builds, and where
    /// the content is not in serde's form (the planner takes the value's way).
    pub message_sha256: Option<Sha256Name>,
}

impl Assistant {
    /// Written by Claude Code, not the model: no request was answered by it.
    pub fn synthetic(&self) -> bool {
        self.api_error || self.model.as_deref() == Some("<synthetic>")
    }
}

/// Anthropic's usage of one response (`input_tokens` is what came after the last breakpoint:
/// the whole prompt is the sum of the three input counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    /// `cache_creation.ephemeral_5m_input_tokens` / `_1h_` (1.0.x+); `None` when not written.
    pub cache_creation_5m: Option<u64>,
    pub cache_creation_1h: Option<u64>,
    pub output_tokens: u64,
    /// The cache counts are written at all (other backends behind `ANTHROPIC_BASE_URL` often
    /// leave them out: nothing can be said of their cache).
    pub has_cache_fields: bool,
}

impl Usage {
    /// The whole prompt: uncached, written and read input.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
    }
}

#[derive(Debug, Clone)]
pub struct System {
    pub subtype: Option<Box<str>>,
    /// `compactMetadata.trigger` (`manual`, `auto`) of a `compact_boundary`.
    pub compact_trigger: Option<Box<str>>,
    /// `compactMetadata.preTokens`.
    pub compact_pre_tokens: Option<u64>,
    /// A compaction boundary's link to the history it replaced (`logicalParentUuid`).
    pub logical_parent: Option<LineId>,
}

impl System {
    pub fn is_compact_boundary(&self) -> bool {
        self.subtype.as_deref() == Some("compact_boundary")
    }
}

/// 2.1.x: context Claude Code attached (2.1.332: with the exact text sent).
#[derive(Debug, Clone)]
pub struct Attachment {
    /// `attachment.type`: `environment`, `date`, `instructions`, `skill_listing`, ...
    pub attachment_type: Option<Box<str>>,
    /// `rendered` as written (JSON), when the build records what it sent.
    pub rendered: Option<Box<str>>,
    /// `renderedRole`: `system` or `user`.
    pub rendered_role: Option<Box<str>>,
}

/// 2.1.3xx: a replay record of one sampling request.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    /// Its id, and the request whose first `keep` messages this one starts with: the UUIDs
    /// Claude Code writes kept as their bits, as a line's `uuid`.
    pub id: LineId,
    pub base: Option<LineId>,
    pub keep: usize,
    /// The hashes of the messages after those.
    pub tail: Vec<Sha256Name>,
    /// `params` as written (model, betas, max_tokens, thinking, ...).
    /// Shared with the record before it where they are the same.
    pub params: Arc<str>,
    /// `cacheControl` as written: JSON paths and values.
    pub cache_control: Box<str>,
    pub shape_hash: Option<Sha256Name>,
    pub request_digest: Option<Sha256Name>,
    pub query_source: Option<Box<str>>,
}
