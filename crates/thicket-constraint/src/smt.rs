//! SMT-LIB terms over strings, integers and regular expressions, and their exact
//! evaluation once every variable has a value. No SMT solver is involved in checking:
//! a ground atom is computed by thicket itself.
//!
//! Semantics follow the SMT-LIB theory of strings (Unicode strings, `str.to_int` of a
//! non-digit string is -1, `str.at` out of range is "", `str.substr` clips, integer
//! division and modulus are Euclidean). Integers are 128-bit; an overflow makes the atom
//! false with the reason recorded, as ISLa counts a solver failure as false.
//!
//! Variables stand for the text of the subtree they are bound to. Input bytes that are
//! not UTF-8 are read one character per byte (U+0080..U+00FF), so that different bytes
//! stay different strings.

use crate::formula::VarId;
use crate::regex::Regex;
use std::fmt;

/// The sorts of terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// Booleans.
    Bool,
    /// Integers.
    Int,
    /// Strings.
    Str,
    /// Regular languages.
    Re,
}

impl fmt::Display for Sort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sort::Bool => "Bool",
            Sort::Int => "Int",
            Sort::Str => "String",
            Sort::Re => "RegLan",
        })
    }
}

/// A value of a term.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A Boolean.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A string.
    Str(String),
    /// A regular language.
    Re(Regex),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Re(_) => f.write_str("<regex>"),
        }
    }
}

/// The functions of the supported SMT-LIB theories.
#[allow(missing_docs)] // the names are SMT-LIB's
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Eq,
    Distinct,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Neg,
    Mul,
    Div,
    Mod,
    Abs,
    Not,
    And,
    Or,
    Xor,
    Implies,
    Ite,
    StrLen,
    StrConcat,
    StrAt,
    StrSubstr,
    StrPrefixOf,
    StrSuffixOf,
    StrContains,
    StrIndexOf,
    StrReplace,
    StrReplaceAll,
    StrReplaceRe,
    StrReplaceReAll,
    StrToInt,
    /// Python's `int(s, base)`: see [`python_int`].
    StrToIntBase,
    StrFromInt,
    StrInRe,
    StrToRe,
    StrIsDigit,
    StrToCode,
    StrFromCode,
    StrLt,
    StrLe,
    ReNone,
    ReAll,
    ReAllChar,
    ReConcat,
    ReUnion,
    ReInter,
    ReStar,
    RePlus,
    ReOpt,
    ReRange,
    ReComp,
    ReDiff,
    /// `re.loop` with bounds given as the indices `(_ re.loop lo hi)` or as arguments.
    ReLoop,
    /// `(_ re.^ n)`.
    RePower,
}

