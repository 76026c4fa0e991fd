//! Java targets: a static method called on each input inside one long-lived JVM
//! (thicket's harness, `Harness.java`, embedded in this crate), with per-input method and
//! line coverage from JaCoCo's agent.
//!
//! The harness is compiled with `javac --release 11` on first use into a cache folder
//! keyed by its source's hash (`$THICKET_CACHE_DIR`, else `$XDG_CACHE_HOME/thicket`, else
//! `~/.cache/thicket`). JaCoCo comes from Debian's `libjacoco-java` (`/usr/share/java`, or
//! `$THICKET_JACOCO_DIR`): its agent jar has no `Premain-Class`, so each executor writes
//! a tiny jar whose manifest names `org.jacoco.agent.rt.internal.PreMain` and puts the
//! agent, core and ASM jars on its `Class-Path`.
//!
//! Like the Python runner, the JVM is started once and restarted when it dies, hangs
//! (killed with its process group), exits (`System.exit`, seen by a shutdown hook that
//! says where) or runs out of heap (`OutOfMemoryError` is reported as the run's
//! exception; the next run gets a fresh JVM, since a class whose initialisation failed
//! would stay broken). Requests and replies are length-prefixed messages on fds 3 and 4;
//! the target's output goes to a file whose tail each outcome keeps, at most 1 MiB of it
//! per call (the rest is counted, not written).
//!
//! A call over its time limit is a hang. The first call of each JVM loads and
//! instruments the subject's classes, which may take seconds: the harness watches it and
//! reports it hung once it has run past the limit and loaded no class for as long (so a
//! loop is found after about the limit, in a fresh JVM too), and thicket ends it after
//! [`FIRST_CALL_TIMEOUT`] at most.
//!
//! Coverage: the harness reads and resets the agent's probes after each call and turns
//! them into methods (`pkg.Class.method(descriptor)`) and lines (`pkg/File.java:LINE`), as
//! JaCoCo's own analysis counts them (see the top of `Harness.java`). Classes are those
//! the agent instruments: `--java-includes` patterns, by default every class outside the
//! JDK, JaCoCo, ASM and the harness (everything on the classpath is the subject). A run
//! counts what its call executed: code that runs once per JVM (static initialisers, lazy
//! caches) counts for the input whose call first ran it, so the union over many inputs
//! equals the union of fresh JVMs run on each.

use crate::outcome::{Exception, Outcome, Status, Tail};
use crate::python::{ANALYSIS_TIMEOUT, Received, Runner, SpawnError, died, human, hung, read_tail};
use crate::{ExecError, Executor, Limits, Location, LocationKind, Trace, reap};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The harness's source, shipped inside the binary.
pub const HARNESS: &str = include_str!("Harness.java");

/// How long a JVM may take to start by default (load the agent and the target class).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest the first call in a fresh JVM may take, if the run's own limit is
/// shorter: it loads and instruments the subject's classes, which can take seconds for
/// large ones. The harness reports it as hung earlier, once it has run past the run's
/// limit and loaded no class for as long.
pub const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The heap limit (`-Xmx`) without `Limits::memory_mb`, in MiB.
pub const DEFAULT_HEAP_MB: u64 = 1024;

/// JaCoCo's jars the harness needs (Debian's names).
pub const JACOCO_JARS: [&str; 5] = [
    "org.jacoco.agent.rt.jar",
    "org.jacoco.core.jar",
    "asm.jar",
    "asm-commons.jar",
    "asm-tree.jar",
];

/// Classes never instrumented: the JDK, JaCoCo and its ASM, the harness.
pub const EXCLUDES: &str =
    "java.*:javax.*:jdk.*:sun.*:com.sun.*:org.jacoco.*:org.objectweb.asm.*:thicket.Harness*";

/// Which Java method to call, and how.
#[derive(Clone, Debug)]
pub struct JavaTarget {
    /// `CLASS.METHOD`: a static method taking one `String` (inputs decoded as UTF-8,
    /// invalid bytes replaced by U+FFFD) or one `byte[]` (if both exist, `String`).
    pub method: String,
    /// The subject's classpath (jars and folders).
    pub classpath: Vec<PathBuf>,
    /// JaCoCo include patterns (`com.google.gson.*`; `*` and `?` wildcards); empty:
    /// every class outside [`EXCLUDES`].
    pub includes: Vec<String>,
    /// The `java` launcher (default: `$JAVA_HOME/bin/java`, else `java` on `PATH`).
    pub java: PathBuf,
    /// The `javac` compiler, for the harness (likewise).
    pub javac: PathBuf,
    /// The folder holding [`JACOCO_JARS`] (default: `$THICKET_JACOCO_DIR`, else
    /// `/usr/share/java`).
    pub jacoco_dir: PathBuf,
    /// Where the compiled harness is cached (default: see the module docs).
    pub cache_dir: PathBuf,
    /// How long the JVM may take to report that it is ready ([`START_TIMEOUT`]).
    pub start_timeout: Duration,
}

