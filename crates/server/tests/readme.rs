//! The README's walk-through and `examples/walkthrough.sh`, which CI runs against a fresh server
//! (`.ci/walkthrough`), hold the same commands in the same order, so the README cannot drift
//! from what the product answers. Only files of the repository are read.

use std::path::PathBuf;

fn workspace_file(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A command line: not blank and not a comment.
fn is_command(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The command lines of the `sh` blocks between the walk-through markers of the README.
fn readme_commands(readme: &str) -> Vec<String> {
    let begin = readme
        .find("<!-- walkthrough:begin -->")
        .expect("README has <!-- walkthrough:begin -->");
    let end = readme
        .find("<!-- walkthrough:end -->")
        .expect("README has <!-- walkthrough:end -->");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme[begin..end].lines() {
        if in_sh {
            if line.trim_start().starts_with("```") {
                in_sh = false;
            } else if is_command(line) {
                out.push(line.trim_end().to_string());
            }
        } else if line.trim_start() == "```sh" {
            in_sh = true;
        }
    }
    out
}

/// The script's command lines after its "From here on" line, without its `check` and `step`
/// lines (which the README does not show).
fn script_commands(script: &str) -> Vec<String> {
    let start = script
        .find("# From here on")
        .expect("the script marks where the README's commands start");
    script[start..]
        .lines()
        .filter(|l| is_command(l))
        .filter(|l| !l.starts_with("check ") && !l.starts_with("step "))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn the_readme_shows_the_walkthrough_scripts_commands() {
    let readme = readme_commands(&workspace_file("README.md"));
    let script = script_commands(&workspace_file("examples/walkthrough.sh"));
    assert!(
        readme.len() > 50,
        "the walk-through has its commands: {readme:?}"
    );
    for (i, (r, s)) in readme.iter().zip(&script).enumerate() {
        assert_eq!(
            r,
            s,
            "command {} differs: README.md shows the first, examples/walkthrough.sh runs the second",
            i + 1
        );
    }
    assert_eq!(
        readme.len(),
        script.len(),
        "README.md shows {} commands, examples/walkthrough.sh runs {}; the first extra one: {:?}",
        readme.len(),
        script.len(),
        readme.get(script.len()).or(script.get(readme.len()))
    );
}

#[test]
fn every_example_file_the_walkthrough_names_exists() {
    let script = workspace_file("examples/walkthrough.sh");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut named = 0;
    for word in script.split(|c: char| c.is_whitespace() || "\"'<;@=()".contains(c)) {
        if word.starts_with("examples/") {
            named += 1;
            assert!(root.join(word).is_file(), "{word} is not in the repository");
        }
    }
    assert!(named >= 8, "the script names its example files ({named})");
}

#[test]
fn the_example_requests_are_sandbox_cases_and_the_production_ones_say_so() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seen = 0;
    for (folder, environment) in [("", "sandbox"), ("production", "production")] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                assert_eq!(v["environment"], environment, "{}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 12, "{seen} example requests");
}
