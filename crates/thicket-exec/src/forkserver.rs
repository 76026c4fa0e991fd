//! An AFL++ forkserver client: edge coverage of programs built with `afl-cc` /
//! `afl-clang-fast`, at fork speed.
//!
//! The program is started once with a System V shared-memory segment for its edge map
//! (`__AFL_SHM_ID`) and two pipes on fds 198 (commands) and 199 (status). Its runtime
//! stops before `main` and answers a handshake; then, per input, thicket writes 4 bytes,
//! the runtime forks, sends the child's pid and later its `wait` status. The map holds
//! one hit counter per edge, which [`classify_counts`] turns into AFL's buckets. Like
//! afl-fuzz, it is started with `LD_BIND_NOW=1` (not with `LD_BIND_LAZY` set), so that
//! the forked runs do not resolve dynamic symbols again each.
//!
//! Two handshakes exist, and both are spoken here:
//! - **AFL++ up to 4.1x** (Debian's 4.04c): the runtime sends one status word; with
//!   `FS_OPT_ENABLED` set it carries options: the map size (`FS_OPT_MAPSIZE`, size
//!   encoded in bits 1..24), shared-memory test cases (`FS_OPT_SHDMEM_FUZZ`) and an
//!   auto-dictionary (`FS_OPT_AUTODICT`); if it offers either of the last two, the
//!   client answers with the ones it accepts (here: shared-memory test cases, no
//!   dictionary). Errors come as `FS_OPT_ERROR` with a code.
//! - **AFL++ 4.20 and later**: the runtime sends `0x41464c00 + version`; the client
//!   answers with its bitwise complement; the runtime sends an options word
//!   (`FS_NEW_OPT_MAPSIZE` = 1, `FS_NEW_OPT_SHDMEM_FUZZ` = 2, `FS_NEW_OPT_AUTODICT` =
//!   0x800), the map size if offered, the dictionary (length, bytes) if offered, and the
//!   hello word again. Errors come as `0xeffe0000 | code`.
//!
//! Shared-memory test cases (`__AFL_FUZZ_TESTCASE_BUF`) are supported: a second segment
//! (`__AFL_SHM_FUZZ_ID`) holds a 4-byte length and the input.

use crate::command::{InputMode, Target};
use crate::outcome::{Outcome, Status, TAIL_BYTES, Tail, status_from_wait};
use crate::{ExecError, Executor, Limits, Trace, sys};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The command descriptor of the forkserver protocol (status is one above).
pub const FORKSRV_FD: RawFd = 198;
/// Size of the edge-map segment: AFL++'s default shared-memory size, enough for any map
/// size a target reports; only the reported size is read.
pub const MAP_SEGMENT: usize = 8 << 20;
/// The map size of a runtime that does not report one (classic AFL).
pub const DEFAULT_MAP_SIZE: usize = 1 << 16;
/// Largest input in shared-memory test-case mode (AFL++'s `MAX_FILE`).
pub const MAX_SHM_INPUT: usize = 1 << 20;

const FS_OPT_ENABLED: u32 = 0x8000_0001;
const FS_OPT_MAPSIZE: u32 = 0x4000_0000;
const FS_OPT_SHDMEM_FUZZ: u32 = 0x0100_0000;
const FS_OPT_AUTODICT: u32 = 0x1000_0000;
const FS_OPT_ERROR: u32 = 0xf800_008f;
const FS_NEW_HELLO: u32 = 0x4146_4c00;
const FS_NEW_ERROR: u32 = 0xeffe_0000;
const FS_NEW_OPT_MAPSIZE: u32 = 1;
const FS_NEW_OPT_SHDMEM_FUZZ: u32 = 2;
const FS_NEW_OPT_AUTODICT: u32 = 0x800;

/// Which handshake the target spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// AFL++ before 4.20 (one status word, perhaps with `FS_OPT_*` options).
    Classic,
    /// AFL++ 4.20 or later, with this protocol version.
    Versioned(u32),
}

/// AFL's hit-count buckets: 0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128-255 become
/// 0, 1, 2, 4, 8, 16, 32, 64, 128.
pub static COUNT_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = match i {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => 4,
            4..=7 => 8,
            8..=15 => 16,
            16..=31 => 32,
            32..=127 => 64,
            _ => 128,
        };
        i += 1;
    }
    table
};

