//! Coverage gathered over many runs, and what one run adds to it.

use crate::Trace;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// What one run added to a [`CoverageSet`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Novelty {
    /// Edges never hit before.
    pub new_edges: u32,
    /// Edges hit before, but never as often (a new hit-count bucket, as in AFL).
    pub new_counts: u32,
    /// Python or Java lines never run before.
    pub new_lines: u32,
    /// Python branches never taken before.
    pub new_branches: u32,
    /// Java methods never run before.
    #[serde(skip_serializing_if = "is_zero")]
    pub new_methods: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Novelty {
    /// Whether the run added anything.
    pub fn is_new(&self) -> bool {
        self.new_edges + self.new_counts + self.new_lines + self.new_branches + self.new_methods > 0
    }

    /// Whether the run reached code never reached before (not merely new hit counts).
    pub fn has_new_code(&self) -> bool {
        self.new_edges + self.new_lines + self.new_branches + self.new_methods > 0
    }

    /// E.g. `+3 edges, +1 counts`, `+12 lines, +4 branches` or `+2 methods, +9 lines`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.new_methods, "methods"),
            (self.new_edges, "edges"),
            (self.new_counts, "counts"),
            (self.new_lines, "lines"),
            (self.new_branches, "branches"),
        ] {
            if n > 0 {
                parts.push(format!("+{n} {what}"));
            }
        }
        if parts.is_empty() {
            "nothing new".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// Coverage of one Python or Java source file in a [`CoverageSummary`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileCoverage {
    /// The file (Java: `pkg/path/File.java`).
    pub path: String,
    /// Lines run.
    pub lines: usize,
    /// Statements in the file (Java: lines with code in its classes that ran; 0:
    /// unknown).
    pub statements: u32,
    /// Branches taken.
    pub branches: usize,
    /// Branches in the file (0: unknown).
    pub branch_total: u32,
    /// Java methods run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub methods: Option<usize>,
    /// Java methods with code in the file's classes that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method_total: Option<u32>,
}

/// What a coverage set or summary counts (in `stats.json`: `edges`, `python`, `java`,
/// `none`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoverageKind {
    /// Nothing measured (plain runs).
    #[default]
    None,
    /// An AFL++ edge map.
    Edges,
    /// Python lines and branches.
    Python,
    /// Java methods and lines.
    Java,
}

/// Totals of a [`CoverageSet`], for reports and `stats.json` (and read back from it).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CoverageSummary {
    /// What is counted.
    pub kind: CoverageKind,
    /// Edges hit (AFL++ targets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges: Option<usize>,
    /// The target's map size (AFL++ targets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_size: Option<usize>,
    /// Java methods run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub methods: Option<usize>,
    /// Java methods with code in the classes that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method_total: Option<u64>,
    /// Python or Java lines run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    /// Python statements in the files that ran (Java: lines with code in the classes
    /// that ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statements: Option<u64>,
    /// Python branches taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<usize>,
    /// Python branches in the files that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_total: Option<u64>,
    /// Per file (Python, Java).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileCoverage>,
}

impl CoverageSummary {
    /// The warning for runs that all reported no coverage of the code under test: the
    /// include patterns match nothing that ran (Python and Java targets; `executor`
    /// describes the target). `None` when something was covered, or the kind has no
    /// include patterns.
    pub fn nothing_covered_warning(&self, executor: &str) -> Option<String> {
        let (what, option) = match self.kind {
            CoverageKind::Python if self.lines == Some(0) => ("nothing", "--python-include"),
            CoverageKind::Java if self.methods == Some(0) => ("no class", "--java-includes"),
            _ => return None,
        };
        Some(format!(
            "no execution reported any coverage: {what} that the include patterns match ran \
             ({executor}); set {option} to the code under test"
        ))
    }