/// How many arguments a function takes and of which sorts.
enum Signature {
    /// Exactly these.
    Fixed(&'static [Sort]),
    /// Two or more of one sort.
    Many(Sort),
    /// Two or more of any one sort (equality).
    ManySame,
}

/// Every function name the language knows (with ISLa's and SMT-LIB 2.5's spellings).
pub const FUNCTIONS: &[(&str, Func)] = &[
    ("=", Func::Eq),
    ("distinct", Func::Distinct),
    ("<", Func::Lt),
    ("<=", Func::Le),
    (">", Func::Gt),
    (">=", Func::Ge),
    ("+", Func::Add),
    ("-", Func::Sub),
    ("*", Func::Mul),
    ("/", Func::Div),
    ("div", Func::Div),
    ("mod", Func::Mod),
    ("abs", Func::Abs),
    ("not", Func::Not),
    ("and", Func::And),
    ("or", Func::Or),
    ("xor", Func::Xor),
    ("=>", Func::Implies),
    ("ite", Func::Ite),
    ("str.len", Func::StrLen),
    ("str.++", Func::StrConcat),
    ("str.at", Func::StrAt),
    ("str.substr", Func::StrSubstr),
    ("str.prefixof", Func::StrPrefixOf),
    ("str.suffixof", Func::StrSuffixOf),
    ("str.contains", Func::StrContains),
    ("str.indexof", Func::StrIndexOf),
    ("str.replace", Func::StrReplace),
    ("str.replace_all", Func::StrReplaceAll),
    ("str.replace_re", Func::StrReplaceRe),
    ("str.replace_re_all", Func::StrReplaceReAll),
    ("str.to_int", Func::StrToInt),
    ("str.to.int", Func::StrToInt),
    ("str.to_int_base", Func::StrToIntBase),
    ("str.from_int", Func::StrFromInt),
    ("int.to.str", Func::StrFromInt),
    ("str.in_re", Func::StrInRe),
    ("str.in.re", Func::StrInRe),
    ("str.to_re", Func::StrToRe),
    ("str.to.re", Func::StrToRe),
    ("str.is_digit", Func::StrIsDigit),
    ("str.to_code", Func::StrToCode),
    ("str.from_code", Func::StrFromCode),
    ("str.<", Func::StrLt),
    ("str.<=", Func::StrLe),
    ("re.none", Func::ReNone),
    ("re.nostr", Func::ReNone),
    ("re.all", Func::ReAll),
    ("re.allchar", Func::ReAllChar),
    ("re.++", Func::ReConcat),
    ("re.union", Func::ReUnion),
    ("re.inter", Func::ReInter),
    ("re.*", Func::ReStar),
    ("re.+", Func::RePlus),
    ("re.opt", Func::ReOpt),
    ("re.range", Func::ReRange),
    ("re.comp", Func::ReComp),
    ("re.diff", Func::ReDiff),
    ("re.loop", Func::ReLoop),
    ("re.^", Func::RePower),
];

impl Func {
    /// The function of an SMT-LIB name.
    pub fn by_name(name: &str) -> Option<Func> {
        FUNCTIONS.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
    }

    /// Whether the function takes no arguments (`re.allchar`), so that a bare name
    /// denotes it.
    pub fn is_constant(self) -> bool {
        matches!(self, Func::ReNone | Func::ReAll | Func::ReAllChar)
    }

    fn signature(self, indices: usize) -> Signature {
        use Signature::*;
        use Sort::*;
        match self {
            Func::Eq | Func::Distinct => ManySame,
            Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::Div | Func::Mod => Fixed(&[Int, Int]),
            Func::Add | Func::Mul => Many(Int),
            Func::Sub => Many(Int),
            Func::Neg | Func::Abs => Fixed(&[Int]),
            Func::Not => Fixed(&[Bool]),
            Func::And | Func::Or => Many(Bool),
            Func::Xor | Func::Implies => Fixed(&[Bool, Bool]),
            Func::Ite => ManySame, // checked specially
            Func::StrLen | Func::StrToInt | Func::StrToCode => Fixed(&[Str]),
            Func::StrIsDigit => Fixed(&[Str]),
            Func::StrToIntBase => Fixed(&[Str, Int]),
            Func::StrConcat => Many(Str),
            Func::StrAt => Fixed(&[Str, Int]),
            Func::StrSubstr => Fixed(&[Str, Int, Int]),
            Func::StrPrefixOf
            | Func::StrSuffixOf
            | Func::StrContains
            | Func::StrLt
            | Func::StrLe => Fixed(&[Str, Str]),
            Func::StrIndexOf => Fixed(&[Str, Str, Int]),
            Func::StrReplace | Func::StrReplaceAll => Fixed(&[Str, Str, Str]),
            Func::StrReplaceRe | Func::StrReplaceReAll => Fixed(&[Str, Re, Str]),
            Func::StrFromInt | Func::StrFromCode => Fixed(&[Int]),
            Func::StrInRe => Fixed(&[Str, Re]),
            Func::StrToRe => Fixed(&[Str]),
            Func::ReNone | Func::ReAll | Func::ReAllChar => Fixed(&[]),
            Func::ReConcat | Func::ReUnion | Func::ReInter => Many(Re),
            Func::ReStar | Func::RePlus | Func::ReOpt | Func::ReComp | Func::RePower => {
                Fixed(&[Re])
            }
            Func::ReLoop if indices == 0 => Fixed(&[Re, Int, Int]),
            Func::ReLoop => Fixed(&[Re]),
            Func::ReRange => Fixed(&[Str, Str]),
            Func::ReDiff => Fixed(&[Re, Re]),
        }
    }

