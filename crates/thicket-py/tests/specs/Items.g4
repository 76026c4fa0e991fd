// A small combined ANTLR grammar for the Python tests: a list of words, numbers and
// the keyword `if`, whose tokens merge unless generation separates them (two words
// side by side lex as one). Written for thicket; same licence as the repository.
grammar Items;

items : item+ EOF ;
item  : WORD | NUMBER | 'if' ;

WORD   : [a-z]+ ;
NUMBER : [0-9]+ ;
WS     : [ \t\r\n]+ -> skip ;
