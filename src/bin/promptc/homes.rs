//! The agents' homes: where Codex keeps its rollouts (`input::codex_home`) and where Claude Code
//! keeps its transcripts (`$CLAUDE_CONFIG_DIR`, else `~/.claude`: the sessions are in its
//! `projects/`), which of them a command reads, and the walk of a Claude Code home.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::cli::AgentChoice;
use crate::env;
use promptc::agents::claude::home::{Home, HomeBuilder, read_bytes};

/// Where Claude Code keeps its sessions, under its home.
pub const PROJECTS: &str = "projects";

/// `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.
pub fn claude_home() -> anyhow::Result<PathBuf> {
    agent_home(env::CLAUDE_CONFIG_DIR, ".claude", "Claude Code")
}

/// An agent's home: the variable `var` names it, else `dir` under `$HOME`.
pub fn agent_home(var: &str, dir: &str, agent: &str) -> anyhow::Result<PathBuf> {
    if let Some(home) = env::var(var).filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match env::var(env::HOME).filter(|h| !h.is_empty()) {
        Some(home) => Ok(Path::new(&home).join(dir)),
        None => bail!("cannot find the {agent} home: set {var} (or {})", env::HOME),
    }
}

/// The homes a command reads.
#[derive(Debug, Default)]
pub struct Homes {
    pub codex: Option<PathBuf>,
    pub claude: Option<PathBuf>,
}

/// The homes `sessions` and `report` read. Both agents' by default, `--agent` narrows. A home
/// named on the command line, or the only one asked for, must be there (an error otherwise);
/// by default a home that is not there is passed over, and none at all is an error. A Claude
/// Code home named on the command line must hold `projects/`.
pub fn choose(
    agent: Option<AgentChoice>,
    codex_flag: Option<&Path>,
    claude_flag: Option<&Path>,
) -> anyhow::Result<Homes> {
    let wants = |a: AgentChoice| agent.is_none_or(|chosen| chosen == a);
    if let (Some(AgentChoice::Codex), Some(_)) = (agent, claude_flag) {
        bail!("--claude-home: --agent codex reads no Claude Code home");
    }
    if let (Some(AgentChoice::Claude), Some(_)) = (agent, codex_flag) {
        bail!("--codex-home: --agent claude reads no Codex home");
    }
    let mut homes = Homes::default();
    let mut looked = Vec::new();
    if wants(AgentChoice::Codex) {
        let named = codex_flag.is_some() || agent.is_some();
        let home = match codex_flag {
            Some(home) => Ok(home.to_path_buf()),
            None => crate::input::codex_home(),
        };
        match home {
            Ok(home) if home.is_dir() => {
                if codex_flag.is_some() && !is_codex_home(&home) && is_claude_home(&home) {
                    bail!(
                        "{}: holds no sessions/ but a projects/ folder: a Claude Code home \
                         (--claude-home)",
                        home.display()
                    );
                }
                // The sessions folder given for its home: it would list nothing, in silence. By
                // its real path, so that `--codex-home .` from inside it is caught too.
                let real = std::fs::canonicalize(&home).unwrap_or_else(|_| home.clone());
                if codex_flag.is_some()
                    && !is_codex_home(&home)
                    && real
                        .file_name()
                        .is_some_and(|n| n == "sessions" || n == "archived_sessions")
                {
                    bail!(
                        "{}: holds no sessions/: not a Codex home (give the folder above it: {})",
                        home.display(),
                        real.parent()
                            .map_or(String::new(), |p| p.display().to_string())
                    );
                }
                homes.codex = Some(home);
            }
            Ok(home) if named => {
                bail!("{}: no such directory (the Codex home)", home.display())
            }
            Ok(home) => looked.push(format!("no Codex home ({})", home.display())),
            Err(e) if named => return Err(e),
            Err(e) => looked.push(format!("{e:#}")),
        }
    }
    if wants(AgentChoice::Claude) {
        let named = claude_flag.is_some() || agent.is_some();
        let home = match claude_flag {
            Some(home) => Ok(home.to_path_buf()),
            None => claude_home(),
        };
        match home {
            Ok(home) if home.is_dir() => {
                if claude_flag.is_some() && !is_claude_home(&home) {
                    bail!("{}", not_a_claude_home(&home));
                }
                homes.claude = Some(home);
            }
            Ok(home) if named => {
                bail!(
                    "{}: no such directory (the Claude Code home)",
                    home.display()
                )
            }
            Ok(home) => looked.push(format!("no Claude Code home ({})", home.display())),
            Err(e) if named => return Err(e),
            Err(e) => looked.push(format!("{e:#}")),
        }
    }
    if homes.codex.is_none() && homes.claude.is_none() {
        bail!(
            "{}: set {} or {}, or pass --codex-home or --claude-home",
            looked.join(", and "),
            env::CODEX_HOME,
            env::CLAUDE_CONFIG_DIR
        );
    }
    Ok(homes)
}