    fn result(self, args: &[Sort]) -> Sort {
        match self {
            Func::Eq
            | Func::Distinct
            | Func::Lt
            | Func::Le
            | Func::Gt
            | Func::Ge
            | Func::Not
            | Func::And
            | Func::Or
            | Func::Xor
            | Func::Implies
            | Func::StrPrefixOf
            | Func::StrSuffixOf
            | Func::StrContains
            | Func::StrInRe
            | Func::StrIsDigit
            | Func::StrLt
            | Func::StrLe => Sort::Bool,
            Func::Add
            | Func::Sub
            | Func::Neg
            | Func::Mul
            | Func::Div
            | Func::Mod
            | Func::Abs
            | Func::StrLen
            | Func::StrIndexOf
            | Func::StrToInt
            | Func::StrToIntBase
            | Func::StrToCode => Sort::Int,
            Func::StrConcat
            | Func::StrAt
            | Func::StrSubstr
            | Func::StrReplace
            | Func::StrReplaceAll
            | Func::StrReplaceRe
            | Func::StrReplaceReAll
            | Func::StrFromInt
            | Func::StrFromCode => Sort::Str,
            Func::Ite => args.get(1).copied().unwrap_or(Sort::Bool),
            _ => Sort::Re,
        }
    }

    /// Checks argument sorts (and the index count), returning the result sort or what
    /// is wrong.
    pub fn check(self, name: &str, args: &[Sort], indices: usize) -> Result<Sort, String> {
        let expected_indices = match self {
            Func::RePower => 1,
            Func::ReLoop => {
                if indices == 0 || indices == 2 {
                    indices
                } else {
                    return Err(format!("`{name}` takes two indices: (_ {name} min max)"));
                }
            }
            _ => 0,
        };
        if indices != expected_indices {
            return Err(if expected_indices == 0 {
                format!("`{name}` takes no indices")
            } else {
                format!("`{name}` needs an index: (_ {name} n)")
            });
        }
        if self == Func::Ite {
            return match args {
                [Sort::Bool, a, b] if a == b => Ok(*a),
                [Sort::Bool, a, b] => Err(format!(
                    "the branches of `ite` must have the same sort, found {a} and {b}"
                )),
                _ => Err("`ite` takes a Bool condition and two branches".to_string()),
            };
        }
        if self == Func::Sub && args.len() == 1 {
            return if args[0] == Sort::Int {
                Ok(Sort::Int)
            } else {
                Err(format!("`-` takes Int arguments, found {}", args[0]))
            };
        }
        match self.signature(indices) {
            Signature::Fixed(sorts) => {
                if sorts.len() != args.len() {
                    return Err(format!(
                        "`{name}` takes {} argument{}, found {}",
                        sorts.len(),
                        if sorts.len() == 1 { "" } else { "s" },
                        args.len()
                    ));
                }
                for (i, (want, got)) in sorts.iter().zip(args).enumerate() {
                    if want != got {
                        return Err(format!(
                            "argument {} of `{name}` must be {want}, found {got}",
                            i + 1
                        ));
                    }
                }
            }
            Signature::Many(sort) => {
                if args.len() < 2 && !(self == Func::And || self == Func::Or) || args.is_empty() {
                    return Err(format!("`{name}` takes at least two arguments"));
                }
                if let Some(got) = args.iter().find(|a| **a != sort) {
                    return Err(format!("`{name}` takes {sort} arguments, found {got}"));
                }
            }
            Signature::ManySame => {
                if args.len() < 2 {
                    return Err(format!("`{name}` takes at least two arguments"));
                }
                if let Some(got) = args.iter().find(|a| **a != args[0]) {
                    return Err(format!(
                        "the arguments of `{name}` must have one sort, found {} and {got}",
                        args[0]
                    ));
                }
            }
        }
        Ok(self.result(args))
    }
}

/// A term of Core: constants, variables (the text of their subtree, or an int
/// variable's digits) and applications.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// A constant.
    Const(Value),
    /// A variable; its value is a string.
    Var(VarId),
    /// A function application.
    App(Func, Vec<u32>, Vec<Term>),
}