impl JavaTarget {
    /// A target calling `method` with the subject on `classpath`, with the defaults
    /// above.
    pub fn new(method: impl Into<String>, classpath: Vec<PathBuf>) -> JavaTarget {
        let java_home = std::env::var_os("JAVA_HOME").map(PathBuf::from);
        let tool = |name: &str| match &java_home {
            Some(home) if home.join("bin").join(name).exists() => home.join("bin").join(name),
            _ => PathBuf::from(name),
        };
        JavaTarget {
            method: method.into(),
            classpath,
            includes: Vec::new(),
            java: tool("java"),
            javac: tool("javac"),
            jacoco_dir: std::env::var_os("THICKET_JACOCO_DIR")
                .map_or_else(|| PathBuf::from("/usr/share/java"), PathBuf::from),
            cache_dir: default_cache_dir(),
            start_timeout: START_TIMEOUT,
        }
    }

    /// The include patterns as JaCoCo takes them (`:`-separated).
    pub fn include_patterns(&self) -> String {
        if self.includes.is_empty() {
            "*".to_string()
        } else {
            self.includes.join(":")
        }
    }
}

/// `$THICKET_CACHE_DIR`, else `$XDG_CACHE_HOME/thicket`, else `~/.cache/thicket`, else
/// a folder in the temporary directory.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("THICKET_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("thicket");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("thicket");
    }
    std::env::temp_dir().join("thicket-cache")
}

/// The JaCoCo jars, or an error naming what is missing and what to install.
fn jacoco_jars(dir: &Path) -> Result<Vec<PathBuf>, ExecError> {
    let jars: Vec<PathBuf> = JACOCO_JARS.iter().map(|j| dir.join(j)).collect();
    let missing: Vec<&str> = JACOCO_JARS
        .iter()
        .zip(&jars)
        .filter(|(_, p)| std::fs::metadata(p).map_or(true, |m| m.len() == 0))
        .map(|(j, _)| *j)
        .collect();
    if !missing.is_empty() {
        return Err(ExecError::Java(format!(
            "JaCoCo's jars are missing from {} ({}): install Debian's libjacoco-java \
             (apt-get install libjacoco-java), or set THICKET_JACOCO_DIR to a folder holding \
             {}",
            dir.display(),
            missing.join(", "),
            JACOCO_JARS.join(", ")
        )));
    }
    Ok(jars)
}