fn is_codex_home(dir: &Path) -> bool {
    dir.join("sessions").is_dir() || dir.join("archived_sessions").is_dir()
}

fn is_claude_home(dir: &Path) -> bool {
    dir.join(PROJECTS).is_dir()
}

/// Why `dir` is no Claude Code home, and what it may be instead.
fn not_a_claude_home(dir: &Path) -> String {
    let shown = dir.display();
    let hint = if is_codex_home(dir) {
        " (it holds sessions/: a Codex home, --codex-home)".to_string()
    } else if dir.file_name().is_some_and(|n| n == PROJECTS) {
        format!(
            " (give the folder above it: {})",
            dir.parent()
                .map_or(String::new(), |p| p.display().to_string())
        )
    } else {
        String::new()
    };
    format!(
        "{shown}: no projects/ folder: not a Claude Code home (Claude Code keeps its sessions \
         in projects/){hint}"
    )
}

/// A transcript file under a Claude Code home's `projects/`.
#[derive(Debug, Clone)]
pub struct ClaudeFile {
    pub path: PathBuf,
    /// Relative to `projects/`, `/`-separated: what `claude::home::file_role` reads.
    pub rel: String,
    /// Bytes on disk when it was found.
    pub size: u64,
}

/// Call `file` for each entry under `root` that is not a folder (each one below it too when
/// `recurse`), with its type. A folder's entries are read in name order; a link to a folder
/// outside `root` (sessions kept on another disk) is followed, one to a folder inside it is not
/// (that folder is walked under its own name), and no folder is read twice, so a link back up
/// ends there: which path a file is found under does not depend on the file system's order. A
/// missing `root` holds nothing; a folder that cannot be listed is left out with a warning.
pub fn walk_files(
    root: &Path,
    recurse: bool,
    file: &mut dyn FnMut(&std::fs::DirEntry, std::fs::FileType) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let real_root = std::fs::canonicalize(root).ok();
    let mut seen: std::collections::HashSet<PathBuf> = real_root.iter().cloned().collect();
    let mut folders = vec![root.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir == root => continue,
            Err(e) => {
                crate::commands::warn_unlisted(&dir, &e);
                continue;
            }
        };
        let mut entries = entries
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("{}: cannot list", dir.display()))?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut below = Vec::new();
        for entry in entries {
            let path = entry.path();
            let kind = entry
                .file_type()
                .with_context(|| format!("{}: cannot stat", path.display()))?;
            if !(kind.is_dir() || (kind.is_symlink() && path.is_dir())) {
                file(&entry, kind)?;
                continue;
            }
            if !recurse {
                continue;
            }
            let real = match std::fs::canonicalize(&path) {
                Ok(real) => real,
                Err(e) => {
                    crate::commands::warn_unlisted(&path, &e);
                    continue;
                }
            };
            let inside = real_root.as_ref().is_some_and(|r| real.starts_with(r));
            if !(kind.is_symlink() && inside) && seen.insert(real) {
                below.push(path);
            }
        }
        // Depth first, in name order.
        folders.extend(below.into_iter().rev());
    }
    Ok(())
}

/// Every `*.jsonl` under `home/projects/`, sorted by their relative path. A missing `projects/`
/// holds none. Links are followed ([`walk_files`]).
pub fn claude_files(home: &Path) -> anyhow::Result<Vec<ClaudeFile>> {
    let projects = home.join(PROJECTS);
    let mut found = Vec::new();
    walk_files(&projects, true, &mut |entry, kind| {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            return Ok(());
        }
        // One stat: the size (a link's target's, and whether it is a file).
        let metadata = if kind.is_symlink() {
            std::fs::metadata(&path)
        } else {
            entry.metadata()
        };
        if let Some(metadata) = metadata.ok().filter(std::fs::Metadata::is_file) {
            found.push(ClaudeFile {
                rel: relative(&path, &projects),
                path,
                size: metadata.len(),
            });
        }
        Ok(())
    })?;
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(found)
}

/// `path` relative to `base`, `/`-separated.
fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Where a transcript given outside a home is taken to lie, relative to a `projects/`: below
/// the nearest folder of that name, else as a main or subagent file of the folders it is in
/// (`<project>/<file>`, `<project>/<session>/subagents/…/agent-*.jsonl`).
pub fn rel_of_loose_file(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(at) = parts.iter().rposition(|p| p == PROJECTS)
        && at + 2 < parts.len()
    {
        return parts[at + 1..].join("/");
    }
    let from = match parts.iter().rposition(|p| p == "subagents") {
        Some(at) if at >= 2 => at - 2,
        _ => parts.len().saturating_sub(2),
    };
    parts[from..].join("/")
}

