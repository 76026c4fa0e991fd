// thicket's Java harness: calls one static method on many inputs in one JVM, with
// per-input method and line coverage from JaCoCo's agent.
//
// Compiled by thicket-exec (java.rs) with `javac --release 11` into a cache folder keyed
// by this source's hash, and run as
//   java -javaagent:AGENT=output=none,includes=...,excludes=... -cp HARNESS:JACOCO:CP
//        thicket.Harness serve CLASS.METHOD INCLUDES EXCLUDES
// where AGENT is a jar that only names JaCoCo's PreMain (Debian's agent jar has no
// Premain-Class). Modes: `serve` (the protocol below), `once CLASS.METHOD FILE` (one call
// in a fresh JVM, for comparisons) and `report EXEC INCLUDES EXCLUDES` (covered methods
// and lines of a JaCoCo exec file, by JaCoCo's own analysis).
//
// Protocol: fd 3 carries requests, fd 4 replies; each message is a 4-byte little-endian
// length and that many bytes; replies are JSON. First the greeting, {"ready": true, ...}
// or {"error": "..."}. Then per input (a request: the call's time limit in milliseconds,
// 4 bytes little-endian, then the input) two replies: the call's end ({"ok": true} or
// {"ok": false, "exc", "frame", "message"}), sent as soon as the call returns (thicket
// times the call up to it), then its coverage ({"classes": [...], "m": [...], "l": [...],
// "out": n}), which may include set-up work: analysing classes and probes seen for the
// first time. A call that ends the JVM (System.exit) sends {"exit": true, "frame": ...}
// from a shutdown hook; thicket reads the code from the process status.
//
// Hangs: thicket kills a call that runs past its limit, except the first call of a JVM,
// which loads and instruments the subject's classes (seconds for large subjects). That
// one is watched here instead (see Watchdog): it hangs once it has run past its limit
// and no class was loaded for as long; then {"hung": true} replaces the call's end, and
// thicket kills the JVM.
//
// Coverage: the agent's probes are read and reset after each call
// (RT.getAgent().getExecutionData(true)). JaCoCo marks an instruction covered if a probe
// it leads to was hit, and a line or method covered if one of its instructions is, so
// the lines and methods a run covers are the union over its hit probes of what each
// probe alone covers. That is computed once per probe (JaCoCo's Analyzer on the class
// with only that probe set) and cached, so a call costs a lookup per hit probe. A call
// hitting many probes of a class never seen before gets one analysis of the class with
// exactly its probes instead (same result), and learns a few of them.
package thicket;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jacoco.agent.rt.IAgent;
import org.jacoco.agent.rt.RT;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.analysis.ICoverageVisitor;
import org.jacoco.core.analysis.IMethodCoverage;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataReader;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.data.SessionInfoStore;
import org.jacoco.core.runtime.WildcardMatcher;
import org.jacoco.core.tools.ExecFileLoader;

public final class Harness {
    /** Output a call may write before the rest is dropped (counted, not kept). */
    static final int OUTPUT_LIMIT = 1 << 20;

    /**
     * Probes of a class learnt one by one per call; a call hitting more unknown probes of
     * a class gets one analysis of all of them instead (an analysis costs a pass over
     * the class, and Rhino's first call hits thousands of probes).
     */
    static final int LEARN_PER_CALL = 4;

    private Harness() {}

    public static void main(String[] args) throws Exception {
        switch (args.length > 0 ? args[0] : "") {
            case "serve":
                new Server(args[1], args[2], args[3]).serve();
                break;
            case "once":
                once(args[1], args[2]);
                break;
            case "report":
                report(args[1], args[2], args[3]);
                break;
            default:
                System.err.println("usage: thicket.Harness serve|once|report ...");
                System.exit(2);
        }
    }

    // ---- the target ----

    /** A problem with the target that the user must fix (reported as the greeting). */
    static final class TargetError extends Exception {
        private static final long serialVersionUID = 1L;

        TargetError(String message) {
            super(message);
        }
    }

    static final class Target {
        final Method method;
        final boolean text;

        Target(Method method) {
            this.method = method;
            this.text = method.getParameterTypes()[0] == String.class;
        }

