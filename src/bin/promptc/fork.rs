//! A fork's parent (0.152+ `codex exec fork`): the fork's first line names the parent session
//! and the fork point; the parent rollout is looked up in the Codex home that holds the fork
//! (the folder above its `sessions/`), else in `$CODEX_HOME`, read, cut at the fork point and
//! handed to the library, which does no I/O.

use std::path::{Path, PathBuf};

use promptc::LoadOptions;
use promptc::agents::codex::model::Rollout;
use promptc::agents::codex::session::Session;
use promptc::agents::codex::session::{ForkPoint, Parent, fork_point, parent_prefix};

/// Forks of forks are followed this deep; deeper parents are reported as not loaded.
const MAX_DEPTH: usize = 8;

/// Replay a loaded rollout; when it is a fork, with its parent's history.
pub fn session(rollout: Rollout, options: LoadOptions) -> Session {
    session_at_depth(rollout, options, 0)
}

fn session_at_depth(rollout: Rollout, options: LoadOptions, depth: usize) -> Session {
    let Some(point) = fork_point(&rollout) else {
        return Session::new(rollout);
    };
    let parent = parent(&rollout.name, &point, options, depth);
    Session::fork(rollout, &point, parent)
}

fn parent(name: &str, point: &ForkPoint, options: LoadOptions, depth: usize) -> Parent {
    if depth >= MAX_DEPTH {
        return Parent::NotFound(format!("forks nested deeper than {MAX_DEPTH}"));
    }
    let homes = homes(name);
    if homes.is_empty() {
        return Parent::NotFound(
            "no folder above the fork holds a sessions folder, and the Codex home ($CODEX_HOME, \
             else ~/.codex) does not exist"
                .into(),
        );
    }
    for home in &homes {
        let Ok(rollouts) = crate::input::find_rollouts(home) else {
            continue;
        };
        let Some(found) = rollouts
            .into_iter()
            .find(|r| r.name.as_ref().is_some_and(|n| n.id == point.parent_id))
        else {
            continue;
        };
        let parent_name = found.path.display().to_string();
        let bytes = match std::fs::read(&found.path)
            .map_err(anyhow::Error::from)
            .and_then(crate::input::decompress_if_zstd)
        {
            Ok(bytes) => bytes,
            Err(e) => return Parent::NotFound(format!("{parent_name}: cannot read: {e}")),
        };
        return match promptc::agents::codex::parse::load(
            &parent_name,
            parent_prefix(&bytes, point),
            options,
        ) {
            Ok(rollout) => Parent::Found(Box::new(session_at_depth(rollout, options, depth + 1))),
            Err(e) => Parent::NotFound(format!("{parent_name}: {e}")),
        };
    }
    let searched: Vec<String> = homes
        .iter()
        .map(|h| h.join("sessions").display().to_string())
        .collect();
    Parent::NotFound(format!("no rollout of it under {}", searched.join(" or ")))
}

/// The Codex homes to search: the one holding the fork file (the nearest folder above it with
/// a `sessions` folder), then `$CODEX_HOME` (or `~/.codex`) when it is another one.
fn homes(name: &str) -> Vec<PathBuf> {
    let mut homes = Vec::new();
    if name != "-" {
        let path = Path::new(name);
        // The path as given, so that the parent is named as the fork was (output is the same
        // wherever it runs).
        let holds_sessions =
            |dir: &Path| dir.join("sessions").is_dir() || dir.join("archived_sessions").is_dir();
        let home = path
            .ancestors()
            .skip(1)
            .find(|dir| holds_sessions(dir))
            .map(Path::to_path_buf);
        // A relative path's ancestors stop at the working directory: look above it too.
        let home = home.or_else(|| {
            let absolute = std::path::absolute(path).ok()?;
            let found = absolute
                .ancestors()
                .skip(1)
                .find(|dir| holds_sessions(dir))?;
            Some(found.to_path_buf())
        });
        homes.extend(home);
    }
    if let Ok(home) = crate::input::codex_home()
        && home.is_dir()
        && !homes.contains(&home)
    {
        homes.push(home);
    }
    homes
}