impl Term {
    /// Whether `var` occurs in the term.
    pub fn mentions(&self, var: VarId) -> bool {
        match self {
            Term::Var(v) => *v == var,
            Term::App(_, _, args) => args.iter().any(|a| a.mentions(var)),
            Term::Const(_) => false,
        }
    }

    /// Calls `f` with each occurrence of a variable in the term, left to right.
    pub fn for_each_var(&self, f: &mut impl FnMut(VarId)) {
        match self {
            Term::Var(v) => f(*v),
            Term::App(_, _, args) => args.iter().for_each(|a| a.for_each_var(f)),
            Term::Const(_) => {}
        }
    }
}

/// Why a term has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// An integer operation overflowed 128 bits.
    Overflow,
    /// Division or modulus by zero (SMT-LIB leaves the value unspecified).
    DivisionByZero,
    /// A variable has no value yet (only while looking for int candidates).
    Unbound(VarId),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Overflow => f.write_str("integer overflow"),
            EvalError::DivisionByZero => f.write_str("division by zero"),
            EvalError::Unbound(_) => f.write_str("a variable has no value"),
        }
    }
}

/// Evaluates `term`, asking `var` for the string value of each variable.
pub fn eval(term: &Term, var: &dyn Fn(VarId) -> Option<String>) -> Result<Value, EvalError> {
    eval_with(term, var, &|_| None)
}

/// [`eval`], asking `char_len` first for `str.len` of a variable: a caller that knows a
/// variable's length without building its string (a subtree's text is a span of the
/// input) saves a copy per evaluation, which for nested subtrees adds up to quadratic.
pub fn eval_with(
    term: &Term,
    var: &dyn Fn(VarId) -> Option<String>,
    char_len: &dyn Fn(VarId) -> Option<i128>,
) -> Result<Value, EvalError> {
    let eval = |t: &Term, var: &dyn Fn(VarId) -> Option<String>| eval_with(t, var, char_len);
    match term {
        Term::App(Func::StrLen, _, args) if matches!(args.as_slice(), [Term::Var(v)] if char_len(*v).is_some()) =>
        {
            let [Term::Var(v)] = args.as_slice() else {
                unreachable!("matched above")
            };
            Ok(Value::Int(char_len(*v).expect("checked above")))
        }
        Term::App(func, indices, args) => {
            // Short-circuit the Boolean connectives and `ite`.
            match func {
                Func::And | Func::Or => {
                    let want = *func == Func::Or;
                    for a in args {
                        if as_bool(&eval(a, var)?) == want {
                            return Ok(Value::Bool(want));
                        }
                    }
                    return Ok(Value::Bool(!want));
                }
                Func::Ite => {
                    let c = as_bool(&eval(&args[0], var)?);
                    return eval(&args[if c { 1 } else { 2 }], var);
                }
                _ => {}
            }
            let values = args
                .iter()
                .map(|a| eval(a, var))
                .collect::<Result<Vec<_>, _>>()?;
            apply(*func, indices, &values)
        }
        other => eval_leaf(other, var),
    }
}

fn eval_leaf(term: &Term, var: &dyn Fn(VarId) -> Option<String>) -> Result<Value, EvalError> {
    match term {
        Term::Const(v) => Ok(v.clone()),
        Term::Var(v) => var(*v).map(Value::Str).ok_or(EvalError::Unbound(*v)),
        Term::App(..) => unreachable!("applications are evaluated by eval_with"),
    }
}