    /// The coverage as `thicket coverage` prints it: a line of totals in the kind's
    /// units (edges and map size; Python statements and branches; Java methods and
    /// lines), then a line per file (Python, Java).
    pub fn text_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        match self.kind {
            CoverageKind::Edges => lines.push(format!(
                "coverage: {} edges (map size {})",
                self.edges.unwrap_or(0),
                self.map_size.unwrap_or(0)
            )),
            CoverageKind::Python => {
                lines.push(format!(
                    "coverage: {} of {} statements, {} branches of {} (as coverage.py \
                     counts them; statements that run only at import excluded)",
                    self.lines.unwrap_or(0),
                    self.statements.unwrap_or(0),
                    self.branches.unwrap_or(0),
                    self.branch_total.unwrap_or(0)
                ));
                lines.extend(self.files.iter().map(|f| {
                    format!(
                        "  {:>5}/{:<5} lines {:>5}/{:<5} branches  {}",
                        f.lines, f.statements, f.branches, f.branch_total, f.path
                    )
                }));
            }
            CoverageKind::Java => {
                lines.push(format!(
                    "coverage: {} of {} methods, {} of {} lines (as JaCoCo counts them, in \
                     the classes that ran)",
                    self.methods.unwrap_or(0),
                    self.method_total.unwrap_or(0),
                    self.lines.unwrap_or(0),
                    self.statements.unwrap_or(0),
                ));
                lines.extend(self.files.iter().map(|f| {
                    format!(
                        "  {:>5}/{:<5} methods {:>5}/{:<5} lines  {}",
                        f.methods.unwrap_or(0),
                        f.method_total.unwrap_or(0),
                        f.lines,
                        f.statements,
                        f.path
                    )
                }));
            }
            CoverageKind::None => lines.push("coverage: none measured (plain mode)".to_string()),
        }
        lines
    }

    /// How much was covered, in the kind's first unit (edges, or lines): comparable
    /// between summaries of one kind.
    pub fn amount(&self) -> usize {
        self.edges.or(self.lines).unwrap_or(0)
    }

    /// One line: `37 edges`, `412 lines, 160 branches`, `95 methods, 501 lines`, `no
    /// coverage`.
    pub fn headline(&self) -> String {
        match self.kind {
            CoverageKind::Edges => format!("{} edges", self.edges.unwrap_or(0)),
            CoverageKind::Python => format!(
                "{} lines, {} branches",
                self.lines.unwrap_or(0),
                self.branches.unwrap_or(0)
            ),
            CoverageKind::Java => format!(
                "{} methods, {} lines",
                self.methods.unwrap_or(0),
                self.lines.unwrap_or(0)
            ),
            CoverageKind::None => "no coverage".to_string(),
        }
    }
}

#[derive(Clone, Debug)]
struct FileTotals {
    path: String,
    statements: u32,
    branch_total: u32,
    method_total: u32,
}

/// The union of the coverage of many runs: AFL-style bitmap of hit-count buckets seen
/// per edge, sets of Python lines and branches, or of Java methods and lines.
#[derive(Clone, Debug, Default)]
pub struct CoverageSet {
    kind: Option<CoverageKind>,
    /// Per map index, the buckets seen so far (AFL's virgin map, inverted).
    seen: Vec<u8>,
    edges: usize,
    lines: FxHashSet<(u32, u32)>,
    branches: FxHashSet<(u32, i32, i32)>,
    files: Vec<FileTotals>,
    file_ids: FxHashMap<String, u32>,
    /// Java method ids (of the executor's table) with the set's id of their file.
    methods: FxHashMap<u32, u32>,
    /// The Java table's version when file totals were last copied, and the set's file id
    /// of each table file.
    java_version: Option<u64>,
    java_files: Vec<u32>,
}

impl CoverageSet {
    /// An empty set.
    pub fn new() -> CoverageSet {
        CoverageSet::default()
    }

