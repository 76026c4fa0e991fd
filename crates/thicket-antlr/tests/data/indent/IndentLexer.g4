// A small indentation-sensitive language for thicket's tests: INDENT and DEDENT come
// from PythonLexerBase.py beside it (grammars-v4's python2_7_18 base class, unchanged)
// when ANTLR runs it; thicket makes them itself (the indentation idiom).
lexer grammar IndentLexer;
options { superClass = PythonLexerBase; }
tokens { INDENT, DEDENT }
IF : 'if';
ELSE : 'else';
PASS : 'pass';
COLON : ':';
COMMA : ',';
LPAR : '(';
RPAR : ')';
LSQB : '[';
RSQB : ']';
LBRACE : '{';
RBRACE : '}';
STRING : '"""' .*? '"""' | '"' ~["\r\n]* '"';
NAME : [a-z]+;
NEWLINE : '\r'? '\n';
COMMENT : '#' ~[\r\n]* -> channel(HIDDEN);
WS : [ \t\f]+ -> channel(HIDDEN);
EXPLICIT_LINE_JOINING : '\\' '\r'? '\n' -> channel(HIDDEN);
ERRORTOKEN : . ;