fn as_bool(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn as_int(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}

fn as_str(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        _ => "",
    }
}

fn as_re(v: &Value) -> Regex {
    match v {
        Value::Re(r) => r.clone(),
        _ => Regex::none(),
    }
}

/// Characters of `s` from `start` (a character index), at most `len` of them.
fn char_slice(s: &str, start: i128, len: i128) -> String {
    let n = s.chars().count() as i128;
    if start < 0 || start >= n || len <= 0 {
        return String::new();
    }
    s.chars()
        .skip(start as usize)
        .take(len.min(n - start) as usize)
        .collect()
}

fn index_of(s: &str, t: &str, from: i128) -> i128 {
    let n = s.chars().count() as i128;
    if from < 0 || from > n {
        return -1;
    }
    let byte_from = s
        .char_indices()
        .nth(from as usize)
        .map_or(s.len(), |(b, _)| b);
    match s[byte_from..].find(t) {
        Some(b) => s[..byte_from + b].chars().count() as i128,
        None => -1,
    }
}

/// What Python's `int(s, base)` gives for a well-formed literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PythonInt {
    /// The value.
    Value(i128),
    /// A value beyond 128 bits (Python has it; thicket's integers do not).
    Overflow,
}

/// Whether Python's `int()` strips `c` around a literal (its whitespace, without the
/// separators `\x1c`..`\x1f` that `str.isspace()` also counts).
pub fn is_python_int_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `int(s, base)` for `base` in 2..=36: surrounding whitespace, one sign, the
/// base's prefix (`0b`, `0o`, `0x`, each with an optional `_` after it) and single
/// underscores between digits; `None` where Python raises `ValueError` (or the base is
/// out of range). Digits are ASCII only: Python also reads other Unicode decimal
/// digits, which this treats as malformed.
pub fn python_int(s: &str, base: u32) -> Option<PythonInt> {
    if !(2..=36).contains(&base) {
        return None;
    }
    let body = s.trim_matches(is_python_int_space);
    let (negative, body) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let prefix = match base {
        2 => Some(['b', 'B']),
        8 => Some(['o', 'O']),
        16 => Some(['x', 'X']),
        _ => None,
    };
    let body = match prefix {
        Some(marks) if body.starts_with('0') && body[1..].starts_with(marks) => {
            let rest = &body[2..];
            rest.strip_prefix('_').unwrap_or(rest)
        }
        _ => body,
    };
    let mut value: Option<i128> = Some(0);
    let mut digits = 0usize;
    let mut after_underscore = false;
    for c in body.chars() {
        if c == '_' {
            if digits == 0 || after_underscore {
                return None;
            }
            after_underscore = true;
            continue;
        }
        let d = c.to_digit(base)?;
        after_underscore = false;
        digits += 1;
        value = value
            .and_then(|v| v.checked_mul(i128::from(base)))
            .and_then(|v| v.checked_add(i128::from(d)));
    }
    if digits == 0 || after_underscore {
        return None;
    }
    Some(match value {
        Some(v) if negative => PythonInt::Value(-v),
        Some(v) => PythonInt::Value(v),
        None => PythonInt::Overflow,
    })
}

