
use builtin;
use str;

set edit:completion:arg-completer[promptc] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'promptc'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'promptc'= {
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand view 'Show the raw history and the model view of a session, side by side'
            cand compile 'Compile the request the agent sent (or would send on resume) at a turn and step'
            cand fingerprint 'Fingerprint every step''s request, component by component'
            cand steps 'One row per step: observed and predicted prompt-cache use, and why'
            cand diff 'Compare two sessions request by request and name every drift'
            cand check 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)'
            cand sessions 'List the sessions under the Codex home and the Claude Code home, newest first'
            cand report 'Tokens, cache hits, losses by cause and dollars across many sessions'
            cand watch 'Follow a live session of either agent: each request''s `steps` row once it is final'
            cand completions 'Print a shell completion script'
            cand man 'Print the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'promptc;view'= {
            cand --turn 'A turn: its number (from 1) or its turn id'
            cand --step 'A step (sampling request) within the turn, from 1'
            cand --format 'Output format'
            cand -o 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)'
            cand --output 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --strict 'Fail on the first line that cannot be read, instead of skipping it with a warning'
            cand --json 'Short for `--format json`'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'promptc;compile'= {
            cand --turn 'A turn: its number (from 1) or its turn id'
            cand --step 'A step (sampling request) within the turn, from 1'
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand --output-schema 'The JSON schema given to `codex exec --output-schema`, sent as `text.format`. Codex 0.104 and 0.122 record it; the other builds do not, and without it it is unknown'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --strict 'Fail on the first line that cannot be read, instead of skipping it with a warning'
            cand --json 'Short for `--format json`'
            cand --full 'Print long texts whole instead of folding them'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;fingerprint'= {
            cand --turn 'A turn: its number (from 1) or its turn id'
            cand --step 'A step (sampling request) within the turn, from 1'
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --strict 'Fail on the first line that cannot be read, instead of skipping it with a warning'
            cand --json 'Short for `--format json`'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;steps'= {
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --strict 'Fail on the first line that cannot be read, instead of skipping it with a warning'
            cand --json 'Short for `--format json`'
            cand --no-tokens 'Skip token estimation (faster; estimated and predicted columns show `-`)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;diff'= {
            cand --turn 'A turn: its number (from 1) or its turn id'
            cand --step 'A step (sampling request) within the turn, from 1'
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand -o 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)'
            cand --output 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --strict 'Fail on the first line that cannot be read'
            cand --json 'Short for `--format json`'
            cand --no-tokens 'Skip token estimation (faster; the common prefix is given in items only)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'promptc;check'= {
            cand --baseline 'A JSON file of every step''s fingerprint per file: any difference fails'
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --update-baseline 'Write the baseline file from these files instead of comparing'
            cand --strict 'Fail on the first line that cannot be read'
            cand --json 'Short for `--format json`'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;sessions'= {
            cand --agent 'Only this agent''s sessions (default: both)'
            cand --codex-home 'The Codex home (default: $CODEX_HOME, else ~/.codex)'
            cand --claude-home 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)'
            cand --format 'Output format'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --json 'Short for `--format json`'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'promptc;report'= {
            cand --agent 'Only this agent''s sessions (default: both)'
            cand --codex-home 'The Codex home (default: $CODEX_HOME, else ~/.codex)'
            cand --claude-home 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)'
            cand --since 'Count requests from this day on (YYYY-MM-DD, in --timezone)'
            cand --until 'Count requests up to this day, inclusive (YYYY-MM-DD, in --timezone)'
            cand --timezone 'The time zone of dates and days: an IANA name (Europe/Paris) or UTC (default: the system''s local zone)'
            cand --by 'Group requests by this'
            cand --top 'Sessions listed in the table of those that lost the most'
            cand --format 'Output format'
            cand -o 'Write the report to FILE instead of standard output (`-` is standard output)'
            cand --output 'Write the report to FILE instead of standard output (`-` is standard output)'
            cand --pricing 'A JSON price table that extends the built-in one (or replaces it, with `"replace": true`): `{"as_of": "...", "source": "...", "models": {"MODEL": {"input": 1.25, "cached_input": 0.125, "output": 10}}}`, USD per million tokens. A price may say the day it took effect and carry its earlier prices (`"from": "YYYY-MM-DD", "history": [{..., "from": ...}]`): each request is priced at its UTC day''s; `"cache_write"` prices cache writes. See PRICING.md'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --json 'Short for `--format json`'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'promptc;watch'= {
            cand --agent 'Only this agent''s sessions for `latest`, session ids and `--next` (default: both); the file given must be this agent''s (an empty one is taken as its)'
            cand --codex-home 'The Codex home to look `latest` and session ids up in (default: $CODEX_HOME, else ~/.codex)'
            cand --claude-home 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)'
            cand --interval 'How often to look for new bytes, in milliseconds'
            cand --tools 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown'
            cand --instructions 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown'
            cand --system 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them'
            cand --format 'Output format'
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --next 'Also follow the next session either agent starts: when a newer session appears under the homes, switch to it'
            cand --exit-on-drift 'Exit with status 1 at the first unexpected drift (a prefix that broke)'
            cand --json 'Short for `--format json`'
            cand --no-tokens 'Skip token estimation (faster; estimated and predicted columns show `-`)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'promptc;completions'= {
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;man'= {
            cand --color 'When to use colour on stdout and stderr'
            cand --width 'Output width in columns (default: $COLUMNS, else 100)'
            cand --no-mmap 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'promptc;help'= {
            cand view 'Show the raw history and the model view of a session, side by side'
            cand compile 'Compile the request the agent sent (or would send on resume) at a turn and step'
            cand fingerprint 'Fingerprint every step''s request, component by component'
            cand steps 'One row per step: observed and predicted prompt-cache use, and why'
            cand diff 'Compare two sessions request by request and name every drift'
            cand check 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)'
            cand sessions 'List the sessions under the Codex home and the Claude Code home, newest first'
            cand report 'Tokens, cache hits, losses by cause and dollars across many sessions'
            cand watch 'Follow a live session of either agent: each request''s `steps` row once it is final'
            cand completions 'Print a shell completion script'
            cand man 'Print the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'promptc;help;view'= {
        }
        &'promptc;help;compile'= {
        }
        &'promptc;help;fingerprint'= {
        }
        &'promptc;help;steps'= {
        }
        &'promptc;help;diff'= {
        }
        &'promptc;help;check'= {
        }
        &'promptc;help;sessions'= {
        }
        &'promptc;help;report'= {
        }
        &'promptc;help;watch'= {
        }
        &'promptc;help;completions'= {
        }
        &'promptc;help;man'= {
        }
        &'promptc;help;help'= {
        }
    ]
    $completions[$command]
}