/// Read `files` (each its own transcript, on every core, one file in memory per thread) into a
/// home; a file that cannot be read is returned with the reason, and the home goes on.
pub fn read_claude(
    files: &[ClaudeFile],
    verdicts: bool,
    progress: impl Fn() + Sync,
) -> (Home, Vec<(PathBuf, String)>) {
    // The largest files first, so that no thread is left with a large one at the end.
    let mut order: Vec<(u64, usize)> = files.iter().enumerate().map(|(i, f)| (f.size, i)).collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let read = promptc::core::parallel::map(order.len(), crate::commands::threads(), |k| {
        let file = &files[order[k].1];
        let result = std::fs::read(&file.path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|bytes| {
                read_bytes(&file.rel, &bytes, verdicts).map_err(|e| {
                    let message = e.to_string();
                    message
                        .strip_prefix(&format!("{}: ", file.rel))
                        .map_or(message.clone(), str::to_string)
                })
            });
        progress();
        result
    });
    let mut in_order: Vec<Option<Result<_, String>>> = (0..files.len()).map(|_| None).collect();
    for ((_, i), result) in order.into_iter().zip(read) {
        in_order[i] = Some(result);
    }
    let mut builder = HomeBuilder::new(verdicts);
    let mut failed = Vec::new();
    for (file, result) in files.iter().zip(in_order) {
        match result {
            Some(Ok(read)) => builder.push(read),
            Some(Err(reason)) => failed.push((file.path.clone(), reason)),
            None => {}
        }
    }
    (builder.finish(), failed)
}

/// A session's main file under a Claude Code home (`projects/<project>/<session>.jsonl`), as
/// `latest` and session ids find it without reading it whole.
#[derive(Debug)]
pub struct MainFile {
    pub path: PathBuf,
    pub id: String,
}

/// The main files of the sessions under `home/projects/` (empty files are no session).
pub fn main_files(home: &Path) -> anyhow::Result<Vec<MainFile>> {
    Ok(claude_files(home)?
        .into_iter()
        .filter_map(|f| {
            let role = promptc::agents::claude::home::file_role(&f.rel)?;
            let promptc::agents::claude::home::FileRole::Main { session, .. } = role else {
                return None;
            };
            std::fs::metadata(&f.path)
                .is_ok_and(|m| m.len() > 0)
                .then_some(MainFile {
                    path: f.path,
                    id: session,
                })
        })
        .collect())
}

/// When the session of a main file started, in local time as Codex names its files
/// (`YYYY-MM-DDThh:mm:ss`): its first line with a time, from the file's head.
pub fn started(path: &Path) -> Option<String> {
    use std::io::Read as _;
    // Most first lines are short; a long pasted prompt needs more.
    for limit in [8 << 10, 1 << 20, 64 << 20] {
        let mut head = Vec::new();
        std::fs::File::open(path)
            .ok()?
            .take(limit)
            .read_to_end(&mut head)
            .ok()?;
        if let Some(time) = promptc::agents::claude::home::first_time_of_head(&head) {
            return local_time(&time);
        }
        if (head.len() as u64) < limit {
            return None;
        }
    }
    None
}

/// An RFC 3339 time (as Claude Code writes them, in UTC) in the local zone, to the second.
pub fn local_time(time: &str) -> Option<String> {
    // The zone is read once ($TZ, /etc/localtime).
    static LOCAL: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    let timestamp: jiff::Timestamp = time.parse().ok()?;
    let zone = LOCAL.get_or_init(jiff::tz::TimeZone::system);
    Some(
        zone.to_datetime(timestamp)
            .strftime("%Y-%m-%dT%H:%M:%S")
            .to_string(),
    )
}

/// The message when a Claude Code home names no such session.
pub fn projects_dir(home: &Path) -> String {
    home.join(PROJECTS).display().to_string()
}

/// An error naming the ids that match `argument` in both homes.
pub fn ambiguous(argument: &str, matches: &[(String, PathBuf)]) -> anyhow::Error {
    const SHOWN: usize = 10;
    crate::exit::Listed::capped(
        format!(
            "{argument}: ambiguous session id: {} sessions match:",
            matches.len()
        ),
        matches
            .iter()
            .map(|(id, path)| format!("{id}  {}", path.display())),
        matches.len(),
        SHOWN,
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loose_transcript_lies_where_its_folders_say() {
        let rel = |p: &str| rel_of_loose_file(Path::new(p));
        // Below a `projects/` folder: as in a home.
        assert_eq!(
            rel("/backup/.claude/projects/-w/0b1c/subagents/agent-a.jsonl"),
            "-w/0b1c/subagents/agent-a.jsonl"
        );
        assert_eq!(rel("/x/projects/-w/0b1c.jsonl"), "-w/0b1c.jsonl");
        // Elsewhere: its folder is its project, a subagent's two folders up.
        assert_eq!(rel("/tmp/copy/0b1c.jsonl"), "copy/0b1c.jsonl");
        assert_eq!(rel("/tmp/copy/agent-a.jsonl"), "copy/agent-a.jsonl");
        assert_eq!(
            rel("/tmp/p/0b1c/subagents/workflows/wf_1/agent-b.jsonl"),
            "p/0b1c/subagents/workflows/wf_1/agent-b.jsonl"
        );
        assert_eq!(rel("0b1c.jsonl"), "0b1c.jsonl");
    }
}