/// Replaces each hit counter of `map` by its bucket ([`COUNT_CLASS`]), skipping zero
/// words quickly.
pub fn classify_counts(map: &mut [u8]) {
    let mut chunks = map.chunks_exact_mut(8);
    for chunk in &mut chunks {
        if chunk.iter().any(|&b| b != 0) {
            for b in chunk {
                *b = COUNT_CLASS[*b as usize];
            }
        }
    }
    for b in chunks.into_remainder() {
        *b = COUNT_CLASS[*b as usize];
    }
}

/// A System V shared-memory segment, marked for removal as soon as it is attached (so
/// nothing leaks if thicket is killed; Linux lets others attach it until the last
/// detach).
pub struct SharedMemory {
    id: i32,
    ptr: *mut u8,
    len: usize,
}

impl SharedMemory {
    /// A new zeroed segment of `len` bytes.
    pub fn new(len: usize) -> std::io::Result<SharedMemory> {
        // SAFETY: shmget/shmat/shmctl with valid arguments; the pointer is checked.
        unsafe {
            let id = libc::shmget(
                libc::IPC_PRIVATE,
                len,
                libc::IPC_CREAT | libc::IPC_EXCL | 0o600,
            );
            if id < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let ptr = libc::shmat(id, std::ptr::null(), 0);
            if ptr as isize == -1 {
                let e = std::io::Error::last_os_error();
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                return Err(e);
            }
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            Ok(SharedMemory {
                id,
                ptr: ptr.cast(),
                len,
            })
        }
    }

    /// The id to hand to other processes.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The segment's bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is `len` bytes and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The segment's bytes, writable. Only call while no other process writes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above; `&mut self` excludes other borrows in this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: detaching the address shmat returned.
        unsafe { libc::shmdt(self.ptr.cast()) };
    }
}

// SAFETY: the segment is plain memory owned by this value.
unsafe impl Send for SharedMemory {}

/// A running forkserver.
struct Server {
    child: Child,
    ctl: File,
    st: File,
}

impl Drop for Server {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        sys::killpg(pid, libc::SIGKILL);
        sys::kill(pid, libc::SIGKILL);
        let _ = self.child.wait();
        crate::reap::unregister(pid);
    }
}

/// Runs an AFL++-instrumented program through its forkserver, with edge coverage.
pub struct ForkserverExecutor {
    target: Target,
    limits: Limits,
    _dir: crate::reap::TempDir,
    owner: crate::reap::Owner,
    input_path: PathBuf,
    input_file: File,
    /// The input file's length (what the last input left in it).
    input_len: u64,
    stdout_file: File,
    stderr_file: File,
    map: SharedMemory,
    testcases: SharedMemory,
    server: Option<Server>,
    map_size: usize,
    handshake: Handshake,
    shm_testcases: bool,
    last_timed_out: bool,
    /// Whether the output files may hold bytes from the last run.
    output_dirty: bool,
    /// Forkserver (re)starts so far.
    starts: u32,
}