        /** Calls the method; returns what it threw (unwrapped), or null. */
        Throwable call(byte[] input) {
            Object arg = text ? new String(input, StandardCharsets.UTF_8) : input;
            try {
                method.invoke(null, arg);
                return null;
            } catch (InvocationTargetException e) {
                return e.getCause() != null ? e.getCause() : e;
            } catch (Throwable t) {
                return t;
            }
        }
    }

    static Class<?> findClass(String name) throws TargetError {
        // `a.b.Outer.Inner` may name the nested class `a.b.Outer$Inner`.
        String candidate = name;
        while (true) {
            try {
                return Class.forName(candidate, true, ClassLoader.getSystemClassLoader());
            } catch (ClassNotFoundException e) {
                int dot = candidate.lastIndexOf('.');
                if (dot < 0) {
                    return null;
                }
                candidate = candidate.substring(0, dot) + "$" + candidate.substring(dot + 1);
            } catch (ExceptionInInitializerError e) {
                Throwable c = e.getCause() != null ? e.getCause() : e;
                throw new TargetError("class " + candidate + " failed to initialise: " + c);
            } catch (LinkageError e) {
                throw new TargetError("class " + candidate + " cannot be loaded: " + e
                        + " (is a library it needs missing from the classpath?)");
            }
        }
    }

    static Target load(String spec) throws TargetError {
        int dot = spec.lastIndexOf('.');
        if (dot <= 0 || dot == spec.length() - 1) {
            throw new TargetError("`" + spec + "` is not CLASS.METHOD (e.g. com.example.Parser.parse)");
        }
        String className = spec.substring(0, dot);
        String name = spec.substring(dot + 1);
        Class<?> cls = findClass(className);
        if (cls == null) {
            throw new TargetError("class " + className + " not found on the classpath ("
                    + System.getProperty("java.class.path") + ")");
        }
        Method text = null;
        Method bytes = null;
        List<String> others = new ArrayList<>();
        for (Method m : cls.getDeclaredMethods()) {
            if (!m.getName().equals(name)) {
                continue;
            }
            Class<?>[] p = m.getParameterTypes();
            boolean isStatic = Modifier.isStatic(m.getModifiers());
            if (isStatic && p.length == 1 && p[0] == String.class) {
                text = m;
            } else if (isStatic && p.length == 1 && p[0] == byte[].class) {
                bytes = m;
            } else {
                others.add((isStatic ? "static " : "non-static ") + m.toGenericString());
            }
        }
        Method chosen = text != null ? text : bytes;
        if (chosen == null) {
            if (others.isEmpty()) {
                throw new TargetError("class " + cls.getName() + " has no method named `" + name + "`");
            }
            throw new TargetError(cls.getName() + "." + name
                    + " must be a static method taking one String or byte[]; found: "
                    + String.join("; ", others));
        }
        try {
            chosen.setAccessible(true);
        } catch (RuntimeException e) {
            throw new TargetError("cannot call " + chosen + ": " + e);
        }
        return new Target(chosen);
    }

    // ---- classes of the subject ----

    static final class Scope {
        final WildcardMatcher includes;
        final WildcardMatcher excludes;

        Scope(String includes, String excludes) {
            this.includes = new WildcardMatcher(includes);
            this.excludes = new WildcardMatcher(excludes);
        }

        boolean contains(String dottedClass) {
            return includes.matches(dottedClass) && !excludes.matches(dottedClass);
        }
    }

    /** The innermost frame in the subject (else the innermost frame), `cls.m(File:line)`. */
    static String frame(StackTraceElement[] stack, Scope scope) {
        if (stack == null || stack.length == 0) {
            return "";
        }
        StackTraceElement chosen = stack[0];
        for (StackTraceElement e : stack) {
            if (scope.contains(e.getClassName())) {
                chosen = e;
                break;
            }
        }
        String where = chosen.getFileName() == null ? "Unknown Source"
                : chosen.getLineNumber() >= 0 ? chosen.getFileName() + ":" + chosen.getLineNumber()
                : chosen.getFileName();
        return chosen.getClassName() + "." + chosen.getMethodName() + "(" + where + ")";
    }