    /// Adds a run's trace; says what was new.
    pub fn add(&mut self, trace: &Trace<'_>) -> Novelty {
        let mut novelty = Novelty::default();
        match trace {
            Trace::None => {
                self.kind.get_or_insert(CoverageKind::None);
            }
            Trace::Edges(map) => {
                self.kind = Some(CoverageKind::Edges);
                if self.seen.len() < map.len() {
                    self.seen.resize(map.len(), 0);
                }
                let seen = &mut self.seen[..map.len()];
                let mut words = map.chunks_exact(8).zip(seen.chunks_exact_mut(8));
                for (t, s) in &mut words {
                    let tw = u64::from_ne_bytes(t.try_into().expect("8 bytes"));
                    let sw = u64::from_ne_bytes((&*s).try_into().expect("8 bytes"));
                    if tw & !sw != 0 {
                        merge_bytes(t, s, &mut novelty);
                    }
                }
                let tail = map.len() / 8 * 8;
                merge_bytes(&map[tail..], &mut seen[tail..], &mut novelty);
                self.edges += novelty.new_edges as usize;
            }
            Trace::Python(py) => {
                self.kind = Some(CoverageKind::Python);
                for file in &py.files {
                    let id = match self.file_ids.get(&file.path) {
                        Some(&id) => id,
                        None => {
                            let id = self.files.len() as u32;
                            self.files.push(FileTotals {
                                path: file.path.clone(),
                                statements: file.statements,
                                branch_total: file.branch_total,
                                method_total: 0,
                            });
                            self.file_ids.insert(file.path.clone(), id);
                            id
                        }
                    };
                    for &line in &file.lines {
                        novelty.new_lines += u32::from(self.lines.insert((id, line)));
                    }
                    for &(a, b) in &file.branches {
                        novelty.new_branches += u32::from(self.branches.insert((id, a, b)));
                    }
                }
            }
            Trace::Java(java) => {
                self.kind = Some(CoverageKind::Java);
                self.copy_java_files(&java.table);
                for &m in &java.methods {
                    if let std::collections::hash_map::Entry::Vacant(e) = self.methods.entry(m) {
                        let file = self.java_files[java.table.method_file(m) as usize];
                        e.insert(file);
                        novelty.new_methods += 1;
                    }
                }
                for &l in &java.lines {
                    let (file, line) = java.table.line(l);
                    let file = self.java_files[file as usize];
                    novelty.new_lines += u32::from(self.lines.insert((file, line)));
                }
            }
        }
        novelty
    }

    /// Takes the Java table's files (and their totals) as the set's files, when the
    /// table has changed since the last time.
    fn copy_java_files(&mut self, table: &crate::java::JavaTable) {
        if self.java_version == Some(table.version()) {
            return;
        }
        self.java_version = Some(table.version());
        for (i, file) in table.files().iter().enumerate() {
            let id = match self.file_ids.get(&file.path) {
                Some(&id) => id,
                None => {
                    let id = self.files.len() as u32;
                    self.files.push(FileTotals {
                        path: file.path.clone(),
                        statements: 0,
                        branch_total: 0,
                        method_total: 0,
                    });
                    self.file_ids.insert(file.path.clone(), id);
                    id
                }
            };
            let totals = &mut self.files[id as usize];
            totals.statements = file.lines;
            totals.method_total = file.methods;
            if self.java_files.len() <= i {
                self.java_files.push(id);
            }
        }
    }

    /// Whether a trace would add anything, without adding it.
    pub fn would_add(&self, trace: &Trace<'_>) -> bool {
        let mut probe = Novelty::default();
        match trace {
            Trace::None => false,
            Trace::Edges(map) => map
                .iter()
                .enumerate()
                .any(|(i, &t)| t & !self.seen.get(i).copied().unwrap_or(0) != 0),
            Trace::Python(py) => {
                for file in &py.files {
                    let Some(&id) = self.file_ids.get(&file.path) else {
                        return !file.lines.is_empty();
                    };
                    probe.new_lines += file
                        .lines
                        .iter()
                        .filter(|&&l| !self.lines.contains(&(id, l)))
                        .count() as u32;
                    probe.new_branches += file
                        .branches
                        .iter()
                        .filter(|&&(a, b)| !self.branches.contains(&(id, a, b)))
                        .count() as u32;
                }
                probe.is_new()
            }
            Trace::Java(java) => {
                java.methods.iter().any(|m| !self.methods.contains_key(m))
                    || java.lines.iter().any(|&l| {
                        let (file, line) = java.table.line(l);
                        match java.table.files().get(file as usize) {
                            Some(f) => match self.file_ids.get(&f.path) {
                                Some(&id) => !self.lines.contains(&(id, line)),
                                None => true,
                            },
                            None => true,
                        }
                    })
            }
        }
    }

