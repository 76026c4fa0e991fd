# DOT graphs (Graphviz), for `thicket mine` (eval/mine.sh). Written for thicket from the
# abstract grammar of the DOT language (https://graphviz.org/doc/info/lang.html):
#   graph : [strict] (graph | digraph) [ID] '{' stmt_list '}'
#   stmt_list : [stmt [';'] stmt_list]
#   stmt : node_stmt | edge_stmt | attr_stmt | ID '=' ID | subgraph
#   attr_stmt : (graph | node | edge) attr_list     attr_list : '[' [a_list] ']' [attr_list]
#   a_list : ID '=' ID [(';' | ',')] [a_list]       edge_stmt : (node_id | subgraph) edgeRHS [attr_list]
#   edgeRHS : edgeop (node_id | subgraph) [edgeRHS] node_stmt : node_id [attr_list]
#   node_id : ID [port]                             subgraph : [subgraph [ID]] '{' stmt_list '}'
# with ISLearn's nonterminal names (<graph_type>, <GRAPH>, <DIGRAPH>, <edge_stmt>,
# <edgeop>). The grammar lets any edge operator appear in any graph: that `--` belongs
# in graphs and `->` in digraphs is the semantic constraint to mine. IDs are short
# alphanumeric names, numbers or quoted strings; names may happen to be keywords, which
# dot rejects too.

<start>       ::= <graph>
<graph>       ::= <strict> <graph_type> <maybe_id> "{" <stmt_list> <ws> "}"
<strict>      ::= "" | "strict "
<graph_type>  ::= <GRAPH> | <DIGRAPH>
<GRAPH>       ::= "graph"
<DIGRAPH>     ::= "digraph"
<maybe_id>    ::= " " | " " <id> " "
<stmt_list>   ::= (<ws> <stmt> <sep>)*
<sep>         ::= "" | ";"
<stmt>        ::= <node_stmt> | <edge_stmt> | <attr_stmt> | <id> "=" <id> | <subgraph>
<attr_stmt>   ::= <attr_kind> <ws> <attr_list>
<attr_kind>   ::= "graph" | "node" | "edge"
<attr_list>   ::= ("[" <a_list>? "]")+
<a_list>      ::= <id> "=" <id> (<a_sep> <id> "=" <id>)*
<a_sep>       ::= "," | ";" | " "
<edge_stmt>   ::= <edge_end> <edgeRHS> <attr_opt>
<edgeRHS>     ::= (<ws> <edgeop> <ws> <edge_end>)+
<edgeop>      ::= "->" | "--"
<edge_end>    ::= <node_id> | <subgraph>
<node_stmt>   ::= <node_id> <attr_opt>
<attr_opt>    ::= "" | " " <attr_list>
<node_id>     ::= <id> <port>?
<port>        ::= ":" <id>
<subgraph>    ::= <subgraph_head> "{" <stmt_list> <ws> "}"
<subgraph_head> ::= "" | "subgraph " | "subgraph " <id> " "
<id>          ::= <name> | <number> | <string>
<name>        ::= r"[a-zA-Z_][a-zA-Z_0-9]{0,5}"
<number>      ::= r"-?[0-9]{1,3}(\.[0-9]{1,2})?"
<string>      ::= "\"" r"[a-z0-9 ]{0,6}" "\""
<ws>          ::= "" | " " | "\n"