/// A stable 64-bit FNV-1a hash (the cache key of the compiled harness).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The compiled harness (a classes folder), compiling it on first use.
pub fn compile_harness(target: &JavaTarget) -> Result<PathBuf, ExecError> {
    let jars = jacoco_jars(&target.jacoco_dir)?;
    let key = format!("java-harness-{:016x}", fnv1a(HARNESS.as_bytes()));
    let dir = target.cache_dir.join(&key);
    if dir.join("thicket").join("Harness.class").exists() {
        return Ok(dir);
    }
    let io = |what: String| move |e| ExecError::Io(what, e);
    std::fs::create_dir_all(&target.cache_dir).map_err(io(format!(
        "cannot create the cache folder {}",
        target.cache_dir.display()
    )))?;
    // Compiled in a folder of its own and renamed into place, so that thicket processes
    // starting at once never see half a harness.
    let work = tempfile::Builder::new()
        .prefix(".java-harness-")
        .tempdir_in(&target.cache_dir)
        .map_err(io(format!(
            "cannot create a folder in {}",
            target.cache_dir.display()
        )))?;
    let source = work.path().join("Harness.java");
    std::fs::write(&source, HARNESS).map_err(io(format!("cannot write {}", source.display())))?;
    let classes = work.path().join("classes");
    let output = Command::new(&target.javac)
        .args(["--release", "11", "-encoding", "UTF-8", "-nowarn", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(join_paths(&jars))
        .arg(&source)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ExecError::Java(format!(
                    "`{}` not found: the Java harness is compiled with a JDK's javac \
                     (Debian: apt-get install default-jdk-headless; or set JAVA_HOME)",
                    target.javac.display()
                ))
            } else {
                ExecError::Spawn(target.javac.display().to_string(), e)
            }
        })?;
    if !output.status.success() {
        return Err(ExecError::Java(format!(
            "compiling the Java harness with `{}` failed (javac 11 or newer is needed):\n{}",
            target.javac.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    match std::fs::rename(&classes, &dir) {
        Ok(()) => Ok(dir),
        // Another process got there first.
        Err(_) if dir.join("thicket").join("Harness.class").exists() => Ok(dir),
        Err(e) => Err(ExecError::Io(
            format!("cannot move the compiled harness to {}", dir.display()),
            e,
        )),
    }
}

fn join_paths(paths: &[PathBuf]) -> std::ffi::OsString {
    let mut out = std::ffi::OsString::new();
    for (i, p) in paths.iter().enumerate() {
        if i > 0 {
            out.push(":");
        }
        out.push(p);
    }
    out
}

/// A jar holding only a manifest that makes JaCoCo's runtime an agent: Debian's agent
/// jar lacks `Premain-Class`, and `Class-Path` brings in the core and ASM.
pub fn write_agent_jar(path: &Path, jars: &[PathBuf]) -> std::io::Result<()> {
    let mut class_path = String::new();
    for jar in jars {
        if !class_path.is_empty() {
            class_path.push(' ');
        }
        class_path.push_str(&url_path(jar));
    }
    let manifest = format!(
        "Manifest-Version: 1.0\r\nPremain-Class: org.jacoco.agent.rt.internal.PreMain\r\n{}\r\n",
        manifest_line(&format!("Class-Path: {class_path}"))
    );
    std::fs::write(
        path,
        stored_zip("META-INF/MANIFEST.MF", manifest.as_bytes()),
    )
}

/// A path as a `Class-Path` URL: absolute, bytes outside a safe set percent-encoded.
fn url_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~+".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A manifest header folded at 72 bytes a line (continuations start with a space).
fn manifest_line(header: &str) -> String {
    let bytes = header.as_bytes();
    let mut out = String::new();
    let mut start = 0;
    let mut width = 72;
    while start < bytes.len() {
        let end = (start + width).min(bytes.len());
        if start > 0 {
            out.push_str("\r\n ");
        }
        // The header is ASCII (the URL is percent-encoded), so any cut is a char boundary.
        out.push_str(&header[start..end]);
        start = end;
        width = 71;
    }
    out
}

/// A zip archive of one stored (uncompressed) file.
fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
    let crc = crc32(data);
    let (size, name_len) = (data.len() as u32, name.len() as u16);
    let mut z = Vec::new();
    let u16s = |z: &mut Vec<u8>, v: &[u16]| v.iter().for_each(|x| z.extend(x.to_le_bytes()));
    z.extend(0x0403_4b50u32.to_le_bytes());
    u16s(&mut z, &[20, 0, 0, 0, 0x21]);
    for v in [crc, size, size] {
        z.extend(v.to_le_bytes());
    }
    u16s(&mut z, &[name_len, 0]);
    z.extend(name.as_bytes());
    z.extend(data);
    let central = z.len() as u32;
    z.extend(0x0201_4b50u32.to_le_bytes());
    u16s(&mut z, &[20, 20, 0, 0, 0, 0x21]);
    for v in [crc, size, size] {
        z.extend(v.to_le_bytes());
    }
    u16s(&mut z, &[name_len, 0, 0, 0, 0]);
    z.extend(0u32.to_le_bytes());
    z.extend(0u32.to_le_bytes());
    z.extend(name.as_bytes());
    let central_size = z.len() as u32 - central;
    z.extend(0x0605_4b50u32.to_le_bytes());
    u16s(&mut z, &[0, 0, 1, 1]);
    z.extend(central_size.to_le_bytes());
    z.extend(central.to_le_bytes());
    u16s(&mut z, &[0]);
    z
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One source file's share of the names a [`JavaTrace`] uses.
#[derive(Clone, Debug)]
pub struct JavaFile {
    /// `pkg/path/File.java` (the class file's path if it names no source).
    pub path: String,
    /// Methods with code in the file's classes that have run (JaCoCo's method count).
    pub methods: u32,
    /// Lines with code in those classes.
    pub lines: u32,
}

/// The names behind the ids of [`JavaTrace`]s: every method and line with code of every
/// class that has run, kept across JVM restarts (ids are stable for an executor's life).
#[derive(Clone, Debug, Default)]
pub struct JavaTable {
    methods: Vec<(String, u32)>,
    method_ids: FxHashMap<String, u32>,
    lines: Vec<(u32, u32)>,
    line_ids: FxHashMap<(u32, u32), u32>,
    files: Vec<JavaFile>,
    file_ids: FxHashMap<String, u32>,
    version: u64,
}

impl JavaTable {
    /// `pkg.Class.method(descriptor)` of a method id.
    pub fn method_name(&self, id: u32) -> &str {
        &self.methods[id as usize].0
    }

    /// The source file of a method id (an index into [`JavaTable::files`]).
    pub fn method_file(&self, id: u32) -> u32 {
        self.methods[id as usize].1
    }

    /// The file and line number of a line id.
    pub fn line(&self, id: u32) -> (u32, u32) {
        self.lines[id as usize]
    }

    /// `pkg/File.java:LINE` of a line id.
    pub fn line_name(&self, id: u32) -> String {
        let (file, line) = self.lines[id as usize];
        format!("{}:{line}", self.files[file as usize].path)
    }

    /// The source files.
    pub fn files(&self) -> &[JavaFile] {
        &self.files
    }

    /// How many methods have names.
    pub fn method_count(&self) -> usize {
        self.methods.len()
    }

    /// Changes whenever classes are added (so users can refresh what they copied).
    pub fn version(&self) -> u64 {
        self.version
    }

    fn file(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.file_ids.get(path) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(JavaFile {
            path: path.to_string(),
            methods: 0,
            lines: 0,
        });
        self.file_ids.insert(path.to_string(), id);
        id
    }

    fn method(&mut self, name: &str, file: u32) -> u32 {
        if let Some(&id) = self.method_ids.get(name) {
            return id;
        }
        let id = self.methods.len() as u32;
        self.methods.push((name.to_string(), file));
        self.method_ids.insert(name.to_string(), id);
        self.files[file as usize].methods += 1;
        id
    }

    fn line_id(&mut self, file: u32, line: u32) -> u32 {
        if let Some(&id) = self.line_ids.get(&(file, line)) {
            return id;
        }
        let id = self.lines.len() as u32;
        self.lines.push((file, line));
        self.line_ids.insert((file, line), id);
        self.files[file as usize].lines += 1;
        id
    }
}

/// Coverage of one Java run: the methods and lines its call executed (ids into
/// [`JavaTrace::table`], sorted).
#[derive(Clone, Debug, Default)]
pub struct JavaTrace {
    /// Method ids.
    pub methods: Vec<u32>,
    /// Line ids.
    pub lines: Vec<u32>,
    /// The names behind the ids.
    pub table: JavaTable,
}

impl JavaTrace {
    /// The names of the methods the run executed, sorted.
    pub fn method_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .methods
            .iter()
            .map(|&m| self.table.method_name(m).to_string())
            .collect();
        names.sort();
        names
    }

    /// The lines the run executed (`pkg/File.java:LINE`), sorted.
    pub fn line_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .lines
            .iter()
            .map(|&l| self.table.line_name(l))
            .collect();
        names.sort();
        names
    }
}

/// A message from the harness (all kinds in one shape).
#[derive(Deserialize, Default)]
struct Reply {
    error: Option<String>,
    ready: Option<bool>,
    java: Option<String>,
    jacoco: Option<String>,
    text: Option<bool>,
    package: Option<String>,
    ok: Option<bool>,
    exc: Option<String>,
    frame: Option<String>,
    message: Option<String>,
    exit: Option<bool>,
    hung: Option<bool>,
    #[serde(default)]
    classes: Vec<ClassDecl>,
    #[serde(default)]
    m: Vec<u32>,
    #[serde(default)]
    l: Vec<u32>,
    #[serde(default)]
    out: u64,
}

/// A class the harness saw run for the first time: its methods and lines get the next
/// session ids, in this order.
#[derive(Deserialize)]
struct ClassDecl {
    file: String,
    methods: Vec<String>,
    lines: Vec<u32>,
}

/// Runs a static Java method on each input in one JVM, with method and line coverage.
pub struct JavaExecutor {
    target: JavaTarget,
    limits: Limits,
    dir: reap::TempDir,
    harness: PathBuf,
    agent_jar: PathBuf,
    output: File,
    output_dirty: bool,
    runner: Option<Runner>,
    /// Whether the running JVM has not run a call yet.
    fresh: bool,
    /// Per JVM: the harness's method and line ids to the table's.
    session_methods: Vec<u32>,
    session_lines: Vec<u32>,
    trace: JavaTrace,
    versions: String,
    text: bool,
    /// The target class's package (empty: the default package).
    package: String,
    starts: u32,
    empty_runs: u64,
    owner: reap::Owner,
}

impl JavaExecutor {
    /// Compiles the harness if needed, starts the JVM and loads the target (a clear
    /// error if the JDK, JaCoCo, the class or a fitting method is missing).
    pub fn new(
        target: JavaTarget,
        limits: Limits,
        work_dir: Option<&Path>,
    ) -> Result<JavaExecutor, ExecError> {
        let jars = jacoco_jars(&target.jacoco_dir)?;
        let harness = compile_harness(&target)?;
        let dir = reap::TempDir::new(work_dir)?;
        let agent_jar = dir.path().join("jacoco-agent.jar");
        write_agent_jar(&agent_jar, &jars)
            .map_err(|e| ExecError::Io(format!("cannot write {}", agent_jar.display()), e))?;
        let output = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.path().join("output"))
            .map_err(|e| ExecError::Io("cannot create the output file".into(), e))?;
        let mut executor = JavaExecutor {
            target,
            limits,
            dir,
            harness,
            agent_jar,
            output,
            output_dirty: false,
            runner: None,
            fresh: true,
            session_methods: Vec::new(),
            session_lines: Vec::new(),
            trace: JavaTrace::default(),
            versions: String::new(),
            text: false,
            package: String::new(),
            starts: 0,
            empty_runs: 0,
            owner: reap::Owner::new(),
        };
        executor.start()?;
        Ok(executor)
    }

    /// How often the JVM was started.
    pub fn starts(&self) -> u32 {
        self.starts
    }

    /// The names of every method and line seen so far.
    pub fn table(&self) -> &JavaTable {
        &self.trace.table
    }

    /// The JVM's command line up to the harness's arguments: java, its options, the
    /// agent (writing to `destfile`, else nothing) and the classpath.
    fn java_command(&self, destfile: Option<&Path>) -> Command {
        let mut command = Command::new(&self.target.java);
        let heap = self.limits.memory_mb.unwrap_or(DEFAULT_HEAP_MB);
        let output = match destfile {
            Some(file) => format!("output=file,destfile={}", file.display()),
            None => "output=none".to_string(),
        };
        let mut classpath = vec![self.harness.clone()];
        classpath.extend(
            JACOCO_JARS
                .iter()
                .skip(1)
                .map(|j| self.target.jacoco_dir.join(j)),
        );
        classpath.extend(self.target.classpath.iter().cloned());
        // No hsperfdata files, and crash logs and core dumps (if the JVM itself dies)
        // in the executor's own folder rather than the current one.
        command
            .arg("-XX:-UsePerfData")
            .arg(format!(
                "-XX:ErrorFile={}",
                self.dir.path().join("hs_err_%p.log").display()
            ))
            .arg("-XX:-CreateCoredumpOnCrash")
            .arg("-XX:+UseSerialGC")
            .arg(format!("-Xmx{heap}m"))
            .arg("-Djava.awt.headless=true")
            .arg(format!(
                "-javaagent:{}={output},jmx=false,includes={},excludes={EXCLUDES}",
                self.agent_jar.display(),
                self.target.include_patterns()
            ))
            .arg("-cp")
            .arg(join_paths(&classpath))
            .arg("thicket.Harness");
        command
    }

    fn start(&mut self) -> Result<(), ExecError> {
        self.runner = None;
        self.starts += 1;
        self.session_methods.clear();
        self.session_lines.clear();
        self.fresh = true;
        let mut command = self.java_command(None);
        command
            .arg("serve")
            .arg(&self.target.method)
            .arg(self.target.include_patterns())
            .arg(EXCLUDES);
        self.output
            .set_len(0)
            .map_err(|e| ExecError::Io("cannot truncate the output file".into(), e))?;
        let mut runner = Runner::spawn(&mut command, &self.output, &self.owner, || Ok(()))
            .map_err(|e| match e {
                SpawnError::Io(what, e) => ExecError::Io(what.into(), e),
                SpawnError::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    ExecError::Java(format!(
                        "`{}` not found: install a Java runtime (Debian: apt-get install \
                         default-jdk-headless; or set JAVA_HOME)",
                        self.target.java.display()
                    ))
                }
                SpawnError::Spawn(e) => ExecError::Spawn(self.target.java.display().to_string(), e),
            })?;
        let timeout = self.target.start_timeout;
        let reply = match runner.receive(timeout) {
            Received::Message(bytes) => bytes,
            Received::TimedOut => {
                runner.finish(Duration::ZERO);
                return Err(self.start_error(&format!(
                    "was not ready within {} (loading the agent and the target class: does \
                     its static initialiser loop?)",
                    human(timeout)
                )));
            }
            Received::Gone => {
                let status = runner.finish(Duration::from_millis(500));
                return Err(self.start_error(&format!(
                    "ended before it was ready ({})",
                    Outcome::new(status, Duration::ZERO).describe()
                )));
            }
        };
        let reply: Reply = match serde_json::from_slice(&reply) {
            Ok(reply) => reply,
            Err(e) => {
                runner.finish(Duration::ZERO);
                return Err(self.start_error(&format!("sent a garbled greeting ({e})")));
            }
        };
        if let Some(error) = reply.error {
            runner.finish(Duration::from_millis(500));
            return Err(ExecError::Java(error));
        }
        if reply.exit.is_some() {
            runner.finish(Duration::from_millis(2000));
            return Err(self.start_error(&format!(
                "exited while loading the target (System.exit at {})",
                reply.frame.as_deref().unwrap_or("?")
            )));
        }
        if reply.ready != Some(true) {
            runner.finish(Duration::ZERO);
            return Err(self.start_error("sent no greeting"));
        }
        self.text = reply.text.unwrap_or(false);
        self.package = reply.package.unwrap_or_default();
        self.versions = format!(
            "Java {}, JaCoCo {}",
            reply.java.unwrap_or_default(),
            reply.jacoco.unwrap_or_default()
        );
        self.runner = Some(runner);
        Ok(())
    }

    fn start_error(&self, what: &str) -> ExecError {
        let said = read_tail(&self.output).text();
        let said = said.trim();
        ExecError::Java(if said.is_empty() {
            format!("the JVM ({}) {what}", self.target.java.display())
        } else {
            format!(
                "the JVM ({}) {what}; it said:\n{said}",
                self.target.java.display()
            )
        })
    }

    /// Takes the harness's coverage message into the trace.
    fn absorb(&mut self, reply: Reply) {
        let table = &mut self.trace.table;
        if !reply.classes.is_empty() {
            table.version += 1;
        }
        for class in reply.classes {
            let file = table.file(&class.file);
            for name in &class.methods {
                let id = table.method(name, file);
                self.session_methods.push(id);
            }
            for &line in &class.lines {
                let id = table.line_id(file, line);
                self.session_lines.push(id);
            }
        }
        let map = |ids: &[u32], session: &[u32]| -> Vec<u32> {
            let mut out: Vec<u32> = ids
                .iter()
                .filter_map(|&i| session.get(i as usize).copied())
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        };
        self.trace.methods = map(&reply.m, &self.session_methods);
        self.trace.lines = map(&reply.l, &self.session_lines);
        if self.trace.methods.is_empty() {
            self.empty_runs += 1;
        }
    }

    /// Runs the target on one input in a fresh JVM with JaCoCo's agent writing its
    /// execution data at exit, as one would without thicket (the baseline the
    /// long-lived JVM is measured against); with `analyse`, then JaCoCo's analysis of
    /// that data in another JVM gives the covered methods and lines. For tests and
    /// benchmarks: there is no time limit, and the call's own output could mimic the
    /// line that reports its exception.
    pub fn run_fresh(&self, input: &[u8], analyse: bool) -> Result<FreshRun, ExecError> {
        let io = |what: &str| {
            let what = what.to_string();
            move |e| ExecError::Io(what, e)
        };
        let work = tempfile::Builder::new()
            .prefix("fresh-")
            .tempdir_in(self.dir.path())
            .map_err(io("cannot create a folder"))?;
        let input_file = work.path().join("input");
        std::fs::write(&input_file, input).map_err(io("cannot write the input"))?;
        let exec = work.path().join("jacoco.exec");
        let started = Instant::now();
        let output = self
            .java_command(Some(&exec))
            .arg("once")
            .arg(&self.target.method)
            .arg(&input_file)
            .output()
            .map_err(|e| ExecError::Spawn(self.target.java.display().to_string(), e))?;
        let time = started.elapsed();
        let said = String::from_utf8_lossy(&output.stdout);
        let exception = said
            .lines()
            .find_map(|l| l.strip_prefix("exception "))
            .map(str::to_string);
        let mut run = FreshRun {
            time,
            exception,
            methods: Vec::new(),
            lines: Vec::new(),
        };
        if !analyse {
            return Ok(run);
        }
        let report = self
            .java_command(None)
            .arg("report")
            .arg(&exec)
            .arg(self.target.include_patterns())
            .arg(EXCLUDES)
            .output()
            .map_err(|e| ExecError::Spawn(self.target.java.display().to_string(), e))?;
        if !report.status.success() {
            return Err(ExecError::Java(format!(
                "JaCoCo's analysis of {} failed: {}",
                exec.display(),
                String::from_utf8_lossy(&report.stderr).trim()
            )));
        }
        for line in String::from_utf8_lossy(&report.stdout).lines() {
            if let Some(m) = line.strip_prefix("M ") {
                run.methods.push(m.to_string());
            } else if let Some(l) = line.strip_prefix("L ") {
                run.lines.push(l.to_string());
            }
        }
        Ok(run)
    }
}