    /// Edges hit so far.
    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Java methods run so far.
    pub fn methods(&self) -> usize {
        self.methods.len()
    }

    /// Python or Java lines run so far.
    pub fn lines(&self) -> usize {
        self.lines.len()
    }

    /// Python branches taken so far.
    pub fn branches(&self) -> usize {
        self.branches.len()
    }

    /// Totals for reports.
    pub fn summary(&self, map_size: Option<usize>) -> CoverageSummary {
        match self.kind {
            Some(CoverageKind::Edges) => CoverageSummary {
                kind: CoverageKind::Edges,
                edges: Some(self.edges),
                map_size,
                ..CoverageSummary::default()
            },
            Some(CoverageKind::Python) => {
                let mut files: Vec<FileCoverage> = self
                    .files
                    .iter()
                    .enumerate()
                    .map(|(id, f)| FileCoverage {
                        path: f.path.clone(),
                        lines: self.lines.iter().filter(|l| l.0 == id as u32).count(),
                        statements: f.statements,
                        branches: self.branches.iter().filter(|b| b.0 == id as u32).count(),
                        branch_total: f.branch_total,
                        methods: None,
                        method_total: None,
                    })
                    .collect();
                files.sort_by(|a, b| a.path.cmp(&b.path));
                CoverageSummary {
                    kind: CoverageKind::Python,
                    lines: Some(self.lines.len()),
                    statements: Some(self.files.iter().map(|f| u64::from(f.statements)).sum()),
                    branches: Some(self.branches.len()),
                    branch_total: Some(self.files.iter().map(|f| u64::from(f.branch_total)).sum()),
                    files,
                    ..CoverageSummary::default()
                }
            }
            Some(CoverageKind::Java) => {
                let mut lines = vec![0usize; self.files.len()];
                for &(file, _) in &self.lines {
                    lines[file as usize] += 1;
                }
                let mut methods = vec![0usize; self.files.len()];
                for &file in self.methods.values() {
                    methods[file as usize] += 1;
                }
                let mut files: Vec<FileCoverage> = self
                    .files
                    .iter()
                    .enumerate()
                    .filter(|&(id, _)| lines[id] + methods[id] > 0)
                    .map(|(id, f)| FileCoverage {
                        path: f.path.clone(),
                        lines: lines[id],
                        statements: f.statements,
                        branches: 0,
                        branch_total: 0,
                        methods: Some(methods[id]),
                        method_total: Some(f.method_total),
                    })
                    .collect();
                files.sort_by(|a, b| a.path.cmp(&b.path));
                CoverageSummary {
                    kind: CoverageKind::Java,
                    methods: Some(self.methods.len()),
                    method_total: Some(self.files.iter().map(|f| u64::from(f.method_total)).sum()),
                    lines: Some(self.lines.len()),
                    statements: Some(self.files.iter().map(|f| u64::from(f.statements)).sum()),
                    files,
                    ..CoverageSummary::default()
                }
            }
            _ => CoverageSummary {
                kind: CoverageKind::None,
                ..CoverageSummary::default()
            },
        }
    }
}