impl ForkserverExecutor {
    /// Starts the forkserver of `target` and performs the handshake. `work_dir` is
    /// where the input and output files live (a fresh temporary folder inside it).
    pub fn new(
        target: Target,
        limits: Limits,
        work_dir: Option<&std::path::Path>,
    ) -> Result<ForkserverExecutor, ExecError> {
        if target.mode == InputMode::Arg {
            return Err(ExecError::Usage(
                "a forkserver starts the program once, so the input cannot be an argument; \
                 use @@ (a file) or stdin, or the plain mode"
                    .into(),
            ));
        }
        let dir = crate::reap::TempDir::new(work_dir)?;
        let io = |what: &str| {
            let what = what.to_string();
            move |e| ExecError::Io(what, e)
        };
        let input_path = dir.path().join("cur_input");
        let input_file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&input_path)
            .map_err(io("cannot create the input file"))?;
        let output = |name: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(dir.path().join(name))
                .map_err(io("cannot create an output file"))
        };
        let stdout_file = output("stdout")?;
        let stderr_file = output("stderr")?;
        let map = SharedMemory::new(MAP_SEGMENT).map_err(io("cannot create shared memory"))?;
        let testcases =
            SharedMemory::new(MAX_SHM_INPUT + 4).map_err(io("cannot create shared memory"))?;
        let mut executor = ForkserverExecutor {
            target,
            limits,
            _dir: dir,
            owner: crate::reap::Owner::new(),
            input_path,
            input_file,
            input_len: 0,
            stdout_file,
            stderr_file,
            map,
            testcases,
            server: None,
            map_size: DEFAULT_MAP_SIZE,
            handshake: Handshake::Classic,
            shm_testcases: false,
            last_timed_out: false,
            output_dirty: false,
            starts: 0,
        };
        executor.start()?;
        Ok(executor)
    }

    /// The map size the target reported (the number of edge counters it uses).
    pub fn map_size(&self) -> usize {
        self.map_size
    }

    /// The handshake the target spoke.
    pub fn handshake(&self) -> Handshake {
        self.handshake
    }

    /// How often the forkserver was started (1 unless it died and was restarted).
    pub fn starts(&self) -> u32 {
        self.starts
    }

    fn start(&mut self) -> Result<(), ExecError> {
        self.server = None;
        self.starts += 1;
        let io = |what: &'static str| move |e| ExecError::Io(what.into(), e);
        let (ctl_r, ctl_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        let (st_r, st_w) = sys::pipe().map_err(io("cannot create a pipe"))?;
        // Keep the child's ends away from 198/199 so that placing one cannot clobber
        // the other.
        let ctl_r = sys::dup_above(&ctl_r, 200).map_err(io("cannot duplicate a pipe"))?;
        let st_w = sys::dup_above(&st_w, 200).map_err(io("cannot duplicate a pipe"))?;
        let mut command = Command::new(&self.target.program);
        command
            .args(self.target.args_for(&self.input_path, b""))
            .env("__AFL_SHM_ID", self.map.id().to_string())
            .env("__AFL_SHM_FUZZ_ID", self.testcases.id().to_string())
            .env("AFL_MAP_SIZE", MAP_SEGMENT.to_string());
        if binds_now(&self.target.env) {
            command.env("LD_BIND_NOW", "1");
        }
        command
            .envs(self.target.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::from(
                self.stdout_file
                    .try_clone()
                    .map_err(io("cannot share a file"))?,
            ))
            .stderr(Stdio::from(
                self.stderr_file
                    .try_clone()
                    .map_err(io("cannot share a file"))?,
            ))
            .process_group(0);
        crate::sanitizer_env(&mut command);
        self.owner.mark(&mut command);
        if self.target.mode == InputMode::Stdin {
            // The same open file description as ours: rewinding ours rewinds theirs.
            command.stdin(Stdio::from(
                self.input_file
                    .try_clone()
                    .map_err(io("cannot share a file"))?,
            ));
        } else {
            command.stdin(Stdio::null());
        }
        let (ctl_fd, st_fd) = (ctl_r.as_raw_fd(), st_w.as_raw_fd());
        let memory = self.limits.memory_mb;
        // SAFETY: only prctl, dup2, fcntl and setrlimit run between fork and exec.
        unsafe {
            command.pre_exec(move || {
                sys::die_with_parent();
                sys::dup_into_child(ctl_fd, FORKSRV_FD)?;
                sys::dup_into_child(st_fd, FORKSRV_FD + 1)?;
                if let Some(mb) = memory {
                    sys::set_rlimit(libc::RLIMIT_AS, mb << 20)?;
                }
                Ok(())
            });
        }
        self.truncate_outputs()?;
        let child = crate::reap::spawn(&mut command)
            .map_err(|e| ExecError::Spawn(self.target.name.clone(), e))?;
        drop((ctl_r, st_w));
        let mut server = Server {
            child,
            ctl: ctl_w,
            st: st_r,
        };
        let wait = Some(self.limits.timeout.max(Duration::from_secs(10)));
        let hello = match read_u32(&mut server.st, wait) {
            Ok(Some(word)) => word,
            Ok(None) => return Err(self.no_handshake(server, "did not answer in time")),
            Err(_) => return Err(self.no_handshake(server, "exited before the handshake")),
        };
        let protocol = |msg: String| ExecError::Forkserver(self.target.name.clone(), msg);
        if hello & 0xffff_ff00 == FS_NEW_HELLO {
            let version = hello & 0xff;
            if version == 0 {
                return Err(protocol(
                    "forkserver version 0: recompile the target".into(),
                ));
            }
            self.handshake = Handshake::Versioned(version);
            write_u32(&mut server.ctl, hello ^ 0xffff_ffff)
                .map_err(|_| protocol("closed the pipe during the handshake".into()))?;
            let next = |st: &mut File| {
                read_u32(st, wait)
                    .ok()
                    .flatten()
                    .ok_or_else(|| protocol("stopped during the handshake".into()))
            };
            let options = next(&mut server.st)?;
            self.map_size = DEFAULT_MAP_SIZE;
            if options & FS_NEW_OPT_MAPSIZE != 0 {
                self.map_size = next(&mut server.st)? as usize;
            }
            self.shm_testcases = options & FS_NEW_OPT_SHDMEM_FUZZ != 0;
            if options & FS_NEW_OPT_AUTODICT != 0 {
                let len = next(&mut server.st)? as usize;
                let mut dict = vec![0u8; len];
                if !matches!(
                    sys::read_exact_timeout(&mut server.st, &mut dict, wait),
                    Ok(sys::ReadOutcome::Done)
                ) {
                    return Err(protocol("stopped while sending its dictionary".into()));
                }
            }
            let welcome = next(&mut server.st)?;
            if welcome != hello {
                return Err(protocol(format!(
                    "ended the handshake with {welcome:#x} instead of {hello:#x}"
                )));
            }
        } else if hello & 0xffff_0000 == FS_NEW_ERROR {
            return Err(protocol(runtime_error(hello & 0xffff)));
        } else if hello & FS_OPT_ERROR == FS_OPT_ERROR {
            return Err(protocol(runtime_error((hello & 0x00ff_ff00) >> 8)));
        } else {
            self.handshake = Handshake::Classic;
            self.map_size = DEFAULT_MAP_SIZE;
            self.shm_testcases = false;
            if hello & FS_OPT_ENABLED == FS_OPT_ENABLED {
                if hello & FS_OPT_MAPSIZE == FS_OPT_MAPSIZE {
                    self.map_size = (((hello & 0x00ff_fffe) >> 1) + 1) as usize;
                }
                if hello & (FS_OPT_SHDMEM_FUZZ | FS_OPT_AUTODICT) != 0 {
                    // Accept shared-memory test cases, decline the dictionary.
                    self.shm_testcases = hello & FS_OPT_SHDMEM_FUZZ != 0;
                    let reply = if self.shm_testcases {
                        FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ
                    } else {
                        FS_OPT_ENABLED
                    };
                    write_u32(&mut server.ctl, reply)
                        .map_err(|_| protocol("closed the pipe during the handshake".into()))?;
                }
            }
        }
        if self.map_size == 0 || self.map_size > MAP_SEGMENT {
            return Err(protocol(format!(
                "reports a map of {} bytes (at most {MAP_SEGMENT} supported)",
                self.map_size
            )));
        }
        self.server = Some(server);
        Ok(())
    }

    /// The error for a target that never completed the handshake: what it said.
    fn no_handshake(&mut self, mut server: Server, what: &str) -> ExecError {
        sys::killpg(server.child.id() as libc::pid_t, libc::SIGKILL);
        let status = server
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let stderr = self.read_tail(true).text();
        let hint = if self.target.is_afl_instrumented() {
            String::new()
        } else {
            " — it is not instrumented: compile it with afl-cc (or run without coverage)"
                .to_string()
        };
        let said = stderr.trim();
        let said = if said.is_empty() {
            String::new()
        } else {
            let last: Vec<&str> = said.lines().rev().take(5).collect();
            let last: Vec<&str> = last.into_iter().rev().collect();
            format!("; its stderr ends with:\n{}", last.join("\n"))
        };
        ExecError::Forkserver(
            self.target.name.clone(),
            format!("{what} ({status}){hint}{said}"),
        )
    }

    fn truncate_outputs(&mut self) -> Result<(), ExecError> {
        for file in [&self.stdout_file, &self.stderr_file] {
            file.set_len(0)
                .map_err(|e| ExecError::Io("cannot truncate an output file".into(), e))?;
        }
        self.output_dirty = false;
        Ok(())
    }

    /// The end of the captured stdout (`false`) or stderr (`true`).
    fn read_tail(&self, stderr: bool) -> Tail {
        let file = if stderr {
            &self.stderr_file
        } else {
            &self.stdout_file
        };
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            return Tail::new();
        }
        let start = size.saturating_sub(TAIL_BYTES as u64);
        let mut buf = vec![0u8; (size - start) as usize];
        let n = file.read_at(&mut buf, start).unwrap_or(0);
        buf.truncate(n);
        Tail::from_end(buf, size)
    }

    fn deliver(&mut self, input: &[u8]) -> Result<(), ExecError> {
        if self.shm_testcases {
            let n = input.len().min(MAX_SHM_INPUT);
            let shm = self.testcases.as_mut_slice();
            shm[..4].copy_from_slice(&(n as u32).to_le_bytes());
            shm[4..4 + n].copy_from_slice(&input[..n]);
            return Ok(());
        }
        let io = |e| ExecError::Io("cannot write the input file".into(), e);
        self.input_file.write_all_at(input, 0).map_err(io)?;
        // Writing extends the file; only a shorter input leaves old bytes to cut.
        let len = input.len() as u64;
        if len < self.input_len {
            self.input_file.set_len(len).map_err(io)?;
        }
        self.input_len = len;
        // Only a target reading stdin shares this file's offset; one given the path
        // opens a file description of its own.
        if self.target.mode == InputMode::Stdin {
            self.input_file.seek(SeekFrom::Start(0)).map_err(io)?;
        }
        Ok(())
    }

    /// One run; `meanwhile`, if still there, is taken and called once the target has
    /// been told to start (see [`Executor::run_overlapping`]).
    fn run_once(
        &mut self,
        input: &[u8],
        meanwhile: &mut Option<&mut dyn FnMut()>,
    ) -> Result<Outcome, RunError> {
        self.deliver(input).map_err(RunError::Fatal)?;
        if self.output_dirty {
            self.truncate_outputs().map_err(RunError::Fatal)?;
        }
        self.map.as_mut_slice()[..self.map_size].fill(0);
        let timeout = self.limits.timeout;
        let server = self.server.as_mut().ok_or(RunError::Died)?;
        let started = Instant::now();
        write_u32(&mut server.ctl, u32::from(self.last_timed_out)).map_err(|_| RunError::Died)?;
        if let Some(meanwhile) = meanwhile.take() {
            meanwhile();
        }
        let pid = match read_u32(&mut server.st, Some(timeout + Duration::from_secs(10))) {
            Ok(Some(pid)) if pid as i32 > 0 => pid as libc::pid_t,
            _ => return Err(RunError::Died),
        };
        let (status, timed_out) = match read_u32(&mut server.st, Some(timeout)) {
            Ok(Some(word)) => (status_from_wait(word as i32), false),
            Ok(None) => {
                sys::kill(pid, libc::SIGKILL);
                match read_u32(&mut server.st, Some(Duration::from_secs(10))) {
                    Ok(Some(_)) => (Status::Timeout, true),
                    _ => return Err(RunError::Died),
                }
            }
            Err(_) => return Err(RunError::Died),
        };
        let time = started.elapsed();
        self.last_timed_out = timed_out;
        classify_counts(&mut self.map.as_mut_slice()[..self.map_size]);
        let mut outcome = Outcome::new(status, time);
        outcome.stdout = self.read_tail(false);
        outcome.stderr = self.read_tail(true);
        self.output_dirty = outcome.stdout.total() > 0 || outcome.stderr.total() > 0;
        Ok(outcome)
    }
}

