// Entry points for thicket's Java subjects (FdLoop's and Tribble's, as Debian packages
// them): one static method per library taking the input as a String, so that
// `thicket fuzz --java thicket.subjects.Subjects.NAME` can call it. Built by
// eval/java/build.sh against the jars in /usr/share/java; see docs/java.md.
//
// Each method parses (or, for Rhino, evaluates) the input the way the library's users
// do; what the library throws on bad input propagates, so thicket records it.
package thicket.subjects;

import java.io.IOException;
import java.io.StringReader;

public final class Subjects {
    private Subjects() {}

    /** gson (libgoogle-gson-java): `new Gson().fromJson(s, Object.class)`. */
    public static void gson(String input) {
        new com.google.gson.Gson().fromJson(input, Object.class);
    }

    /** jackson-core (libjackson2-core-java): every token of a streaming parse. */
    public static void jacksonCore(String input) throws IOException {
        try (com.fasterxml.jackson.core.JsonParser p =
                new com.fasterxml.jackson.core.JsonFactory().createParser(input)) {
            while (p.nextToken() != null) {
                p.getText();
            }
        }
    }

    /** jackson-databind (libjackson2-databind-java): `new ObjectMapper().readTree(s)`. */
    public static void jackson(String input) throws IOException {
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(input);
    }

    /** json-simple (libjson-simple-java): `new JSONParser().parse(s)`. */
    public static void jsonSimple(String input) throws Exception {
        new org.json.simple.parser.JSONParser().parse(input);
    }

    /** Rhino (rhino): evaluates the input as a script, interpreted, in fresh globals. */
    @SuppressWarnings("deprecation") // setOptimizationLevel: the interpreter, as in 1.7.14
    public static void rhino(String input) {
        org.mozilla.javascript.Context cx = org.mozilla.javascript.Context.enter();
        try {
            cx.setOptimizationLevel(-1);
            org.mozilla.javascript.Scriptable scope = cx.initStandardObjects();
            cx.evaluateString(scope, input, "input", 1, null);
        } finally {
            org.mozilla.javascript.Context.exit();
        }
    }

    /** cssparser (libcssparser-java): a CSS3 style sheet; syntax errors are thrown. */
    public static void cssparser(String input) throws IOException {
        com.steadystate.css.parser.CSSOMParser parser =
                new com.steadystate.css.parser.CSSOMParser(new com.steadystate.css.parser.SACParserCSS3());
        parser.setErrorHandler(new org.w3c.css.sac.ErrorHandler() {
            @Override
            public void warning(org.w3c.css.sac.CSSParseException e) {}

            @Override
            public void error(org.w3c.css.sac.CSSParseException e) {
                throw e;
            }

            @Override
            public void fatalError(org.w3c.css.sac.CSSParseException e) {
                throw e;
            }
        });
        parser.parseStyleSheet(new org.w3c.css.sac.InputSource(new StringReader(input)), null, null);
    }

    /** commons-csv (libcommons-csv-java): every record of `CSVFormat.DEFAULT`. */
    public static void commonsCsv(String input) throws IOException {
        try (org.apache.commons.csv.CSVParser parser =
                org.apache.commons.csv.CSVParser.parse(input, org.apache.commons.csv.CSVFormat.DEFAULT)) {
            for (org.apache.commons.csv.CSVRecord record : parser) {
                record.size();
            }
        }
    }
}