    static String message(Throwable t) {
        StringBuilder b = new StringBuilder();
        String m = String.valueOf(t.getMessage());
        b.append(m);
        Throwable cause = t.getCause();
        for (int depth = 0; cause != null && cause != t && depth < 5; depth++) {
            b.append(" (caused by ").append(cause.getClass().getName()).append(": ")
                    .append(cause.getMessage()).append(')');
            t = cause;
            cause = cause.getCause();
        }
        return b.length() > 2000 ? b.substring(0, 2000) : b.toString();
    }

    static byte[] classBytes(String vmName) {
        try (InputStream in = ClassLoader.getSystemClassLoader().getResourceAsStream(vmName + ".class")) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            return null;
        }
    }

    static String fileOf(IClassCoverage cc) {
        String source = cc.getSourceFileName();
        if (source == null) {
            return cc.getName() + ".class";
        }
        String pkg = cc.getPackageName();
        return pkg.isEmpty() ? source : pkg + "/" + source;
    }

    static String methodName(IClassCoverage cc, IMethodCoverage m) {
        return cc.getName().replace('/', '.') + "." + m.getName() + m.getDesc();
    }

    static boolean covered(int status) {
        return status == ICounter.PARTLY_COVERED || status == ICounter.FULLY_COVERED;
    }

    /** JaCoCo's analysis of one class under given probes (null: none hit). */
    static IClassCoverage analyse(byte[] bytes, long id, String vmName, boolean[] probes) throws IOException {
        ExecutionDataStore store = new ExecutionDataStore();
        if (probes != null) {
            store.put(new ExecutionData(id, vmName, probes));
        }
        IClassCoverage[] out = new IClassCoverage[1];
        ICoverageVisitor visitor = cc -> out[0] = cc;
        new Analyzer(store, visitor).analyzeClass(bytes, vmName);
        return out[0];
    }

    // ---- serve ----

    /** What is known of one instrumented class. */
    static final class ClassInfo {
        final String vmName;
        final byte[] bytes;
        final int probeCount;
        /** Session ids of its methods and code lines, in JaCoCo's order. */
        int[] methodIds;
        int[] lineIds;
        String[] methodNames;
        int[] lineNumbers;
        /** Per probe: the method and line ids it covers alone (null: not yet known). */
        final int[][] probeMethods;
        final int[][] probeLines;

        ClassInfo(String vmName, byte[] bytes, int probeCount) {
            this.vmName = vmName;
            this.bytes = bytes;
            this.probeCount = probeCount;
            this.probeMethods = new int[probeCount][];
            this.probeLines = new int[probeCount][];
        }
    }

    /**
     * Watches the first call of a JVM. It hangs once it has run past its limit and, for
     * as long again, has loaded no class and is not loading one (class loading, with
     * JaCoCo's instrumentation, and static initialisers are the JVM's set-up, which a
     * first call pays). A loop that loads nothing is then reported after about the
     * limit, a call that loads classes for a while and then loops after about the limit
     * past its last load; thicket still ends any first call after ten seconds.
     */
    static final class Watchdog extends Thread {
        final Server server;
        final Thread caller;
        final long limitNanos;
        final java.lang.management.ClassLoadingMXBean loading =
                java.lang.management.ManagementFactory.getClassLoadingMXBean();
        final long loadedAtStart = loading.getTotalLoadedClassCount();
        final long started = System.nanoTime();
        /** Guarded by the server: the call returned, or the hang was reported. */
        boolean ended;
        boolean reported;

        Watchdog(Server server, Thread caller, long limitMillis) {
            super("thicket-watchdog");
            setDaemon(true);
            this.server = server;
            this.caller = caller;
            this.limitNanos = Math.max(1, limitMillis) * 1_000_000L;
        }

        /** The call returned: true if it did so before a hang was reported. */
        boolean callEnded() {
            synchronized (server) {
                ended = true;
                server.notifyAll();
                return !reported;
            }
        }

        @Override
        public void run() {
            long step = Math.max(1_000_000L, Math.min(limitNanos / 4, 50_000_000L));
            long loaded = loadedAtStart;
            long quietSince = started;
            synchronized (server) {
                while (!ended) {
                    try {
                        server.wait(step / 1_000_000L, (int) (step % 1_000_000L));
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (ended) {
                        return;
                    }
                    long now = System.nanoTime();
                    long count = loading.getTotalLoadedClassCount();
                    if (count != loaded) {
                        loaded = count;
                        quietSince = now;
                    }
                    if (now - started < limitNanos || now - quietSince < limitNanos) {
                        continue;
                    }
                    if (settingUp(caller.getStackTrace())) {
                        quietSince = now;
                        continue;
                    }
                    try {
                        reported = true;
                        server.send(new Json().start().field("hung", true).end());
                    } catch (IOException ignored) {
                        // thicket is gone: nothing to tell.
                    }
                    return;
                }
            }
        }

        /** Whether a stack is loading or initialising a class. */
        static boolean settingUp(StackTraceElement[] stack) {
            for (StackTraceElement frame : stack) {
                String cls = frame.getClassName();
                String method = frame.getMethodName();
                if (method.equals("<clinit>") || cls.startsWith("org.jacoco.")
                        || cls.startsWith("jdk.internal.loader.")
                        || (cls.equals("java.lang.ClassLoader")
                            && (method.startsWith("loadClass") || method.startsWith("defineClass")))) {
                    return true;
                }
            }
            return false;
        }
    }

    static final class Server {
        final String spec;
        final Scope scope;
        final Json json = new Json();
        DataInputStream requests;
        OutputStream replies;
        final Map<Long, ClassInfo> classes = new HashMap<>();
        /** Classes without class files to analyse (generated): skipped. */
        final Map<Long, Boolean> opaque = new HashMap<>();
        int nextMethod;
        int nextLine;
        /** Marks of ids hit in the current call (a generation counter per id). */
        int[] methodMark = new int[1024];
        int[] lineMark = new int[1024];
        int generation;
        volatile boolean closing;
        final Limited out = new Limited(new FileOutputStream(FileDescriptor.out));
        final Limited err = new Limited(new FileOutputStream(FileDescriptor.err));

        Server(String spec, String includes, String excludes) {
            this.spec = spec;
            this.scope = new Scope(includes, excludes);
        }

        void send(byte[] message) throws IOException {
            synchronized (this) {
                byte[] len = {(byte) message.length, (byte) (message.length >>> 8),
                    (byte) (message.length >>> 16), (byte) (message.length >>> 24)};
                replies.write(len);
                replies.write(message);
                replies.flush();
            }
        }

        void serve() throws IOException {
            // Only ever open the pipes thicket passed: /proc/self/fd/N of a regular file
            // would reopen (and, for writing, could clobber) that file.
            requests = new DataInputStream(new BufferedInputStream(new FileInputStream(pipe(3))));
            replies = new FileOutputStream(pipe(4), true);
            System.setOut(new PrintStream(out, false));
            System.setErr(new PrintStream(err, false));
            IAgent agent;
            try {
                agent = RT.getAgent();
            } catch (IllegalStateException e) {
                send(json.start().field("error", "JaCoCo's agent is not running in this JVM: " + e).end());
                return;
            }
            Target target;
            try {
                target = load(spec);
            } catch (TargetError e) {
                send(json.start().field("error", e.getMessage()).end());
                return;
            }
            Runtime.getRuntime().addShutdownHook(new Thread(this::exiting));
            send(json.start().field("ready", true)
                    .field("java", System.getProperty("java.version"))
                    .field("jacoco", agent.getVersion())
                    .field("text", target.text)
                    .field("package", target.method.getDeclaringClass().getPackageName()).end());
            boolean first = true;
            while (true) {
                byte[] input;
                long limitMillis;
                try {
                    limitMillis = Integer.toUnsignedLong(Integer.reverseBytes(requests.readInt()));
                    int n = Integer.reverseBytes(requests.readInt());
                    input = new byte[n];
                    requests.readFully(input);
                } catch (EOFException e) {
                    closing = true;
                    Runtime.getRuntime().halt(0);
                    return;
                }
                out.reset();
                err.reset();
                Watchdog watchdog = first ? new Watchdog(this, Thread.currentThread(), limitMillis) : null;
                first = false;
                if (watchdog != null) {
                    watchdog.start();
                }
                Throwable thrown = target.call(input);
                if (watchdog != null && !watchdog.callEnded()) {
                    // Reported as hung: thicket is ending this JVM.
                    closing = true;
                    Runtime.getRuntime().halt(0);
                    return;
                }
                System.out.flush();
                System.err.flush();
                Json j = json.start();
                if (thrown == null) {
                    j.field("ok", true);
                } else {
                    j.field("ok", false).field("exc", thrown.getClass().getName())
                            .field("frame", frame(thrown.getStackTrace(), scope))
                            .field("message", message(thrown));
                }
                send(j.end());
                thrown = null;
                send(coverage(agent.getExecutionData(true)));
            }
        }

        static String pipe(int fd) throws IOException {
            String path = "/proc/self/fd/" + fd;
            String what = Files.readSymbolicLink(Paths.get(path)).toString();
            if (!what.startsWith("pipe:")) {
                throw new IOException("file descriptor " + fd + " is not thicket's pipe but " + what
                        + ": run the harness through thicket");
            }
            return path;
        }

        /** A shutdown hook: System.exit (or a signal) during a call. */
        void exiting() {
            if (closing) {
                return;
            }
            String where = "";
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                StackTraceElement[] stack = e.getValue();
                for (int i = 0; i < stack.length; i++) {
                    if ((stack[i].getClassName().equals("java.lang.Runtime")
                            || stack[i].getClassName().equals("java.lang.System"))
                            && stack[i].getMethodName().equals("exit")) {
                        int k = i;
                        while (k + 1 < stack.length && (stack[k + 1].getClassName().equals("java.lang.System")
                                || stack[k + 1].getClassName().equals("java.lang.Runtime"))) {
                            k++;
                        }
                        where = frame(Arrays.copyOfRange(stack, k + 1, stack.length), scope);
                    }
                }
            }
            try {
                send(json.start().field("exit", true).field("frame", where).end());
            } catch (IOException ignored) {
                // thicket is gone: nothing to tell.
            }
        }

        byte[] coverage(byte[] exec) throws IOException {
            generation++;
            List<ExecutionData> hit = new ArrayList<>();
            ExecutionDataReader reader = new ExecutionDataReader(new java.io.ByteArrayInputStream(exec));
            reader.setSessionInfoVisitor(info -> { });
            reader.setExecutionDataVisitor(hit::add);
            reader.read();
            Json j = json.start();
            j.key("classes").open('[');
            int announced = 0;
            List<Integer> methods = new ArrayList<>();
            List<Integer> lines = new ArrayList<>();
            for (ExecutionData data : hit) {
                boolean[] probes = data.getProbes();
                ClassInfo info = classes.get(data.getId());
                if (info == null) {
                    if (opaque.containsKey(data.getId())) {
                        continue;
                    }
                    info = announce(data, j, announced++ > 0);
                    if (info == null) {
                        opaque.put(data.getId(), true);
                        continue;
                    }
                }
                int count = Math.min(probes.length, info.probeCount);
                int unknown = 0;
                for (int p = 0; p < count; p++) {
                    if (probes[p] && info.probeMethods[p] == null) {
                        unknown++;
                    }
                }
                if (unknown > LEARN_PER_CALL) {
                    // Many probes never seen before (a large class, early on): one
                    // analysis of this call's probes gives its coverage, and a few of
                    // them are learnt so that later calls get the fast path.
                    boolean[] these = Arrays.copyOf(probes, info.probeCount);
                    IClassCoverage cc = analyse(info.bytes, data.getId(), info.vmName, these);
                    List<Integer> ms = new ArrayList<>();
                    List<Integer> ls = new ArrayList<>();
                    collect(info, cc, ms, ls);
                    for (int m : ms) {
                        mark(m, methodMark, methods);
                    }
                    for (int l : ls) {
                        mark(l, lineMark, lines);
                    }
                    for (int p = 0, learnt = 0; p < count && learnt < LEARN_PER_CALL; p++) {
                        if (probes[p] && info.probeMethods[p] == null) {
                            learnProbe(info, data.getId(), p);
                            learnt++;
                        }
                    }
                    continue;
                }
                for (int p = 0; p < count; p++) {
                    if (!probes[p]) {
                        continue;
                    }
                    if (info.probeMethods[p] == null) {
                        learnProbe(info, data.getId(), p);
                    }
                    for (int m : info.probeMethods[p]) {
                        mark(m, methodMark, methods);
                    }
                    for (int l : info.probeLines[p]) {
                        mark(l, lineMark, lines);
                    }
                }
            }
            j.close(']');
            j.key("m").ints(methods);
            j.key("l").ints(lines);
            j.field("out", out.total + err.total);
            return j.end();
        }

        /** The first time a class is hit: its methods and lines get ids, told to thicket. */
        ClassInfo announce(ExecutionData data, Json j, boolean comma) throws IOException {
            byte[] bytes = classBytes(data.getName());
            if (bytes == null) {
                return null;
            }
            IClassCoverage cc;
            try {
                cc = analyse(bytes, data.getId(), data.getName(), new boolean[data.getProbes().length]);
            } catch (IOException | RuntimeException e) {
                return null;
            }
            if (cc == null || cc.getId() != data.getId()) {
                return null; // not the bytes the agent instrumented
            }
            ClassInfo info = new ClassInfo(data.getName(), bytes, data.getProbes().length);
            List<String> names = new ArrayList<>();
            for (IMethodCoverage m : cc.getMethods()) {
                names.add(methodName(cc, m));
            }
            List<Integer> numbers = new ArrayList<>();
            for (int l = cc.getFirstLine(); l >= 0 && l <= cc.getLastLine(); l++) {
                if (cc.getLine(l).getStatus() != ICounter.EMPTY) {
                    numbers.add(l);
                }
            }
            info.methodNames = names.toArray(new String[0]);
            info.lineNumbers = numbers.stream().mapToInt(Integer::intValue).toArray();
            info.methodIds = new int[names.size()];
            for (int i = 0; i < names.size(); i++) {
                info.methodIds[i] = nextMethod++;
            }
            info.lineIds = new int[numbers.size()];
            for (int i = 0; i < numbers.size(); i++) {
                info.lineIds[i] = nextLine++;
            }
            if (methodMark.length < nextMethod) {
                methodMark = Arrays.copyOf(methodMark, Math.max(nextMethod, 2 * methodMark.length));
            }
            if (lineMark.length < nextLine) {
                lineMark = Arrays.copyOf(lineMark, Math.max(nextLine, 2 * lineMark.length));
            }
            classes.put(data.getId(), info);
            if (comma) {
                j.comma();
            }
            j.open('{').field("file", fileOf(cc)).key("methods").strings(names).key("lines").ints(numbers);
            j.close('}');
            return info;
        }

        void mark(int id, int[] marks, List<Integer> out) {
            if (marks[id] != generation) {
                marks[id] = generation;
                out.add(id);
            }
        }

        /** What probe `p` alone covers (JaCoCo's analysis with only that probe hit). */
        void learnProbe(ClassInfo info, long id, int p) throws IOException {
            boolean[] probes = new boolean[info.probeCount];
            probes[p] = true;
            IClassCoverage cc = analyse(info.bytes, id, info.vmName, probes);
            List<Integer> methods = new ArrayList<>();
            List<Integer> lines = new ArrayList<>();
            collect(info, cc, methods, lines);
            info.probeMethods[p] = methods.stream().mapToInt(Integer::intValue).toArray();
            info.probeLines[p] = lines.stream().mapToInt(Integer::intValue).toArray();
        }

        /** The session ids of the methods and lines an analysis of a class covers. */
        void collect(ClassInfo info, IClassCoverage cc, List<Integer> methods, List<Integer> lines) {
            int i = 0;
            for (IMethodCoverage m : cc.getMethods()) {
                if (i < info.methodIds.length && m.getMethodCounter().getCoveredCount() > 0) {
                    methods.add(info.methodIds[i]);
                }
                i++;
            }
            for (int k = 0; k < info.lineNumbers.length; k++) {
                if (covered(cc.getLine(info.lineNumbers[k]).getStatus())) {
                    lines.add(info.lineIds[k]);
                }
            }
        }
    }

    /** An output stream passing at most OUTPUT_LIMIT bytes per call, counting all. */
    static final class Limited extends OutputStream {
        final OutputStream inner;
        long total;

        Limited(OutputStream inner) {
            this.inner = inner;
        }

        void reset() {
            total = 0;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            if (total++ < OUTPUT_LIMIT) {
                inner.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            long room = Math.max(0, OUTPUT_LIMIT - total);
            total += len;
            if (room > 0) {
                inner.write(b, off, (int) Math.min(room, len));
            }
        }

        @Override
        public void flush() throws IOException {
            inner.flush();
        }
    }

    // ---- once and report: a fresh JVM per input, for comparisons ----

    static void once(String spec, String file) throws Exception {
        Target target;
        try {
            target = load(spec);
        } catch (TargetError e) {
            System.err.println("error: " + e.getMessage());
            System.exit(3);
            return;
        }
        Throwable thrown = target.call(Files.readAllBytes(Paths.get(file)));
        if (thrown != null) {
            System.out.println("exception " + thrown.getClass().getName());
        }
    }

    /** Prints `M method` and `L file:line` for everything an exec file covers. */
    static void report(String execFile, String includes, String excludes) throws IOException {
        ExecFileLoader loader = new ExecFileLoader();
        loader.load(new java.io.File(execFile));
        Scope scope = new Scope(includes, excludes);
        List<String> lines = new ArrayList<>();
        ICoverageVisitor visitor = cc -> {
            for (IMethodCoverage m : cc.getMethods()) {
                if (m.getMethodCounter().getCoveredCount() > 0) {
                    lines.add("M " + methodName(cc, m));
                }
            }
            for (int l = cc.getFirstLine(); l >= 0 && l <= cc.getLastLine(); l++) {
                if (covered(cc.getLine(l).getStatus())) {
                    lines.add("L " + fileOf(cc) + ":" + l);
                }
            }
        };
        Analyzer analyzer = new Analyzer(loader.getExecutionDataStore(), visitor);
        for (ExecutionData data : loader.getExecutionDataStore().getContents()) {
            if (!data.hasHits() || !scope.contains(data.getName().replace('/', '.'))) {
                continue;
            }
            byte[] bytes = classBytes(data.getName());
            if (bytes != null) {
                analyzer.analyzeClass(bytes, data.getName());
            }
        }
        lines.sort(null);
        PrintStream o = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        for (String l : new java.util.LinkedHashSet<>(lines)) {
            o.println(l);
        }
        o.flush();
    }

    // ---- a small JSON writer ----

    static final class Json {
        final StringBuilder b = new StringBuilder();
        boolean first;

        Json start() {
            b.setLength(0);
            b.append('{');
            first = true;
            return this;
        }

        byte[] end() {
            b.append('}');
            return b.toString().getBytes(StandardCharsets.UTF_8);
        }

        Json comma() {
            b.append(',');
            return this;
        }

        Json key(String k) {
            if (!first) {
                b.append(',');
            }
            first = false;
            string(k);
            b.append(':');
            return this;
        }

        Json open(char c) {
            b.append(c);
            first = true;
            return this;
        }

        Json close(char c) {
            b.append(c);
            first = false;
            return this;
        }

        Json field(String k, String v) {
            key(k);
            string(v);
            return this;
        }

        Json field(String k, boolean v) {
            key(k);
            b.append(v);
            return this;
        }

        Json field(String k, long v) {
            key(k);
            b.append(v);
            return this;
        }

        Json ints(List<Integer> values) {
            b.append('[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                b.append(values.get(i).intValue());
            }
            b.append(']');
            first = false;
            return this;
        }

        Json strings(List<String> values) {
            b.append('[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                string(values.get(i));
            }
            b.append(']');
            first = false;
            return this;
        }

        void string(String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    b.append('\\').append(c);
                } else if (c < 0x20) {
                    b.append(String.format("\\u%04x", (int) c));
                } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                    b.append(c).append(s.charAt(++i));
                } else if (Character.isSurrogate(c)) {
                    b.append('\ufffd'); // a lone surrogate has no UTF-8 form
                } else {
                    b.append(c);
                }
            }
            b.append('"');
        }
    }
}