fn apply(func: Func, indices: &[u32], v: &[Value]) -> Result<Value, EvalError> {
    use Value::*;
    let int = |i: Option<i128>| i.map(Int).ok_or(EvalError::Overflow);
    Ok(match func {
        Func::Eq => Bool(v.windows(2).all(|w| w[0] == w[1])),
        Func::Distinct => Bool((0..v.len()).all(|i| (i + 1..v.len()).all(|j| v[i] != v[j]))),
        Func::Lt => Bool(as_int(&v[0]) < as_int(&v[1])),
        Func::Le => Bool(as_int(&v[0]) <= as_int(&v[1])),
        Func::Gt => Bool(as_int(&v[0]) > as_int(&v[1])),
        Func::Ge => Bool(as_int(&v[0]) >= as_int(&v[1])),
        Func::Add => int(v.iter().try_fold(0i128, |a, x| a.checked_add(as_int(x))))?,
        Func::Mul => int(v.iter().try_fold(1i128, |a, x| a.checked_mul(as_int(x))))?,
        Func::Sub if v.len() == 1 => int(as_int(&v[0]).checked_neg())?,
        Func::Sub => int(v[1..]
            .iter()
            .try_fold(as_int(&v[0]), |a, x| a.checked_sub(as_int(x))))?,
        Func::Neg => int(as_int(&v[0]).checked_neg())?,
        Func::Div | Func::Mod => {
            let (a, b) = (as_int(&v[0]), as_int(&v[1]));
            if b == 0 {
                return Err(EvalError::DivisionByZero);
            }
            if func == Func::Div {
                int(a.checked_div_euclid(b))?
            } else {
                int(a.checked_rem_euclid(b))?
            }
        }
        Func::Abs => int(as_int(&v[0]).checked_abs())?,
        Func::Not => Bool(!as_bool(&v[0])),
        Func::And => Bool(v.iter().all(as_bool)),
        Func::Or => Bool(v.iter().any(as_bool)),
        Func::Xor => Bool(as_bool(&v[0]) != as_bool(&v[1])),
        Func::Implies => Bool(!as_bool(&v[0]) || as_bool(&v[1])),
        Func::Ite => {
            if as_bool(&v[0]) {
                v[1].clone()
            } else {
                v[2].clone()
            }
        }
        Func::StrLen => Int(as_str(&v[0]).chars().count() as i128),
        Func::StrConcat => Str(v.iter().map(as_str).collect()),
        Func::StrAt => Str(char_slice(as_str(&v[0]), as_int(&v[1]), 1)),
        Func::StrSubstr => Str(char_slice(as_str(&v[0]), as_int(&v[1]), as_int(&v[2]))),
        Func::StrPrefixOf => Bool(as_str(&v[1]).starts_with(as_str(&v[0]))),
        Func::StrSuffixOf => Bool(as_str(&v[1]).ends_with(as_str(&v[0]))),
        Func::StrContains => Bool(as_str(&v[0]).contains(as_str(&v[1]))),
        Func::StrIndexOf => Int(index_of(as_str(&v[0]), as_str(&v[1]), as_int(&v[2]))),
        Func::StrReplace => Str(as_str(&v[0]).replacen(as_str(&v[1]), as_str(&v[2]), 1)),
        Func::StrReplaceAll => {
            let (s, t, u) = (as_str(&v[0]), as_str(&v[1]), as_str(&v[2]));
            Str(if t.is_empty() {
                s.to_string()
            } else {
                s.replace(t, u)
            })
        }
        Func::StrReplaceRe | Func::StrReplaceReAll => {
            Str(as_re(&v[1]).replace(as_str(&v[0]), as_str(&v[2]), func == Func::StrReplaceReAll))
        }
        Func::StrToInt => {
            let s = as_str(&v[0]);
            if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
                Int(-1)
            } else {
                // Leading zeros are fine; a number beyond 128 bits is an overflow.
                int(s
                    .trim_start_matches('0')
                    .parse::<i128>()
                    .ok()
                    .or_else(|| s.chars().all(|c| c == '0').then_some(0)))?
            }
        }
        Func::StrToIntBase => {
            let base = u32::try_from(as_int(&v[1])).unwrap_or(0);
            match python_int(as_str(&v[0]), base) {
                Some(PythonInt::Value(i)) => Int(i),
                Some(PythonInt::Overflow) => return Err(EvalError::Overflow),
                None => Int(-1),
            }
        }
        Func::StrFromInt => {
            let i = as_int(&v[0]);
            Str(if i < 0 { String::new() } else { i.to_string() })
        }
        Func::StrIsDigit => {
            let s = as_str(&v[0]);
            Bool(s.chars().count() == 1 && s.chars().all(|c| c.is_ascii_digit()))
        }
        Func::StrToCode => {
            let s = as_str(&v[0]);
            let mut chars = s.chars();
            Int(match (chars.next(), chars.next()) {
                (Some(c), None) => c as i128,
                _ => -1,
            })
        }
        Func::StrFromCode => {
            let i = as_int(&v[0]);
            Str(u32::try_from(i)
                .ok()
                .filter(|&c| c <= 0x2FFFF)
                .and_then(char::from_u32)
                .map(String::from)
                .unwrap_or_default())
        }
        Func::StrLt => Bool(as_str(&v[0]) < as_str(&v[1])),
        Func::StrLe => Bool(as_str(&v[0]) <= as_str(&v[1])),
        Func::StrInRe => Bool(as_re(&v[1]).is_match(as_str(&v[0]))),
        Func::StrToRe => Re(Regex::literal(as_str(&v[0]))),
        Func::ReNone => Re(Regex::none()),
        Func::ReAll => Re(Regex::all()),
        Func::ReAllChar => Re(Regex::any_char()),
        Func::ReConcat => Re(v
            .iter()
            .map(as_re)
            .reduce(Regex::concat)
            .expect("two or more")),
        Func::ReUnion => Re(v
            .iter()
            .map(as_re)
            .reduce(Regex::union)
            .expect("two or more")),
        Func::ReInter => Re(v
            .iter()
            .map(as_re)
            .reduce(Regex::inter)
            .expect("two or more")),
        Func::ReStar => Re(Regex::star(as_re(&v[0]))),
        Func::RePlus => {
            let r = as_re(&v[0]);
            Re(Regex::concat(r.clone(), Regex::star(r)))
        }
        Func::ReOpt => Re(Regex::union(Regex::literal(""), as_re(&v[0]))),
        Func::ReRange => {
            let (a, b) = (as_str(&v[0]), as_str(&v[1]));
            let single = |s: &str| {
                let mut c = s.chars();
                match (c.next(), c.next()) {
                    (Some(x), None) => Some(x),
                    _ => None,
                }
            };
            Re(match (single(a), single(b)) {
                (Some(lo), Some(hi)) if lo <= hi => Regex::range(lo, hi),
                _ => Regex::none(),
            })
        }
        Func::ReComp => Re(Regex::comp(as_re(&v[0]))),
        Func::ReDiff => Re(Regex::inter(as_re(&v[0]), Regex::comp(as_re(&v[1])))),
        Func::ReLoop => {
            let (lo, hi) = match indices {
                [lo, hi] => (*lo as i128, *hi as i128),
                _ => (as_int(&v[1]), as_int(&v[2])),
            };
            Re(Regex::repeat(as_re(&v[0]), lo, hi))
        }
        Func::RePower => {
            let n = indices.first().copied().unwrap_or(0) as i128;
            Re(Regex::repeat(as_re(&v[0]), n, n))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Term {
        Term::Const(Value::Str(x.into()))
    }
    fn i(x: i128) -> Term {
        Term::Const(Value::Int(x))
    }
    fn app(f: Func, args: Vec<Term>) -> Term {
        Term::App(f, vec![], args)
    }
    fn ev(t: Term) -> Value {
        eval(&t, &|_| None).unwrap()
    }

    #[test]
    fn int_with_a_base_reads_what_python_reads() {
        let value = |text: &str, base: u32| match python_int(text, base) {
            Some(PythonInt::Value(i)) => Some(i),
            _ => None,
        };
        // Each as Python 3 answers `int(text, base)`.
        assert_eq!(value("00000000123 ", 8), Some(83));
        assert_eq!(value(" \t-17\n", 8), Some(-15));
        assert_eq!(value("+0o1_7", 8), Some(15));
        assert_eq!(value("0o_7", 8), Some(7));
        assert_eq!(value("0x_fF", 16), Some(255));
        assert_eq!(value("0b101", 2), Some(5));
        assert_eq!(value("zz", 36), Some(1295));
        assert_eq!(value("1__0", 8), None);
        assert_eq!(value("_10", 8), None);
        assert_eq!(value("10_", 8), None);
        assert_eq!(value("8", 8), None);
        assert_eq!(value("0o", 8), None);
        assert_eq!(value("", 8), None);
        assert_eq!(value("  ", 8), None);
        assert_eq!(value("1 2", 8), None);
        assert_eq!(value("12\0", 8), None);
        assert_eq!(value("\u{a0}5\u{3000}", 8), Some(5));
        assert_eq!(value("\u{1c}5", 8), None);
        assert_eq!(value("- 5", 8), None);
        assert_eq!(value("0_7", 8), Some(7));
        assert_eq!(value("0b1", 12), Some(133));
        assert_eq!(value("7", 1), None);
        assert_eq!(python_int(&"7".repeat(60), 8), Some(PythonInt::Overflow));
        assert_eq!(
            ev(app(Func::StrToIntBase, vec![s("0o17"), i(8)])),
            Value::Int(15)
        );
        assert_eq!(
            ev(app(Func::StrToIntBase, vec![s("9"), i(8)])),
            Value::Int(-1)
        );
    }

    #[test]
    fn strings_follow_smt_lib() {
        assert_eq!(ev(app(Func::StrLen, vec![s("héllo")])), Value::Int(5));
        assert_eq!(ev(app(Func::StrToInt, vec![s("0042")])), Value::Int(42));
        assert_eq!(ev(app(Func::StrToInt, vec![s("4a")])), Value::Int(-1));
        assert_eq!(ev(app(Func::StrToInt, vec![s("")])), Value::Int(-1));
        assert_eq!(
            ev(app(Func::StrAt, vec![s("abc"), i(5)])),
            Value::Str("".into())
        );
        assert_eq!(
            ev(app(Func::StrSubstr, vec![s("abcdef"), i(2), i(10)])),
            Value::Str("cdef".into())
        );
        assert_eq!(
            ev(app(Func::StrIndexOf, vec![s("abcabc"), s("c"), i(3)])),
            Value::Int(5)
        );
        assert_eq!(
            ev(app(Func::StrPrefixOf, vec![s("ab"), s("abc")])),
            Value::Bool(true)
        );
        assert_eq!(
            ev(app(Func::StrReplace, vec![s("aXbX"), s("X"), s("-")])),
            Value::Str("a-bX".into())
        );
        assert_eq!(
            ev(app(Func::StrFromInt, vec![i(-3)])),
            Value::Str("".into())
        );
    }

    #[test]
    fn integers_are_euclidean_and_overflow_is_an_error() {
        assert_eq!(ev(app(Func::Div, vec![i(-7), i(2)])), Value::Int(-4));
        assert_eq!(ev(app(Func::Mod, vec![i(-7), i(2)])), Value::Int(1));
        let huge = app(Func::StrToInt, vec![s(&"9".repeat(60))]);
        assert_eq!(eval(&huge, &|_| None), Err(EvalError::Overflow));
        assert_eq!(
            eval(&app(Func::Div, vec![i(1), i(0)]), &|_| None),
            Err(EvalError::DivisionByZero)
        );
    }

    #[test]
    fn sorts_are_checked() {
        assert_eq!(
            Func::StrLen.check("str.len", &[Sort::Str], 0),
            Ok(Sort::Int)
        );
        assert!(
            Func::StrLen
                .check("str.len", &[Sort::Int], 0)
                .unwrap_err()
                .contains("must be String")
        );
        assert!(Func::Eq.check("=", &[Sort::Int, Sort::Str], 0).is_err());
        assert!(Func::ReLoop.check("re.loop", &[Sort::Re], 2).is_ok());
        assert!(Func::ReLoop.check("re.loop", &[Sort::Re], 1).is_err());
    }
}
