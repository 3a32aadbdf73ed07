//! The fuzz targets' bodies (`fuzz/bodies/`) run as ordinary tests, since cargo-fuzz needs a
//! nightly toolchain that CI may not have: over the committed corpus (what `fuzz/seed.sh`
//! seeds: every fixture, and every diff pair as `A 0xFF B`) and over one input big enough to
//! be split, each on one thread and on several. This test binary builds the library without
//! `cfg(test)`, so at its production sizes: the loader's parts of 1 MB, the plan's blocks of
//! 256 steps, the cache analysis' and the tables' of 512.

#[allow(
    dead_code,
    reason = "the fuzz targets' thread choice; the tests choose their own"
)]
#[path = "../../fuzz/bodies/load.rs"]
mod load;
#[path = "../../fuzz/bodies/pipeline.rs"]
mod pipeline;

use crate::support::{all_fixture_files, diff_cases, diff_pair, root};

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The corpus `fuzz/seed.sh` seeds, by name.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut inputs: Vec<(String, Vec<u8>)> = all_fixture_files()
        .into_iter()
        .map(|path| (path.clone(), read(&path)))
        .collect();
    for case in diff_cases() {
        let (a, b) = diff_pair(&case);
        let mut pair = read(&a);
        pair.push(0xFF);
        pair.extend(read(&b));
        inputs.push((format!("pair {case}"), pair));
    }
    inputs
}

/// The two bodies on one thread and on `threads`: the same outputs, output by output.
fn same_on_threads(name: &str, bytes: &[u8], threads: usize) {
    let (one, several) = (load::run(bytes, 1), load::run(bytes, threads));
    if one != several {
        let (a, b) = (one.unwrap_or_default(), several.unwrap_or_default());
        let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        panic!(
            "{name}: load's model view on 1 and {threads} threads differ: {} and {} entries, \
             from entry {at} on: {:?} and {:?}",
            a.len(),
            b.len(),
            a.get(at),
            b.get(at)
        );
    }
    let one = pipeline::run(bytes, 1);
    let several = pipeline::run(bytes, threads);
    let names = |o: &pipeline::Outputs| o.iter().map(|(what, _)| *what).collect::<Vec<_>>();
    assert_eq!(names(&one), names(&several), "{name}: the outputs made");
    for ((what, a), (_, b)) in one.iter().zip(&several) {
        assert!(
            a == b,
            "{name}: {what} on 1 and {threads} threads differ:\n{}\n---\n{}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b)
        );
    }
}

#[test]
fn fuzz_bodies_pass_over_the_corpus_on_one_thread_and_several() {
    let corpus = corpus();
    assert!(corpus.len() > 60, "{} inputs", corpus.len());
    let mut loaded = 0;
    for (name, bytes) in &corpus {
        loaded += usize::from(load::run(bytes, 1).is_some());
        same_on_threads(name, bytes, 3);
    }
    assert!(loaded > 50, "only {loaded} inputs load");
}

/// Over 2 MB (two parts of at least 1 MB) and 1 000 steps (blocks of 256 and 512): the loader splits it into parts on several threads, and the plan,
/// the cache analysis and the tables into blocks of steps. Losing or repeating a part or a block
/// in a join changes an output.
#[test]
fn a_big_input_split_in_parts_and_blocks_gives_the_one_thread_outputs() {
    let fixture = String::from_utf8(read("fixtures/rollouts/era_b_steps.jsonl")).expect("UTF-8");
    let (meta, body) = fixture
        .split_once('\n')
        .expect("a meta line, then the rest");
    let mut text = format!("{meta}\n");
    while text.len() < (2 << 20) + (1 << 17) {
        text.push_str(body);
    }
    let steps = load_steps(text.as_bytes());
    assert!(steps > 512, "{steps} steps: two blocks of 512 at least");
    same_on_threads("big", text.as_bytes(), 3);
}

fn load_steps(bytes: &[u8]) -> usize {
    promptc::agents::codex::session::Session::load("big", bytes, promptc::LoadOptions::default())
        .expect("loads")
        .replay
        .steps
        .len()
}

/// A number past an `f64` in a recorded item (found by fuzzing: `1e400` in a `function_call`'s
/// payload) is shown as recorded: `view --format json` holds it as written, and its output is
/// well-formed JSON whatever reads it.
#[test]
fn a_number_past_an_f64_is_shown_as_recorded() {
    let fixture = String::from_utf8(read("fixtures/rollouts/era_b_steps.jsonl")).expect("UTF-8");
    let marked = "\"type\":\"function_call\"";
    assert!(fixture.contains(marked), "a function call to mark");
    let text = fixture.replacen(marked, "\"type\":\"function_call\",\"n\":1e400", 1);
    let outputs = pipeline::run(text.as_bytes(), 1);
    let view = outputs
        .iter()
        .find(|(what, _)| *what == "view json")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .expect("a view in JSON");
    assert!(view.contains("\"n\":1e400"), "the number as written");
    assert!(
        serde_json::from_str::<serde_json::Value>(&view).is_err(),
        "past an f64"
    );
}