/// What [`JavaExecutor::run_fresh`] saw.
#[derive(Clone, Debug)]
pub struct FreshRun {
    /// Wall-clock time of the JVM that ran the input (start to exit).
    pub time: Duration,
    /// The class of the exception the call threw, if any.
    pub exception: Option<String>,
    /// Covered methods by JaCoCo's analysis (sorted; empty unless analysed).
    pub methods: Vec<String>,
    /// Covered lines, `pkg/File.java:LINE` (sorted).
    pub lines: Vec<String>,
}

impl Executor for JavaExecutor {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        if self.runner.is_none() {
            self.start()?;
        }
        if self.output_dirty {
            self.output
                .set_len(0)
                .map_err(|e| ExecError::Io("cannot truncate the output file".into(), e))?;
        }
        self.trace.methods.clear();
        self.trace.lines.clear();
        // The first call of a JVM is judged by the harness (it may load and instrument
        // classes past the limit); thicket ends it after FIRST_CALL_TIMEOUT at most.
        let timeout = if self.fresh {
            self.limits.timeout.max(FIRST_CALL_TIMEOUT)
        } else {
            self.limits.timeout
        };
        self.fresh = false;
        let Some(runner) = self.runner.as_mut() else {
            return Err(ExecError::Java("the JVM is not running".into()));
        };
        let started = Instant::now();
        let limit_ms = self.limits.timeout.as_millis().min(u128::from(u32::MAX)) as u32;
        let mut message = Vec::with_capacity(input.len() + 8);
        message.extend_from_slice(&limit_ms.to_le_bytes());
        message.extend_from_slice(&(input.len() as u32).to_le_bytes());
        message.extend_from_slice(input);
        let sent = runner.to.write_all(&message).is_ok();
        let received = if sent {
            runner.receive(timeout)
        } else {
            Received::Gone
        };
        let time = started.elapsed();
        let mut reported_output = 0;
        let mut outcome = match received {
            Received::Message(bytes) => {
                let reply: Reply = serde_json::from_slice(&bytes).map_err(|e| {
                    ExecError::Java(format!("the harness sent a garbled reply: {e}"))
                })?;
                if reply.hung == Some(true) {
                    hung(&mut self.runner, time)
                } else if reply.exit.is_some() {
                    self.exited(reply.frame, time)
                } else {
                    let mut outcome = Outcome::new(Status::Exited(0), time);
                    let mut restart = false;
                    if reply.ok == Some(false) {
                        let class = reply.exc.unwrap_or_default();
                        // A JVM out of heap may have classes whose initialisation failed
                        // for good: the next run gets a fresh one.
                        restart = class == "java.lang.OutOfMemoryError";
                        outcome.exception = Some(Exception {
                            language: "java",
                            class,
                            frame: reply.frame.unwrap_or_default(),
                            message: reply.message.unwrap_or_default(),
                        });
                    }
                    // The coverage (with any set-up work: classes and probes seen for
                    // the first time) is outside the input's time.
                    let runner = self.runner.as_mut().expect("running");
                    match runner.receive(ANALYSIS_TIMEOUT) {
                        Received::Message(bytes) => {
                            let reply: Reply = serde_json::from_slice(&bytes).map_err(|e| {
                                ExecError::Java(format!("the harness sent a garbled reply: {e}"))
                            })?;
                            if reply.exit.is_some() {
                                // A thread the call started exited the JVM afterwards.
                                outcome = self.exited(reply.frame, time);
                            } else {
                                reported_output = reply.out;
                                self.absorb(reply);
                            }
                        }
                        Received::TimedOut => {
                            self.runner = None;
                            return Err(ExecError::Java(format!(
                                "the harness did not report the coverage of a call within {}",
                                human(ANALYSIS_TIMEOUT)
                            )));
                        }
                        Received::Gone => {
                            let mut runner = self.runner.take().expect("running");
                            let status = runner.finish(Duration::from_secs(2));
                            outcome.status = status;
                            outcome.died_in_call = true;
                        }
                    }
                    if restart && let Some(mut runner) = self.runner.take() {
                        runner.finish(Duration::ZERO);
                    }
                    outcome
                }
            }
            Received::TimedOut => hung(&mut self.runner, time),
            Received::Gone => died(&mut self.runner, time),
        };
        self.owner.sweep();
        let output = read_tail(&self.output);
        self.output_dirty = output.total() > 0;
        outcome.stderr = if reported_output > output.total() {
            Tail::from_end(output.bytes().to_vec(), reported_output)
        } else {
            output
        };
        Ok(outcome)
    }

    fn trace(&self) -> Trace<'_> {
        Trace::Java(&self.trace)
    }

    fn covered_locations(&self, out: &mut Vec<Location>) -> bool {
        let table = &self.trace.table;
        let path = |file: u32| table.files()[file as usize].path.clone();
        out.extend(self.trace.methods.iter().map(|&m| Location {
            kind: LocationKind::Method,
            file: path(table.method_file(m)),
            name: table.method_name(m).to_string(),
        }));
        out.extend(self.trace.lines.iter().map(|&l| {
            let (file, line) = table.line(l);
            Location {
                kind: LocationKind::Line,
                file: path(file),
                name: line.to_string(),
            }
        }));
        true
    }

    fn describe(&self) -> String {
        format!(
            "Java harness ({}, method and line coverage of {}): {}",
            self.versions,
            if self.target.includes.is_empty() {
                "every class outside the JDK".to_string()
            } else {
                self.target.includes.join(", ")
            },
            self.target.method
        )
    }

    fn timeout(&self) -> Duration {
        self.limits.timeout
    }

    fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    fn restarts(&self) -> u64 {
        u64::from(self.starts.saturating_sub(1))
    }

    fn wants_text(&self) -> bool {
        self.text
    }

    fn target_package(&self) -> Option<String> {
        Some(self.package.clone())
    }

    fn empty_runs(&self) -> u64 {
        self.empty_runs
    }
}

