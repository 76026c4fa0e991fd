// Test targets for the Java executor (crates/thicket-exec/tests/java.rs): one method
// whose behaviour the input picks.
package targets;

import java.util.ArrayList;
import java.util.List;

public final class Targets {
    private Targets() {}

    /** The input says what to do: `throw`, `loop`, `exit`, `oom`, `chatty`, else parse. */
    public static void run(String input) {
        switch (input) {
            case "throw":
                fail(input);
                break;
            case "loop":
                while (true) {
                    Thread.onSpinWait();
                }
            case "exit":
                System.exit(3);
                break;
            case "oom":
                List<long[]> hog = new ArrayList<>();
                while (true) {
                    hog.add(new long[1 << 20]);
                }
            case "chatty":
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < 100; i++) {
                    line.append('x');
                }
                for (int i = 0; i < 100_000; i++) {
                    System.out.println(line);
                }
                System.err.println("the end");
                break;
            default:
                count(input);
        }
    }

    static void fail(String input) {
        throw new IllegalStateException("asked to throw: " + input);
    }

    static int count(String input) {
        int digits = 0;
        for (char c : input.toCharArray()) {
            if (Character.isDigit(c)) {
                digits++;
            }
        }
        return digits;
    }

    /** Takes bytes. */
    public static void bytes(byte[] input) {
        if (input.length > 0 && input[0] == 0) {
            throw new IllegalArgumentException("zero");
        }
    }

    /** Not static: refused. */
    public void instance(String input) {}

    /** Wrong parameter: refused. */
    public static void number(int input) {}
}