enum RunError {
    /// The forkserver went away; restarting may help.
    Died,
    /// Something on our side failed.
    Fatal(ExecError),
}

impl Executor for ForkserverExecutor {
    fn run(&mut self, input: &[u8]) -> Result<Outcome, ExecError> {
        self.run_overlapping(input, &mut || {})
    }

    fn run_overlapping(
        &mut self,
        input: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<Outcome, ExecError> {
        let mut meanwhile = Some(meanwhile);
        let result = self.run_retrying(input, &mut meanwhile);
        // A run that failed before the target started still owes the call.
        if let Some(meanwhile) = meanwhile {
            meanwhile();
        }
        self.owner.sweep();
        result
    }

    fn trace(&self) -> Trace<'_> {
        Trace::Edges(&self.map.as_slice()[..self.map_size])
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

    fn describe(&self) -> String {
        let handshake = match self.handshake {
            Handshake::Classic => "AFL++ <4.20 handshake".to_string(),
            Handshake::Versioned(v) => format!("AFL++ 4.20+ handshake v{v}"),
        };
        let delivery = if self.shm_testcases {
            "shared memory"
        } else if self.target.mode == InputMode::Stdin {
            "stdin"
        } else {
            "@@ file"
        };
        format!(
            "AFL++ forkserver ({handshake}, map size {}, input via {delivery}): {}",
            self.map_size,
            self.target.display()
        )
    }
}

impl ForkserverExecutor {
    fn run_retrying(
        &mut self,
        input: &[u8],
        meanwhile: &mut Option<&mut dyn FnMut()>,
    ) -> Result<Outcome, ExecError> {
        if self.server.is_none() {
            self.start()?;
        }
        match self.run_once(input, meanwhile) {
            Ok(outcome) => Ok(outcome),
            Err(RunError::Fatal(e)) => Err(e),
            Err(RunError::Died) => {
                // Start afresh and try once more; a second death is an error.
                self.last_timed_out = false;
                self.start()?;
                match self.run_once(input, meanwhile) {
                    Ok(outcome) => Ok(outcome),
                    Err(RunError::Fatal(e)) => Err(e),
                    Err(RunError::Died) => {
                        self.server = None;
                        Err(ExecError::Forkserver(
                            self.target.name.clone(),
                            "the forkserver died twice in a row".into(),
                        ))
                    }
                }
            }
        }
    }
}

fn runtime_error(code: u32) -> String {
    let what = match code {
        1 => "its map is larger than AFL_MAP_SIZE allows",
        2 => "it could not map shared memory at the fixed address (AFL_LLVM_MAP_ADDR)",
        4 => "it could not open the shared memory",
        8 => "it could not attach the shared memory (shmat)",
        16 => "it could not mmap the shared memory",
        32 | 64 => "it was built with an older AFL++ for cmplog",
        _ => "unknown error",
    };
    format!("its AFL++ runtime reports error {code}: {what}")
}

fn write_u32(file: &mut File, word: u32) -> std::io::Result<()> {
    file.write_all(&word.to_le_bytes())
}

/// A 4-byte word, `None` on timeout, an error if the pipe closed.
fn read_u32(file: &mut File, timeout: Option<Duration>) -> std::io::Result<Option<u32>> {
    let mut buf = [0u8; 4];
    match sys::read_exact_timeout(file, &mut buf, timeout)? {
        sys::ReadOutcome::Done => Ok(Some(u32::from_le_bytes(buf))),
        sys::ReadOutcome::TimedOut => Ok(None),
        sys::ReadOutcome::Closed => Err(std::io::ErrorKind::UnexpectedEof.into()),
    }
}

/// Whether the forkserver resolves the target's dynamic symbols when it starts
/// (`LD_BIND_NOW=1`), as afl-fuzz does: otherwise every forked run resolves again, on its
/// first call of each library function, the symbols its parent never called, and writes
/// them into a page of its own (a copy-on-write fault per run). `LD_BIND_LAZY` in
/// thicket's environment or the target's keeps lazy binding, as it does for afl-fuzz.
fn binds_now(target_env: &[(std::ffi::OsString, std::ffi::OsString)]) -> bool {
    std::env::var_os("LD_BIND_LAZY").is_none()
        && !target_env.iter().any(|(name, _)| name == "LD_BIND_LAZY")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_afls() {
        let mut map: Vec<u8> = (0..=255u8).collect();
        classify_counts(&mut map);
        assert_eq!(&map[..9], &[0, 1, 2, 4, 8, 8, 8, 8, 16]);
        assert_eq!(map[15], 16);
        assert_eq!(map[16], 32);
        assert_eq!(map[31], 32);
        assert_eq!(map[32], 64);
        assert_eq!(map[127], 64);
        assert_eq!(map[128], 128);
        assert_eq!(map[255], 128);
        // A map whose length is not a multiple of 8.
        let mut odd = vec![0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 200];
        classify_counts(&mut odd);
        assert_eq!(&odd[8..], &[4, 8, 128]);
    }

    #[test]
    fn shared_memory_is_attachable_by_id_and_zeroed() {
        let mut shm = SharedMemory::new(4096).unwrap();
        assert!(shm.as_slice().iter().all(|&b| b == 0));
        shm.as_mut_slice()[7] = 42;
        // Attach it a second time by id, as a target's runtime does.
        // SAFETY: attaching and detaching a segment we created.
        unsafe {
            let p = libc::shmat(shm.id(), std::ptr::null(), 0);
            assert_ne!(
                p as isize, -1,
                "segment marked for removal is still attachable"
            );
            assert_eq!(*p.cast::<u8>().add(7), 42);
            libc::shmdt(p);
        }
    }
}
