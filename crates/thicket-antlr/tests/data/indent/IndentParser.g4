// The parser of IndentLexer.g4 (written for thicket's tests).
parser grammar IndentParser;
options { tokenVocab = IndentLexer; }
file_input : (NEWLINE | stmt)* EOF ;
stmt : simple_stmt | if_stmt ;
simple_stmt : (PASS | expr) NEWLINE ;
if_stmt : IF expr COLON block (ELSE COLON block)? ;
block : simple_stmt | NEWLINE INDENT stmt+ DEDENT ;
expr : NAME | STRING | LPAR exprs? RPAR | LSQB exprs? RSQB | LBRACE exprs? RBRACE ;
exprs : expr (COMMA expr)* COMMA? ;
