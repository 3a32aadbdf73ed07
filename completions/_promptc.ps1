
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'promptc' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'promptc'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'promptc' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('view', 'view', [CompletionResultType]::ParameterValue, 'Show the raw history and the model view of a session, side by side')
            [CompletionResult]::new('compile', 'compile', [CompletionResultType]::ParameterValue, 'Compile the request the agent sent (or would send on resume) at a turn and step')
            [CompletionResult]::new('fingerprint', 'fingerprint', [CompletionResultType]::ParameterValue, 'Fingerprint every step''s request, component by component')
            [CompletionResult]::new('steps', 'steps', [CompletionResultType]::ParameterValue, 'One row per step: observed and predicted prompt-cache use, and why')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two sessions request by request and name every drift')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions under the Codex home and the Claude Code home, newest first')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tokens, cache hits, losses by cause and dollars across many sessions')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Follow a live session of either agent: each request''s `steps` row once it is final')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'promptc;view' {
            [CompletionResult]::new('--turn', '--turn', [CompletionResultType]::ParameterName, 'A turn: its number (from 1) or its turn id')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'A step (sampling request) within the turn, from 1')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read, instead of skipping it with a warning')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'promptc;compile' {
            [CompletionResult]::new('--turn', '--turn', [CompletionResultType]::ParameterName, 'A turn: its number (from 1) or its turn id')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'A step (sampling request) within the turn, from 1')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output-schema', '--output-schema', [CompletionResultType]::ParameterName, 'The JSON schema given to `codex exec --output-schema`, sent as `text.format`. Codex 0.104 and 0.122 record it; the other builds do not, and without it it is unknown')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read, instead of skipping it with a warning')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'Print long texts whole instead of folding them')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;fingerprint' {
            [CompletionResult]::new('--turn', '--turn', [CompletionResultType]::ParameterName, 'A turn: its number (from 1) or its turn id')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'A step (sampling request) within the turn, from 1')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read, instead of skipping it with a warning')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;steps' {
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read, instead of skipping it with a warning')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-tokens', '--no-tokens', [CompletionResultType]::ParameterName, 'Skip token estimation (faster; estimated and predicted columns show `-`)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;diff' {
            [CompletionResult]::new('--turn', '--turn', [CompletionResultType]::ParameterName, 'A turn: its number (from 1) or its turn id')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'A step (sampling request) within the turn, from 1')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-tokens', '--no-tokens', [CompletionResultType]::ParameterName, 'Skip token estimation (faster; the common prefix is given in items only)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'promptc;check' {
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'A JSON file of every step''s fingerprint per file: any difference fails')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--update-baseline', '--update-baseline', [CompletionResultType]::ParameterName, 'Write the baseline file from these files instead of comparing')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on the first line that cannot be read')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;sessions' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only this agent''s sessions (default: both)')
            [CompletionResult]::new('--codex-home', '--codex-home', [CompletionResultType]::ParameterName, 'The Codex home (default: $CODEX_HOME, else ~/.codex)')
            [CompletionResult]::new('--claude-home', '--claude-home', [CompletionResultType]::ParameterName, 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'promptc;report' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only this agent''s sessions (default: both)')
            [CompletionResult]::new('--codex-home', '--codex-home', [CompletionResultType]::ParameterName, 'The Codex home (default: $CODEX_HOME, else ~/.codex)')
            [CompletionResult]::new('--claude-home', '--claude-home', [CompletionResultType]::ParameterName, 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Count requests from this day on (YYYY-MM-DD, in --timezone)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Count requests up to this day, inclusive (YYYY-MM-DD, in --timezone)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The time zone of dates and days: an IANA name (Europe/Paris) or UTC (default: the system''s local zone)')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Group requests by this')
            [CompletionResult]::new('--top', '--top', [CompletionResultType]::ParameterName, 'Sessions listed in the table of those that lost the most')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the report to FILE instead of standard output (`-` is standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the report to FILE instead of standard output (`-` is standard output)')
            [CompletionResult]::new('--pricing', '--pricing', [CompletionResultType]::ParameterName, 'A JSON price table that extends the built-in one (or replaces it, with `"replace": true`): `{"as_of": "...", "source": "...", "models": {"MODEL": {"input": 1.25, "cached_input": 0.125, "output": 10}}}`, USD per million tokens. A price may say the day it took effect and carry its earlier prices (`"from": "YYYY-MM-DD", "history": [{..., "from": ...}]`): each request is priced at its UTC day''s; `"cache_write"` prices cache writes. See PRICING.md')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'promptc;watch' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only this agent''s sessions for `latest`, session ids and `--next` (default: both); the file given must be this agent''s (an empty one is taken as its)')
            [CompletionResult]::new('--codex-home', '--codex-home', [CompletionResultType]::ParameterName, 'The Codex home to look `latest` and session ids up in (default: $CODEX_HOME, else ~/.codex)')
            [CompletionResult]::new('--claude-home', '--claude-home', [CompletionResultType]::ParameterName, 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often to look for new bytes, in milliseconds')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown')
            [CompletionResult]::new('--instructions', '--instructions', [CompletionResultType]::ParameterName, 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'Also follow the next session either agent starts: when a newer session appears under the homes, switch to it')
            [CompletionResult]::new('--exit-on-drift', '--exit-on-drift', [CompletionResultType]::ParameterName, 'Exit with status 1 at the first unexpected drift (a prefix that broke)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Short for `--format json`')
            [CompletionResult]::new('--no-tokens', '--no-tokens', [CompletionResultType]::ParameterName, 'Skip token estimation (faster; estimated and predicted columns show `-`)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'promptc;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;man' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour on stdout and stderr')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Output width in columns (default: $COLUMNS, else 100)')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'promptc;help' {
            [CompletionResult]::new('view', 'view', [CompletionResultType]::ParameterValue, 'Show the raw history and the model view of a session, side by side')
            [CompletionResult]::new('compile', 'compile', [CompletionResultType]::ParameterValue, 'Compile the request the agent sent (or would send on resume) at a turn and step')
            [CompletionResult]::new('fingerprint', 'fingerprint', [CompletionResultType]::ParameterValue, 'Fingerprint every step''s request, component by component')
            [CompletionResult]::new('steps', 'steps', [CompletionResultType]::ParameterValue, 'One row per step: observed and predicted prompt-cache use, and why')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two sessions request by request and name every drift')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions under the Codex home and the Claude Code home, newest first')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Tokens, cache hits, losses by cause and dollars across many sessions')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Follow a live session of either agent: each request''s `steps` row once it is final')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'promptc;help;view' {
            break
        }
        'promptc;help;compile' {
            break
        }
        'promptc;help;fingerprint' {
            break
        }
        'promptc;help;steps' {
            break
        }
        'promptc;help;diff' {
            break
        }
        'promptc;help;check' {
            break
        }
        'promptc;help;sessions' {
            break
        }
        'promptc;help;report' {
            break
        }
        'promptc;help;watch' {
            break
        }
        'promptc;help;completions' {
            break
        }
        'promptc;help;man' {
            break
        }
        'promptc;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
