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

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files of the project's own docs: the README, `docs/` (but the specification
/// copies of `docs/spec/`, which are kept as delivered) and the crates' READMEs.
fn project_docs() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("spec") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = workspace();
    let mut docs = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    walk(&root.join("docs"), &mut docs);
    docs
}

/// Every record of `docs/adr/` is in the index of ADR 0001, by its file name.
#[test]
fn every_decision_record_is_in_the_index() {
    let index = workspace_file("docs/adr/0001-decision-records.md");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(workspace().join("docs/adr")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md")
            && name != "0001-decision-records.md"
            && !index.contains(&format!("]({name})"))
        {
            missing.push(name);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "not in the index of ADR 0001: {missing:?}"
    );
}

/// Every file in the repository but its build output, by path from its root.
fn repository_files() -> Vec<String> {
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if path.is_dir() {
                if name != "target" && name != ".git" && name != "node_modules" {
                    walk(root, &path, out);
                }
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let root = workspace().canonicalize().unwrap();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// Every file a doc links to (`[...](path)`, relative to the doc) and every repository path it
/// names in backticks (`crates/...`, `docs/...`, `examples/...`, `scripts/...`, `.ci/...`,
/// relative to the repository) exists; and in the docs that describe today's code (all but the
/// decision records and the benchmark log, which describe their day), every Rust file named by
/// a path within its crate (`sql/repository.rs`, `tests/instances.rs`) is one of the repository.
#[test]
fn no_doc_names_a_file_that_is_not_there() {
    let root = workspace();
    let files = repository_files();
    let mut missing = Vec::new();
    for doc in project_docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let here = doc.parent().unwrap();
        let shown = doc.strip_prefix(&root).unwrap().display().to_string();
        let of_today = !shown.starts_with("docs/adr/") && shown != "BENCHMARKS.md";
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty()
                || target.contains(char::is_whitespace)
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            if !here.join(target).exists() {
                missing.push(format!("{shown}: ({target})"));
            }
        }
        // The odd pieces between backticks are code spans.
        for code in text.split('`').skip(1).step_by(2) {
            let path = code.split(':').next().unwrap().trim_end_matches('/');
            // A pattern (`crates/*/tests`, `<kind>/...`, `{sqlite,postgres}`) names no one file.
            if path.contains(char::is_whitespace) || path.contains(['*', '<', '{', '$']) {
                continue;
            }
            let rooted = ["crates/", "docs/", "examples/", "scripts/", ".ci/"]
                .iter()
                .any(|r| path.starts_with(r));
            if rooted && !root.join(path).exists() {
                missing.push(format!("{shown}: `{path}`"));
            }
            let within_a_crate = !rooted
                && path.ends_with(".rs")
                && path.contains('/')
                && !path.starts_with(['.', '/']);
            if of_today
                && within_a_crate
                && !files
                    .iter()
                    .any(|f| f.ends_with(&format!("/{path}")) || f == path)
            {
                missing.push(format!("{shown}: `{path}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but not there:\n{}",
        missing.join("\n")
    );
}

/// The module files of a crate's `src/` by their module path (`cases::tax` for
/// `src/cases/tax.rs`, `console` for `src/console/mod.rs`, the crate root as the empty path),
/// but its unit-test modules.
fn module_files(src: &std::path::Path) -> Vec<(Vec<String>, PathBuf)> {
    fn walk(dir: &std::path::Path, at: &[String], out: &mut Vec<(Vec<String>, PathBuf)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let mut here = at.to_vec();
            if path.is_dir() {
                here.push(name);
                walk(&path, &here, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                // Unit-test modules (`tests.rs`, `*_tests.rs`) are not part of the structure.
                && name != "tests"
                && !name.ends_with("_tests")
            {
                if !["mod", "lib", "main"].contains(&name.as_str()) {
                    here.push(name);
                }
                out.push((here, path));
            }
        }
    }
    let mut out = Vec::new();
    walk(src, &[], &mut out);
    out
}

/// The module paths a file's code names (`crate::a::b`, `super::c`, the items of
/// `use crate::{a, b::c}`), resolved against the file's own module `at`; its comments and its
/// unit tests (from the first `#[cfg(test)]` module on) are left out.
fn named_modules(text: &str, at: &[String]) -> Vec<Vec<String>> {
    let code: String = text
        .split("#[cfg(test)]\nmod ")
        .next()
        .unwrap()
        .lines()
        // Comments (doc links among them) import nothing.
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let code = code.as_str();
    let mut out = Vec::new();
    // `super` of a module is its parent: of `a::b` (`a/b.rs`) `a`, of `a` (`a.rs` or
    // `a/mod.rs`) the root.
    let parent = at[..at.len().saturating_sub(1)].to_vec();
    for (root, base) in [("crate::", Vec::new()), ("super::", parent)] {
        for (i, _) in code.match_indices(root) {
            // `$crate::` is a macro's own crate; `a::crate::` does not occur.
            if code[..i].ends_with('$') || code[..i].ends_with("::") {
                continue;
            }
            expand(&base, &code[i + root.len()..], &mut out);
        }
    }
    out
}

/// The paths of a use tree `s` (`a::b`, `a::{b, c::{d, e}}`) below `prefix`, into `out`.
fn expand(prefix: &[String], s: &str, out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut rest = s;
    loop {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[name.len()..];
        if !name.is_empty() {
            path.push(name);
        }
        if let Some(after) = rest.strip_prefix("::") {
            rest = after;
            continue;
        }
        break;
    }
    if let Some(group) = rest.strip_prefix('{') {
        // The items of the group, split at its own commas (not those of nested groups).
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' | ',' if depth == 0 => {
                    // A trailing comma leaves an empty item, which names nothing.
                    let item = group[start..i].trim();
                    if !item.is_empty() {
                        expand(&path, item, out);
                    }
                    if c == '}' {
                        return;
                    }
                    start = i + 1;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
    }
    out.push(path);
}

/// No module of a crate imports, directly or through others, a module that imports it back:
/// data flows one way (docs/architecture.md). A module's file imports the deepest module file
/// a path it names reaches.
#[test]
fn no_module_imports_one_that_imports_it_back() {
    let root = workspace();
    let mut circles = Vec::new();
    for krate in ["domain", "forms", "elster", "store", "server", "load"] {
        let src = root.join("crates").join(krate).join("src");
        let files = module_files(&src);
        let index = |path: &[String]| -> Option<usize> {
            (0..=path.len())
                .rev()
                .find_map(|n| files.iter().position(|(m, _)| m.as_slice() == &path[..n]))
        };
        let arrows: Vec<Vec<usize>> = files
            .iter()
            .enumerate()
            .map(|(me, (at, file))| {
                let text = std::fs::read_to_string(file).unwrap();
                let mut to: Vec<usize> = named_modules(&text, at)
                    .iter()
                    .filter_map(|p| index(p))
                    // Naming a module above one's own file (its parent, the root) is reaching
                    // its declarations, which the parent's `mod` lines are not imports of.
                    .filter(|&t| t != me && !at.starts_with(&files[t].0))
                    .collect();
                to.sort();
                to.dedup();
                to
            })
            .collect();
        // A circle: a file that reaches itself.
        for (start, (at, _)) in files.iter().enumerate() {
            let mut seen = vec![false; files.len()];
            let mut stack = arrows[start].clone();
            while let Some(n) = stack.pop() {
                if n == start {
                    circles.push(format!("{krate}: {}", at.join("::")));
                    break;
                }
                if !std::mem::replace(&mut seen[n], true) {
                    stack.extend(&arrows[n]);
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules in an import circle: {circles:?}"
    );
}
