//! Each lexer feature on a small grammar, with ANTLR's own verdict on each input
//! recorded: the ANTLR 4 tool (antlr-ng) generated a Python parser for the grammar and
//! the Python runtime (antlr4-python3-runtime 4.13.2) parsed the input. thicket's exact
//! reading must give the same verdict. `antlr_still_gives_the_recorded_verdicts` asks
//! ANTLR again when antlr-ng and the runtime are installed (`eval/antlr_oracle.py`;
//! skipped otherwise, unless `THICKET_REQUIRE_ANTLR=1`).

use std::path::Path;

struct Case {
    feature: &'static str,
    /// The grammar files: the parser (or combined) grammar first.
    files: &'static [(&'static str, &'static str)],
    /// Inputs and ANTLR's verdict (accepted?).
    inputs: &'static [(&'static str, bool)],
}

const CASES: &[Case] = &[
    Case {
        feature: "a lexer rule whose DFA is too large to build",
        // `[ab]* 'a'` and 24 times `[ab]`: the DFA needs a state for each of the 2^24
        // ways the last 24 letters read can hold an `a`.
        files: &[(
            "Big.g4",
            "grammar Big;\ns : (T | C)+ EOF ;\nT : [ab]* 'a' [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] ;\nC : 'c' ;\n",
        )],
        inputs: &[
            ("abbbbbbbbbbbbbbbbbbbbbbbb", true),
            ("bbaaaaaaaaaaaaaaaaaaaaaaaaac", true),
            ("cabbbbbbbbbbbbbbbbbbbbbbbbcaaaaaaaaaaaaaaaaaaaaaaaaa", true),
            ("abbbbbbbbbbbbbbbbbbbbbbb", false),
            ("baaaaaaaaaaaaaaaaaaaaaaaab", true),
            ("bbbbbbbbbbbbbbbbbbbbbbbbb", false),
            ("abbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", false),
        ],
    },
    Case {
        feature: "a keyword is never an identifier an earlier-defined literal wins",
        files: &[(
            "Kw.g4",
            "grammar Kw;\ns : 'BITMAP' ARG* 'END' EOF ;\nARG : [A-Z0-9]+ ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            ("BITMAP A B END", true),
            ("BITMAP A END END", false),
            ("BITMAP END END", false),
            ("BITMAP ENDX END", true),
            ("BITMAP BITMAP END", false),
            ("BITMAP END", true),
        ],
    },
    Case {
        feature: "numeric channel",
        files: &[(
            "Chan.g4",
            "grammar Chan;\ns : A+ EOF ;\nA : 'a' ;\nB : 'b' -> channel(2) ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("aba", true), ("a b a", true), ("bb", false), ("", false)],
    },
    Case {
        feature: "named channel",
        files: &[
            (
                "NamedParser.g4",
                "parser grammar NamedParser;\noptions { tokenVocab = NamedLexer; }\ns : A+ EOF ;\n",
            ),
            (
                "NamedLexer.g4",
                "lexer grammar NamedLexer;\nchannels { COMMENTS }\nA : 'a' ;\nC : '#' ~[\\n]* -> channel(COMMENTS) ;\nNL : '\\n' -> skip ;\n",
            ),
        ],
        inputs: &[("a#x\na", true), ("#only\n", false), ("a#a", true)],
    },
    Case {
        feature: "EOF in a greedy lexer rule matches only at the end",
        files: &[(
            "Eofl.g4",
            "grammar Eofl;\ns : X* A EOF | B X+ EOF ;\nA : '.' ' '+ | '.' EOF ;\nB : '.' ;\nX : 'x' ;\n",
        )],
        inputs: &[
            (".x", true),
            ("x.", true),
            (". x", false),
            ("xx. ", true),
            (".", true),
            ("..", false),
        ],
    },
    Case {
        feature: "generation: a token whose alternative ends at EOF",
        files: &[(
            "Dotfs.g4",
            "grammar Dotfs;\ns : (W DOT_FS)+ EOF ;\nDOT_FS : '.' ' '+ | '.' EOF ;\nDOT : '.' ;\nW : [a-z]+ ;\n",
        )],
        inputs: &[
            ("a. b.", true),
            ("a.b.", false),
            ("a. b. ", true),
            ("a.", true),
            ("a.b", false),
        ],
    },
    Case {
        feature: "recursive lexer rule (long brackets)",
        files: &[(
            "Long.g4",
            "grammar Long;\ns : (STR | ID)* EOF ;\nSTR : '[' NESTED ']' ;\nfragment NESTED : '=' NESTED '=' | '[' .*? ']' ;\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            ("[[a]]", true),
            ("[==[ a ]] ]=] ]==]", true),
            ("x [=[ ]=] y", true),
            ("[=[ a ]]", false),
            ("[==[ a ]=]", false),
        ],
    },
    Case {
        feature: "non-greedy loop through its own rule (nested comments)",
        files: &[(
            "Nest.g4",
            "grammar Nest;\ns : (ID | COMMENT)* EOF ;\nCOMMENT : '/*' (COMMENT | .)*? '*/' ;\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            ("/* a */", true),
            ("/* /* a */ */", true),
            // The path reading the inner `/*` as two characters still ends the comment.
            ("/* /* a */", true),
            ("/* a */ b */", false),
            ("x /* /* */ y */ z", true),
            ("/* /* a */ */ */", false),
            ("/**/", true),
            ("/* */ */", false),
        ],
    },
    Case {
        feature: "non-greedy loop with an escape (a path of higher priority goes on)",
        files: &[(
            "Ng.g4",
            "grammar Ng;\ns : (TEXT | NONE)* EOF ;\nNONE : '[]' ;\nTEXT : '[' ('\\\\]' | .)*? ']' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            // One token: the escape `\]` is tried before `.` and is not cut off when
            // the path reading `\` as `.` ends.
            ("[e\\]]", true),
            ("[e\\]", true),
            ("[\\] [a]", true),
            ("[a]]", false),
            ("[a] []", true),
        ],
    },
    Case {
        feature: "EOF ends a lexer rule only at the end of the input",
        files: &[(
            "Lc.g4",
            "grammar Lc;\ns : ID* EOF ;\nID : [a-z]+ ;\nLC : '//' .*? ('\\n' | EOF) -> skip ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            // The comment runs to the end of the input, not just `//`.
            ("a // ; b", true),
            ("a // x\n b", true),
            ("a // x\n ;", false),
            ("//", true),
        ],
    },
    Case {
        feature: "non-greedy loops before a greedy loop (the greedy loop goes on)",
        files: &[(
            "Tail.g4",
            "grammar Tail;\ns : (ID '=' INT ';')+ EOF ;\nINT : [0-9]+ ;\nID : [a-z0-9]*? [a-z]+? [a-z0-9]* ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            // One identifier `v1`: the greedy loop takes the digit after `[a-z]+?` stops.
            ("v1=1;", true),
            ("v=1;", true),
            ("ab12c3 = 4;", true),
            ("12a=1;", true),
            ("1=1;", false),
            ("v1 = 2; x9y=3;", true),
            ("v 1=1;", false),
        ],
    },
    Case {
        feature: "a skipped catch-all rule (every other character is a comment)",
        files: &[(
            "Bf.g4",
            "grammar Bf;\ns : op* EOF ;\nop : PLUS | MINUS | '[' op* ']' ;\nPLUS : '+' ;\nMINUS : '-' ;\nWS : . -> skip ;\n",
        )],
        inputs: &[
            ("+ -", true),
            ("hello + world", true),
            ("[+]x", true),
            ("[+", false),
            ("]", false),
            ("+\n-", true),
            ("[", false),
            ("a[b]c", true),
            ("", true),
        ],
    },
    Case {
        feature: "a rule matching the empty string leaves its mode (an empty token)",
        files: &[
            (
                "SemiParser.g4",
                "parser grammar SemiParser;\noptions { tokenVocab = SemiLexer; }\ns : stmt* EOF ;\nstmt : ID+ EOS | LP ID* RP EOS ;\n",
            ),
            (
                "SemiLexer.g4",
                "lexer grammar SemiLexer;\nID : [a-z]+ -> mode(NL) ;\nLP : '(' ;\nRP : ')' -> mode(NL) ;\nWS : [ \\t\\n]+ -> skip ;\nmode NL;\nWS_NL : [ \\t]+ -> skip ;\nEOS : ('\\n' | ';') -> mode(DEFAULT_MODE) ;\nOTHER : -> mode(DEFAULT_MODE), skip ;\n",
            ),
        ],
        inputs: &[
            // After `a` (mode NL) nothing matches `b`: OTHER's empty token goes back.
            ("a b\n", true),
            ("a\nb\n", true),
            ("a;b;", true),
            ("(a\nb)\n", false),
            ("(a)(b)\n", false),
            ("a\n\n b;", true),
            ("(\na\n)\n", false),
            ("a", false),
            ("a (b)\n", false),
        ],
    },
    Case {
        feature: "tokens that merge with no hidden text to part them",
        files: &[(
            "Mrg.g4",
            "grammar Mrg;\ns : p p p p p p p p p p p p EOF ;\np : X Y ;\nX : 'x' | 'x-' ;\nY : '-' | 'y' ;\n",
        )],
        inputs: &[
            ("x-yx--xyx-yx-yx-yx-yx-yx-yx-yx-yx-y", true),
            // `x` then `-` lexes as one `x-`.
            ("x-yx-yx-yx-yx-yx-yx-yx-yx-yx-yx-yx-", false),
            ("x--x--x--x--x--x--x--x--x--x--x--x--", true),
        ],
    },
    Case {
        feature: "tokens an earlier rule that uses them always wins",
        files: &[(
            "Aln.g4",
            "grammar Aln;\ns : (word | ALNUM)+ EOF ;\nword : LETTER ALNUM* ;\nALNUM : DIGIT | LETTER ;\nDIGIT : [0-9] ;\nLETTER : [a-z] ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("a 1", true), ("a", true), ("", false), ("ab", true)],
    },
    Case {
        feature: "skipped tokens the parser names",
        files: &[(
            "Skp.g4",
            "grammar Skp;\ns : A WS? A (COMMENT | A)* EOF ;\nA : 'a' ;\nWS : ' ' -> skip ;\nCOMMENT : '#' ~[\\n]* -> channel(HIDDEN) ;\nNL : '\\n' -> skip ;\n",
        )],
        inputs: &[
            ("a a", true),
            ("aa", true),
            ("a a #x\n a", true),
            ("a #x", false),
            ("a", false),
        ],
    },
    Case {
        feature: "hidden rules an earlier rule names whole",
        // `HINT` matches every comment as long as `SHOW` and `NOTE` and comes first:
        // every comment is a `HINT`, which the parser takes only after `k`.
        files: &[(
            "Hint.g4",
            "grammar Hint;\ns : KW HINT? A+ EOF ;\nKW : 'k' ;\nHINT : SHOW | NOTE ;\nSHOW : '/*+' ~[*]* '*/' -> channel(HIDDEN) ;\nNOTE : '/*' ~[*]* '*/' -> channel(HIDDEN) ;\nA : 'a' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("k a", true),
            ("k /*+x*/ a", true),
            ("k /*x*/ a a", true),
            ("k a /*x*/ a", false),
            ("k a /*+x*/", false),
            ("/*x*/ k a", false),
            ("k a a", true),
        ],
    },
    Case {
        feature: "tokens an earlier rule always wins",
        files: &[(
            "Unr.g4",
            "grammar Unr;\ns : (ID | IF ID | (KW | ID) '=' ID) EOF ;\nID : [a-z]+ ;\nIF : 'if' ;\nKW : 'do' | 'od' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("x", true),
            ("if x", false),
            ("if", true),
            ("do = x", true),
            ("if = x", true),
            ("x y", false),
        ],
    },
    Case {
        feature: "tokens no lexer rule makes (implicit, a fragment, declared only)",
        files: &[(
            "Imp.g4",
            "grammar Imp;\ns : A (INDENT A)? (F A)? EOF ;\nA : [a-z]+ ;\nfragment F : '#' ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[("a", true), ("a a", false), ("a # a", false), ("", false)],
    },
    Case {
        feature: "tokens declared in the lexer grammar's tokens {} only",
        files: &[
            (
                "DeclParser.g4",
                "parser grammar DeclParser;\noptions { tokenVocab = DeclLexer; }\ns : A (INDENT A DEDENT)? EOF ;\n",
            ),
            (
                "DeclLexer.g4",
                "lexer grammar DeclLexer;\ntokens { INDENT, DEDENT }\nA : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n",
            ),
        ],
        inputs: &[("a", true), ("a a", false), ("", false)],
    },
    Case {
        feature: "recursive lexer rule (balanced parentheses)",
        files: &[(
            "Bal.g4",
            "grammar Bal;\ns : BAL+ EOF ;\nBAL : '(' (BAL | ~[()])* ')' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("(a(b)c)", true),
            ("(()) ((x)y)", true),
            ("(()", false),
            ("())", false),
        ],
    },
    Case {
        feature: "modes: pushMode and popMode (tokenVocab)",
        files: &[
            (
                "ModeParser.g4",
                "parser grammar ModeParser;\noptions { tokenVocab = ModeLexer; }\ns : (ID | OPEN TEXT? CLOSE)* EOF ;\n",
            ),
            (
                "ModeLexer.g4",
                "lexer grammar ModeLexer;\nOPEN : '\"' -> pushMode(STR) ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\nmode STR;\nTEXT : ~[\"]+ ;\nCLOSE : '\"' -> popMode ;\n",
            ),
        ],
        inputs: &[
            ("a \"b c\" d", true),
            ("\"\"", true),
            ("\"a", false),
            ("a \"B C\"", true),
            ("A", false),
        ],
    },
    Case {
        feature: "modes: mode(X) and DEFAULT_MODE",
        files: &[
            (
                "RawParser.g4",
                "parser grammar RawParser;\noptions { tokenVocab = RawLexer; }\ns : (ID | BEGIN BODY? END)* EOF ;\n",
            ),
            (
                "RawLexer.g4",
                "lexer grammar RawLexer;\nBEGIN : '<<' -> mode(RAW) ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\nmode RAW;\nEND : '>>' -> mode(DEFAULT_MODE) ;\nBODY : ~[>]+ ;\n",
            ),
        ],
        inputs: &[("a <<X Y!>> b", true), ("<<>>", true), ("<<a", false)],
    },
    Case {
        feature: "more",
        files: &[
            (
                "MoreParser.g4",
                "parser grammar MoreParser;\noptions { tokenVocab = MoreLexer; }\ns : (STR | ID)+ EOF ;\n",
            ),
            (
                "MoreLexer.g4",
                "lexer grammar MoreLexer;\nQUOTE : '\\'' -> more, pushMode(S) ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\nmode S;\nSTR : '\\'' -> popMode ;\nCHAR : . -> more ;\n",
            ),
        ],
        inputs: &[("a 'b c' d", true), ("''", true), ("'abc", false)],
    },
    Case {
        feature: "a token made by its own rule or by `more` into a mode",
        files: &[
            (
                "TwoParser.g4",
                "parser grammar TwoParser;\noptions { tokenVocab = TwoLexer; }\ns : (STRING | ID)+ EOF ;\n",
            ),
            (
                "TwoLexer.g4",
                "lexer grammar TwoLexer;\nSTRING : '\"' ~[\"]* '\"' ;\nCHAR : '\\'' -> more, mode(CM) ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\nmode CM;\nCHAREND : '\\'' -> type(STRING), mode(DEFAULT_MODE) ;\nCHARTEXT : ~['] -> more ;\n",
            ),
        ],
        inputs: &[
            ("a '->' \"x\"", true),
            ("'-' b", true),
            ("'", false),
            ("a -", false),
            ("' a ' ''", true),
        ],
    },
    Case {
        feature: "a catch-all `more` rule takes no character an earlier rule takes",
        files: &[
            (
                "ActParser.g4",
                "parser grammar ActParser;\noptions { tokenVocab = ActLexer; }\ns : ID (ACTION ID)* EOF ;\n",
            ),
            (
                "ActLexer.g4",
                "lexer grammar ActLexer;\nLBRACE : '{' -> more, pushMode(A) ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\nmode A;\nNESTED : '{' -> more, pushMode(A) ;\nACTION : '}' -> popMode ;\nCONTENT : . -> more ;\n",
            ),
        ],
        inputs: &[
            ("a {b} c", true),
            // `{b {c}` is one action and ` d}` another, in the mode `{b` pushed.
            ("a {b {c} d} e", false),
            ("a { b } c { d } e", true),
            ("a {} b", true),
        ],
    },
    Case {
        feature: "hidden text through a stack of modes (a preprocessor's skipped branch)",
        files: &[
            (
                "PpParser.g4",
                "parser grammar PpParser;\noptions { tokenVocab = PpLexer; }\ns : ID* EOF ;\n",
            ),
            (
                "PpLexer.g4",
                "lexer grammar PpLexer;\nchannels { DIRECTIVES }\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\nGA : '`' -> channel(DIRECTIVES), pushMode(DIR) ;\nmode DIR;\nIFDEF : 'ifdef' -> channel(DIRECTIVES), mode(IFDEF_MODE) ;\nELSE : 'else' -> channel(DIRECTIVES), popMode, mode(ELSE_MODE) ;\nENDIF : 'endif' -> channel(DIRECTIVES), popMode, popMode, popMode ;\nDEFINE : 'define' -> channel(DIRECTIVES), popMode ;\nmode IFDEF_MODE;\nNAME : [a-z]+ -> channel(DIRECTIVES) ;\nSP : ' ' -> skip ;\nNL : '\\n' -> skip, pushMode(TEXT) ;\nmode ELSE_MODE;\nNL_ELSE : '\\n' -> skip, mode(TEXT) ;\nmode TEXT;\nGA_TEXT : '`' -> channel(DIRECTIVES), pushMode(DIR) ;\nSLASH : '/' -> more ;\nBODY : ~[`/]+ -> channel(DIRECTIVES) ;\n",
            ),
        ],
        inputs: &[
            // `ifdef x` and its line end push the skipped text's mode; `endif` pops
            // three frames: the text's, the directive's, the one `` ` `` pushed.
            ("a `ifdef x\nb c\n`endif d", true),
            ("a `ifdef x\nb\n`else\nc\n`endif\n", true),
            ("`ifdef x\n`ifdef y\nq\n`endif\nr\n`endif\nz", true),
            ("`ifdef x\na/b\n`endif c", true),
            ("`ifdef x\n/\n`endif", true),
            ("`define a", true),
            ("`ifdef x\nb\n`endif `define c", true),
            ("`ifdef x\nb\n`endif`ifdef y\n`endif`define q", true),
            ("`ifdef x\n`else\n`else\n`endif y", true),
            ("`ifdef\n`endif", true),
            ("`ifdef x\nb `else c\n`endif", false),
            // Popping more frames than were pushed: ANTLR's runtime fails.
            ("`ifdef x\nb\n`endif\n`endif", false),
            ("`endif a", false),
            // The input may end inside the skipped text.
            ("a `ifdef x\nb", true),
        ],
    },
    Case {
        feature: "a predicate after a lexer rule's text keeps the rule's place; one before it loses ties",
        // Recorded with the predicates as written: the one after `<` true (JSX's
        // `'<' {this.IsJsxPossible()}?`, which thicket assumes true as it assumes every
        // predicate), the one before `}` false (JavaScript's
        // `{this.IsInTemplateString()}? '}'`, which holds only inside a template: thicket
        // lets such a rule lose ties).
        files: &[(
            "Pred.g4",
            "grammar Pred;\ns : (ID | JSX ID | RBRACE)* EOF ;\nJSX : '<' {True}? ;\nCLOSE : {False}? '}' ;\nLT : '<' ;\nRBRACE : '}' ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("<a }", true),
            ("}", true),
            ("a <b } c", true),
            ("a <", false),
            ("a < }", false),
            ("<}", false),
        ],
    },
    Case {
        feature: "type(T) and tokens {}",
        files: &[
            (
                "TyParser.g4",
                "parser grammar TyParser;\noptions { tokenVocab = TyLexer; }\ns : KW (COMMA KW)* EOF ;\n",
            ),
            (
                "TyLexer.g4",
                "lexer grammar TyLexer;\ntokens { KW }\nIF : 'if' -> type(KW) ;\nELSE : 'else' -> type(KW) ;\nCOMMA : ',' ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
            ),
        ],
        inputs: &[("if, else", true), ("if, x", false), ("else", true)],
    },
    Case {
        feature: "skip",
        files: &[(
            "Sk.g4",
            "grammar Sk;\ns : A+ EOF ;\nA : 'a' ;\nCOMMENT : '/*' .*? '*/' -> skip ;\nWS : [ \\t\\r\\n]+ -> skip ;\n",
        )],
        inputs: &[("a /* x */ a", true), ("/* x */", false), ("a /* x", false)],
    },
    Case {
        feature: "caseInsensitive (grammar option): each character's two cases only",
        files: &[(
            "Ci.g4",
            "grammar Ci;\noptions { caseInsensitive = true; }\ns : STRICT HEX EOF ;\nSTRICT : 'strict' ;\nHEX : [0-9a-f]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("strict ff", true),
            ("STRICT 0A", true),
            ("sTrIcT aBc", true),
            // U+017F LATIN SMALL LETTER LONG S: a case fold of `s`, not one of its cases.
            ("\u{17F}trict 1", false),
            // U+212A KELVIN SIGN folds to `k`; `k` is no hex digit anyway, nor is it here.
            ("strict \u{212A}", false),
        ],
    },
    Case {
        feature: "caseInsensitive (rule option)",
        files: &[(
            "CiRule.g4",
            "grammar CiRule;\ns : (LOWER | ANY)+ EOF ;\nLOWER options { caseInsensitive = false; } : 'abc' ;\nANY options { caseInsensitive = true; } : 'xyz' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("abc XyZ", true), ("ABC", false), ("xyz XYZ abc", true)],
    },
    Case {
        feature: "non-greedy loop",
        files: &[(
            "Ng.g4",
            "grammar Ng;\ns : C EOF ;\nC : '/*' .*? '*/' ;\nSTAR : '*' ;\nSLASH : '/' ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("/* a */", true), ("/* a */ */", false), ("/*a*/*/", false)],
    },
    Case {
        feature: "non-greedy loop of any character (one character per token)",
        files: &[("Two.g4", "grammar Two;\ns : T T EOF ;\nT : .+? ;\n")],
        inputs: &[
            ("ab", true),
            ("abc", false),
            ("a", false),
            ("\u{e9}!", true),
        ],
    },
    Case {
        feature: "longest match (a run of digits is one number)",
        files: &[(
            "Nums.g4",
            "grammar Nums;\ns : NUM NUM EOF ;\nNUM : [0-9]+ ;\nWS : [ ]+ -> skip ;\n",
        )],
        inputs: &[
            ("12 3", true),
            ("123", false),
            ("1  2", true),
            ("12", false),
        ],
    },
    Case {
        feature: "Unicode properties and escapes",
        files: &[(
            "Uni.g4",
            "grammar Uni;\ns : (ID | SMILE | UPPER)+ EOF ;\nID : [\\p{Ll}] [\\p{L}\\p{Nd}]* ;\nSMILE : '\\u{1F600}' ;\nUPPER : [\\u0041-\\u005A] ;\nWS : [\\p{White_Space}]+ -> skip ;\n",
        )],
        inputs: &[
            ("h\u{e9}llo w0rld", true),
            ("\u{1F600} A", true),
            ("\u{3b1}\u{3b2}\u{3b3}\u{2003}x", true),
            ("1abc", false),
            ("\u{1F601}", false),
        ],
    },
    Case {
        feature: "import",
        files: &[
            (
                "Main.g4",
                "grammar Main;\nimport Common;\ns : ID+ EOF ;\nID : [a-z]+ ;\n",
            ),
            (
                "Common.g4",
                "lexer grammar Common;\nID : [A-Z]+ ;\nWS : ' ' -> skip ;\n",
            ),
        ],
        // Main's ID overrides the imported one; the import's WS is taken.
        inputs: &[("ab cd", true), ("AB", false)],
    },
    Case {
        feature: "non-greedy loop beside a greedy alternative (only its own path stops early)",
        files: &[(
            "NG.g4",
            "grammar NG;\ns : (ID | COMMENT)+ EOF ;\nCOMMENT : ('/*' .*? '*/' | '//' ~[\\n]*) ;\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[
            ("// a. b\nx", true),
            ("/* a */ b */", false),
            ("a /* b */", true),
            ("/* /* a */ */ c", false),
            ("//", true),
        ],
    },
    Case {
        feature: "non-greedy recursive fragment beside a greedy alternative",
        files: &[(
            "NR.g4",
            "grammar NR;\ns : (ID | COMMENT)+ EOF ;\nCOMMENT : (BLOCK | '//' ~[\\n]*) ;\nfragment BLOCK : '/*' (COMMENT | .)*? '*/' ;\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n",
        )],
        inputs: &[("// a. b\nx", true), ("/* a */ b */", false), ("//", true)],
    },
    Case {
        feature: "a block with an empty prequel `( : ...)`",
        files: &[(
            "P.g4",
            "grammar P;\ns : (: ID)+ EOF ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("a b", true), ("", false), ("a", true)],
    },
    Case {
        feature: "comments in options",
        files: &[(
            "O.g4",
            "grammar O;\noptions {\n    // superClass = Base;\n    caseInsensitive = true; /* ; */\n}\ns : A+ EOF ;\nA : 'a' ;\n",
        )],
        inputs: &[("aA", true), ("A", true), ("b", false)],
    },
    Case {
        feature: "EOF inside a loop matches only at the end of input",
        files: &[(
            "E.g4",
            "grammar E;\ns : (ID (';' | EOF))+ ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("a;b", true),
            ("a b", false),
            ("a;", true),
            ("a;b;", true),
            ("", false),
            ("a", true),
        ],
    },
    Case {
        feature: "EOF ending the start rule",
        files: &[(
            "F.g4",
            "grammar F;\ns : ID (';' ID)* EOF ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("a;b", true), ("a b", false), ("", false), ("a", true)],
    },
    Case {
        feature: "comments in channels {}",
        files: &[
            (
                "CParser.g4",
                "parser grammar CParser;\noptions { tokenVocab = CLexer; }\ns : A+ EOF ;\n",
            ),
            (
                "CLexer.g4",
                "lexer grammar CLexer;\nchannels {\n    OFF // whitespace, comments\n}\nA : 'a' ;\nWS : ' ' -> channel(OFF) ;\n",
            ),
        ],
        inputs: &[("a a", true), ("", false), (" ", false)],
    },
    // Grammars of the generation tests below: what ANTLR accepts of what generation
    // might write.
    Case {
        feature: "generation: words ANTLR splits",
        files: &[(
            "Words.g4",
            "grammar Words;\ns : (INT | ID)+ EOF ;\nINT : [0-9]+ ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("1a", true), ("1 a", true), ("ab12", true), ("a-1", false)],
    },
    Case {
        feature: "generation: several hidden rules",
        files: &[(
            "Hidden.g4",
            "grammar Hidden;\ns : ID+ EOF ;\nID : [a-z]+ ;\nWS : [ \\t\\n]+ -> skip ;\n\
             COMMENT : '#' [a-z]* ';' -> skip ;\nBOM : '\\uFEFF' -> skip ;\n",
        )],
        inputs: &[
            ("a b", true),
            ("a#x;b", true),
            ("a\u{FEFF}b", true),
            ("a#x b", false),
        ],
    },
    Case {
        feature: "generation: a small recursive grammar",
        files: &[(
            "Small.g4",
            "grammar Small;\ns : v EOF ;\nv : '[' v (',' v)* ']' | ID ;\nID : [a-z]+ ;\n\
             WS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("[a,b]", true),
            ("[[a], b]", true),
            ("a", true),
            ("[a,]", false),
            ("[]", false),
        ],
    },
    Case {
        feature: "generation: escapes and non-ASCII alternatives",
        files: &[(
            "Esc.g4",
            "grammar Esc;\ns : (STR | ID)+ EOF ;\nSTR : '\"' (ESC | ~[\"\\\\])* '\"' ;\n\
             fragment ESC : '\\\\' ([nt\"\\\\] | 'u' HEX HEX HEX HEX | 'U' HEX HEX HEX HEX HEX HEX HEX HEX) ;\n\
             fragment HEX : [0-9a-f] ;\nID : [a-z] ([a-z] | '\\u200D')* ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[
            ("\"a\\U0010ffff\\n\"", true),
            ("a\u{200D}b", true),
            ("\"\\x\"", false),
            ("\"\\u12\"", false),
        ],
    },
    Case {
        feature: "generation: a list",
        files: &[(
            "Lists.g4",
            "grammar Lists;\ns : item (',' item)* EOF ;\nitem : ID ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("a, bc", true), ("a,", false), ("a", true)],
    },
    Case {
        feature: "generation: an optional start",
        files: &[(
            "Opt.g4",
            "grammar Opt;\ns : ID? EOF ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("", true), (" ", true), ("ab", true), ("a b", false)],
    },
    Case {
        feature: "generation: an alternative behind a predicate",
        files: &[(
            "Guard.g4",
            "grammar Guard;\ns : stmt+ EOF ;\nstmt : ID eos ;\neos : ';' | {True}? ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n",
        )],
        inputs: &[("a;b;", true), ("a b", true), ("a;", true), (";", false)],
    },
    Case {
        feature: "indentation idiom (INDENT and DEDENT from a lexer base class)",
        // ANTLR's verdicts with grammars-v4's python2_7_18 PythonLexerBase.py as the
        // lexer's superClass, which emits INDENT and DEDENT.
        files: &[
            (
                "IndentParser.g4",
                include_str!("data/indent/IndentParser.g4"),
            ),
            ("IndentLexer.g4", include_str!("data/indent/IndentLexer.g4")),
            (
                "PythonLexerBase.py",
                include_str!("data/indent/PythonLexerBase.py"),
            ),
        ],
        inputs: &[
            ("a\nif a:\n    b\n    if c:\n        d\n    e\nf\n", true),
            ("if a:\n  b\n", true),
            ("if a:\n  b", true),
            ("a", true),
            ("a\n\n\n", true),
            ("\n\n# lead\na\n", true),
            (
                "if a:\n    b\n\n    # note\n        # deeper comment\n    c\n",
                true,
            ),
            // A dedent to a depth no enclosing block has.
            ("if a:\n    b\n  c\n", false),
            ("if a:\nb\n", false),
            // The first line indented.
            ("  a\n", false),
            ("a\n  b\n", false),
            // A line end inside brackets is no line end, whatever the next line's indentation.
            ("if a:\n    (b,\nc)\n", true),
            ("if a:\n    [b,\n  c,\n        d]\n    e\n", true),
            // `\\` joins the lines: the blank line after it is part of the statement's line.
            ("if a:\n    b \\\n  \n", true),
            ("if a: b\nelse:\n    c\n", true),
            ("if a:\n    if b:\n        c\nelse:\n    d\n", true),
            ("if a:\n    if b:\n        c\n    else:\n        d\n", true),
            // A tab counts to the next multiple of 8.
            ("if a:\n\tb\n\tc\n", true),
            ("if a:\n\tif b:\n\t\tc\n\td\n", true),
            // A line end inside a long string is no line end.
            ("if a:\n    \"\"\"doc\nstring\"\"\"\n    b\n", true),
            ("if a:\n    b\n# end\n", true),
            // At the end of the input: a line end, and every block closed.
            ("if a:\n    b\n    ", true),
            ("if a:\n    b\r\n    c\r\n", true),
            ("if a:\n    pass\n    if b: pass\nc\n", true),
            ("if a:\n\n", false),
            ("", true),
            ("\n", true),
            ("if a:\n    b\n        c\n", false),
            // A line end missing elsewhere than at the end.
            ("a b", false),
            ("if a: b c", false),
            ("if a:\n    b\n    c d", false),
            ("if a:\n    b c\n", false),
            ("if a:\n    b\nelse:\n    c", true),
        ],
    },
];

/// The messages of `spec`'s import warnings with `code`, in order.
fn warnings_of<'s>(spec: &'s thicket_antlr::AntlrSpec, code: &str) -> Vec<&'s str> {
    spec.warnings
        .iter()
        .filter(|(_, d)| d.code == code)
        .map(|(_, d)| d.message.as_str())
        .collect()
}

fn load(case: &Case) -> thicket_antlr::AntlrSpec {
    // Target code given for ANTLR (a lexer's base class) is not read.
    let files: Vec<(String, Vec<u8>)> = case
        .files
        .iter()
        .filter(|(n, _)| n.ends_with(".g4"))
        .map(|(n, t)| (n.to_string(), t.as_bytes().to_vec()))
        .collect();
    thicket_antlr::load_g4_texts(&files, None)
        .unwrap_or_else(|e| panic!("{}: {}", case.feature, e.render()))
}

#[test]
fn thicket_reads_each_feature_as_antlr_does() {
    let mut wrong = Vec::new();
    for case in CASES {
        let spec = load(case);
        let check = spec.checker();
        for &(input, antlr) in case.inputs {
            let ours = check.accepts(input.as_bytes()).is_ok();
            if ours != antlr {
                wrong.push(format!(
                    "{}: {input:?}: ANTLR {}, thicket {}",
                    case.feature,
                    if antlr { "accepts" } else { "rejects" },
                    if ours { "accepts" } else { "rejects" },
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// ANTLR refuses these grammars; so does thicket, naming the place.
#[test]
fn grammars_antlr_refuses_are_refused_where_antlr_says() {
    let cases = [
        (
            "grammar G;\ns : A ;\nA : 'a' -> pushMode(NOPE) ;\n",
            "G.g4:3:21",
            "`NOPE` is not a recognized mode name",
        ),
        (
            "grammar G;\ns : A ;\nA : 'a' -> channel(FOO) ;\n",
            "G.g4:3:20",
            "`FOO` is not a recognized channel name",
        ),
    ];
    for (text, at, message) in cases {
        let error = thicket_antlr::load_g4_texts(&[("G.g4".into(), text.into())], None)
            .err()
            .expect("refused");
        let rendered = error.render();
        assert!(
            rendered.contains(at) && rendered.contains(message),
            "{rendered}"
        );
    }
}

/// Where the oracle script is, and whether ANTLR's tool and runtime are installed.
fn oracle() -> Option<std::path::PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/antlr_oracle.py");
    let required = std::env::var("THICKET_REQUIRE_ANTLR").is_ok_and(|v| v == "1");
    let probe = std::process::Command::new("python3")
        .arg(&script)
        .arg("--probe")
        .output();
    match probe {
        Ok(out) if out.status.success() => Some(script),
        other => {
            let why = match other {
                Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            assert!(
                !required,
                "THICKET_REQUIRE_ANTLR=1 but ANTLR is missing: {why}"
            );
            eprintln!("skipped: ANTLR's tool or runtime is missing ({why})");
            None
        }
    }
}

#[test]
fn antlr_still_gives_the_recorded_verdicts() {
    let Some(script) = oracle() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let folder = dir.path().join(format!("case{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        let mut paths = Vec::new();
        for (name, text) in case.files {
            let path = folder.join(name);
            std::fs::write(&path, text).unwrap();
            paths.push(path);
        }
        let inputs: Vec<&str> = case.inputs.iter().map(|(i, _)| *i).collect();
        let mut child = std::process::Command::new("python3")
            .arg(&script)
            .arg("--stdin-json")
            .arg("--cache")
            .arg(dir.path().join("cache"))
            .args(&paths)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let json = serde_json::to_vec(&inputs).unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&json).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            case.feature,
            String::from_utf8_lossy(&out.stderr)
        );
        let verdicts: Vec<bool> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["ok"] == true)
            .collect();
        for (&(input, recorded), now) in case.inputs.iter().zip(verdicts) {
            if recorded != now {
                wrong.push(format!(
                    "{}: {input:?}: recorded {recorded}, ANTLR says {now}",
                    case.feature
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Hidden text that changes the lexer's mode (a preprocessor line pushed by `#` and
/// popped by its line end; a raw section entered by `mode(..)` and left by
/// `mode(DEFAULT_MODE)`): the byte grammar every command uses reads it as ANTLR's lexer
/// does, not only the exact reading. ANTLR's verdicts recorded.
#[test]
fn the_byte_grammar_follows_hidden_text_into_other_modes() {
    let files = [
        (
            "DParser.g4".to_string(),
            b"parser grammar DParser;\noptions { tokenVocab = DLexer; }\ns : ID+ EOF ;\n".to_vec(),
        ),
        (
            "DLexer.g4".to_string(),
            b"lexer grammar DLexer;\nID : [a-z]+ ;\nWS : [ \\n]+ -> skip ;\n\
              HASH : '#' -> channel(HIDDEN), pushMode(DIR) ;\nLT : '<' -> skip, mode(RAW) ;\n\
              mode DIR;\nWORD : [a-z0-9]+ -> channel(HIDDEN) ;\nSP : ' ' -> skip ;\n\
              NL : '\\n' -> skip, popMode ;\n\
              mode RAW;\nBODY : ~[>]+ -> skip ;\nGT : '>' -> skip, mode(DEFAULT_MODE) ;\n"
                .to_vec(),
        ),
    ];
    let spec =
        thicket_antlr::load_g4_texts(&files, None).unwrap_or_else(|e| panic!("{}", e.render()));
    let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
    let check = spec.checker();
    for (input, antlr) in [
        ("a #if 1 x\nb", true),
        ("#x\na", true),
        ("a <anything # here> b", true),
        ("a\n#x y\n", true),
        ("#\n", false),
        // The input may end in another mode: ANTLR's lexer emits EOF wherever it is.
        ("a #x", true),
        ("a #x y", true),
        ("a #", true),
        ("a <raw", true),
        ("a <", true),
        ("#x", false),
        ("a # <b", false),
    ] {
        let exact = check.accepts(input.as_bytes()).is_ok();
        let byte = bytes.recognize(input.as_bytes()).is_ok();
        assert_eq!(
            (exact, byte),
            (antlr, antlr),
            "{input:?}: exact, byte grammar"
        );
    }
}

/// Hidden text whose rules push, pop and switch modes several at a time (Verilog's
/// and GLSL's preprocessors: `` `ifdef X `` pushes the mode of the skipped branch, whose
/// text runs to an `` `endif `` that pops three frames): the byte grammar follows the
/// lexer's mode stack as ANTLR's lexer does, so every input ANTLR accepts parses with
/// both readings and the ones it rejects for the mode stack are rejected.
#[test]
fn the_byte_grammar_follows_hidden_text_through_a_stack_of_modes() {
    let case = case("hidden text through a stack of modes (a preprocessor's skipped branch)");
    let spec = load(case);
    let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
    for &(input, antlr) in case.inputs {
        // Text past the end of the skipped branch's mode is not read by the byte
        // grammar (the lexer mode at the end of input).
        if input == "a `ifdef x\nb" {
            continue;
        }
        let byte = bytes.recognize(input.as_bytes()).is_ok();
        assert_eq!(byte, antlr, "{input:?}: the byte grammar");
    }
}

/// A token ends where ANTLR's lexer ends it in the byte grammar too, not only in the
/// exact reading: through a non-greedy loop at its first end (a comment at its first
/// `*/`, `.+?` after one character), else at its longest (`123` one number). Read as
/// plain languages, a non-greedy token could end at every later position (`/* a */ */`
/// one comment) and a run of digits be split into numbers in every way, which also
/// made parsing take time with the square of the input or worse. A skipped catch-all
/// rule (brainfuck's comments) skips only the characters no earlier rule takes, so
/// `[` is never skipped, and a catch-all `more` rule continues a token with none of
/// them either (`}` always ends an action). Where `more` rules lead into a token's
/// mode, the hidden text before it is that of the mode they start in, and a token
/// made in several modes is read each way. ANTLR's verdicts as recorded in the cases.
#[test]
fn the_byte_grammar_ends_tokens_where_antlr_does() {
    for feature in [
        "non-greedy loop",
        "non-greedy loop beside a greedy alternative (only its own path stops early)",
        "non-greedy loop of any character (one character per token)",
        "longest match (a run of digits is one number)",
        "a skipped catch-all rule (every other character is a comment)",
        "a keyword is never an identifier an earlier-defined literal wins",
        "more",
        "a token made by its own rule or by `more` into a mode",
        "a catch-all `more` rule takes no character an earlier rule takes",
    ] {
        let case = case(feature);
        let spec = load(case);
        let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
        for &(input, antlr) in case.inputs {
            assert_eq!(
                bytes.recognize(input.as_bytes()).is_ok(),
                antlr,
                "{feature}: {input:?}: the byte grammar"
            );
        }
    }
}

/// Where a non-greedy loop's body has a path of higher priority than the loop's exit
/// (an escape such as `\\]`), ANTLR's lexer goes past the token's shortest text, so the
/// byte grammar reads that token as its whole language: every input ANTLR accepts
/// parses (the exact reading gives the verdict). A shortest-match reading cut `[e\\]]`
/// after `[e\\]` and rejected it.
#[test]
fn the_byte_grammar_reads_a_non_greedy_token_with_an_escape_whole() {
    let case = case("non-greedy loop with an escape (a path of higher priority goes on)");
    let spec = load(case);
    let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
    for &(input, antlr) in case.inputs.iter().filter(|(_, antlr)| *antlr) {
        assert!(
            bytes.recognize(input.as_bytes()).is_ok(),
            "{input:?}: ANTLR accepts it ({antlr}), the byte grammar does not"
        );
    }
}

/// Where the exact lexer ends a token with a non-greedy loop elsewhere than at its
/// shortest text, the byte grammar does not cut it there: a greedy loop after the
/// non-greedy ones goes on (MySQL's identifiers, `[A-Z_$0-9]*? [A-Z_$]+? [A-Z_$0-9]*`,
/// read `v1` whole), and a comment ended by a line end or `EOF` runs to the end of the
/// input when it has no line end (JSON5's and Swift's `'//' .*? ('\n' | EOF)`, which
/// the shortest match ended right after `//`, `EOF` being the empty string there). Every
/// input ANTLR accepts parses (recorded verdicts; the exact reading gives the verdict,
/// the byte grammar may accept more).
#[test]
fn the_byte_grammar_reads_tokens_past_a_non_greedy_loop_where_antlr_does() {
    for feature in [
        "non-greedy loops before a greedy loop (the greedy loop goes on)",
        "EOF ends a lexer rule only at the end of the input",
    ] {
        let case = case(feature);
        let spec = load(case);
        let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
        for &(input, antlr) in case.inputs.iter().filter(|(_, antlr)| *antlr) {
            assert!(
                bytes.recognize(input.as_bytes()).is_ok(),
                "{feature}: {input:?}: ANTLR accepts it ({antlr}), the byte grammar does not"
            );
        }
    }
}

/// Hidden text is parsed apart from the tokens around it: the byte grammar's `<_hidden>`
/// rules are phrases, so no DFA spans a block comment and the tokens after it. Arden's grammar has this shape (hidden
/// comments and a hidden keyword `the`, case-insensitive); built into one DFA with its
/// tokens, each such rule failed at the DFA size limit after seconds. Both readings
/// give ANTLR's verdicts (recorded), and trees are written as ANTLR writes them.
#[test]
fn hidden_text_is_parsed_apart_from_the_tokens_around_it() {
    let g4 = "grammar Slots;\noptions { caseInsensitive = true; }\n\
              s : (LET ID BE ID ';')+ EOF ;\n\
              LET : 'let' ;\nBE : 'be' ;\nTHE : 'the' -> channel(HIDDEN) ;\n\
              ID : [a-z] [a-z0-9_]* ;\n\
              COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;\n\
              LINE : '//' ~[\\r\\n]* -> channel(HIDDEN) ;\n\
              WS : [ \\t\\r\\n]+ -> channel(HIDDEN) ;\n";
    let spec = thicket_antlr::load_g4_texts(&[("Slots.g4".into(), g4.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let grammar = &spec.spec.grammar;
    let hidden = grammar.symbol("_hidden").expect("a hidden rule");
    assert!(grammar.is_phrase(hidden), "hidden text is a phrase");
    let bytes = thicket_parse::Parser::new(grammar, Default::default()).unwrap();
    let check = spec.checker();
    for (input, antlr) in [
        ("let x be y;", true),
        ("LET /* a */ x /* b */ BE the y;", true),
        ("let the x be y; // done\nlet z be w;", true),
        ("let /* a */ x */ be y;", false),
        ("let x be;", false),
        ("let theme be y;", true),
    ] {
        let exact = check.accepts(input.as_bytes()).is_ok();
        let byte = bytes.parse(input.as_bytes());
        assert_eq!(exact, antlr, "{input:?}: exact reading");
        // The byte grammar accepts a superset (it does not know keywords from names).
        if antlr {
            let tree = byte.unwrap_or_else(|e| panic!("{input:?}: byte grammar: {e}"));
            assert!(spec.misread_tokens(&tree.tree()).is_empty(), "{input:?}");
            if input == "let x be y;" {
                assert_eq!(spec.antlr_tree(&tree.tree()), "(s let x be y ;)");
            }
        }
    }
}

/// A token only target code could emit (declared in `tokens {}`, or implicit) is in no
/// input: the byte grammar drops the parts that need it, so generation works, and every
/// input generated is one ANTLR's reading accepts ("a" and "a b": see the cases above).
#[test]
fn grammars_with_tokens_no_lexer_rule_makes_generate() {
    let g4 = "grammar Gen;\ns : A (INDENT A)? (B | F | INDENT)* EOF ;\nA : 'a' ;\nB : 'b' ;\n\
              fragment F : '#' ;\nWS : ' '+ -> skip ;\n";
    let spec = thicket_antlr::load_g4_texts(&[("Gen.g4".into(), g4.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let generator =
        thicket_gen::Generator::new(&spec.spec.grammar, thicket_gen::GenConfig::default())
            .expect("the parts needing INDENT or F are gone");
    let maker = thicket_antlr::generate::InputMaker::new(&spec);
    for i in 0..50 {
        let drawn = maker.input(&generator, 1, i);
        assert!(
            drawn.accepted,
            "{:?}",
            String::from_utf8_lossy(&drawn.bytes)
        );
        assert!(drawn.bytes.iter().all(|b| b" ab".contains(b)));
    }
}

/// A token whose every text an earlier rule wins (`IF : 'if'` after `ID : [a-z]+`)
/// is in no input: the import warns, naming the rule that wins, and generation drops
/// the alternatives that need it, so every input generated is accepted (ANTLR rejects
/// `if x`, see the case above).
#[test]
fn tokens_an_earlier_rule_always_wins_are_not_generated() {
    let spec = load(case("tokens an earlier rule always wins"));
    let warned = warnings_of(&spec, "g4-unreachable-token");
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(
        warned[0].contains("`IF`") && warned[0].contains("`ID`"),
        "{warned:?}"
    );
    assert!(warned[1].contains("`KW`"), "{warned:?}");
    let inputs = generated("tokens an earlier rule always wins", 100, |_| {});
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
    }
    assert!(inputs.iter().any(|(i, _)| i.contains('=')));
}

/// A skipped or hidden token that the parser names optionally (`WS?`) is in no
/// token stream: generation leaves it out and works (it refused the whole grammar).
/// A hidden rule whose every text an earlier rule wins is no hidden text: the byte
/// grammar takes no comment where the parser cannot take the token it is, and
/// generation puts none there.
#[test]
fn hidden_rules_an_earlier_rule_wins_are_no_hidden_text() {
    let inputs = generated("hidden rules an earlier rule names whole", 200, |spec| {
        spec.set_hidden_probability(1.0)
    });
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
    }
    let spec = load(case("hidden rules an earlier rule names whole"));
    let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
    assert!(bytes.recognize(b"k a /*x*/ a").is_err());
}

#[test]
fn skipped_tokens_the_parser_names_are_left_out_of_generation() {
    let inputs = generated("skipped tokens the parser names", 50, |_| {});
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
    }
}

/// Where no hidden text parts two tokens (`x` then `-` lexes as `x-`), the tokens
/// at that boundary are generated again rather than the whole input: with twelve
/// pairs, a quarter of them merging, whole draws would rarely all be right.
#[test]
fn tokens_that_merge_whatever_parts_them_are_generated_again() {
    let inputs = generated(
        "tokens that merge with no hidden text to part them",
        50,
        |_| {},
    );
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
    }
}

/// The same when the rule that wins uses the token's rule (`ALNUM : DIGIT | LETTER`):
/// the parser's `LETTER` is in no input, and `ALNUM` still reads letters.
#[test]
fn tokens_a_rule_using_them_always_wins_are_not_generated() {
    let spec = load(case("tokens an earlier rule that uses them always wins"));
    let warned = spec
        .warnings
        .iter()
        .filter(|(_, d)| d.code == "g4-unreachable-token")
        .count();
    assert_eq!(
        warned,
        2,
        "{:?}",
        spec.warnings
            .iter()
            .map(|(_, d)| d.message.clone())
            .collect::<Vec<_>>()
    );
    let inputs = generated(
        "tokens an earlier rule that uses them always wins",
        100,
        |_| {},
    );
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
    }
    assert!(
        inputs
            .iter()
            .any(|(i, _)| i.bytes().any(|b| b.is_ascii_lowercase()))
    );
}

/// A token whose every text an earlier rule matches, in infinitely many texts over
/// Unicode classes (ANTLR's Z grammar: `I : NAME ;` after `NAME`, used as an infix
/// operator): no input has it, the import says so, and the parser's parts that need
/// it go, so the byte grammar does not read every name as each such token too.
#[test]
fn tokens_whose_language_an_earlier_rule_holds_are_dropped() {
    let g4 = "grammar Cover;\ns : NAME (INFIX NAME | WORD)* EOF ;\n\
              NAME : [\\p{L}\\p{Nd}_]+ '\\u2032'* ;\nINFIX : NAME ;\nWORD : [\\p{L}]+ ;\n\
              NUMBER : [0-9]+ '!' ;\nWS : ' ' -> skip ;\n";
    let spec = thicket_antlr::load_g4_texts(&[("Cover.g4".into(), g4.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let warned = warnings_of(&spec, "g4-unreachable-token");
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(warned[0].contains("`INFIX`") && warned[0].contains("`NAME`"));
    assert!(warned[1].contains("`WORD`") && warned[1].contains("`NAME`"));
    // ANTLR reads `x y` as two names, which `s` rejects; `NUMBER` is not covered.
    assert!(spec.checker().accepts("x1′".as_bytes()).is_ok());
    assert!(spec.checker().accepts(b"x y").is_err());
}

/// A rule that only reads as `if` because of its place: `IF` before `ID` is made, and
/// nothing is dropped.
#[test]
fn keywords_before_identifiers_are_kept() {
    let g4 =
        "grammar Kw;\ns : (ID | IF ID) EOF ;\nIF : 'if' ;\nID : [a-z]+ ;\nWS : ' ' -> skip ;\n";
    let spec = thicket_antlr::load_g4_texts(&[("Kw.g4".into(), g4.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(
        spec.warnings
            .iter()
            .all(|(_, d)| d.code != "g4-unreachable-token")
    );
    assert!(spec.checker().accepts(b"if x").is_ok());
    let generator =
        thicket_gen::Generator::new(&spec.spec.grammar, thicket_gen::GenConfig::default()).unwrap();
    let maker = thicket_antlr::generate::InputMaker::new(&spec);
    assert!((0..100).any(|i| maker.input(&generator, 1, i).bytes.starts_with(b"if ")));
}

/// When the start rule cannot do without such a token, no input is in the language:
/// the grammar's check names the token and where it is, not the reader's own regex.
/// ANTLR knows lexer commands by their lower-case names and emits `Channel(X)`, `Skip`
/// or `More` as target code, which the Java and C# targets run as the commands (the
/// Python target fails on it). thicket reads them as the commands, with a warning; the
/// verdicts are ANTLR's on the lower-case spelling.
#[test]
fn commands_with_a_capital_letter_are_read_as_the_commands_they_name() {
    let lower = "grammar Cap;\ns : A+ EOF ;\nA : 'a' ;\nB : 'b' -> channel(HIDDEN) ;\nWS : ' ' -> skip ;\nC : 'c' -> more ;\n";
    let capital = lower
        .replace("channel(", "Channel(")
        .replace("skip", "Skip")
        .replace("more", "More");
    let load = |text: &str| {
        thicket_antlr::load_g4_texts(&[("Cap.g4".to_string(), text.as_bytes().to_vec())], None)
            .unwrap_or_else(|e| panic!("{}", e.render()))
    };
    let spec = load(&capital);
    let check = spec.checker();
    let antlr = [
        ("aba", true),
        ("a b a", true),
        ("bb", false),
        ("ca", true),
        ("c", false),
        ("a", true),
    ];
    for (input, accepted) in antlr {
        assert_eq!(
            check.accepts(input.as_bytes()).is_ok(),
            accepted,
            "{input:?}"
        );
    }
    assert_eq!(warnings_of(&spec, "g4-target-command").len(), 3);
    assert!(warnings_of(&load(lower), "g4-target-command").is_empty());
}

#[test]
fn a_start_rule_needing_a_token_no_input_has_is_named() {
    for (g4, token, place) in [
        ("grammar Need;\ns : A B EOF ;\nA : 'a' ;\n", "<B>", (2, 7)),
        (
            "grammar Need;\ns : ID IF EOF ;\nID : [a-z]+ ;\nIF : 'if' ;\n",
            "<IF>",
            (4, 1),
        ),
    ] {
        let spec =
            thicket_antlr::load_g4_texts(&[("Need.g4".into(), g4.as_bytes().to_vec())], None)
                .unwrap_or_else(|e| panic!("{}", e.render()));
        let grammar = &spec.spec.grammar;
        let errors: Vec<_> =
            thicket_grammar::lint(grammar, &thicket_grammar::Analysis::new(grammar))
                .into_iter()
                .filter(|d| d.code == "empty-regex")
                .collect();
        assert_eq!(errors.len(), 1, "{g4}: {errors:?}");
        assert_eq!(errors[0].message, format!("rule {token} matches no string"));
        assert!(!errors[0].message.contains("10FFFF"));
        // Where the parser names a token no lexer rule makes; the rule of one that
        // an earlier rule always wins.
        let at = spec
            .spec
            .source
            .line_col(errors[0].primary_span().expect("a place").start as usize);
        assert_eq!((at.line, at.column), place, "{g4}");
    }
}

fn case(feature: &str) -> &'static Case {
    CASES
        .iter()
        .find(|c| c.feature == feature)
        .expect("a case of that name")
}

/// `n` inputs of a case's grammar as `thicket generate --seed 1` makes them (after
/// `tune`, e.g. a hidden-text probability), each with whether the exact reading
/// accepts it.
fn generated(
    feature: &str,
    n: u64,
    tune: impl FnOnce(&mut thicket_antlr::AntlrSpec),
) -> Vec<(String, bool)> {
    let mut spec = load(case(feature));
    tune(&mut spec);
    let mut generator =
        thicket_gen::Generator::new(&spec.spec.grammar, thicket_gen::GenConfig::default()).unwrap();
    generator.set_printable_ascii_share(thicket_antlr::generate::PRINTABLE_PERCENT);
    let maker = thicket_antlr::generate::InputMaker::new(&spec);
    (0..n)
        .map(|i| {
            let drawn = maker.input(&generator, 1, i);
            (String::from_utf8(drawn.bytes).unwrap(), drawn.accepted)
        })
        .collect()
}

/// A token drawn through an alternative that ends at `EOF` (COBOL's `'.' EOF`) is
/// only that token at the end of the input; elsewhere it is drawn again.
#[test]
fn tokens_ending_at_eof_are_drawn_only_at_the_end() {
    let inputs = generated(
        "generation: a token whose alternative ends at EOF",
        300,
        |_| {},
    );
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        // Every `.` but a last one is followed by a space.
        let bytes = input.as_bytes();
        assert!(
            bytes.windows(2).all(|w| w[0] != b'.' || w[1] == b' '),
            "{input:?}"
        );
    }
    assert!(inputs.iter().any(|(i, _)| i.matches('.').count() > 1));
}

/// Tokens that ANTLR splits but a person reads as one word (`1a`) are written apart:
/// real lexers (GraphQL's numbers, C's identifiers) read them as one.
#[test]
fn generated_words_are_kept_apart() {
    let inputs = generated("generation: words ANTLR splits", 300, |_| {});
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        let bytes = input.as_bytes();
        assert!(
            !bytes.windows(2).any(|w| w[0].is_ascii_alphanumeric()
                && w[1].is_ascii_alphanumeric()
                && w[0].is_ascii_digit() != w[1].is_ascii_digit()),
            "{input:?}"
        );
    }
    assert!(inputs.iter().any(|(i, _)| i.contains(' ')));
}

/// Hidden text, when drawn, is mostly whitespace: comments and byte order marks are
/// hidden rules too, but rarer (a byte order mark between tokens breaks real parsers).
#[test]
fn generated_hidden_text_is_mostly_whitespace() {
    let inputs = generated("generation: several hidden rules", 300, |spec| {
        spec.set_hidden_probability(0.8)
    });
    let (mut spaces, mut others) = (0usize, 0usize);
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        let mut blank = false;
        for c in input.chars() {
            let now = matches!(c, ' ' | '\t' | '\n');
            spaces += usize::from(now && !blank);
            blank = now;
            others += usize::from(c == '#' || c == '\u{FEFF}');
        }
    }
    assert!(others > 0, "other hidden rules are still drawn");
    assert!(
        spaces as f64 > 0.75 * (spaces + others) as f64,
        "{spaces} runs of whitespace, {others} comments and marks"
    );
}

/// Hidden text that can only start outside printable ASCII (a byte order mark, which
/// real parsers take only at the start of a file) is drawn as rarely as such
/// characters are in sets and `.`: far less often than a comment.
#[test]
fn generated_hidden_text_outside_printable_ascii_is_rare() {
    let inputs = generated("generation: several hidden rules", 300, |spec| {
        spec.set_hidden_probability(0.8)
    });
    let (mut comments, mut marks) = (0usize, 0usize);
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        comments += input.matches('#').count();
        marks += input.matches('\u{FEFF}').count();
    }
    // Before, the two were drawn equally often.
    assert!(comments > 20, "{comments} comments");
    assert!(marks * 5 < comments, "{marks} marks, {comments} comments");
}

/// A small grammar gets a small size target (a quarter of the sum of its parser
/// rules' smallest lengths, `thicket_antlr::generate::target_size`) rather than the
/// default 56 bytes, and its lists still get second items: past the target a list's
/// count is still drawn, its items closing off.
#[test]
fn generated_inputs_of_a_small_grammar_are_small_and_varied() {
    let spec = load(case("generation: a small recursive grammar"));
    let target = thicket_antlr::generate::target_size(&spec);
    // `s` and `v` are one byte each at least, `[a]` three.
    assert!(target < 4, "{target}");
    let config = thicket_gen::GenConfig {
        policy: thicket_gen::ChoicePolicy::Sized { bytes: 4 },
        ..thicket_gen::GenConfig::default()
    };
    let generator = thicket_gen::Generator::new(&spec.spec.grammar, config).unwrap();
    let maker = thicket_antlr::generate::InputMaker::new(&spec);
    let inputs: Vec<Vec<u8>> = (0..300)
        .map(|i| {
            let drawn = maker.input(&generator, 1, i);
            assert!(
                drawn.accepted,
                "{:?}",
                String::from_utf8_lossy(&drawn.bytes)
            );
            drawn.bytes
        })
        .collect();
    let mean = inputs.iter().map(Vec::len).sum::<usize>() as f64 / inputs.len() as f64;
    // With the default target the mean was over 50 bytes.
    assert!(mean < 16.0, "mean {mean} bytes");
    let distinct: std::collections::HashSet<&Vec<u8>> = inputs.iter().collect();
    assert!(
        distinct.len() * 2 > inputs.len(),
        "{} distinct",
        distinct.len()
    );
    let with_second_items = inputs.iter().filter(|i| i.contains(&b',')).count();
    assert!(
        with_second_items > 30,
        "{with_second_items} lists of two or more"
    );
}

/// In lexer rules a short alternative is likelier than a long one (a string's plain
/// character over a `\U` escape of eight digits, which is seldom a valid character),
/// and an alternative that can only be a character outside printable ASCII (a
/// zero-width joiner) is rare.
#[test]
fn generated_escapes_and_non_ascii_alternatives_are_rare() {
    let inputs = generated(
        "generation: escapes and non-ASCII alternatives",
        400,
        |_| {},
    );
    let (mut items, mut long_escapes, mut id_parts, mut joiners) = (0usize, 0, 0usize, 0);
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        let mut chars = input.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => {
                                items += 1;
                                long_escapes += usize::from(chars.next() == Some('U'));
                            }
                            _ => items += 1,
                        }
                    }
                }
                'a'..='z' => {
                    while let Some(&c) = chars.peek() {
                        if !(c.is_ascii_lowercase() || c == '\u{200D}') {
                            break;
                        }
                        id_parts += 1;
                        joiners += usize::from(c == '\u{200D}');
                        chars.next();
                    }
                }
                _ => {}
            }
        }
    }
    assert!(
        items > 100 && id_parts > 100,
        "{items} string items, {id_parts} identifier parts"
    );
    // Uniform choices made one identifier part in two a joiner.
    assert!(
        long_escapes * 100 < 8 * items,
        "{long_escapes} \\U escapes of {items} string items"
    );
    assert!(
        joiners * 100 < 20 * id_parts,
        "{joiners} joiners of {id_parts} identifier parts"
    );
}

/// Repetitions are mostly short and sometimes long: each further item with
/// probability 1/2, as Grammarinator draws them (uniform counts up to the limit padded
/// inputs).
#[test]
fn generated_lists_and_tokens_are_mostly_short() {
    let inputs = generated("generation: a list", 400, |_| {});
    let mut items = Vec::new();
    let mut letters = 0usize;
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        let words: Vec<&str> = input.split(',').map(str::trim).collect();
        letters += words.iter().map(|w| w.len()).sum::<usize>();
        items.push(words.len());
    }
    let count: usize = items.iter().sum();
    let mean = count as f64 / items.len() as f64;
    let mean_letters = letters as f64 / count as f64;
    // Uniform counts gave 3.5 items of 3.5 letters on average.
    assert!(mean < 2.6, "mean {mean} items");
    assert!(mean_letters < 2.8, "mean {mean_letters} letters");
    assert!(items.iter().any(|&n| n >= 4), "long lists still occur");
}

/// An input of nothing is one case: where the start rule may be empty, generation does
/// not make half its inputs empty.
#[test]
fn generated_inputs_are_not_blank_when_the_grammar_has_more() {
    let inputs = generated("generation: an optional start", 100, |_| {});
    let blank = inputs.iter().filter(|(i, _)| i.trim().is_empty()).count();
    assert_eq!(blank, 0);
    assert!(inputs.iter().all(|(_, accepted)| *accepted));
}

/// An alternative that begins with a predicate is taken rarely: thicket assumes the
/// predicate true, but the target code may say otherwise (JavaScript's statement end
/// without `;` holds only before a line break or `}`).
#[test]
fn generated_inputs_mostly_avoid_alternatives_behind_predicates() {
    let inputs = generated("generation: an alternative behind a predicate", 300, |_| {});
    let (mut statements, mut semicolons) = (0usize, 0usize);
    for (input, accepted) in &inputs {
        assert!(accepted, "{input:?}");
        statements += input
            .split(|c: char| !c.is_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .count();
        semicolons += input.matches(';').count();
    }
    // Uniform choices ended half the statements without `;`.
    assert!(
        semicolons as f64 > 0.75 * statements as f64,
        "{semicolons} of {statements} statements end in `;`"
    );
    assert!(
        semicolons < statements,
        "the other alternative is still taken"
    );
}

/// Bytes that are not UTF-8 are read as ANTLR's runtimes read a file, each ill-formed
/// sequence as one U+FFFD (`thicket_antlr::antlr_text`): inside a comment `.` takes it,
/// elsewhere no rule does. ANTLR's verdicts recorded from files holding these bytes
/// (the oracle reads a file as UTF-8 with replacement; sdl's examples carry a Latin-1
/// `©` in their comments).
#[test]
fn bytes_that_are_not_utf8_are_read_as_antlr_reads_them() {
    let g4 = "grammar Latin;\ns : ID* EOF ;\nID : [a-z]+ ;\n\
              COMMENT : '/*' .*? '*/' -> skip ;\nWS : [ \\n]+ -> skip ;\n";
    let spec = thicket_antlr::load_g4_texts(&[("Latin.g4".into(), g4.as_bytes().to_vec())], None)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let bytes = thicket_parse::Parser::new(&spec.spec.grammar, Default::default()).unwrap();
    let check = spec.checker();
    for (input, antlr) in [
        (&b"a /* (c) \xa9 1996 */ b\n"[..], true),
        (&b"a \xa9 b\n"[..], false),
        (&b"a /* \xe2\x80 */ b\n"[..], true),
    ] {
        let text = thicket_antlr::antlr_text(input);
        assert_eq!(
            check.accepts(&text).is_ok(),
            antlr,
            "{input:?}: exact reading"
        );
        assert_eq!(
            bytes.recognize(&text).is_ok(),
            antlr,
            "{input:?}: byte grammar"
        );
    }
    // Valid UTF-8 is read as it is.
    assert!(matches!(
        thicket_antlr::antlr_text("a /* © */ b".as_bytes()),
        std::borrow::Cow::Borrowed(_)
    ));
}

/// The indentation idiom is reported where the grammar declares INDENT; the exact
/// reading's tokens hold INDENT and DEDENT where ANTLR's base class puts them (ANTLR's
/// tokens recorded), and the byte grammar, which every command parses with, accepts
/// every input the exact reading accepts that ends in a line end (without one, the
/// last statement lacks the line end the byte grammar needs: not done).
#[test]
fn indentation_is_read_as_python_reads_it() {
    let case = case("indentation idiom (INDENT and DEDENT from a lexer base class)");
    let spec = load(case);
    let noted: Vec<_> = spec
        .warnings
        .iter()
        .filter(|(_, d)| d.code == "g4-indentation")
        .collect();
    assert_eq!(noted.len(), 1, "{:?}", spec.warnings);
    let (file, note) = noted[0];
    assert!(
        note.message.contains("INDENT and DEDENT"),
        "{}",
        note.message
    );
    // Where the lexer grammar declares INDENT.
    let lexer = include_str!("data/indent/IndentLexer.g4");
    assert_eq!(file.name(), "IndentLexer.g4");
    assert_eq!(
        note.labels[0].span.start as usize,
        lexer.find("INDENT, DEDENT").unwrap()
    );
    let check = spec.checker();
    let input = "a\nif a:\n    b\n    if c:\n        d\n    e\nf\n";
    let kinds: Vec<String> = check
        .parser_tokens(input.as_bytes())
        .unwrap()
        .into_iter()
        .map(|t| t.kind)
        .collect();
    // ANTLR's tokens (with the base class): `eval/antlr_oracle.py --tokens`.
    let antlr = "NAME NEWLINE IF NAME COLON NEWLINE INDENT NAME NEWLINE IF NAME COLON NEWLINE \
                 INDENT NAME NEWLINE DEDENT NAME NEWLINE DEDENT NAME NEWLINE";
    assert_eq!(kinds.join(" "), antlr);
    let parser =
        thicket_parse::Parser::new(&spec.spec.grammar, thicket_parse::ParseConfig::default())
            .unwrap();
    for &(input, accepted) in case.inputs {
        if accepted && (input.is_empty() || input.ends_with('\n')) {
            assert!(
                parser.recognize(input.as_bytes()).is_ok(),
                "the byte grammar rejects {input:?}"
            );
        }
    }
}

/// Generation writes no indentation yet, so under the indentation idiom it keeps to
/// inputs without blocks, as before the idiom was read: every input generated is one
/// the exact reading accepts.
#[test]
fn generation_under_the_indentation_idiom_takes_no_block() {
    let spec = load(case(
        "indentation idiom (INDENT and DEDENT from a lexer base class)",
    ));
    let generator =
        thicket_gen::Generator::new(&spec.spec.grammar, thicket_gen::GenConfig::default()).unwrap();
    let maker = thicket_antlr::generate::InputMaker::new(&spec);
    for i in 0..100 {
        let drawn = maker.input(&generator, 1, i);
        assert!(
            drawn.accepted,
            "{:?}",
            String::from_utf8_lossy(&drawn.bytes)
        );
    }
    // Each draw is one the exact reading accepts at once, not after draws without
    // indentation were thrown away.
    // Hidden blanks before a line's first token would indent it (9 of these 500 raw
    // draws did before blanks were kept out of hidden text under the idiom).
    let weights = thicket_antlr::generate::generation_weights(&spec);
    let check = spec.checker();
    for (seed, i) in (1..6).flat_map(|seed| (0..100).map(move |i| (seed, i))) {
        let mut rng = thicket_gen::Generator::rng_for(seed, i);
        let (tree, _) = generator.generate_tree_weighted(&mut rng, &weights);
        if let Ok(bytes) = spec.separate(&tree) {
            assert!(
                check.accepts(&bytes).is_ok(),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}