fn merge_bytes(trace: &[u8], seen: &mut [u8], novelty: &mut Novelty) {
    for (&t, s) in trace.iter().zip(seen.iter_mut()) {
        if t & !*s != 0 {
            if *s == 0 {
                novelty.new_edges += 1;
            } else {
                novelty.new_counts += 1;
            }
            *s |= t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::{PyFileTrace, PyTrace};

    #[test]
    fn a_summary_as_text_counts_in_its_kinds_units() {
        let edges = CoverageSummary {
            kind: CoverageKind::Edges,
            edges: Some(37),
            map_size: Some(65536),
            ..CoverageSummary::default()
        };
        assert_eq!(edges.text_lines(), ["coverage: 37 edges (map size 65536)"]);
        let plain = CoverageSummary::default();
        assert_eq!(plain.kind, CoverageKind::None);
        assert_eq!(plain.text_lines(), ["coverage: none measured (plain mode)"]);
    }

    #[test]
    fn nothing_covered_names_the_include_option_of_the_target_kind() {
        let python = CoverageSummary {
            kind: CoverageKind::Python,
            lines: Some(0),
            ..CoverageSummary::default()
        };
        assert_eq!(
            python
                .nothing_covered_warning("python json:loads")
                .as_deref(),
            Some(
                "no execution reported any coverage: nothing that the include patterns match \
                 ran (python json:loads); set --python-include to the code under test"
            )
        );
        let java = CoverageSummary {
            kind: CoverageKind::Java,
            methods: Some(0),
            ..CoverageSummary::default()
        };
        assert!(
            java.nothing_covered_warning("java")
                .unwrap()
                .contains("no class that")
        );
        let covered = CoverageSummary {
            lines: Some(3),
            ..python
        };
        assert_eq!(covered.nothing_covered_warning("python json:loads"), None);
        let edges = CoverageSummary {
            kind: CoverageKind::Edges,
            ..CoverageSummary::default()
        };
        assert_eq!(edges.nothing_covered_warning("afl"), None);
    }

    #[test]
    fn edges_and_buckets() {
        let mut set = CoverageSet::new();
        let mut map = vec![0u8; 20];
        map[3] = 1;
        map[17] = 4;
        let n = set.add(&Trace::Edges(&map));
        assert_eq!((n.new_edges, n.new_counts), (2, 0));
        assert!(!set.would_add(&Trace::Edges(&map)));
        assert!(!set.add(&Trace::Edges(&map)).is_new());
        map[3] = 2;
        assert!(set.would_add(&Trace::Edges(&map)));
        let n = set.add(&Trace::Edges(&map));
        assert_eq!((n.new_edges, n.new_counts), (0, 1));
        assert!(!n.has_new_code());
        assert_eq!(set.edges(), 2);
        assert_eq!(set.summary(Some(20)).headline(), "2 edges");
    }

    #[test]
    fn python_lines_and_branches() {
        let mut set = CoverageSet::new();
        let trace = PyTrace {
            files: vec![PyFileTrace {
                path: "a.py".into(),
                lines: vec![1, 2, 3],
                branches: vec![(2, 3)],
                statements: 10,
                branch_total: 4,
                functions: Vec::new(),
            }],
        };
        let n = set.add(&Trace::Python(&trace));
        assert_eq!((n.new_lines, n.new_branches), (3, 1));
        assert!(!set.add(&Trace::Python(&trace)).is_new());
        let s = set.summary(None);
        assert_eq!(s.headline(), "3 lines, 1 branches");
        assert_eq!((s.statements, s.branch_total), (Some(10), Some(4)));
    }

    #[test]
    fn feature_ids_are_per_location_and_backend_independent() {
        let mut map = vec![0u8; 20];
        map[3] = 1;
        map[17] = 4;
        let mut ids = Vec::new();
        Trace::Edges(&map).for_each_feature(|f| ids.push(f));
        assert_eq!(ids, [3, 17]);
        let trace = |path: &str, lines: Vec<u32>| PyTrace {
            files: vec![PyFileTrace {
                path: path.into(),
                lines,
                branches: vec![(2, 3)],
                statements: 10,
                branch_total: 4,
                functions: Vec::new(),
            }],
        };
        let ids = |t: &PyTrace| {
            let mut v = Vec::new();
            Trace::Python(t).for_each_feature(|f| v.push(f));
            v
        };
        let a = ids(&trace("a.py", vec![1, 2]));
        assert_eq!(a.len(), 3, "two lines and a branch");
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert_eq!(distinct.len(), 3);
        assert_eq!(a, ids(&trace("a.py", vec![1, 2])), "stable");
        let b = ids(&trace("b.py", vec![1, 2]));
        assert!(a.iter().all(|f| !b.contains(f)), "files differ");
        assert_eq!(Trace::None.feature_count(), 0);
    }
}