impl JavaExecutor {
    /// The JVM said it is exiting (System.exit): wait for it, take its exit code.
    fn exited(&mut self, frame: Option<String>, time: Duration) -> Outcome {
        let mut runner = self.runner.take().expect("running");
        let status = runner.finish(Duration::from_secs(5));
        let mut outcome = Outcome::new(status, time);
        outcome.died_in_call = true;
        outcome.exit_frame = frame.filter(|f| !f.is_empty());
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_known_strings() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn manifest_lines_fold_at_72_bytes() {
        let header = format!("Class-Path: {}", "/a/b".repeat(50));
        let folded = manifest_line(&header);
        let lines: Vec<&str> = folded.split("\r\n").collect();
        assert!(lines.iter().all(|l| l.len() <= 72), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.starts_with(' ')));
        let joined: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| if i == 0 { *l } else { &l[1..] })
            .collect();
        assert_eq!(joined, header);
    }

    #[test]
    fn class_path_urls_are_percent_encoded() {
        assert_eq!(url_path(Path::new("/x y/a%b.jar")), "/x%20y/a%25b.jar");
    }

    #[test]
    fn the_agent_jar_is_a_zip_with_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jar");
        write_agent_jar(&path, &[PathBuf::from("/usr/share/java/asm.jar")]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..4], b"PK\x03\x04");
        assert_eq!(&bytes[bytes.len() - 22..bytes.len() - 18], b"PK\x05\x06");
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("Premain-Class: org.jacoco.agent.rt.internal.PreMain\r\n"));
        assert!(text.contains("Class-Path: /usr/share/java/asm.jar\r\n"));
    }
}
